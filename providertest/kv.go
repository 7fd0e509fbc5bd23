package providertest

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The KV section: the per-instance key-value store (duroxide.Provider docs "KV
// (delta model)"), its live and snapshot views, and GetInstanceStats
// (duroxide.Provider docs "Instance stats"; duroxide
// docs/provider-implementation-guide.md checklist "KV Store").

func init() { register("KV", runKV) }

// kvTS is a base for the LastUpdatedAtMs of KV writes: the provider must
// store what the event says, so the tests use recognisable values.
const kvTS uint64 = 1_700_000_000_000

// kvInst drives one instance through the public Provider API the way the
// runtime would: it tracks the current execution, the next event id and the
// events acked per execution. Shared by the KV and Admin sections.
type kvInst struct {
	e    *env
	id   string
	exec uint64
	next uint64
	hist map[uint64][]duroxide.Event
}

// kvStart creates root instance id: StartOrchestration enqueued, fetched and
// acked with OrchestrationStarted and the metadata that creates the record.
func kvStart(e *env, id string) *kvInst {
	e.t.Helper()
	return kvStartChild(e, id, "")
}

// kvStartChild creates instance id as a sub-orchestration of parent ("" for
// a root), linked through Metadata.ParentInstanceID.
func kvStartChild(e *env, id, parent string) *kvInst {
	e.t.Helper()
	return kvStartNamed(e, id, parent, "Orch")
}

// kvStartNamed is kvStartChild for an orchestration of another name.
func kvStartNamed(e *env, id, parent, name string) *kvInst {
	e.t.Helper()
	in := &kvInst{e: e, id: id, exec: duroxide.InitialExecutionID, next: duroxide.InitialEventID,
		hist: map[uint64][]duroxide.Event{}}
	start := startItem(id, name)
	kind := duroxide.OrchestrationStartedEvent{Name: name, Version: "1.0.0", Input: `"in"`}
	if parent != "" {
		start.ParentInstance, start.ParentID = &parent, ptr(uint64(2))
		kind.ParentInstance, kind.ParentID = &parent, ptr(uint64(2))
	}
	e.enqueue(start, 0)
	in.ack(e.fetchInstance(id), duroxide.OrchestrationCommit{Metadata: duroxide.ExecutionMetadata{
		OrchestrationName: name, OrchestrationVersion: "1.0.0", ParentInstanceID: parent,
	}}, kind)
	return in
}

// events numbers kinds as the next events of the current execution.
func (in *kvInst) events(kinds ...duroxide.EventKind) []duroxide.Event {
	out := make([]duroxide.Event, len(kinds))
	for i, k := range kinds {
		out[i] = event(in.next, in.id, in.exec, k)
		in.next++
	}
	return out
}

// ack commits c for a fetched item, with kinds as its history delta in the
// current execution, and records the events.
func (in *kvInst) ack(item *duroxide.OrchestrationItem, c duroxide.OrchestrationCommit, kinds ...duroxide.EventKind) {
	in.e.t.Helper()
	c.ExecutionID = in.exec
	c.HistoryDelta = in.events(kinds...)
	in.e.ack(item.LockToken, c)
	in.hist[in.exec] = append(in.hist[in.exec], c.HistoryDelta...)
}

// poke delivers an external event to the instance and fetches it (locked
// for longLock).
func (in *kvInst) poke() *duroxide.OrchestrationItem {
	in.e.t.Helper()
	in.e.enqueue(duroxide.ExternalRaised{Instance: in.id, Name: "poke", Data: `"x"`}, 0)
	return in.e.fetchInstance(in.id)
}

// turn runs one turn acked with status ("" = unchanged) and kinds; it
// returns the fetched item, whose KVSnapshot is the state before the turn.
func (in *kvInst) turn(status string, kinds ...duroxide.EventKind) *duroxide.OrchestrationItem {
	in.e.t.Helper()
	return in.turnWith(duroxide.OrchestrationCommit{Metadata: duroxide.ExecutionMetadata{Status: status}}, kinds...)
}

// turnWith runs one turn acked with commit c (its execution id and delta are
// filled in) and kinds.
func (in *kvInst) turnWith(c duroxide.OrchestrationCommit, kinds ...duroxide.EventKind) *duroxide.OrchestrationItem {
	in.e.t.Helper()
	item := in.poke()
	in.ack(item, c, kinds...)
	return item
}

// end runs a turn that ends the current execution with status and output,
// kinds first and then the terminal event.
func (in *kvInst) end(status, output string, last duroxide.EventKind, kinds ...duroxide.EventKind) *duroxide.OrchestrationItem {
	in.e.t.Helper()
	c := duroxide.OrchestrationCommit{Metadata: duroxide.ExecutionMetadata{Status: status, Output: &output}}
	return in.turnWith(c, append(slices.Clone(kinds), last)...)
}

// complete ends the current execution Completed with output "done".
func (in *kvInst) complete(kinds ...duroxide.EventKind) *duroxide.OrchestrationItem {
	in.e.t.Helper()
	return in.end("Completed", `"done"`, duroxide.OrchestrationCompletedEvent{Output: `"done"`}, kinds...)
}

// fail ends the current execution Failed.
func (in *kvInst) fail(kinds ...duroxide.EventKind) *duroxide.OrchestrationItem {
	in.e.t.Helper()
	return in.end("Failed", `"boom"`, duroxide.OrchestrationFailedEvent{Details: duroxide.ApplicationFailure("boom")}, kinds...)
}

// endAsNew ends the current execution ContinuedAsNew and queues the
// ContinueAsNew message; startNext runs the next execution's first turn.
func (in *kvInst) endAsNew(kinds ...duroxide.EventKind) *duroxide.OrchestrationItem {
	in.e.t.Helper()
	next := `"next"`
	c := duroxide.OrchestrationCommit{
		Metadata:          duroxide.ExecutionMetadata{Status: "ContinuedAsNew", Output: &next},
		OrchestratorItems: []duroxide.WorkItem{duroxide.ContinueAsNew{Instance: in.id, Orchestration: "Orch", Input: next}},
	}
	return in.turnWith(c, append(slices.Clone(kinds), duroxide.OrchestrationContinuedAsNewEvent{Input: next})...)
}

// startNext fetches the ContinueAsNew message and acks the first turn of the
// next execution, whose OrchestrationStarted carries carry (nil = none). It
// returns the fetched item: its KVSnapshot is the store as the previous
// execution left it.
func (in *kvInst) startNext(carry *[][2]string) *duroxide.OrchestrationItem {
	in.e.t.Helper()
	item := in.e.fetchInstance(in.id)
	in.exec++
	in.next = duroxide.InitialEventID
	kind := duroxide.OrchestrationStartedEvent{Name: "Orch", Version: "1.0.0", Input: `"next"`, CarryForwardEvents: carry}
	in.ack(item, duroxide.OrchestrationCommit{Metadata: duroxide.ExecutionMetadata{
		OrchestrationName: "Orch", OrchestrationVersion: "1.0.0",
	}}, kind)
	return item
}

// continueAsNew ends the current execution ContinuedAsNew (kinds in its last
// turn) and starts the next one; it returns the item fetched for the new
// execution.
func (in *kvInst) continueAsNew(kinds ...duroxide.EventKind) *duroxide.OrchestrationItem {
	in.e.t.Helper()
	in.endAsNew(kinds...)
	return in.startNext(nil)
}

// snapshot runs an empty turn and returns the KVSnapshot its fetch saw.
func (in *kvInst) snapshot() map[string]duroxide.KVEntry {
	in.e.t.Helper()
	return in.turn("").KVSnapshot
}

// kvSet is a KeyValueSet event kind written at kvTS+n.
func kvSet(key, value string, n uint64) duroxide.KeyValueSetEvent {
	return duroxide.KeyValueSetEvent{Key: key, Value: value, LastUpdatedAtMs: kvTS + n}
}

// kvClear is a KeyValueCleared event kind.
func kvClear(key string) duroxide.KeyValueClearedEvent {
	return duroxide.KeyValueClearedEvent{Key: key}
}

// kvEntry is the snapshot entry kvSet(_, value, n) produces.
func kvEntry(value string, n uint64) duroxide.KVEntry {
	return duroxide.KVEntry{Value: value, LastUpdatedAtMs: kvTS + n}
}

// wantLive asserts the live view of the instance: GetKVAllValues equals
// want, GetKVValue finds every key of want and none of absent.
func (in *kvInst) wantLive(want map[string]string, absent ...string) {
	in.e.t.Helper()
	kvWantLive(in.e, in.id, want, absent...)
}

// kvWantLive asserts the live view of instance (see kvInst.wantLive).
func kvWantLive(e *env, instance string, want map[string]string, absent ...string) {
	e.t.Helper()
	all, err := e.p.GetKVAllValues(e.ctx, instance)
	if err != nil {
		e.t.Fatalf("GetKVAllValues(%q): %v", instance, err)
	}
	if !maps.Equal(all, want) {
		e.t.Fatalf("GetKVAllValues(%q) = %q, want %q", instance, all, want)
	}
	for k, v := range want {
		got, found, err := e.p.GetKVValue(e.ctx, instance, k)
		if err != nil || !found || got != v {
			e.t.Fatalf("GetKVValue(%q, %q) = %q, %v, %v; want %q, true, nil", instance, k, got, found, err, v)
		}
	}
	for _, k := range absent {
		got, found, err := e.p.GetKVValue(e.ctx, instance, k)
		if err != nil || found {
			e.t.Fatalf("GetKVValue(%q, %q) = %q, %v, %v; want not found, no error", instance, k, got, found, err)
		}
	}
}

// kvWantSnapshot asserts a fetched KVSnapshot (nil and empty are equal).
func kvWantSnapshot(t *testing.T, got, want map[string]duroxide.KVEntry) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Fatalf("KVSnapshot = %+v, want %+v", got, want)
	}
}

