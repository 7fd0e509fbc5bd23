package duroxide

import (
	"reflect"
	"strings"
	"testing"
)

// decodeAs runs the decoder for one of the three wire types.
func decodeAs(kind string, data []byte) (any, error) {
	switch kind {
	case "workitem":
		return UnmarshalWorkItem(data)
	case "event":
		var e Event
		err := e.UnmarshalJSON(data)
		return e, err
	case "details":
		var d ErrorDetails
		err := d.UnmarshalJSON(data)
		return d, err
	}
	panic("unknown kind " + kind)
}

const (
	timerTmpl  = `{"TimerFired":{"instance":"i","execution_id":%s,"id":1,"fire_at_ms":1}}`
	eventTmpl  = `{"event_id":%s,"source_event_id":null,"instance_id":"i","execution_id":1,"timestamp_ms":1,"duroxide_version":"0.1.26","type":"TimerCreated","fire_at_ms":5}`
	poisonTmpl = `{"Poison":{"attempt_count":%s,"max_attempts":10,"message_type":{"Orchestration":{"instance":"i","execution_id":1}},"message":"m"}}`
	eventHead  = `"event_id":1,"source_event_id":null,"instance_id":"i","execution_id":1,"timestamp_ms":1,"duroxide_version":"0.1.26"`
)

