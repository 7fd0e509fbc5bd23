package providertest

import (
	"testing"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The LazyHistory section: the optional duroxide.LazyHistoryFetcher, whose
// fetches return no history but a cursor saying where it ends. Its cases
// check the cursor against what the history holds after every kind of
// write (a new instance, acks, ContinueAsNew, AppendWithExecution, delete and
// create again), that the rest of a lazy item is the plain fetch's, and that
// an instance acked and fetched again in one lazy call keeps the cursor its
// commit implies. A provider without the interface skips the section. The
// orchestrator sections, the AckFetch section's orchestrator cases among
// them, are rerun through the lazy calls in lazyhistory_paths.go.

func init() { register("LazyHistory", runLazyHistory) }

// lzGroups lists the section's cases.
var lzGroups = []caseGroup{
	{"Cursor", []envCase{
		{"NewInstanceHasNoEvents", lzNewInstance},
		{"FollowsAcksWithSameIncarnation", lzFollowsAcks},
		{"ContinueAsNewMovesExecution", lzContinueAsNew},
		{"RecreatedInstanceHasNewIncarnation", lzRecreated},
		{"AppendWithExecutionMovesLastEventID", lzAppend},
		{"InstanceWithoutRecord", lzWithoutRecord},
	}},
	{"Fetch", []envCase{
		{"SameItemAsPlainFetch", lzSameAsPlain},
		{"FilterApplies", lzFilterApplies},
		{"LongPollReturnsWorkArrivingDuringWait", lzLongPoll},
	}},
	{"AckFetch", []envCase{
		{"RefetchesSameInstanceWithCursorOfCommit", lzAckFetchSameInstance},
	}},
}

func runLazyHistory(t *testing.T, h Harness) {
	p := h.New(t)
	if _, ok := p.(duroxide.LazyHistoryFetcher); !ok {
		t.Skipf("%s does not implement duroxide.LazyHistoryFetcher", p.Name())
	}
	_, ackFetch := p.(duroxide.OrchestrationAckFetcher)
	runGroups(t, h, lzGroups)
	runLazyPaths(t, h, ackFetch)
}

// lz is the provider's LazyHistoryFetcher.
func (e *env) lz() duroxide.LazyHistoryFetcher { return e.p.(duroxide.LazyHistoryFetcher) }

// lzFetch fetches lazily under filter f without waiting; nil when nothing
// is eligible. An item must have the lazy shape (lzWantShape).
func (e *env) lzFetch(f *duroxide.DispatcherCapabilityFilter) *duroxide.OrchestrationItem {
	e.t.Helper()
	item, err := e.lz().FetchOrchestrationItemLazy(e.ctx, longLock, 0, f)
	if err != nil {
		e.t.Fatalf("FetchOrchestrationItemLazy: %v", err)
	}
	if item != nil {
		e.lzWantShape(item)
	}
	return item
}

// lzFetchInstance fetches lazily and must get instance.
func (e *env) lzFetchInstance(instance string) *duroxide.OrchestrationItem {
	e.t.Helper()
	item := e.lzFetch(nil)
	if item == nil || item.Instance != instance {
		e.t.Fatalf("FetchOrchestrationItemLazy returned %v, want instance %q", lzName(item), instance)
	}
	return item
}

// lzName names a fetched instance for messages ("none" for nil).
func lzName(item *duroxide.OrchestrationItem) string {
	if item == nil {
		return "none"
	}
	return item.Instance
}

// lzWantShape asserts what sets a lazy item apart: no history, no history
// error, and a cursor of the item's execution.
func (e *env) lzWantShape(item *duroxide.OrchestrationItem) {
	e.t.Helper()
	if item.History != nil || item.HistoryError != "" || item.Cursor == nil {
		e.t.Fatalf("lazy item of %s: %d events, HistoryError %q, cursor %v; want History nil, no error, a cursor",
			item.Instance, len(item.History), item.HistoryError, item.Cursor)
	}
	if item.Cursor.ExecutionID != item.ExecutionID {
		e.t.Fatalf("lazy item of %s: cursor of execution %d, item of execution %d", item.Instance, item.Cursor.ExecutionID, item.ExecutionID)
	}
}

// lzWantCursor asserts item's cursor is (exec, last) and that the history
// ReadWithExecution returns for exec ends at event last; it returns the
// cursor.
func (e *env) lzWantCursor(item *duroxide.OrchestrationItem, exec, last uint64) duroxide.HistoryCursor {
	e.t.Helper()
	e.lzWantShape(item)
	c := *item.Cursor
	if c.ExecutionID != exec || c.LastEventID != last {
		e.t.Fatalf("cursor of %s is (execution %d, last event %d), want (%d, %d)", item.Instance, c.ExecutionID, c.LastEventID, exec, last)
	}
	if got := lastEventID(e.read(item.Instance, exec)); got != last {
		e.t.Fatalf("cursor of %s says execution %d ends at event %d; its history ends at %d", item.Instance, exec, last, got)
	}
	return c
}

// lzSameIncarnation asserts two cursors of one instance share an incarnation.
func lzSameIncarnation(t *testing.T, what string, got, want duroxide.HistoryCursor) {
	t.Helper()
	if got.Incarnation != want.Incarnation {
		t.Fatalf("%s: incarnation %q, want %q (the instance was not created again)", what, got.Incarnation, want.Incarnation)
	}
}

// lzTurn enqueues an external event for instance and fetches it lazily.
func (e *env) lzTurn(instance, n string) *duroxide.OrchestrationItem {
	e.t.Helper()
	e.enqueue(orcRaise(instance, n), 0)
	return e.lzFetchInstance(instance)
}

// lzCommit is a turn of execution exec with events ids and metadata m.
func lzCommit(instance string, exec uint64, m duroxide.ExecutionMetadata, ids ...uint64) duroxide.OrchestrationCommit {
	return duroxide.OrchestrationCommit{ExecutionID: exec, HistoryDelta: orcEvents(instance, exec, ids...), Metadata: m}
}

// lzNewInstance: an instance that has never run has a cursor of execution
// 1 with no events, and the rest of the item as a plain fetch fills it.
func lzNewInstance(e *env) {
	e.enqueue(startItem("lz-a", "Orch"), 0)
	item := e.lzFetchInstance("lz-a")
	e.lzWantCursor(item, duroxide.InitialExecutionID, 0)
	if item.OrchestrationName != "Orch" || item.AttemptCount != 1 || item.LockToken == "" {
		e.t.Fatalf("lazy item: name %q, attempt %d, token %q; want Orch, 1, a token", item.OrchestrationName, item.AttemptCount, item.LockToken)
	}
	e.wantMessages(item, startItem("lz-a", "Orch"))
	e.ack(item.LockToken, afStartCommit("lz-a"))
	e.afWantHistory("lz-a", 1)
}

// lzFollowsAcks: after every ack the cursor's last event id is the last
// event of the committed delta (an empty delta leaves it), and the
// incarnation stays that of the first fetch, before the ack that created the
// instance's record.
func lzFollowsAcks(e *env) {
	e.enqueue(startItem("lz-a", "Orch"), 0)
	item := e.lzFetchInstance("lz-a")
	first := e.lzWantCursor(item, 1, 0)
	e.ack(item.LockToken, afStartCommit("lz-a"))
	item = e.lzTurn("lz-a", "1")
	lzSameIncarnation(e.t, "after the first turn", e.lzWantCursor(item, 1, 1), first)
	e.ack(item.LockToken, lzCommit("lz-a", 1, duroxide.ExecutionMetadata{}, 2, 3))
	item = e.lzTurn("lz-a", "2")
	lzSameIncarnation(e.t, "after a turn of two events", e.lzWantCursor(item, 1, 3), first)
	e.ack(item.LockToken, lzCommit("lz-a", 1, duroxide.ExecutionMetadata{}))
	item = e.lzTurn("lz-a", "3")
	lzSameIncarnation(e.t, "after an empty turn", e.lzWantCursor(item, 1, 3), first)
}

// lzContinueAsNew: the turn ending an execution with ContinueAsNew moves its
// last event; the next execution's first turn moves the cursor to that
// execution. The incarnation stays.
func lzContinueAsNew(e *env) {
	e.start("lz-a", nil)
	item := e.lzTurn("lz-a", "end")
	first := e.lzWantCursor(item, 1, 1)
	e.ack(item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID:       1,
		HistoryDelta:      []duroxide.Event{event(2, "lz-a", 1, duroxide.OrchestrationContinuedAsNewEvent{Input: `"again"`})},
		OrchestratorItems: []duroxide.WorkItem{orcCAN("lz-a")},
		Metadata:          duroxide.ExecutionMetadata{Status: "ContinuedAsNew", Output: ptr(`"again"`)},
	})
	item = e.lzFetchInstance("lz-a")
	e.wantMessages(item, orcCAN("lz-a"))
	lzSameIncarnation(e.t, "fetching the ContinueAsNew", e.lzWantCursor(item, 1, 2), first)
	e.ack(item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID:  2,
		HistoryDelta: []duroxide.Event{started("lz-a", 2, "Orch", "1.0.0")},
		Metadata:     duroxide.ExecutionMetadata{Status: "Running", OrchestrationName: "Orch", OrchestrationVersion: "1.0.0"},
	})
	item = e.lzTurn("lz-a", "next")
	lzSameIncarnation(e.t, "in the new execution", e.lzWantCursor(item, 2, 1), first)
}

