package providertest

import (
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// History storage and custom status (duroxide
// docs/provider-implementation-guide.md checklist "Core Operations", "Custom
// Status" and the ack's append-only and CustomStatusUpdated items; duroxide
// src/providers/mod.rs read / append_with_execution / get_custom_status;
// duroxide.Provider docs "Custom status").

// orcHistoryCases lists the history cases.
func orcHistoryCases() []envCase {
	return []envCase{
		{"ReadOrderedByEventID", orcReadOrdered},
		{"ReadUnknownInstanceIsEmpty", orcReadUnknown},
		{"AppendStoresRuntimeProvidedIDs", orcAppendIDs},
		{"AppendRejectsDuplicateEventIDs", orcAppendDuplicate},
		{"AckIsAppendOnlyOverCorruptHistory", orcAppendOnly},
		{"AckStoresPlaceholderIDsVerbatim", orcAckPlaceholderIDs},
	}
}

// orcCustomStatusCases lists the custom status cases.
func orcCustomStatusCases() []envCase {
	return []envCase{
		{"GetCustomStatusReturnsNewerVersion", orcStatusNewer},
		{"GetCustomStatusUnchangedReturnsNone", orcStatusUnchanged},
		{"GetCustomStatusUnknownInstanceReturnsNone", orcStatusUnknown},
		{"CustomStatusSetClearBumpsVersion", orcStatusSetClear},
		{"LastCustomStatusInDeltaWins", orcStatusLastWins},
		{"NoCustomStatusEventLeavesStatus", orcStatusUntouched},
		{"CustomStatusOfInstanceWithoutRecordDropped", orcStatusNoRecord},
	}
}

// orcReadOrdered proves Read and ReadWithExecution return events ordered by
// event id, compared as numbers (9 < 10 < 100), whether written by append or by
// ack, and a fetch loads them in the same order (duroxide
// docs/provider-implementation-guide.md "read() returns events ordered by
// event_id").
func orcReadOrdered(e *env) {
	e.orcAppend("A", 1, 1, 2, 9)
	e.orcAppend("A", 1, 10, 100)
	e.orcTurn("A", orcCommit("A", 1, 101, 1000))
	want := []uint64{1, 2, 9, 10, 100, 101, 1000}
	e.orcWantHistory("A", 0, want...)
	e.orcWantHistory("A", 1, want...)
	item := e.orcLock("A", orcRaise("A", "x"))
	sameEvents(e.t, "fetched history", item.History, e.read("A", 1))
}

// orcReadUnknown proves reading an instance that has no history, whether
// unknown or only enqueued to, returns no events and no error (duroxide
// docs/provider-implementation-guide.md "read() returns empty Vec for
// non-existent instance"; duroxide.Provider docs).
func orcReadUnknown(e *env) {
	e.enqueue(startItem("Q", "Orch"), 0)
	for _, inst := range []string{"nope", "Q"} {
		e.orcWantHistory(inst, 0)
		e.orcWantHistory(inst, 1)
		e.orcWantHistory(inst, 7)
	}
}

// orcAppendIDs proves AppendWithExecution stores events exactly as given, with
// the runtime's ids (gaps included), per execution; Read of an instance without
// record shows its highest execution (duroxide
// docs/provider-implementation-guide.md "append_with_execution() stores events
// with runtime-provided IDs"; duroxide.Provider docs).
func orcAppendIDs(e *env) {
	first := []duroxide.Event{
		started("A", 1, "Orch", "1.0.0"),
		event(3, "A", 1, duroxide.ActivityScheduledEvent{Name: "Act", Input: `"i"`, Tag: ptr("gpu")}),
		duroxide.NewEvent(7, "A", 1, ptr(uint64(3)), duroxide.ActivityCompletedEvent{Result: `"r"`}),
	}
	second := []duroxide.Event{started("A", 2, "Orch", "1.0.0")}
	if err := e.p.AppendWithExecution(e.ctx, "A", 1, first); err != nil {
		e.t.Fatalf("AppendWithExecution: %v", err)
	}
	if err := e.p.AppendWithExecution(e.ctx, "A", 2, second); err != nil {
		e.t.Fatalf("AppendWithExecution: %v", err)
	}
	sameEvents(e.t, "execution 1", e.read("A", 1), first)
	sameEvents(e.t, "execution 2", e.read("A", 2), second)
	sameEvents(e.t, "Read", e.read("A", 0), second)
}

// orcAppendDuplicate proves AppendWithExecution rejects, permanently and
// writing nothing, an id already stored, a duplicate within one call and an id
// out of order; the same id in another execution is fine (duroxide
// docs/provider-implementation-guide.md "append_with_execution() rejects
// duplicate event_ids"; duroxide.Provider docs).
func orcAppendDuplicate(e *env) {
	e.orcAppend("A", 1, 1, 2)
	for _, ids := range [][]uint64{{2}, {1}, {3, 3}, {4, 3}, {3, 2}} {
		err := e.p.AppendWithExecution(e.ctx, "A", 1, orcEvents("A", 1, ids...))
		wantPermanent(e.t, err, duroxide.ErrDuplicateEvent, "append_with_execution")
		e.orcWantHistory("A", 1, 1, 2)
	}
	e.orcAppend("A", 1, 3)
	e.orcAppend("A", 2, 1, 2)
	e.orcWantHistory("A", 1, 1, 2, 3)
	e.orcWantHistory("A", 2, 1, 2)
}

// orcAppendOnly proves the ack appends without reading stored history: a turn
// over a history holding an undecodable entry (the runtime's poison path, event
// 99999 and status Failed) succeeds, and its event is stored (duroxide
// docs/provider-implementation-guide.md "ack_orchestration_item() is
// append-only for history";
// provider_validation::capability_filtering::test_ack_appends_event_to_corrupted_history).
func orcAppendOnly(e *env) {
	if e.h.CorruptHistory == nil {
		e.t.Skip("needs Harness.CorruptHistory to store an undecodable history entry")
	}
	e.start("A", nil)
	e.h.CorruptHistory(e.t, e.p, "A", 1)
	item := e.orcLock("A", orcRaise("A", "1"))
	failed := event(99999, "A", 1, duroxide.OrchestrationFailedEvent{Details: duroxide.ApplicationFailure("corrupt history")})
	e.ack(item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID:  1,
		HistoryDelta: []duroxide.Event{failed},
		Metadata:     duroxide.ExecutionMetadata{Status: "Failed"},
	})
	err := e.p.AppendWithExecution(e.ctx, "A", 1, []duroxide.Event{failed})
	wantPermanent(e.t, err, duroxide.ErrDuplicateEvent, "append_with_execution") // 99999 is stored
	if info := e.orcWantRecord("A", true); info != nil && info.Status != "Failed" {
		e.t.Fatalf("status %q after the poison ack, want Failed", info.Status)
	}
	e.orcLock("A", orcRaise("A", "2")) // the lock was released
}

