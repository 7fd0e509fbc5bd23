package duroxide

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestStringEscapingMatchesSerde(t *testing.T) {
	tests := []struct{ in, want string }{
		{"\x00", `"\u0000"`},
		{"\x01", `"\u0001"`},
		{"\b", `"\b"`},
		{"\t", `"\t"`},
		{"\n", `"\n"`},
		{"\x0b", `"\u000b"`},
		{"\f", `"\f"`},
		{"\r", `"\r"`},
		{"\x1b", `"\u001b"`},
		{"\x1f", `"\u001f"`},
		{`"`, `"\""`},
		{`\`, `"\\"`},
		{"/", `"/"`},
		{"\x7f", "\"\x7f\""},
		{"<>&", `"<>&"`},
		{"\u2028\u2029", "\"\u2028\u2029\""},
		{"é😀", `"é😀"`},
		{`{"a":"<b>"}`, `"{\"a\":\"<b>\"}"`},
		{"", `""`},
	}
	for _, tc := range tests {
		w := &jsonWriter{}
		w.string(tc.in)
		got, err := w.result()
		if err != nil || string(got) != tc.want {
			t.Errorf("string(%q) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	// Every control character is escaped, and what we write decodes back to the input.
	var all strings.Builder
	for c := 0; c < 0x80; c++ {
		all.WriteByte(byte(c))
	}
	item := QueueMessage{Instance: "i", Name: "n", Data: all.String() + "é\u2028😀"}
	out, err := MarshalWorkItem(item)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range out {
		if b < 0x20 {
			t.Fatalf("raw control byte %#x in output %q", b, out)
		}
	}
	back, err := UnmarshalWorkItem(out)
	if err != nil || !reflect.DeepEqual(back, item) {
		t.Errorf("round trip: %#v, %v", back, err)
	}
	var viaStd QueueMessage
	if err := json.Unmarshal(out, &struct{ QueueMessage *QueueMessage }{&viaStd}); err != nil || viaStd.Data != item.Data {
		t.Errorf("encoding/json reads our output differently: %q, %v", viaStd.Data, err)
	}
}

func TestEncodeRejectsInvalidUTF8(t *testing.T) {
	bad := "ok\xffbad"
	_, err := MarshalWorkItem(CancelInstance{Instance: "i", Reason: bad})
	if err == nil || !strings.Contains(err.Error(), `"reason"`) || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("work item: %v", err)
	}
	_, err = Event{InstanceID: bad, Kind: KeyValuesClearedEvent{}}.MarshalJSON()
	if err == nil || !strings.Contains(err.Error(), `"instance_id"`) {
		t.Errorf("event: %v", err)
	}
	_, err = Event{Kind: KeyValueSetEvent{Key: "k", Value: bad}}.MarshalJSON()
	if err == nil || !strings.Contains(err.Error(), `"value"`) {
		t.Errorf("event kind: %v", err)
	}
	_, err = ApplicationFailure(bad).MarshalJSON()
	if err == nil || !strings.Contains(err.Error(), `"message"`) {
		t.Errorf("details: %v", err)
	}
	_, err = MarshalWorkItem(ContinueAsNew{CarryForwardEvents: [][2]string{{"n", bad}}})
	if err == nil {
		t.Error("carry-forward pair with invalid UTF-8 encoded")
	}
	_, err = MarshalWorkItem(CancelInstance{Instance: "\xed\xa0\x80"}) // UTF-8-encoded surrogate
	if err == nil {
		t.Error("surrogate code point encoded")
	}
}

func TestEncodeRejectsUnrepresentableValues(t *testing.T) {
	poison := func(mt PoisonMessageType) ErrorDetails {
		return ErrorDetails{Poison: &PoisonError{MessageType: mt}}
	}
	app := func(k AppErrorKind) ErrorDetails { return ErrorDetails{Application: &ApplicationError{Kind: k}} }
	tests := []struct {
		name string
		enc  func() ([]byte, error)
		want string
	}{
		{"nil work item", func() ([]byte, error) { return MarshalWorkItem(nil) }, "unsupported value <nil>"},
		{"nil work item pointer", func() ([]byte, error) { return MarshalWorkItem((*CancelInstance)(nil)) }, "unsupported value"},
		{"zero ErrorDetails", ErrorDetails{}.MarshalJSON, "exactly one variant must be set, found 0"},
		{"two ErrorDetails variants", ErrorDetails{Infrastructure: &InfrastructureError{}, Poison: &PoisonError{}}.MarshalJSON, "found 2"},
		{"zero ErrorDetails in work item", func() ([]byte, error) { return MarshalWorkItem(ActivityFailed{Instance: "i"}) }, "WorkItem::ActivityFailed"},
		{"zero ErrorDetails in event", Event{Kind: SubOrchestrationFailedEvent{}}.MarshalJSON, "ErrorDetails: exactly one"},
		{"zero PoisonMessageType", poison(PoisonMessageType{}).MarshalJSON, "PoisonMessageType: exactly one variant"},
		{"two PoisonMessageTypes", poison(PoisonMessageType{Orchestration: &PoisonOrchestration{}, Activity: &PoisonActivity{}}).MarshalJSON, "found 2"},
		{"zero AppErrorKind", app(AppErrorKind{}).MarshalJSON, "AppErrorKind: unknown variant"},
		{"unknown AppErrorKind", app(AppErrorKind{Variant: "Timeout"}).MarshalJSON, `unknown variant "Timeout"`},
		{"reason on unit AppErrorKind", app(AppErrorKind{Variant: AppErrorPanicked, Reason: "x"}).MarshalJSON, "only valid for Cancelled"},
		{"zero ConfigErrorKind", ErrorDetails{Configuration: &ConfigurationError{}}.MarshalJSON, "ConfigErrorKind: unknown variant"},
		{"nil event kind", Event{}.MarshalJSON, "unsupported kind <nil>"},
		{"nil event kind pointer", Event{Kind: (*TimerFiredEvent)(nil)}.MarshalJSON, "unsupported kind"},
		{"foreign event kind", Event{Kind: foreignKind{}}.MarshalJSON, "unsupported kind"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.enc()
			assertCodecError(t, string(out), err, tc.want, ErrInvalidInput)
		})
	}
}

type foreignKind struct{}

func (foreignKind) EventType() string { return "TimerFired" }

// TestEncodeOptionalFieldRules pins null-vs-omitted for zero values, beyond the fixtures.
func TestEncodeOptionalFieldRules(t *testing.T) {
	tests := []struct {
		name string
		enc  func() ([]byte, error)
		want string
	}{
		{"StartOrchestration nil options are null", func() ([]byte, error) { return MarshalWorkItem(StartOrchestration{}) },
			`{"StartOrchestration":{"instance":"","orchestration":"","input":"","version":null,"parent_instance":null,"parent_id":null,"execution_id":0}}`},
		{"ActivityExecute nil options are omitted", func() ([]byte, error) { return MarshalWorkItem(ActivityExecute{}) },
			`{"ActivityExecute":{"instance":"","execution_id":0,"id":0,"name":"","input":""}}`},
		{"ContinueAsNew nil carry-forward is []", func() ([]byte, error) { return MarshalWorkItem(ContinueAsNew{}) },
			`{"ContinueAsNew":{"instance":"","orchestration":"","input":"","version":null,"carry_forward_events":[]}}`},
		{"pointer work item encodes like value", func() ([]byte, error) { return MarshalWorkItem(&CancelInstance{Instance: "i", Reason: "r"}) },
			`{"CancelInstance":{"instance":"i","reason":"r"}}`},
		{"OrchestrationStarted Some(empty) is []", Event{Kind: OrchestrationStartedEvent{CarryForwardEvents: new([][2]string)}}.MarshalJSON,
			`{"event_id":0,"source_event_id":null,"instance_id":"","execution_id":0,"timestamp_ms":0,"duroxide_version":"","type":"OrchestrationStarted","name":"","version":"","input":"","parent_instance":null,"parent_id":null,"carry_forward_events":[]}`},
		{"OrchestrationStarted None omitted", Event{Kind: &OrchestrationStartedEvent{}}.MarshalJSON,
			`{"event_id":0,"source_event_id":null,"instance_id":"","execution_id":0,"timestamp_ms":0,"duroxide_version":"","type":"OrchestrationStarted","name":"","version":"","input":"","parent_instance":null,"parent_id":null}`},
		{"CustomStatusUpdated nil is null", Event{Kind: CustomStatusUpdatedEvent{}}.MarshalJSON,
			`{"event_id":0,"source_event_id":null,"instance_id":"","execution_id":0,"timestamp_ms":0,"duroxide_version":"","type":"CustomStatusUpdated","status":null}`},
		{"KeyValueSet zero timestamp written", Event{Kind: KeyValueSetEvent{}}.MarshalJSON,
			`{"event_id":0,"source_event_id":null,"instance_id":"","execution_id":0,"timestamp_ms":0,"duroxide_version":"","type":"KeyValueSet","key":"","value":"","last_updated_at_ms":0}`},
		{"Configuration nil message is null", ErrorDetails{Configuration: &ConfigurationError{Kind: ConfigErrorNondeterminism}}.MarshalJSON,
			`{"Configuration":{"kind":"Nondeterminism","resource":"","message":null}}`},
		{"u64 max", func() ([]byte, error) { return MarshalWorkItem(TimerFired{ExecutionID: ^uint64(0)}) },
			`{"TimerFired":{"instance":"","execution_id":18446744073709551615,"id":0,"fire_at_ms":0}}`},
		{"nested unions standalone", AppErrorKind{Variant: AppErrorCancelled, Reason: "r"}.MarshalJSON, `{"Cancelled":{"reason":"r"}}`},
		{"config kind standalone", ConfigErrorNondeterminism.MarshalJSON, `"Nondeterminism"`},
		{"poison type standalone", PoisonMessageType{Orchestration: &PoisonOrchestration{Instance: "i", ExecutionID: 2}}.MarshalJSON,
			`{"Orchestration":{"instance":"i","execution_id":2}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.enc()
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.want {
				t.Errorf("got  %s\nwant %s", out, tc.want)
			}
		})
	}
}

