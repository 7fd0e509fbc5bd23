package main

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// commonEventFields are the keys every event carries; history shows them in
// their own columns (or not at all), the rest is the payload.
var commonEventFields = map[string]bool{
	"event_id": true, "source_event_id": true, "instance_id": true, "execution_id": true,
	"timestamp_ms": true, "duroxide_version": true, "type": true, "name": true,
}

func runHistory(c *cli, args []string) error {
	fs := c.flags("history")
	execution := fs.Uint64("execution", 0, "execution id (default: the current one)")
	// --json prints duroxide's own event JSON (Event.MarshalJSON), so
	// scripts can feed it to tools that read duroxide histories
	read := func(s *session, instance string) ([]duroxide.Event, error) { return s.history(instance, *execution) }
	return inspect(c, fs, args, read, c.printHistory)
}

// history reads one execution of instance, the current one when execution
// is 0.
func (s *session) history(instance string, execution uint64) ([]duroxide.Event, error) {
	const op = "history"
	info, err := s.instanceInfo(op, instance)
	if err != nil {
		return nil, err
	}
	if execution == 0 {
		execution = info.CurrentExecutionID
	} else if err := s.requireExecution(op, instance, execution); err != nil {
		return nil, err
	}
	return s.admin.ReadHistoryWithExecutionID(s.ctx, instance, execution)
}

func (c *cli) printHistory(events []duroxide.Event) error {
	now := c.now()
	t := newTable(c.stdout, "ID", "KIND", "NAME", "SOURCE", "TIME", "PAYLOAD")
	for _, e := range events {
		name, payload, err := eventFields(e)
		if err != nil {
			return err
		}
		source := "-"
		if e.SourceEventID != nil {
			source = strconv.FormatUint(*e.SourceEventID, 10)
		}
		t.row(strconv.FormatUint(e.EventID, 10), e.Kind.EventType(), orDash(name), source,
			relTime(msTime(e.TimestampMs), now), abbreviate(payload, payloadWidth))
	}
	return t.flush()
}

// eventFields splits an event's kind-specific fields, in duroxide's order,
// into its name (when it has one) and the rest as "key=value" pairs. Reading
// them from the event's JSON keeps this in step with every event kind the
// codec knows, without a case per kind.
func eventFields(e duroxide.Event) (name, payload string, err error) {
	b, err := e.MarshalJSON()
	if err != nil {
		return "", "", err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // the opening brace
		return "", "", err
	}
	var parts []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", "", err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return "", "", err
		}
		key, _ := tok.(string)
		switch {
		case key == "name":
			name = rawText(v)
		case key == "details":
			// a failure's message first: the JSON around it would fill
			// the abbreviated cell before the message begins
			parts = append([]string{"error=" + failureText(v)}, parts...)
		case strings.HasSuffix(key, "_at_ms"): // fire_at_ms, last_updated_at_ms
			parts = append(parts, strings.TrimSuffix(key, "_ms")+"="+msText(v))
		case !commonEventFields[key] && string(v) != "null": // unset optional fields say nothing
			parts = append(parts, key+"="+rawText(v))
		}
	}
	return name, strings.Join(parts, " "), nil
}

// failureText is duroxide's display message of an ErrorDetails in JSON, or
// the JSON itself if it is not one.
func failureText(v json.RawMessage) string {
	var d duroxide.ErrorDetails
	if json.Unmarshal(v, &d) != nil {
		return string(v)
	}
	return durable.OrchestrationStatus{Failure: &d}.FailureMessage()
}

// msText shows milliseconds since the epoch as RFC 3339 in UTC, which
// people read and tools parse.
func msText(v json.RawMessage) string {
	ms, err := strconv.ParseUint(string(v), 10, 64)
	if err != nil {
		return string(v)
	}
	return msTime(ms).UTC().Format(time.RFC3339)
}

// rawText shows a JSON string without its quotes (payloads are mostly JSON
// inside a string, which escaping would make unreadable) and anything else
// as written.
func rawText(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}