// lzRecreated: an instance deleted and created again with the same id
// reaches the same (execution, last event) with another incarnation,
// whichever fetch (plain or lazy) its first turn came through.
func lzRecreated(e *env) {
	a := adm(e)
	seen := map[string]bool{}
	for round, lazyStart := range []bool{true, false, true} {
		if lazyStart {
			e.enqueue(startItem("lz-a", "Orch"), 0)
			item := e.lzFetchInstance("lz-a")
			e.lzWantCursor(item, 1, 0)
			e.ack(item.LockToken, afStartCommit("lz-a"))
		} else {
			e.start("lz-a", nil)
		}
		item := e.lzTurn("lz-a", "x")
		c := e.lzWantCursor(item, 1, 1)
		if seen[c.Incarnation] {
			e.t.Fatalf("round %d: the instance created again has incarnation %q, as one before it", round, c.Incarnation)
		}
		seen[c.Incarnation] = true
		if _, err := a.DeleteInstance(e.ctx, "lz-a", true); err != nil {
			e.t.Fatalf("DeleteInstance: %v", err)
		}
	}
}

// lzAppend: events appended outside a turn move the cursor as an ack's do.
func lzAppend(e *env) {
	e.start("lz-a", nil)
	item := e.lzTurn("lz-a", "1")
	first := e.lzWantCursor(item, 1, 1)
	e.abandon(item.LockToken, 0, true)
	if err := e.p.AppendWithExecution(e.ctx, "lz-a", 1, orcEvents("lz-a", 1, 2, 3)); err != nil {
		e.t.Fatalf("AppendWithExecution: %v", err)
	}
	item = e.lzFetchInstance("lz-a")
	lzSameIncarnation(e.t, "after the append", e.lzWantCursor(item, 1, 3), first)
}