// orcAckPlaceholderIDs proves the ack stores an event exactly as given when
// its instance_id is "" and its execution_id 0, as duroxide's runtime writes
// every OrchestrationFailed (HistoryManager::append_failed fills in
// placeholders): the event belongs to the instance and execution the ack
// names, reads and fetches return it unchanged, and the execution is Failed
// (duroxide's recorded histories; the sqlite provider stores the serialized
// event as it comes).
func orcAckPlaceholderIDs(e *env) {
	e.start("A", nil)
	item := e.orcLock("A", orcRaise("A", "1"))
	failed := event(2, "", 0, duroxide.OrchestrationFailedEvent{Details: duroxide.ApplicationFailure("boom")})
	want := append(e.read("A", 1), failed)
	e.ack(item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID:  1,
		HistoryDelta: []duroxide.Event{failed},
		Metadata:     duroxide.ExecutionMetadata{Status: "Failed", Output: ptr("boom")},
	})
	sameEvents(e.t, "execution 1", e.read("A", 1), want)
	sameEvents(e.t, "Read", e.read("A", 0), want)
	if info := e.orcWantRecord("A", true); info != nil && info.Status != "Failed" {
		e.t.Fatalf("status %q after the failing ack, want Failed", info.Status)
	}
	item = e.orcLock("A", orcRaise("A", "2"))
	sameEvents(e.t, "fetched history", item.History, want)
}

// orcStatusTurn runs a turn of instance whose delta holds one
// CustomStatusUpdated per status given (nil: cleared), or a plain event
// when none is given.
func (e *env) orcStatusTurn(instance string, statuses ...*string) {
	e.t.Helper()
	h := e.read(instance, 0)
	next := h[len(h)-1].EventID + 1
	c := orcCommit(instance, 1)
	for _, s := range statuses {
		c.HistoryDelta = append(c.HistoryDelta, orcStatusEvent(instance, next, s))
		next++
	}
	if len(statuses) == 0 {
		c.HistoryDelta = orcEvents(instance, 1, next)
	}
	e.orcTurn(instance, c)
}

// orcStatus is the custom status value s at version v (s nil: cleared).
func orcStatus(s *string, v uint64) *duroxide.CustomStatus {
	return &duroxide.CustomStatus{Status: s, Version: v}
}