func TestNestedUnionUnmarshalJSON(t *testing.T) {
	var k AppErrorKind
	if err := json.Unmarshal([]byte(`{"Cancelled":{"reason":"r"}}`), &k); err != nil || k != (AppErrorKind{Variant: AppErrorCancelled, Reason: "r"}) {
		t.Errorf("AppErrorKind: %#v, %v", k, err)
	}
	var c ConfigErrorKind
	if err := json.Unmarshal([]byte(`"Nondeterminism"`), &c); err != nil || c != ConfigErrorNondeterminism {
		t.Errorf("ConfigErrorKind: %q, %v", c, err)
	}
	if err := json.Unmarshal([]byte(`"Other"`), &c); err == nil {
		t.Error("unknown ConfigErrorKind accepted")
	}
	var p PoisonMessageType
	if err := json.Unmarshal([]byte(`{"FailedDeserialization":{"instance":"i","execution_id":1,"error":"e"}}`), &p); err != nil ||
		p.FailedDeserialization == nil || p.FailedDeserialization.Error != "e" {
		t.Errorf("PoisonMessageType: %#v, %v", p, err)
	}
}

// TestEncodingJSONInterop checks Event and ErrorDetails inside ordinary Go structs.
func TestEncodingJSONInterop(t *testing.T) {
	type envelope struct {
		E Event
		D ErrorDetails
	}
	in := envelope{
		E: Event{EventID: 3, InstanceID: "i", ExecutionID: 1, DuroxideVersion: "v", Kind: ExternalEventEvent{Name: "n", Data: "<&>"}},
		D: ErrorDetails{Configuration: &ConfigurationError{Kind: ConfigErrorNondeterminism, Message: ptr("m")}},
	}
	out, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var back envelope
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("unmarshal %s: %v", out, err)
	}
	if !reflect.DeepEqual(back, in) {
		t.Errorf("round trip through encoding/json\n got %#v\nwant %#v", back, in)
	}
	if err := json.Unmarshal([]byte(`{"E":null}`), &back); err == nil {
		t.Error("null Event accepted")
	}
}