// stats returns GetInstanceStats of the instance, which must exist.
func (in *kvInst) stats() duroxide.InstanceStats {
	in.e.t.Helper()
	st, err := in.e.p.GetInstanceStats(in.e.ctx, in.id)
	if err != nil || st == nil {
		in.e.t.Fatalf("GetInstanceStats(%q) = %v, %v; want stats", in.id, st, err)
	}
	return *st
}

// wantKVStats asserts the KV counters of GetInstanceStats.
func (in *kvInst) wantKVStats(keys, valueBytes uint64) {
	in.e.t.Helper()
	st := in.stats()
	if st.KVUserKeyCount != keys || st.KVTotalValueBytes != valueBytes {
		in.e.t.Fatalf("GetInstanceStats(%q): KVUserKeyCount %d, KVTotalValueBytes %d; want %d, %d",
			in.id, st.KVUserKeyCount, st.KVTotalValueBytes, keys, valueBytes)
	}
}

// wantHistoryStats asserts HistoryEventCount and HistorySizeBytes against
// the events acked in the current execution.
func (in *kvInst) wantHistoryStats() {
	in.e.t.Helper()
	evs := in.hist[in.exec]
	st := in.stats()
	if st.HistoryEventCount != uint64(len(evs)) || st.HistorySizeBytes != kvBytes(in.e.t, evs) {
		in.e.t.Fatalf("GetInstanceStats(%q): HistoryEventCount %d, HistorySizeBytes %d; want %d, %d (execution %d)",
			in.id, st.HistoryEventCount, st.HistorySizeBytes, len(evs), kvBytes(in.e.t, evs), in.exec)
	}
}

