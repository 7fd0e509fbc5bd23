package providertest

import (
	"reflect"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Attempt counts, the provider's half of poison-message detection (duroxide
// docs/provider-implementation-guide.md "Peek-Lock Semantics",
// abandon_orchestration_item / abandon_work_item; duroxide src/providers/mod.rs
// ignore_attempt "never below 0"; duroxide.Provider docs settled details
// "Abandon"): every fetch of a message counts an attempt, an abandon with
// ignoreAttempt takes it back, and a batch reports the largest count among its
// messages.

func init() { register("Attempts", runAttempts) }

// attDelay is an abandon delay long enough to observe that the work is not
// visible right after the abandon.
const attDelay = 1200 * time.Millisecond

// attVisibleWithin bounds the wait for delayed work to reappear.
const attVisibleWithin = attDelay + 2*time.Second

// runAttempts runs the orchestrator and worker attempt-count cases.
func runAttempts(t *testing.T, h Harness) {
	runCases(t, h, append(attOrchestratorCases(), attWorkerCases()...))
}

// attOrchestratorCases lists the orchestrator queue's attempt-count cases.
func attOrchestratorCases() []envCase {
	return []envCase{
		{"OrchestrationAttemptCountStartsAtOne", attOrchStartsAtOne},
		{"OrchestrationAttemptCountIncrementsPerFetch", attOrchPerFetch},
		{"OrchestrationAttemptCountIncrementsAfterLockExpiry", attOrchExpiry},
		{"OrchestrationAbandonIgnoreAttemptUndoesIncrement", attOrchIgnore},
		{"OrchestrationIgnoredAttemptsNeverGoBelowZero", attOrchFloor},
		{"OrchestrationAbandonExpiredLockIgnoreAttempt", attOrchExpiredIgnore},
		{"OrchestrationAbandonDelayStillCountsAttempt", attOrchDelay},
		{"OrchestrationBatchAttemptCountIsMaxOverMessages", attOrchBatchMax},
		{"OrchestrationLockExpiryRedeliversWithLateArrivals", attOrchLateArrival},
		{"OrchestrationAbandonAppliesToFetchedBatchOnly", attOrchBatchOnly},
		{"OrchestrationAckDoesNotCarryAttemptsToNewMessages", attOrchAckResets},
		{"OrchestrationAttemptCountIsPerInstance", attOrchPerInstance},
	}
}

// attWorkerCases lists the worker queue's attempt-count cases.
func attWorkerCases() []envCase {
	return []envCase{
		{"WorkerAttemptCountStartsAtOne", attWorkStartsAtOne},
		{"WorkerAttemptCountIncrementsPerFetch", attWorkPerFetch},
		{"WorkerAttemptCountIncrementsAfterLockExpiry", attWorkExpiry},
		{"WorkerAbandonIgnoreAttemptUndoesIncrement", attWorkIgnore},
		{"WorkerIgnoreAttemptAfterLockExpiry", attWorkExpiredIgnore},
		{"WorkerAbandonDelayStillCountsAttempt", attWorkDelay},
		{"WorkerAbandonDelayWithIgnoreAttempt", attWorkDelayIgnore},
		{"WorkerAttemptCountIsPerItem", attWorkPerItem},
		{"WorkerReenqueuedItemStartsAtOne", attWorkReenqueued},
	}
}

// ---- helpers ----------------------------------------------------------------

// attPoke is an orchestrator message for instance, distinguished by n.
func attPoke(instance, n string) duroxide.WorkItem {
	return duroxide.ExternalRaised{Instance: instance, Name: "ev", Data: `"` + n + `"`}
}

// attFetch fetches an orchestration item that must hold exactly msgs (at
// least one) with the given attempt count; it must be next in enqueue order
// (fetchInOrder).
func attFetch(e *env, lock time.Duration, attempts uint32, msgs ...duroxide.WorkItem) *duroxide.OrchestrationItem {
	e.t.Helper()
	item := e.fetchInOrder(msgs[0].InstanceID(), func() *duroxide.OrchestrationItem { return e.mustFetch(lock) })
	if !reflect.DeepEqual(item.Messages, msgs) {
		e.t.Fatalf("messages = %#v, want %#v", item.Messages, msgs)
	}
	if item.AttemptCount != attempts {
		e.t.Fatalf("AttemptCount = %d, want %d", item.AttemptCount, attempts)
	}
	return item
}

// attCycle fetches msgs expecting each count in turn, abandoning after each
// fetch (ignoreAttempt as given).
func attCycle(e *env, ignore bool, counts []uint32, msgs ...duroxide.WorkItem) {
	e.t.Helper()
	for _, c := range counts {
		e.abandon(attFetch(e, longLock, c, msgs...).LockToken, 0, ignore)
	}
}

// attFetchWork fetches a worker item that must be item with the given
// attempt count.
func attFetchWork(e *env, lock time.Duration, attempts uint32, item duroxide.WorkItem) *duroxide.LockedWorkItem {
	e.t.Helper()
	w := e.fetchWork(lock, nil, duroxide.DefaultOnly())
	if w == nil {
		e.t.Fatalf("FetchWorkItem returned nothing, want %#v", item)
	}
	if !reflect.DeepEqual(w.Item, item) || w.AttemptCount != attempts {
		e.t.Fatalf("FetchWorkItem = %#v (attempt %d), want %#v (attempt %d)", w.Item, w.AttemptCount, item, attempts)
	}
	return w
}

// attWaitFetch lets attDelay pass, waits for an orchestration item to become
// fetchable and checks its messages and attempt count.
func attWaitFetch(e *env, attempts uint32, msgs ...duroxide.WorkItem) {
	e.t.Helper()
	e.wait(attDelay)
	item, _ := e.waitFetch(attVisibleWithin, "delayed orchestration work visible")
	if !reflect.DeepEqual(item.Messages, msgs) || item.AttemptCount != attempts {
		e.t.Fatalf("fetch = %#v (attempt %d), want %#v (attempt %d)", item.Messages, item.AttemptCount, msgs, attempts)
	}
}

// attWaitWork lets attDelay pass, waits for a worker item to become
// fetchable and checks it.
func attWaitWork(e *env, attempts uint32, item duroxide.WorkItem) {
	e.t.Helper()
	e.wait(attDelay)
	var w *duroxide.LockedWorkItem
	eventually(e.t, attVisibleWithin, "delayed worker item visible", func() bool {
		w = e.fetchWork(longLock, nil, duroxide.DefaultOnly())
		return w != nil
	})
	if !reflect.DeepEqual(w.Item, item) || w.AttemptCount != attempts {
		e.t.Fatalf("FetchWorkItem = %#v (attempt %d), want %#v (attempt %d)", w.Item, w.AttemptCount, item, attempts)
	}
}

// ---- orchestrator queue ----------------------------------------------------------

// attOrchStartsAtOne proves the first fetch of a message reports attempt 1
// (duroxide src/providers/mod.rs fetch_orchestration_item: "number of times
// this item has been fetched").
func attOrchStartsAtOne(e *env) {
	e.enqueue(startItem("A", "Orch"), 0)
	attFetch(e, longLock, 1, startItem("A", "Orch"))
}

// attOrchPerFetch proves each fetch after a counted abandon adds one (duroxide
// docs/provider-implementation-guide.md abandon: attempt_count unchanged unless
// ignore_attempt).
func attOrchPerFetch(e *env) {
	e.enqueue(startItem("A", "Orch"), 0)
	attCycle(e, false, []uint32{1, 2, 3, 4}, startItem("A", "Orch"))
}

// attOrchExpiry proves a re-fetch after lock expiry counts an attempt, as a
// crashed dispatcher's delivery must (duroxide
// docs/provider-implementation-guide.md peek-lock 2c; duroxide.Provider docs).
func attOrchExpiry(e *env) {
	e.enqueue(startItem("A", "Orch"), 0)
	attFetch(e, shortLock, 1, startItem("A", "Orch"))
	e.wait(afterShort)
	attCycle(e, false, []uint32{2, 3}, startItem("A", "Orch"))
}

// attOrchIgnore proves abandon with ignoreAttempt undoes the fetch's increment,
// and only that one (duroxide docs/provider-implementation-guide.md / duroxide
// src/providers/mod.rs ignore_attempt).
func attOrchIgnore(e *env) {
	e.enqueue(startItem("A", "Orch"), 0)
	attCycle(e, false, []uint32{1}, startItem("A", "Orch"))
	attCycle(e, true, []uint32{2, 2, 2}, startItem("A", "Orch"))
	attCycle(e, false, []uint32{2, 3}, startItem("A", "Orch"))
}

// attOrchFloor proves repeated ignored attempts leave the count at zero between
// fetches, so each fetch reports 1: it never drifts below 0 or wraps (duroxide
// src/providers/mod.rs "never below 0").
func attOrchFloor(e *env) {
	e.enqueue(startItem("A", "Orch"), 0)
	attCycle(e, true, []uint32{1, 1, 1, 1}, startItem("A", "Orch"))
}

// attOrchExpiredIgnore proves abandoning an expired, not yet reclaimed lock
// with ignoreAttempt succeeds and takes the attempt back (duroxide.Provider
// docs).
func attOrchExpiredIgnore(e *env) {
	e.enqueue(startItem("A", "Orch"), 0)
	item := attFetch(e, shortLock, 1, startItem("A", "Orch"))
	e.wait(afterShort)
	e.abandon(item.LockToken, 0, true)
	attFetch(e, longLock, 1, startItem("A", "Orch"))
}

// attOrchDelay proves an abandon with a delay hides the batch for the delay and
// still counts the attempt (duroxide docs/provider-implementation-guide.md
// abandon delay).
func attOrchDelay(e *env) {
	e.enqueue(startItem("A", "Orch"), 0)
	e.abandon(attFetch(e, longLock, 1, startItem("A", "Orch")).LockToken, attDelay, false)
	e.noFetch(nil)
	attWaitFetch(e, 2, startItem("A", "Orch"))
}

// attOrchBatchMax proves a batch reports the largest count among its messages:
// a fresh message joining retried ones does not reset it, and an ignored
// attempt is taken back from each message (duroxide
// docs/provider-implementation-guide.md fetch step 3 and abandon;
// duroxide.Provider docs settled details "Abandon").
func attOrchBatchMax(e *env) {
	e.enqueue(startItem("A", "Orch"), 0)
	attCycle(e, false, []uint32{1, 2}, startItem("A", "Orch"))
	e.enqueue(attPoke("A", "late"), 0)
	attCycle(e, true, []uint32{3, 3}, startItem("A", "Orch"), attPoke("A", "late"))
	attCycle(e, false, []uint32{3, 4}, startItem("A", "Orch"), attPoke("A", "late"))
}

// attOrchLateArrival proves a message that arrived while the instance was
// locked is not counted by that fetch: after expiry the re-delivered batch
// holds both, counting the old one's second attempt (duroxide.Provider docs;
// duroxide docs/provider-implementation-guide.md "Messages arriving after fetch
// are NOT tagged").
func attOrchLateArrival(e *env) {
	e.enqueue(startItem("A", "Orch"), 0)
	attFetch(e, shortLock, 1, startItem("A", "Orch"))
	e.enqueue(attPoke("A", "late"), 0)
	e.wait(afterShort)
	attCycle(e, true, []uint32{2, 2}, startItem("A", "Orch"), attPoke("A", "late"))
}

// attOrchBatchOnly proves an abandon's delay and count apply to the fetched
// batch only: a message that arrived during the lock is fetchable at once as a
// first attempt, and the delayed one returns later at attempt 2
// (duroxide.Provider docs settled details "Abandon").
func attOrchBatchOnly(e *env) {
	e.start("A", nil)
	e.enqueue(attPoke("A", "first"), 0)
	item := attFetch(e, longLock, 1, attPoke("A", "first"))
	e.enqueue(attPoke("A", "late"), 0)
	e.abandon(item.LockToken, attDelay, false)
	item = attFetch(e, longLock, 1, attPoke("A", "late"))
	e.ack(item.LockToken, duroxide.OrchestrationCommit{ExecutionID: 1})
	attWaitFetch(e, 2, attPoke("A", "first"))
}

// attOrchAckResets proves an ack carries no attempts over: messages enqueued
// after it start at 1 (duroxide docs/provider-implementation-guide.md ack
// deletes the processed messages).
func attOrchAckResets(e *env) {
	e.enqueue(startItem("A", "Orch"), 0)
	attCycle(e, false, []uint32{1, 2}, startItem("A", "Orch"))
	item := attFetch(e, longLock, 3, startItem("A", "Orch"))
	e.ack(item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID:  1,
		HistoryDelta: []duroxide.Event{started("A", 1, "Orch", "1.0.0")},
		Metadata:     duroxide.ExecutionMetadata{OrchestrationName: "Orch", OrchestrationVersion: "1.0.0"},
	})
	e.noFetch(nil)
	e.enqueue(attPoke("A", "next"), 0)
	attFetch(e, longLock, 1, attPoke("A", "next"))
}