func TestNewEvent(t *testing.T) {
	before := uint64(time.Now().UnixMilli())
	src := uint64(4)
	e := NewEvent(7, "inst", 2, &src, TimerFiredEvent{FireAtMs: 10})
	after := uint64(time.Now().UnixMilli())
	if e.EventID != 7 || e.InstanceID != "inst" || e.ExecutionID != 2 || e.SourceEventID != &src {
		t.Errorf("fields not copied: %#v", e)
	}
	if e.DuroxideVersion != CurrentDuroxideVersion || CurrentDuroxideVersion != "0.1.27" {
		t.Errorf("version %q", e.DuroxideVersion)
	}
	if e.TimestampMs < before || e.TimestampMs > after {
		t.Errorf("timestamp %d not within [%d, %d]", e.TimestampMs, before, after)
	}
	if e.Kind != (TimerFiredEvent{FireAtMs: 10}) {
		t.Errorf("kind %#v", e.Kind)
	}
}

func TestWorkItemInstanceIDRouting(t *testing.T) {
	items := []WorkItem{
		StartOrchestration{Instance: "a"}, ActivityExecute{Instance: "a"}, ActivityCompleted{Instance: "a"},
		ActivityFailed{Instance: "a"}, TimerFired{Instance: "a"}, ExternalRaised{Instance: "a"},
		CancelInstance{Instance: "a"}, ContinueAsNew{Instance: "a"}, QueueMessage{Instance: "a"},
		SubOrchCompleted{ParentInstance: "a"}, SubOrchFailed{ParentInstance: "a"},
		&CancelInstance{Instance: "a"},
	}
	for _, it := range items {
		if got := it.InstanceID(); got != "a" {
			t.Errorf("%T.InstanceID() = %q", it, got)
		}
	}
	if len(items)-1 != len(workItems.pointers) {
		t.Errorf("routing test covers %d variants, codec has %d", len(items)-1, len(workItems.pointers))
	}
}