// kvBytes is the total length of the events' JSON.
func kvBytes(t *testing.T, evs []duroxide.Event) uint64 {
	t.Helper()
	var n uint64
	for _, j := range eventsJSON(t, evs) {
		n += uint64(len(j))
	}
	return n
}

// runKV runs the KV and instance-stats cases.
func runKV(t *testing.T, h Harness) {
	runCases(t, h, []envCase{
		{"SetIsLiveButNotInSnapshotUntilMerge", kvSetIsLiveNotSnapshot},
		{"SnapshotIsStoreOnlyWhileExecutionWrites", kvSnapshotIsStoreOnly},
		{"MergeOnCompleted", func(e *env) { kvMergeOn(e, "Completed") }},
		{"MergeOnFailed", func(e *env) { kvMergeOn(e, "Failed") }},
		{"MergeOnContinuedAsNew", func(e *env) { kvMergeOn(e, "ContinuedAsNew") }},
		{"NoMergeOnRunningStatus", kvNoMergeOnRunning},
		{"OverwriteLastWriterWins", kvOverwrite},
		{"ClearOneKey", kvClearOne},
		{"ClearAllThenSet", kvClearAllThenSet},
		{"EventsAppliedInDeltaOrder", kvDeltaOrder},
		{"ClearOfUnknownKeyChangesNothing", kvClearUnknown},
		{"UnknownInstanceOrKeyIsNotFound", kvUnknown},
		{"IsolatedBetweenInstances", kvIsolation},
		{"SurvivesContinueAsNew", kvSurvivesCAN},
		{"WritesDroppedWithoutInstanceRecord", kvDroppedWithoutRecord},
		{"RejectedAckWritesNoKV", kvRejectedAck},
		{"EdgeValuesRoundTrip", kvEdgeValues},
		{"StatsUnknownInstanceIsNil", kvStatsUnknown},
		{"StatsHistoryOfCurrentExecution", kvStatsHistory},
		{"StatsQueuePendingCountIsCarryForward", kvStatsCarryForward},
		{"StatsKVStoreOnly", kvStatsStoreOnly},
		{"StatsKVDeltaOnly", kvStatsDeltaOnly},
		{"StatsKVDeltaOverStore", kvStatsMerged},
		{"StatsKVTombstoneOverStore", kvStatsTombstone},
	})
}