// lzWithoutRecord: for history written without a turn (no instance record,
// no StartOrchestration), the lazy item names the orchestration and version
// as the plain one does, from the history's OrchestrationStarted, and its
// cursor ends where that history does.
func lzWithoutRecord(e *env) {
	if err := e.p.AppendWithExecution(e.ctx, "lz-b", 1, []duroxide.Event{started("lz-b", 1, "Orch", "2.0.0")}); err != nil {
		e.t.Fatalf("AppendWithExecution: %v", err)
	}
	e.enqueue(orcRaise("lz-b", "1"), 0)
	plain := e.fetchInstance("lz-b")
	e.abandon(plain.LockToken, 0, true)
	item := e.lzFetchInstance("lz-b")
	e.lzWantCursor(item, 1, 1)
	if item.OrchestrationName != plain.OrchestrationName || item.Version != plain.Version || item.ExecutionID != plain.ExecutionID {
		e.t.Fatalf("lazy item: %q %q execution %d; plain item: %q %q execution %d", item.OrchestrationName, item.Version,
			item.ExecutionID, plain.OrchestrationName, plain.Version, plain.ExecutionID)
	}
}

// lzSameAsPlain: but for the history, a lazy item is the plain fetch's:
// name, version, execution, messages, KV snapshot and attempts (counted
// across both kinds of fetch); its lock is held, renewed, abandoned and
// acked like a plain one's. A plain item has no cursor.
func lzSameAsPlain(e *env) {
	in := kvStart(e, "lz-a")
	in.continueAsNew(kvSet("k", "v", 1))
	e.enqueue(orcRaise("lz-a", "1"), 0)
	e.enqueue(orcRaise("lz-a", "2"), 0)
	plain := e.fetchInstance("lz-a")
	if plain.Cursor != nil || len(plain.History) == 0 {
		e.t.Fatalf("plain item: cursor %+v, %d events; want no cursor and the history", plain.Cursor, len(plain.History))
	}
	e.abandon(plain.LockToken, 0, true)
	item := e.lzFetchInstance("lz-a")
	e.lzWantCursor(item, plain.ExecutionID, lastEventID(plain.History))
	if item.OrchestrationName != plain.OrchestrationName || item.Version != plain.Version ||
		item.ExecutionID != plain.ExecutionID || item.AttemptCount != plain.AttemptCount {
		e.t.Fatalf("lazy item %q %q execution %d attempt %d; plain item %q %q execution %d attempt %d",
			item.OrchestrationName, item.Version, item.ExecutionID, item.AttemptCount,
			plain.OrchestrationName, plain.Version, plain.ExecutionID, plain.AttemptCount)
	}
	e.wantMessages(item, plain.Messages...)
	kvWantSnapshot(e.t, item.KVSnapshot, plain.KVSnapshot)
	if len(item.KVSnapshot) == 0 || item.LockToken == plain.LockToken {
		e.t.Fatalf("lazy item: KV snapshot %v, token %q (plain %q); want the merged store and a new token",
			item.KVSnapshot, item.LockToken, plain.LockToken)
	}
	if got := e.lzFetch(nil); got != nil {
		e.t.Fatalf("fetched %s while the lazy fetch holds its lock", got.Instance)
	}
	if err := e.p.RenewOrchestrationItemLock(e.ctx, item.LockToken, longLock); err != nil {
		e.t.Fatalf("RenewOrchestrationItemLock of the lazy item: %v", err)
	}
	e.abandon(item.LockToken, 0, false)
	again := e.fetchInstance("lz-a")
	if again.AttemptCount != 2 {
		e.t.Fatalf("plain fetch after an abandoned lazy one: attempt %d, want 2", again.AttemptCount)
	}
	e.abandon(again.LockToken, 0, false)
	item = e.lzFetchInstance("lz-a")
	if item.AttemptCount != 3 {
		e.t.Fatalf("lazy fetch after an abandoned plain one: attempt %d, want 3", item.AttemptCount)
	}
	in.ack(item, duroxide.OrchestrationCommit{}, duroxide.ExternalEventEvent{Name: "ev", Data: "1"})
	e.noFetch(nil)
}