// attOrchPerInstance proves attempts belong to messages: retrying one instance
// leaves another's first fetch at 1 (duroxide
// docs/provider-implementation-guide.md peek-lock).
func attOrchPerInstance(e *env) {
	e.enqueue(startItem("A", "Orch"), 0)
	attCycle(e, false, []uint32{1, 2}, startItem("A", "Orch"))
	e.enqueue(startItem("B", "Orch"), 0)
	attFetch(e, longLock, 3, startItem("A", "Orch"))
	attFetch(e, longLock, 1, startItem("B", "Orch"))
}

// ---- worker queue --------------------------------------------------------------

// attWorkStartsAtOne proves the first worker fetch reports attempt 1 (duroxide
// docs/provider-implementation-guide.md checklist: fetch_work_item increments
// attempt_count).
func attWorkStartsAtOne(e *env) {
	e.enqueueWork(activity("A", 2))
	attFetchWork(e, longLock, 1, activity("A", 2))
}

// attWorkPerFetch proves each re-fetch after a counted abandon adds one
// (duroxide docs/provider-implementation-guide.md abandon_work_item).
func attWorkPerFetch(e *env) {
	e.enqueueWork(activity("A", 2))
	for _, c := range []uint32{1, 2, 3, 4} {
		e.abandonWork(attFetchWork(e, longLock, c, activity("A", 2)).LockToken, 0, false)
	}
}