// kvSetIsLiveNotSnapshot proves a write is visible through GetKVValue /
// GetKVAllValues right after its ack, while the next fetch's KVSnapshot (the
// store) does not contain it (duroxide.Provider docs "KV (delta model)").
func kvSetIsLiveNotSnapshot(e *env) {
	in := kvStart(e, "kv")
	in.wantLive(nil, "a")
	in.turn("", kvSet("a", "1", 1))
	in.wantLive(map[string]string{"a": "1"})
	kvWantSnapshot(e.t, in.snapshot(), nil)
	in.wantLive(map[string]string{"a": "1"})
	kvWantSnapshot(e.t, in.snapshot(), nil)
}

// kvSnapshotIsStoreOnly proves that while an execution overwrites and adds
// keys, every fetch still sees the store as the previous execution left it.
func kvSnapshotIsStoreOnly(e *env) {
	in := kvStart(e, "kv")
	in.turn("", kvSet("a", "1", 1))
	kvWantSnapshot(e.t, in.continueAsNew().KVSnapshot, map[string]duroxide.KVEntry{"a": kvEntry("1", 1)})
	in.turn("", kvSet("a", "2", 2), kvSet("b", "3", 3))
	kvWantSnapshot(e.t, in.turn("", kvSet("c", "4", 4)).KVSnapshot, map[string]duroxide.KVEntry{"a": kvEntry("1", 1)})
	kvWantSnapshot(e.t, in.snapshot(), map[string]duroxide.KVEntry{"a": kvEntry("1", 1)})
	in.wantLive(map[string]string{"a": "2", "b": "3", "c": "4"})
}

// kvMergeOn proves an ack with terminal status merges the delta (writes of
// earlier turns and of the terminal ack itself) into the store: the next
// fetch's snapshot has the values with their LastUpdatedAtMs.
func kvMergeOn(e *env, status string) {
	in := kvStart(e, "kv")
	in.turn("", kvSet("a", "1", 1), kvSet("gone", "0", 2))
	in.turn("", kvClear("gone"))
	var next map[string]duroxide.KVEntry
	switch status {
	case "Completed":
		in.complete(kvSet("b", "2", 3))
		next = in.snapshot()
	case "Failed":
		in.fail(kvSet("b", "2", 3))
		next = in.snapshot()
	default:
		in.endAsNew(kvSet("b", "2", 3))
		next = in.startNext(nil).KVSnapshot
	}
	kvWantSnapshot(e.t, next, map[string]duroxide.KVEntry{"a": kvEntry("1", 1), "b": kvEntry("2", 3)})
	in.wantLive(map[string]string{"a": "1", "b": "2"}, "gone")
}