// lzFilterApplies: the capability filter selects instances for a lazy
// fetch and for the fetch half of a lazy ack-and-fetch as for plain ones.
func lzFilterApplies(e *env) {
	e.start("lz-p", ver(e.t, "2.0.0"))
	e.enqueue(orcRaise("lz-p", "1"), 0)
	for _, f := range []*duroxide.DispatcherCapabilityFilter{filter(e.t, "1.0.0", "1.0.0"), filter(e.t)} {
		if got := e.lzFetch(f); got != nil {
			e.t.Fatalf("a filter %v fetched %s, pinned at 2.0.0", f.SupportedDuroxideVersions, got.Instance)
		}
	}
	item := e.lzFetch(filter(e.t, "2.0.0", "2.0.0"))
	if item == nil || item.Instance != "lz-p" {
		e.t.Fatalf("filter 2.0.0 fetched %s, want lz-p", lzName(item))
	}
	e.enqueue(orcRaise("lz-p", "2"), 0)
	next, err := e.lz().AckOrchestrationItemAndFetchLazy(e.ctx, item.LockToken,
		lzCommit("lz-p", 1, duroxide.ExecutionMetadata{}, 2), longLock, 0, filter(e.t, "1.0.0", "1.0.0"))
	if next != nil || err != nil {
		e.t.Fatalf("ack-and-fetch with filter 1.0.0 = %v, %v; want nothing fetched", lzName(next), err)
	}
	item = e.lzFetch(filter(e.t, "2.0.0", "2.0.0"))
	if item == nil || item.Instance != "lz-p" {
		e.t.Fatalf("filter 2.0.0 fetched %s after the ack, want lz-p", lzName(item))
	}
	e.lzWantCursor(item, 1, 2)
}