// attWorkExpiry proves a re-fetch after worker lock expiry counts an attempt
// (duroxide docs/provider-implementation-guide.md peek-lock 2c).
func attWorkExpiry(e *env) {
	e.enqueueWork(activity("A", 2))
	attFetchWork(e, shortLock, 1, activity("A", 2))
	e.wait(afterShort)
	attFetchWork(e, shortLock, 2, activity("A", 2))
	e.wait(afterShort)
	attFetchWork(e, longLock, 3, activity("A", 2))
}

// attWorkIgnore proves AbandonWorkItem with ignoreAttempt undoes the fetch's
// increment and never goes below zero (duroxide src/providers/mod.rs
// abandon_work_item).
func attWorkIgnore(e *env) {
	e.enqueueWork(activity("A", 2))
	for _, step := range []struct {
		want   uint32
		ignore bool
	}{{1, true}, {1, true}, {1, false}, {2, true}, {2, true}, {2, false}, {3, false}} {
		e.abandonWork(attFetchWork(e, longLock, step.want, activity("A", 2)).LockToken, 0, step.ignore)
	}
}

// attWorkExpiredIgnore proves the attempt counted by a re-fetch after expiry is
// the one ignoreAttempt takes back (duroxide src/providers/mod.rs
// abandon_work_item).
func attWorkExpiredIgnore(e *env) {
	e.enqueueWork(activity("A", 2))
	attFetchWork(e, shortLock, 1, activity("A", 2))
	e.wait(afterShort)
	e.abandonWork(attFetchWork(e, longLock, 2, activity("A", 2)).LockToken, 0, true)
	attFetchWork(e, longLock, 2, activity("A", 2))
}