func fill(tmpl, v string) string { return strings.Replace(tmpl, "%s", v, 1) }

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, kind, input string
		want              string // substring the error must contain
	}{
		// variants
		{"unknown work item variant", "workitem", `{"Bogus":{"instance":"i"}}`, `unknown variant "Bogus"`},
		{"feature-gated ExternalRaised2", "workitem", `{"ExternalRaised2":{"instance":"i","name":"n","topic":"t","data":"d"}}`, "unknown variant"},
		{"two variant keys", "workitem", `{"CancelInstance":{"instance":"i","reason":"r"},"QueueMessage":{"instance":"i","name":"n","data":"d"}}`, "exactly one variant key, found 2"},
		{"empty object", "workitem", `{}`, "exactly one variant key, found 0"},
		{"struct variant as bare string", "workitem", `"CancelInstance"`, "unit variant"},
		{"unknown bare string", "workitem", `"Nope"`, "unknown variant"},
		{"array form", "workitem", `["CancelInstance",{"instance":"i","reason":"r"}]`, "invalid type: array"},
		{"payload not an object", "workitem", `{"CancelInstance":5}`, "WorkItem::CancelInstance: invalid type: number 5"},
		{"positional payload", "workitem", `{"CancelInstance":["i","r"]}`, "invalid type: array"},
		{"null", "workitem", `null`, "invalid type: null"},
		{"number", "workitem", `42`, "invalid type: number"},
		// field types
		{"string for execution_id", "workitem", fill(timerTmpl, `"1"`), `execution_id: invalid type: string "1", expected u64`},
		{"negative execution_id", "workitem", fill(timerTmpl, `-1`), "execution_id: invalid value: number -1"},
		{"negative zero execution_id", "workitem", fill(timerTmpl, `-0`), "execution_id"},
		{"float execution_id", "workitem", fill(timerTmpl, `1.5`), "execution_id: invalid value: number 1.5"},
		{"integral float execution_id", "workitem", fill(timerTmpl, `1.0`), "execution_id"},
		{"exponent execution_id", "workitem", fill(timerTmpl, `1e3`), "execution_id"},
		{"u64 overflow", "workitem", fill(timerTmpl, `18446744073709551616`), "execution_id: invalid value"},
		{"null execution_id", "workitem", fill(timerTmpl, `null`), "execution_id: invalid type: null"},
		{"bool execution_id", "workitem", fill(timerTmpl, `true`), "execution_id: invalid type: boolean"},
		{"null for required string", "workitem", `{"CancelInstance":{"instance":null,"reason":"r"}}`, "instance: invalid type: null, expected a string"},
		{"object for string", "workitem", `{"CancelInstance":{"instance":{"a":1},"reason":"r"}}`, "instance: invalid type: object, expected a string"},
		{"number for optional string", "workitem", `{"StartOrchestration":{"instance":"i","orchestration":"o","input":"","version":1,"parent_instance":null,"parent_id":null,"execution_id":1}}`, "version: invalid type: number"},
		{"string for optional u64", "workitem", `{"StartOrchestration":{"instance":"i","orchestration":"o","input":"","version":null,"parent_instance":null,"parent_id":"5","execution_id":1}}`, "parent_id: invalid type: string"},
		{"missing required field", "workitem", `{"CancelInstance":{"instance":"i"}}`, `missing field "reason"`},
		{"duplicate field", "workitem", `{"CancelInstance":{"instance":"i","reason":"r","instance":"j"}}`, `duplicate field "instance"`},
		{"carry_forward_events null", "workitem", `{"ContinueAsNew":{"instance":"i","orchestration":"o","input":"","version":null,"carry_forward_events":null}}`, "carry_forward_events: invalid type: null"},
		{"carry_forward pair of 3", "workitem", `{"ContinueAsNew":{"instance":"i","orchestration":"o","input":"","version":null,"carry_forward_events":[["a","b","c"]]}}`, "carry_forward_events[0]"},
		{"carry_forward pair of 1", "workitem", `{"ContinueAsNew":{"instance":"i","orchestration":"o","input":"","version":null,"carry_forward_events":[["a"]]}}`, "carry_forward_events[0]"},
		{"carry_forward non-string", "workitem", `{"ContinueAsNew":{"instance":"i","orchestration":"o","input":"","version":null,"carry_forward_events":[["a",1]]}}`, "carry_forward_events[0][1]"},
		{"details missing", "workitem", `{"ActivityFailed":{"instance":"i","execution_id":1,"id":2}}`, `missing field "details"`},
		{"details two variants", "workitem", `{"ActivityFailed":{"instance":"i","execution_id":1,"id":2,"details":{"Application":{"kind":"Panicked","message":"","retryable":false},"Poison":{}}}}`, "details: expected exactly one variant key, found 2"},
		{"nested field error path", "workitem", `{"SubOrchFailed":{"parent_instance":"p","parent_execution_id":1,"parent_id":2,"details":{"Application":{"kind":"Panicked","message":"m","retryable":"no"}}}}`, "WorkItem::SubOrchFailed.details::Application.retryable: invalid type: string"},
		// JSON syntax
		{"trailing garbage", "workitem", `{"CancelInstance":{"instance":"i","reason":"r"}}x`, "trailing characters"},
		{"second value", "workitem", `{"CancelInstance":{"instance":"i","reason":"r"}} {}`, "trailing characters"},
		{"trailing comma", "workitem", `{"CancelInstance":{"instance":"i","reason":"r",}}`, "invalid JSON"},
		{"single quotes", "workitem", `{'CancelInstance':{}}`, "invalid JSON"},
		{"empty input", "workitem", ``, "unexpected end of input"},
		{"raw control char", "workitem", "{\"CancelInstance\":{\"instance\":\"a\nb\",\"reason\":\"r\"}}", "control character"},
		{"invalid UTF-8", "workitem", "{\"CancelInstance\":{\"instance\":\"\xff\",\"reason\":\"r\"}}", "invalid UTF-8"},
		{"lone leading surrogate", "workitem", `{"CancelInstance":{"instance":"\ud800","reason":"r"}}`, "invalid surrogate pair"},
		{"lone trailing surrogate", "workitem", `{"CancelInstance":{"instance":"\udc00","reason":"r"}}`, "invalid surrogate pair"},
		{"bad escape", "workitem", `{"CancelInstance":{"instance":"\x41","reason":"r"}}`, "invalid escape"},
		{"leading zero", "workitem", fill(timerTmpl, `01`), "invalid JSON"},
		{"deep nesting", "workitem", `{"CancelInstance":{"instance":"i","reason":"r","x":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}}`, "recursion limit"},

		// events
		{"unknown event type", "event", `{` + eventHead + `,"type":"FutureEventKind"}`, `unknown event type "FutureEventKind"`},
		{"rust name QueueSubscribed", "event", `{` + eventHead + `,"type":"QueueSubscribed","name":"inbox"}`, `unknown event type "QueueSubscribed"`},
		{"rust name QueueEventDelivered", "event", `{` + eventHead + `,"type":"QueueEventDelivered","name":"inbox","data":"d"}`, `unknown event type "QueueEventDelivered"`},
		{"rust name QueueSubscriptionCancelled", "event", `{` + eventHead + `,"type":"QueueSubscriptionCancelled","reason":"r"}`, `unknown event type "QueueSubscriptionCancelled"`},
		{"missing type", "event", `{` + eventHead + `}`, `missing field "type"`},
		{"type null", "event", `{` + eventHead + `,"type":null}`, "type: invalid type: null"},
		{"type number", "event", `{` + eventHead + `,"type":3}`, "type: invalid type: number"},
		{"duplicate type", "event", `{` + eventHead + `,"type":"KeyValuesCleared","type":"KeyValuesCleared"}`, `duplicate field "type"`},
		{"event_id string", "event", fill(eventTmpl, `"1"`), "event_id: invalid type: string"},
		{"event_id negative", "event", fill(eventTmpl, `-1`), "event_id: invalid value"},
		{"event_id float", "event", fill(eventTmpl, `1.5`), "event_id: invalid value"},
		{"event_id overflow", "event", fill(eventTmpl, `18446744073709551616`), "event_id: invalid value"},
		{"missing duroxide_version", "event", `{"event_id":1,"instance_id":"i","execution_id":1,"timestamp_ms":1,"type":"KeyValuesCleared"}`, `missing field "duroxide_version"`},
		{"variant field missing", "event", `{` + eventHead + `,"type":"TimerCreated"}`, `Event(type=TimerCreated): missing field "fire_at_ms"`},
		{"variant field wrong type", "event", `{` + eventHead + `,"type":"ActivityCompleted","result":{"ok":true}}`, "Event(type=ActivityCompleted).result: invalid type: object"},
		{"last_updated_at_ms null", "event", `{` + eventHead + `,"type":"KeyValueSet","key":"k","value":"v","last_updated_at_ms":null}`, "last_updated_at_ms: invalid type: null"},
		{"carry_forward wrong type", "event", `{` + eventHead + `,"type":"OrchestrationStarted","name":"n","version":"v","input":"i","parent_instance":null,"parent_id":null,"carry_forward_events":{}}`, "carry_forward_events"},
		{"event null", "event", `null`, "invalid type: null, expected an object"},
		{"event array", "event", `[]`, "invalid type: array"},
		{"event trailing", "event", `{` + eventHead + `,"type":"KeyValuesCleared"}]`, "trailing characters"},

		// error details
		{"details unknown variant", "details", `{"Business":{"message":"m"}}`, `unknown variant "Business"`},
		{"details empty", "details", `{}`, "found 0"},
		{"details null", "details", `null`, "invalid type: null"},
		{"poison u32 overflow", "details", fill(poisonTmpl, `4294967296`), "attempt_count: invalid value: number 4294967296, expected u32"},
		{"poison negative", "details", fill(poisonTmpl, `-1`), "attempt_count"},
		{"poison unknown message type", "details", `{"Poison":{"attempt_count":1,"max_attempts":1,"message_type":{"Timer":{}},"message":"m"}}`, `message_type: unknown variant "Timer"`},
		{"poison message type missing field", "details", `{"Poison":{"attempt_count":1,"max_attempts":1,"message_type":{"Activity":{"instance":"i","execution_id":1,"activity_name":"a"}},"message":"m"}}`, `message_type::Activity: missing field "activity_id"`},
		{"app kind unknown", "details", `{"Application":{"kind":"Timeout","message":"","retryable":false}}`, `kind: unknown variant "Timeout"`},
		{"app kind Cancelled bare", "details", `{"Application":{"kind":"Cancelled","message":"","retryable":false}}`, "kind::Cancelled: invalid type: unit variant"},
		{"app kind Cancelled no reason", "details", `{"Application":{"kind":{"Cancelled":{}},"message":"","retryable":false}}`, `missing field "reason"`},
		{"app kind unit with payload", "details", `{"Application":{"kind":{"Panicked":{}},"message":"","retryable":false}}`, "kind::Panicked: invalid type: object"},
		{"app kind number", "details", `{"Application":{"kind":1,"message":"","retryable":false}}`, "kind: invalid type: number"},
		{"retryable as string", "details", `{"Infrastructure":{"operation":"o","message":"m","retryable":"true"}}`, "retryable: invalid type: string"},
		{"config kind unknown", "details", `{"Configuration":{"kind":"Missing","resource":"","message":null}}`, `unknown variant "Missing"`},
		{"config missing resource", "details", `{"Configuration":{"kind":"Nondeterminism","message":null}}`, `missing field "resource"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeAs(tc.kind, []byte(tc.input))
			assertCodecError(t, got, err, tc.want, ErrUndecodable)
		})
	}
}

func TestDecodeTruncatedInputFails(t *testing.T) {
	picks := map[string][]string{
		"workitems.json":     {"ActivityFailed_poison", "ContinueAsNew_full", "StartOrchestration_sub_orchestration"},
		"events.json":        {"OrchestrationStarted_continue_as_new_full", "KeyValuesCleared", "OrchestrationFailed_cancelled"},
		"error_details.json": {"Poison_Activity", "Application_Cancelled", "Configuration_Nondeterminism_message_null"},
	}
	kinds := map[string]string{"workitems.json": "workitem", "events.json": "event", "error_details.json": "details"}
	for file, names := range picks {
		byName := map[string][]byte{}
		for _, c := range loadFixture(t, file) {
			byName[c.Name] = c.JSON
		}
		for _, name := range names {
			raw, ok := byName[name]
			if !ok {
				t.Fatalf("fixture %s has no case %s", file, name)
			}
			for _, input := range [][]byte{compactJSON(t, raw), raw} {
				if _, err := decodeAs(kinds[file], input); err != nil {
					t.Fatalf("%s: full input must decode: %v", name, err)
				}
				for i := 0; i < len(input); i++ {
					if _, err := decodeAs(kinds[file], input[:i]); err == nil {
						t.Errorf("%s: prefix of %d bytes decoded without error: %s", name, i, input[:i])
					}
				}
			}
		}
	}
}

// TestDecodeSerdeLeniency pins the inputs serde accepts although duroxide never writes them.
func TestDecodeSerdeLeniency(t *testing.T) {
	tests := []struct {
		name, kind, input string
		want              any
	}{
		{"unknown keys ignored", "workitem",
			`{"CancelInstance":{"instance":"i","extra":{"deep":[1,2.5,null]},"reason":"r","more":-3e7}}`,
			CancelInstance{Instance: "i", Reason: "r"}},
		{"missing Option keys read as None", "workitem",
			`{"StartOrchestration":{"instance":"i","orchestration":"o","input":"x","execution_id":1}}`,
			StartOrchestration{Instance: "i", Orchestration: "o", Input: "x", ExecutionID: 1}},
		{"missing carry_forward_events reads as empty", "workitem",
			`{"ContinueAsNew":{"instance":"i","orchestration":"o","input":"x","version":null}}`,
			ContinueAsNew{Instance: "i", Orchestration: "o", Input: "x"}},
		{"null optional omitted-style key", "workitem",
			`{"ActivityExecute":{"instance":"i","execution_id":1,"id":2,"name":"n","input":"x","session_id":null,"tag":null}}`,
			ActivityExecute{Instance: "i", ExecutionID: 1, ID: 2, Name: "n", Input: "x"}},
		{"whitespace everywhere", "workitem",
			" \t\r\n{ \"CancelInstance\" : { \"instance\" : \"i\" , \"reason\" : \"r\" } } \n",
			CancelInstance{Instance: "i", Reason: "r"}},
		{"escapes decode", "workitem",
			`{"QueueMessage":{"instance":"a\/b","name":"\u00e9\ud83d\ude00","data":"\"\\\b\f\n\r\t\u0000"}}`,
			QueueMessage{Instance: "a/b", Name: "é😀", Data: "\"\\\b\f\n\r\t\x00"}},
		{"u64 max", "workitem",
			fill(timerTmpl, `18446744073709551615`),
			TimerFired{Instance: "i", ExecutionID: 18446744073709551615, ID: 1, FireAtMs: 1}},
		{"missing source_event_id and last_updated_at_ms", "event",
			`{"event_id":1,"instance_id":"i","execution_id":1,"timestamp_ms":1,"duroxide_version":"v","type":"KeyValueSet","key":"k","value":"v"}`,
			Event{EventID: 1, InstanceID: "i", ExecutionID: 1, TimestampMs: 1, DuroxideVersion: "v",
				Kind: KeyValueSetEvent{Key: "k", Value: "v"}}},
		{"missing nullable CustomStatus status", "event",
			`{` + eventHead + `,"type":"CustomStatusUpdated"}`,
			Event{EventID: 1, InstanceID: "i", ExecutionID: 1, TimestampMs: 1, DuroxideVersion: "0.1.26",
				Kind: CustomStatusUpdatedEvent{}}},
		{"unit variant as {name: null}", "details",
			`{"Application":{"kind":{"Panicked":null},"message":"m","retryable":false}}`,
			ErrorDetails{Application: &ApplicationError{Kind: AppErrorKind{Variant: AppErrorPanicked}, Message: "m"}}},
		{"config kind as {name: null}, message missing", "details",
			`{"Configuration":{"kind":{"Nondeterminism":null},"resource":"r"}}`,
			ErrorDetails{Configuration: &ConfigurationError{Kind: ConfigErrorNondeterminism, Resource: "r"}}},
		{"u32 max", "details", fill(poisonTmpl, `4294967295`),
			ErrorDetails{Poison: &PoisonError{AttemptCount: 4294967295, MaxAttempts: 10,
				MessageType: PoisonMessageType{Orchestration: &PoisonOrchestration{Instance: "i", ExecutionID: 1}},
				Message:     "m"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeAs(tc.kind, []byte(tc.input))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestFailedUnmarshalLeavesValueUnchanged(t *testing.T) {
	orig := Event{EventID: 9, InstanceID: "keep", Kind: KeyValuesClearedEvent{}}
	e := orig
	if err := e.UnmarshalJSON([]byte(fill(eventTmpl, `"bad"`))); err == nil {
		t.Fatal("expected error")
	}
	if !reflect.DeepEqual(e, orig) {
		t.Errorf("event changed on failed decode: %#v", e)
	}
	d := ApplicationFailure("keep")
	if err := d.UnmarshalJSON([]byte(`{"Poison":{}}`)); err == nil {
		t.Fatal("expected error")
	}
	if !reflect.DeepEqual(d, ApplicationFailure("keep")) {
		t.Errorf("details changed on failed decode: %#v", d)
	}
}