// lzLongPoll: a lazy fetch with a poll timeout waits and returns an
// instance started during the wait.
func lzLongPoll(e *env) {
	var item *duroxide.OrchestrationItem
	ch := lpGo(func() (lpGot, error) {
		var err error
		item, err = e.lz().FetchOrchestrationItemLazy(e.ctx, longLock, lpWait, nil)
		return lpGot{id: lzName(item)}, err
	})
	lpBlock(e, 1)
	select {
	case r := <-ch:
		e.t.Fatalf("the fetch returned %s, %v before any work arrived", r.got.id, r.err)
	default:
	}
	e.enqueue(startItem("lz-a", "Orch"), 0)
	if r := lpRecv(e.t, ch, lpWait); r.err != nil || r.got.id != "lz-a" {
		e.t.Fatalf("FetchOrchestrationItemLazy = %s, %v; want lz-a, started while it waited", r.got.id, r.err)
	}
	e.lzWantCursor(item, 1, 0)
}

// ---- ack-and-fetch -----------------------------------------------------------

// lzAckFetchSameInstance: the instance acked and fetched again in one call
// (messages arrived during its turn) has the cursor of the commit, with the
// incarnation of the fetch before it: what a runtime's cached copy holds.
func lzAckFetchSameInstance(e *env) {
	e.enqueue(startItem("lz-a", "Orch"), 0)
	item := e.lzFetchInstance("lz-a")
	first := e.lzWantCursor(item, 1, 0)
	for i, ids := range [][]uint64{{1}, {2, 3, 4}} {
		e.enqueue(orcRaise("lz-a", "during"), 0)
		c := lzCommit("lz-a", 1, duroxide.ExecutionMetadata{OrchestrationName: "Orch", OrchestrationVersion: "1.0.0"}, ids...)
		next, err := e.lz().AckOrchestrationItemAndFetchLazy(e.ctx, item.LockToken, c, longLock, 0, nil)
		if err != nil || next == nil || next.Instance != "lz-a" {
			e.t.Fatalf("turn %d: AckOrchestrationItemAndFetchLazy = %v, %v; want lz-a again", i, lzName(next), err)
		}
		e.wantMessages(next, orcRaise("lz-a", "during"))
		lzSameIncarnation(e.t, "refetched", e.lzWantCursor(next, 1, ids[len(ids)-1]), first)
		item = next
	}
}
