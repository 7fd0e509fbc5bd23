package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// instanceData is the instance page.
type instanceData struct {
	instanceDetail
	Tree      *treeNode
	Execution uint64 // the execution whose history is shown
	Timeline  []timelineRow
}

// timelineRow is one event of the history, linked to the event that
// scheduled it or to the one that answered it.
type timelineRow struct {
	ID      uint64
	Kind    string
	Name    string
	At      uint64        // ms since the epoch
	Since   time.Duration // since the execution's first event
	Fields  []eventField
	Failed  bool
	Source  *timelineRow  // the scheduling event this one completes
	Answer  *timelineRow  // the event completing this one
	Took    time.Duration // between the scheduling event and its answer
	ChildID string        // the sub-orchestration this event names
	// Undelivered marks an ExternalEvent no subscription was waiting for:
	// recorded, but given to no wait.
	Undelivered bool
}

func (u *uiServer) instance(w http.ResponseWriter, r *http.Request) {
	s, cancel := u.session(r)
	defer cancel()
	id := r.PathValue("id")
	d, err := s.detail(id)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	data := instanceData{instanceDetail: d, Execution: d.Execution}
	if d.Pending != nil { // no record yet: nothing else to read
		u.render(w, r, http.StatusOK, "instance", id, data)
		return
	}
	if e := r.URL.Query().Get("execution"); e != "" {
		if data.Execution, err = strconv.ParseUint(e, 10, 64); err != nil || data.Execution == 0 {
			u.fail(w, r, usageErr("instance", "bad execution %q", e))
			return
		}
	}
	if data.Tree, err = s.tree(id); err != nil {
		u.fail(w, r, err)
		return
	}
	events, err := s.history(id, data.Execution)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	if data.Timeline, err = timeline(events, id, d.Children); err != nil {
		u.fail(w, r, err)
		return
	}
	u.render(w, r, http.StatusOK, "instance", id, data)
}

// timeline links every completion to the event it answers through its
// source event id, which is how duroxide pairs them for every kind
// (activities, timers, sub-orchestrations), so no kind needs a case here.
func timeline(events []duroxide.Event, instance string, children []string) ([]timelineRow, error) {
	rows := make([]timelineRow, len(events))
	byID := map[uint64]*timelineRow{}
	undelivered := idSet(durable.UndeliveredExternalEvents(events))
	var start uint64
	if len(events) > 0 {
		start = events[0].TimestampMs
	}
	for i, e := range events {
		name, fields, err := eventPayload(e)
		if err != nil {
			return nil, err
		}
		row := &rows[i]
		*row = timelineRow{ID: e.EventID, Kind: e.Kind.EventType(), Name: name, At: e.TimestampMs,
			Since: msBetween(start, e.TimestampMs), Fields: fields, Failed: strings.Contains(e.Kind.EventType(), "Failed"),
			Undelivered: undelivered[e.EventID]}
		for _, f := range fields {
			if f.Key == "instance" {
				row.ChildID = childID(f.Value, instance, children)
			}
		}
		if e.SourceEventID != nil {
			if src, ok := byID[*e.SourceEventID]; ok {
				row.Source = src
				row.Took = msBetween(src.At, row.At)
				if src.Answer == nil {
					src.Answer, src.Took = row, row.Took
				}
			}
		}
		byID[e.EventID] = row
	}
	return rows, nil
}

// childID finds the sub-orchestration a SubOrchestrationScheduled names
// among the instance's children: the runtime may prefix the name it was
// given with the parent's id.
func childID(name, instance string, children []string) string {
	for _, c := range children {
		if c == name || c == instance+"::"+name {
			return c
		}
	}
	return ""
}

func msBetween(from, to uint64) time.Duration {
	if to < from {
		return 0
	}
	return time.Duration(to-from) * time.Millisecond
}

// prettyJSON indents a JSON value for reading; anything else is shown as is.
func prettyJSON(s string) string {
	var b bytes.Buffer
	if json.Indent(&b, []byte(s), "", "  ") != nil {
		return s
	}
	return b.String()
}

// The times of the records, for the templates, which see exported names only.
func (i instanceJSON) CreatedMs() uint64    { return i.createdMs }
func (i instanceJSON) UpdatedMs() uint64    { return i.updatedMs }
func (e executionJSON) StartedMs() uint64   { return e.startedMs }
func (e executionJSON) CompletedMs() uint64 { return e.completedMs }