// kvNoMergeOnRunning proves an explicit non-terminal status ("Running")
// does not merge the delta.
func kvNoMergeOnRunning(e *env) {
	in := kvStart(e, "kv")
	in.turn("Running", kvSet("a", "1", 1))
	kvWantSnapshot(e.t, in.turn("Running").KVSnapshot, nil)
	in.wantLive(map[string]string{"a": "1"})
}

// kvOverwrite proves last writer wins, within a delta, across turns and over a
// stored value, and that the merged entry carries the last write's
// LastUpdatedAtMs (duroxide docs/provider-implementation-guide.md "updates
// last_updated_at_ms on overwrite").
func kvOverwrite(e *env) {
	in := kvStart(e, "kv")
	in.turn("", kvSet("a", "1", 1), kvSet("a", "2", 2))
	in.wantLive(map[string]string{"a": "2"})
	in.turn("", kvSet("a", "3", 3))
	in.wantLive(map[string]string{"a": "3"})
	kvWantSnapshot(e.t, in.continueAsNew().KVSnapshot, map[string]duroxide.KVEntry{"a": kvEntry("3", 3)})
	in.turn("", kvSet("a", "4", 4))
	in.wantLive(map[string]string{"a": "4"})
	kvWantSnapshot(e.t, in.snapshot(), map[string]duroxide.KVEntry{"a": kvEntry("3", 3)})
	in.complete()
	kvWantSnapshot(e.t, in.snapshot(), map[string]duroxide.KVEntry{"a": kvEntry("4", 4)})
}

// kvClearOne proves KeyValueCleared hides a stored key from the live view at
// once, keeps it in the snapshot until the merge, and removes it then.
func kvClearOne(e *env) {
	in := kvStart(e, "kv")
	in.turn("", kvSet("a", "1", 1), kvSet("b", "2", 2))
	in.continueAsNew()
	in.turn("", kvClear("a"))
	in.wantLive(map[string]string{"b": "2"}, "a")
	kvWantSnapshot(e.t, in.snapshot(), map[string]duroxide.KVEntry{"a": kvEntry("1", 1), "b": kvEntry("2", 2)})
	in.complete()
	kvWantSnapshot(e.t, in.snapshot(), map[string]duroxide.KVEntry{"b": kvEntry("2", 2)})
	in.wantLive(map[string]string{"b": "2"}, "a")
}

// kvClearAllThenSet proves KeyValuesCleared removes stored keys and keys of
// the current delta, and that a set after it survives.
func kvClearAllThenSet(e *env) {
	in := kvStart(e, "kv")
	in.turn("", kvSet("a", "1", 1), kvSet("b", "2", 2))
	in.continueAsNew()
	in.turn("", kvSet("c", "3", 3))
	in.turn("", duroxide.KeyValuesClearedEvent{}, kvSet("d", "4", 4))
	in.wantLive(map[string]string{"d": "4"}, "a", "b", "c")
	kvWantSnapshot(e.t, in.snapshot(), map[string]duroxide.KVEntry{"a": kvEntry("1", 1), "b": kvEntry("2", 2)})
	in.complete()
	kvWantSnapshot(e.t, in.snapshot(), map[string]duroxide.KVEntry{"d": kvEntry("4", 4)})
}

// kvDeltaOrder proves the KV events of one delta are applied in order.
func kvDeltaOrder(e *env) {
	in := kvStart(e, "kv")
	in.turn("", kvSet("a", "1", 1), kvClear("a"), kvSet("b", "1", 2), duroxide.KeyValuesClearedEvent{},
		kvSet("c", "1", 3), kvSet("a", "2", 4), kvClear("c"), kvSet("e", "5", 5))
	in.wantLive(map[string]string{"a": "2", "e": "5"}, "b", "c")
	in.complete()
	kvWantSnapshot(e.t, in.snapshot(), map[string]duroxide.KVEntry{"a": kvEntry("2", 4), "e": kvEntry("5", 5)})
}