func TestEventTypeTags(t *testing.T) {
	renamed := map[string]EventKind{
		"ExternalSubscribedPersistent":          QueueSubscribedEvent{},
		"ExternalEventPersistent":               QueueEventDeliveredEvent{},
		"ExternalSubscribedPersistentCancelled": QueueSubscriptionCancelledEvent{},
	}
	for tag, kind := range renamed {
		if kind.EventType() != tag {
			t.Errorf("%T.EventType() = %q, want %q", kind, kind.EventType(), tag)
		}
	}
	for tag, ptr := range eventKinds.pointers {
		kind := reflect.New(ptr.Elem()).Elem().Interface().(EventKind)
		if kind.EventType() != tag {
			t.Errorf("decoder for %q builds %T with tag %q", tag, kind, kind.EventType())
		}
		name := reflect.TypeOf(kind).Name()
		if _, isRenamed := renamed[tag]; !isRenamed && name != tag+"Event" {
			t.Errorf("type %s has tag %q; expected <tag>Event naming", name, tag)
		}
	}
}

func TestApplicationFailure(t *testing.T) {
	d := ApplicationFailure("boom")
	want := ErrorDetails{Application: &ApplicationError{Kind: AppErrorKind{Variant: AppErrorActivityFailed}, Message: "boom"}}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("got %#v", d)
	}
	out, err := d.MarshalJSON()
	if err != nil || string(out) != `{"Application":{"kind":"ActivityFailed","message":"boom","retryable":false}}` {
		t.Errorf("encoded %s, %v", out, err)
	}
}

func ExampleMarshalWorkItem() {
	out, _ := MarshalWorkItem(ActivityExecute{Instance: "order-1", ExecutionID: 1, ID: 4, Name: "Render", Input: "<f>", Tag: ptr("gpu")})
	fmt.Println(string(out))
	// Output: {"ActivityExecute":{"instance":"order-1","execution_id":1,"id":4,"name":"Render","input":"<f>","tag":"gpu"}}
}