// attWorkDelay proves a delayed abandon hides the item for the delay and still
// counts the attempt (duroxide docs/provider-implementation-guide.md
// abandon_work_item delay).
func attWorkDelay(e *env) {
	e.enqueueWork(activity("A", 2))
	e.abandonWork(attFetchWork(e, longLock, 1, activity("A", 2)).LockToken, attDelay, false)
	e.noWork(duroxide.AnyTag())
	attWaitWork(e, 2, activity("A", 2))
}

// attWorkDelayIgnore proves delay and ignoreAttempt combine: hidden for the
// delay, then fetched at the same count (duroxide src/providers/mod.rs
// abandon_work_item).
func attWorkDelayIgnore(e *env) {
	e.enqueueWork(activity("A", 2))
	e.abandonWork(attFetchWork(e, longLock, 1, activity("A", 2)).LockToken, 0, false)
	e.abandonWork(attFetchWork(e, longLock, 2, activity("A", 2)).LockToken, attDelay, true)
	e.noWork(duroxide.AnyTag())
	attWaitWork(e, 2, activity("A", 2))
}

// attWorkPerItem proves worker attempts are per item: a retried item keeps its
// count while a fresh one starts at 1 (duroxide
// docs/provider-implementation-guide.md peek-lock).
func attWorkPerItem(e *env) {
	e.enqueueWork(activity("A", 2))
	for _, c := range []uint32{1, 2} {
		e.abandonWork(attFetchWork(e, longLock, c, activity("A", 2)).LockToken, 0, false)
	}
	e.enqueueWork(activity("A", 3))
	attFetchWork(e, longLock, 3, activity("A", 2))
	attFetchWork(e, longLock, 1, activity("A", 3))
}

// attWorkReenqueued proves an acked item's attempts die with it: the same
// activity enqueued again starts at 1 (duroxide
// docs/provider-implementation-guide.md ack_work_item deletes).
func attWorkReenqueued(e *env) {
	e.enqueueWork(activity("A", 2))
	e.abandonWork(attFetchWork(e, longLock, 1, activity("A", 2)).LockToken, 0, false)
	w := attFetchWork(e, longLock, 2, activity("A", 2))
	e.ackWork(w.LockToken, nil)
	e.noWork(duroxide.AnyTag())
	e.enqueueWork(activity("A", 2))
	attFetchWork(e, longLock, 1, activity("A", 2))
}