// kvClearUnknown proves clearing a key that never existed creates nothing
// and leaves other keys alone.
func kvClearUnknown(e *env) {
	in := kvStart(e, "kv")
	in.turn("", kvSet("a", "1", 1))
	in.continueAsNew(kvClear("never"))
	in.turn("", kvClear("nope"))
	in.wantLive(map[string]string{"a": "1"}, "never", "nope")
	in.wantKVStats(1, 1)
	in.complete()
	kvWantSnapshot(e.t, in.snapshot(), map[string]duroxide.KVEntry{"a": kvEntry("1", 1)})
	in.wantKVStats(1, 1)
}

// kvUnknown proves a missing key or unknown instance is found=false / an empty
// map with no error (duroxide docs/provider-implementation-guide.md
// "get_kv_value() returns Ok(None)").
func kvUnknown(e *env) {
	kvWantLive(e, "ghost", nil, "a")
	in := kvStart(e, "kv")
	in.wantLive(nil, "a")
	in.turn("", kvSet("a", "1", 1))
	in.wantLive(map[string]string{"a": "1"}, "b", "A", "a ")
	e.enqueue(startItem("queued", "Orch"), 0) // enqueued only: no record
	kvWantLive(e, "queued", nil, "a")
}

// kvIsolation proves equal keys of different instances are independent in the
// live view, the snapshot and when cleared or merged (duroxide
// docs/provider-implementation-guide.md "KV entries are isolated between
// instances").
func kvIsolation(e *env) {
	a, b := kvStart(e, "inst-a"), kvStart(e, "inst-b")
	a.turn("", kvSet("k", "A", 1))
	b.turn("", kvSet("k", "B", 2), kvSet("only-b", "x", 3))
	a.wantLive(map[string]string{"k": "A"}, "only-b")
	b.wantLive(map[string]string{"k": "B", "only-b": "x"})
	a.complete(duroxide.KeyValuesClearedEvent{}, kvSet("k", "A2", 4))
	kvWantSnapshot(e.t, a.snapshot(), map[string]duroxide.KVEntry{"k": kvEntry("A2", 4)})
	kvWantSnapshot(e.t, b.snapshot(), nil)
	b.wantLive(map[string]string{"k": "B", "only-b": "x"})
	b.turn("", kvClear("k"))
	a.wantLive(map[string]string{"k": "A2"})
}

// kvSurvivesCAN proves KV is instance-scoped: each execution started by
// ContinueAsNew sees everything earlier executions merged.
func kvSurvivesCAN(e *env) {
	in := kvStart(e, "kv")
	in.turn("", kvSet("a", "1", 1))
	kvWantSnapshot(e.t, in.continueAsNew().KVSnapshot, map[string]duroxide.KVEntry{"a": kvEntry("1", 1)})
	in.turn("", kvSet("b", "2", 2))
	kvWantSnapshot(e.t, in.continueAsNew(kvSet("c", "3", 3)).KVSnapshot,
		map[string]duroxide.KVEntry{"a": kvEntry("1", 1), "b": kvEntry("2", 2), "c": kvEntry("3", 3)})
	kvWantSnapshot(e.t, in.snapshot(),
		map[string]duroxide.KVEntry{"a": kvEntry("1", 1), "b": kvEntry("2", 2), "c": kvEntry("3", 3)})
	in.wantLive(map[string]string{"a": "1", "b": "2", "c": "3"})
}