// orcStatusNewer proves GetCustomStatus returns status and version when the
// version is newer than the caller's (duroxide
// docs/provider-implementation-guide.md "get_custom_status() returns
// Ok(Some((status, version))) when version > last_seen_version").
func orcStatusNewer(e *env) {
	e.start("A", nil)
	e.orcStatusTurn("A", ptr("a"))
	e.orcWantStatus("A", 0, orcStatus(ptr("a"), 1))
	e.orcStatusTurn("A", ptr("b"))
	e.orcWantStatus("A", 0, orcStatus(ptr("b"), 2))
	e.orcWantStatus("A", 1, orcStatus(ptr("b"), 2))
}

// orcStatusUnchanged proves GetCustomStatus returns nothing when the version is
// not newer than the caller's (duroxide docs/provider-implementation-guide.md
// "returns Ok(None) when version unchanged").
func orcStatusUnchanged(e *env) {
	e.start("A", nil)
	e.orcWantStatus("A", 0, nil) // never set
	e.orcStatusTurn("A", ptr("a"))
	e.orcWantStatus("A", 1, nil)
	e.orcWantStatus("A", 5, nil)
}

// orcStatusUnknown proves GetCustomStatus of an instance that does not exist,
// or was only enqueued to, returns nothing and no error (duroxide
// docs/provider-implementation-guide.md "returns Ok(None) for non-existent
// instances").
func orcStatusUnknown(e *env) {
	e.orcWantStatus("nope", 0, nil)
	e.enqueue(startItem("Q", "Orch"), 0)
	e.orcWantStatus("Q", 0, nil)
}

// orcStatusSetClear proves setting and clearing the status each bump the
// version by one, and a cleared status is reported as changed with no value
// (duroxide docs/provider-implementation-guide.md ack step 2a;
// duroxide.Provider docs "Custom status").
func orcStatusSetClear(e *env) {
	e.start("A", nil)
	steps := []*string{ptr("a"), ptr("b"), nil, ptr("c"), nil}
	for i, s := range steps {
		e.orcStatusTurn("A", s)
		v := uint64(i + 1)
		e.orcWantStatus("A", v-1, orcStatus(s, v))
		e.orcWantStatus("A", v, nil)
	}
}

// orcStatusLastWins proves that of several CustomStatusUpdated events in one
// delta the last wins, and the version goes up by one per turn, not per event
// (duroxide docs/provider-implementation-guide.md "scans history_delta for the
// last CustomStatusUpdated").
func orcStatusLastWins(e *env) {
	e.start("A", nil)
	e.orcStatusTurn("A", ptr("x"), ptr("y"), nil, ptr("z"))
	e.orcWantStatus("A", 0, orcStatus(ptr("z"), 1))
	e.orcStatusTurn("A", ptr("p"), nil)
	e.orcWantStatus("A", 0, orcStatus(nil, 2))
}

// orcStatusUntouched proves a turn without CustomStatusUpdated leaves status
// and version alone (duroxide docs/provider-implementation-guide.md "does NOT
// touch custom_status when no CustomStatusUpdated event is in history_delta").
func orcStatusUntouched(e *env) {
	e.start("A", nil)
	e.orcStatusTurn("A", ptr("a"))
	e.orcStatusTurn("A")
	e.orcStatusTurn("A")
	e.orcWantStatus("A", 0, orcStatus(ptr("a"), 1))
}

// orcStatusNoRecord proves a status update acked for an instance that has no
// record (and gets none from that ack) is dropped, while one in the ack that
// creates the record applies (duroxide.Provider docs "Instance creation":
// custom status applies to the instance as it stands after the metadata step).
func orcStatusNoRecord(e *env) {
	for _, inst := range []string{"A", "B"} {
		item := e.orcLock(inst, startItem(inst, "Orch"))
		c := orcCommit(inst, 1, 1)
		c.HistoryDelta = append(c.HistoryDelta, orcStatusEvent(inst, 2, ptr("s-"+inst)))
		if inst == "B" {
			c.Metadata.OrchestrationName = "Orch"
		}
		e.ack(item.LockToken, c)
	}
	e.orcWantStatus("A", 0, nil)
	e.orcWantStatus("B", 0, orcStatus(ptr("s-B"), 1))
	c := orcCommit("A", 1, 3)
	c.Metadata.OrchestrationName = "Orch"
	e.orcTurn("A", c)
	e.orcWantStatus("A", 0, nil)
	e.orcStatusTurn("A", ptr("kept"))
	e.orcWantStatus("A", 0, orcStatus(ptr("kept"), 1))
}
