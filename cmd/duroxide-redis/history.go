package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
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
	all := fs.Bool("all", false, "every execution, oldest first; with --json one array, the input of durable.ReplayHistoryJSON")
	// --json prints duroxide's own event JSON (Event.MarshalJSON), so
	// scripts can feed it to tools that read duroxide histories
	read := func(s *session, instance string) (executions, error) {
		if *all {
			if *execution != 0 {
				return nil, usageErr("history", "--all and --execution exclude each other")
			}
			if _, err := s.instanceInfo("history", instance); err != nil {
				return nil, err
			}
			return durable.ReadExecutions(s.ctx, s.admin, instance)
		}
		events, err := s.history(instance, *execution)
		return executions{events}, err
	}
	return inspect(c, fs, args, read, c.printExecutions)
}

// executions are the histories history prints: one, or with --all every
// execution's. Their JSON is one array of all their events, oldest first,
// which durable.ReplayHistoryJSON reads back (it splits executions where
// event ids restart at 1).
type executions [][]duroxide.Event

// MarshalJSON writes the events of every execution as one array.
func (x executions) MarshalJSON() ([]byte, error) {
	all := slices.Concat(x...)
	if all == nil {
		all = []duroxide.Event{} // [], not null
	}
	return json.Marshal(all)
}

// printExecutions tables each execution, under a heading when there are
// several.
func (c *cli) printExecutions(x executions) error {
	for i, events := range x {
		if len(x) > 1 && len(events) > 0 {
			if i > 0 {
				fmt.Fprintln(c.stdout)
			}
			fmt.Fprintf(c.stdout, "execution %d\n", events[0].ExecutionID) // a start carries its real id
		}
		if err := c.printHistory(events); err != nil {
			return err
		}
	}
	return nil
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

// undeliveredMark flags an ExternalEvent that duroxide recorded but gave to
// no wait, which a history otherwise shows like any delivered event.
const undeliveredMark = "not delivered: no subscription was waiting"

// idSet makes a set of event ids, for lookups per event of a history.
func idSet(ids []uint64) map[uint64]bool {
	set := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	return set
}

func (c *cli) printHistory(events []duroxide.Event) error {
	now := c.now()
	undelivered := idSet(durable.UndeliveredExternalEvents(events))
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
		cell := abbreviate(payload, payloadWidth)
		if undelivered[e.EventID] {
			// first, so that no abbreviation of the data can cut it off
			cell = undeliveredMark + "; " + cell
		}
		t.row(strconv.FormatUint(e.EventID, 10), e.Kind.EventType(), orDash(name), source,
			relTime(msTime(e.TimestampMs), now), cell)
	}
	return t.flush()
}

// eventField is one kind-specific field of an event: its duroxide JSON key
// and its value as text.
type eventField struct{ Key, Value string }

// eventFields splits an event's kind-specific fields, in duroxide's order,
// into its name (when it has one) and the rest as "key=value" pairs.
func eventFields(e duroxide.Event) (name, payload string, err error) {
	name, fields, err := eventPayload(e)
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.Key + "=" + f.Value
	}
	return name, strings.Join(parts, " "), err
}

// eventPayload splits an event's kind-specific fields, in duroxide's order,
// into its name (when it has one) and the rest. Reading them from the
// event's JSON keeps this in step with every event kind the codec knows,
// without a case per kind.
func eventPayload(e duroxide.Event) (name string, fields []eventField, err error) {
	b, err := e.MarshalJSON()
	if err != nil {
		return "", nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // the opening brace
		return "", nil, err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return "", nil, err
		}
		key, _ := tok.(string)
		switch {
		case key == "name":
			name = rawText(v)
		case key == "details":
			// a failure's message first: the JSON around it would fill
			// the abbreviated cell before the message begins
			fields = append([]eventField{{"error", failureText(v)}}, fields...)
		case strings.HasSuffix(key, "_at_ms"): // fire_at_ms, last_updated_at_ms
			fields = append(fields, eventField{strings.TrimSuffix(key, "_ms"), msText(v)})
		case !commonEventFields[key] && string(v) != "null": // unset optional fields say nothing
			fields = append(fields, eventField{key, rawText(v)})
		}
	}
	return name, fields, nil
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