// kvDroppedWithoutRecord proves KV writes of an ack for an instance that has no
// record (no OrchestrationName in its metadata) are dropped, and a later ack
// that creates the record does not bring them back (duroxide.Provider docs
// "Instance creation").
func kvDroppedWithoutRecord(e *env) {
	e.enqueue(startItem("kv", "Orch"), 0)
	item := e.fetchInstance("kv")
	e.ack(item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID:  1,
		HistoryDelta: []duroxide.Event{started("kv", 1, "Orch", "1.0.0"), event(2, "kv", 1, kvSet("a", "1", 1))},
		Metadata:     duroxide.ExecutionMetadata{Status: "Completed"},
	})
	kvWantLive(e, "kv", nil, "a")
	kvStatsWantNil(e, "kv")
	e.enqueue(duroxide.ExternalRaised{Instance: "kv", Name: "poke", Data: `"x"`}, 0)
	item = e.fetchInstance("kv")
	kvWantSnapshot(e.t, item.KVSnapshot, nil)
	e.ack(item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID:  1,
		HistoryDelta: []duroxide.Event{event(3, "kv", 1, duroxide.ExternalEventEvent{Name: "poke", Data: `"x"`})},
		Metadata:     duroxide.ExecutionMetadata{OrchestrationName: "Orch", OrchestrationVersion: "1.0.0"},
	})
	kvWantLive(e, "kv", nil, "a")
	in := &kvInst{e: e, id: "kv", exec: 1, next: 4, hist: map[uint64][]duroxide.Event{}}
	in.wantKVStats(0, 0)
	kvWantSnapshot(e.t, in.snapshot(), nil)
}

// kvRejectedAck proves an ack rejected for a bad token or a duplicate event
// id applies none of its KV writes (ack atomicity).
func kvRejectedAck(e *env) {
	in := kvStart(e, "kv")
	in.turn("", kvSet("a", "1", 1))
	item := in.poke()
	bad := duroxide.OrchestrationCommit{ExecutionID: 1, HistoryDelta: []duroxide.Event{
		event(in.next, "kv", 1, kvSet("z", "9", 9)), event(2, "kv", 1, kvSet("a", "9", 9)),
	}, Metadata: duroxide.ExecutionMetadata{Status: "Completed"}}
	wantPermanent(e.t, e.p.AckOrchestrationItem(e.ctx, item.LockToken, bad), duroxide.ErrDuplicateEvent, "ack_orchestration_item")
	bad.HistoryDelta = bad.HistoryDelta[:1]
	wantPermanent(e.t, e.p.AckOrchestrationItem(e.ctx, "no-such-token", bad), duroxide.ErrLockLost, "ack_orchestration_item", "lock_token")
	in.wantLive(map[string]string{"a": "1"}, "z")
	in.wantKVStats(1, 1)
	in.wantHistoryStats()
	in.ack(item, duroxide.OrchestrationCommit{Metadata: duroxide.ExecutionMetadata{Status: "Completed"}})
	kvWantSnapshot(e.t, in.snapshot(), map[string]duroxide.KVEntry{"a": kvEntry("1", 1)})
}

// kvEdgeValues proves keys and values are opaque: empty values, separators,
// unicode, JSON and newlines survive the delta, the merge and the snapshot.
func kvEdgeValues(e *env) {
	vals := map[string]string{"empty": "", "a:b": "x:y:z", "x": "x", "ünï": "välüe ✓", "json": `{"k":[1,2]}`, "nl": "l1\nl2"}
	kinds := make([]duroxide.EventKind, 0, len(vals))
	snap := map[string]duroxide.KVEntry{}
	for i, k := range slices.Sorted(maps.Keys(vals)) {
		kinds = append(kinds, kvSet(k, vals[k], uint64(i)))
		snap[k] = kvEntry(vals[k], uint64(i))
	}
	in := kvStart(e, "kv")
	in.turn("", kinds...)
	in.wantLive(vals)
	in.complete()
	kvWantSnapshot(e.t, in.snapshot(), snap)
	in.wantLive(vals)
}

// kvStatsWantNil asserts GetInstanceStats reports no instance.
func kvStatsWantNil(e *env, instance string) {
	e.t.Helper()
	st, err := e.p.GetInstanceStats(e.ctx, instance)
	if err != nil || st != nil {
		e.t.Fatalf("GetInstanceStats(%q) = %+v, %v; want nil, nil", instance, st, err)
	}
}

// kvStatsUnknown proves GetInstanceStats is nil for an unknown instance and for
// one that was only enqueued (duroxide docs/provider-implementation-guide.md
// "or None for non-existent").
func kvStatsUnknown(e *env) {
	kvStatsWantNil(e, "ghost")
	e.enqueue(startItem("queued", "Orch"), 0)
	kvStatsWantNil(e, "queued")
}

// kvStatsHistory proves HistoryEventCount / HistorySizeBytes count the current
// execution's stored events (acked or appended) and their JSON bytes,
// restarting with each execution (duroxide.Provider docs "Instance stats").
func kvStatsHistory(e *env) {
	in := kvStart(e, "kv")
	in.wantHistoryStats()
	in.turn("", duroxide.ExternalEventEvent{Name: "poke", Data: `"x"`},
		duroxide.ActivityScheduledEvent{Name: "Act", Input: `"ünï <&>"`})
	in.turn("", duroxide.TimerCreatedEvent{FireAtMs: kvTS})
	in.wantHistoryStats()
	appended := in.events(duroxide.ExternalEventEvent{Name: "appended", Data: `"y"`})
	if err := e.p.AppendWithExecution(e.ctx, "kv", 1, appended); err != nil {
		e.t.Fatalf("AppendWithExecution: %v", err)
	}
	in.hist[1] = append(in.hist[1], appended...)
	in.wantHistoryStats()
	if st := in.stats(); st.HistoryEventCount != 5 {
		e.t.Fatalf("HistoryEventCount = %d, want 5", st.HistoryEventCount)
	}
	in.continueAsNew()
	in.wantHistoryStats()
	in.turn("", kvSet("a", "1", 1))
	in.wantHistoryStats()
}

// kvStatsCarryForward proves QueuePendingCount is the number of carry-forward
// events on the current execution's OrchestrationStarted, not a queue depth.
func kvStatsCarryForward(e *env) {
	in := kvStart(e, "kv")
	e.enqueue(duroxide.ExternalRaised{Instance: "kv", Name: "later", Data: "1"}, time.Minute)
	e.enqueue(duroxide.ExternalRaised{Instance: "kv", Name: "later", Data: "2"}, time.Minute)
	want := func(n uint64) {
		e.t.Helper()
		if st := in.stats(); st.QueuePendingCount != n {
			e.t.Fatalf("QueuePendingCount = %d, want %d (execution %d)", st.QueuePendingCount, n, in.exec)
		}
	}
	want(0)
	in.endAsNew()
	in.startNext(&[][2]string{{"q", "1"}, {"q", "2"}, {"r", "3"}})
	want(3)
	in.turn("", duroxide.QueueEventDeliveredEvent{Name: "q", Data: "1"})
	want(3)
	in.endAsNew()
	in.startNext(&[][2]string{})
	want(0)
	in.endAsNew()
	in.startNext(nil)
	want(0)
}

// kvStatsStoreOnly proves the KV counters of merged values with an empty
// delta.
func kvStatsStoreOnly(e *env) {
	in := kvStart(e, "kv")
	in.wantKVStats(0, 0)
	in.complete(kvSet("a", "xyz", 1), kvSet("b", "hello", 2))
	in.wantKVStats(2, 8)
}

// kvStatsDeltaOnly proves the KV counters of values written by the running
// execution only.
func kvStatsDeltaOnly(e *env) {
	in := kvStart(e, "kv")
	in.turn("", kvSet("a", "xyz", 1), kvSet("b", "hello", 2))
	in.wantKVStats(2, 8)
}

// kvStatsMerged proves KVUserKeyCount counts a key present in store and
// delta once, while KVTotalValueBytes counts the bytes held in both.
func kvStatsMerged(e *env) {
	in := kvStart(e, "kv")
	in.continueAsNew(kvSet("a", "xyz", 1), kvSet("b", "hello", 2))
	in.turn("", kvSet("a", "hi", 3), kvSet("c", "1234", 4))
	in.wantKVStats(3, 8+2+4)
	in.complete()
	in.wantKVStats(3, 2+5+4)
}

// kvStatsTombstone proves a cleared key stops counting as live at once while
// its stored value still counts as held bytes until the merge.
func kvStatsTombstone(e *env) {
	in := kvStart(e, "kv")
	in.continueAsNew(kvSet("a", "xyz", 1), kvSet("b", "hello", 2))
	in.turn("", kvClear("a"))
	in.wantKVStats(1, 8)
	in.turn("", duroxide.KeyValuesClearedEvent{})
	in.wantKVStats(0, 8)
	in.complete()
	in.wantKVStats(0, 0)
}
