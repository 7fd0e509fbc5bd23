package providertest

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The Worker section: the worker queue (peek-lock, FIFO, ack / abandon /
// renew), activity tag filtering, session-less fetching, lock-stealing
// cancellation through an orchestration ack, and the rejection of invalid
// worker-queue input. References: duroxide
// docs/provider-implementation-guide.md "Validation Checklist" (Worker Queue,
// Activity Tag Filtering), "Activity Cancellation via Lock Stealing" and
// pitfall 4; provider_validation::queue_semantics tests; duroxide
// src/providers/mod.rs worker methods; duroxide.Provider docs "Invalid input"
// and the ack order of ack_orchestration_item.

func init() { register("Worker", runWorker) }

// wkCases lists the section's cases in the order they are registered.
var wkCases = []envCase{
	// worker queue
	{"FetchEmptyQueueReturnsNothing", wkFetchEmptyQueueReturnsNothing},
	{"FetchReturnsEnqueuedItemUnchanged", wkFetchReturnsEnqueuedItemUnchanged},
	{"FetchLocksWithUniqueTokens", wkFetchLocksWithUniqueTokens},
	{"WorkerPeekLockSemantics", wkWorkerPeekLockSemantics},
	{"FetchIncrementsAttemptCount", wkFetchIncrementsAttemptCount},
	{"WorkerQueueFIFOOrdering", wkWorkerQueueFIFOOrdering},
	{"WorkerAckAtomicity", wkWorkerAckAtomicity},
	{"LostLockTokenHandling", wkLostLockTokenHandling},
	{"AckUnknownTokenFails", wkAckUnknownTokenFails},
	{"AckExpiredLockFailsAndRedelivers", wkAckExpiredLockFailsAndRedelivers},
	{"AckNilCompletionOnlyDeletes", wkAckNilCompletionOnlyDeletes},
	{"AckCompletionGoesToItsInstance", wkAckCompletionGoesToItsInstance},
	{"AckTwiceFails", wkAckTwiceFails},
	{"AbandonMakesItemVisibleAgain", wkAbandonMakesItemVisibleAgain},
	{"AbandonWithDelayHidesItemUntilDelay", wkAbandonWithDelayHidesItemUntilDelay},
	{"AbandonIgnoreAttemptUndoesCount", wkAbandonIgnoreAttemptUndoesCount},
	{"AbandonUnknownTokenFails", wkAbandonUnknownTokenFails},
	{"RenewExtendsLockPastOriginalExpiry", wkRenewExtendsLockPastOriginalExpiry},
	{"RenewExpiredLockFails", wkRenewExpiredLockFails},
	{"RenewUnknownTokenFails", wkRenewUnknownTokenFails},
	{"RenewAfterAckFails", wkRenewAfterAckFails},
	// tag filtering
	{"DefaultOnlyReturnsOnlyUntagged", wkDefaultOnlyReturnsOnlyUntagged},
	{"TagsOnlyReturnsOnlyMemberTags", wkTagsOnlyReturnsOnlyMemberTags},
	{"TagsOnlySeveralTags", wkTagsOnlySeveralTags},
	{"DefaultAndReturnsUntaggedAndMemberTags", wkDefaultAndReturnsUntaggedAndMemberTags},
	{"DefaultAndPicksOldestAcrossQueues", wkDefaultAndPicksOldestAcrossQueues},
	{"AnyTagReturnsEverythingInEnqueueOrder", wkAnyTagReturnsEverythingInEnqueueOrder},
	{"NoTagsReturnsNothing", wkNoTagsReturnsNothing},
	{"NoTagsWaitsOutPollTimeout", wkNoTagsWaitsOutPollTimeout},
	{"EmptyStringTagIsNotUntagged", wkEmptyStringTagIsNotUntagged},
	{"TagPersistsThroughEnqueueForWorker", wkTagPersistsThroughEnqueueForWorker},
	{"TagPersistsThroughOrchestrationAck", wkTagPersistsThroughOrchestrationAck},
	{"InvalidTagFilterTagsOnlyNoTags", wkInvalidTagFilter(duroxide.TagsOnly())},
	{"InvalidTagFilterTagsOnlySixTags", wkInvalidTagFilter(duroxide.TagsOnly("a", "b", "c", "d", "e", "f"))},
	{"InvalidTagFilterDefaultAndNoTags", wkInvalidTagFilter(duroxide.DefaultAndTags())},
	{"InvalidTagFilterUnknownKind", wkInvalidTagFilter(duroxide.TagFilter{Kind: duroxide.TagFilterKind(99)})},
	// sessions
	{"NoSessionConfigSkipsSessionItems", wkNoSessionConfigSkipsSessionItems},
	// lock-stealing cancellation
	{"CancelQueuedActivity", wkCancelQueuedActivity},
	{"CancelLockedActivity", wkCancelLockedActivity},
	{"CancelledLockedActivityNeverRedelivered", wkCancelledLockedActivityNeverRedelivered},
	{"SameTurnScheduleAndCancel", wkSameTurnScheduleAndCancel},
	{"CancelLeavesOtherActivitiesUntouched", wkCancelLeavesOtherActivitiesUntouched},
	{"CancelOfFinishedActivityIsIgnored", wkCancelOfFinishedActivityIsIgnored},
	// invalid input
	{"EnqueueForWorkerRejectsStartOrchestration", wkEnqueueRejected(startItem("wk-a", "Orch"))},
	{"EnqueueForWorkerRejectsActivityCompleted", wkEnqueueRejected(completed("wk-a", 2))},
	{"EnqueueForWorkerRejectsNil", wkEnqueueRejected(nil)},
	{"EnqueueForWorkerRejectsEmptyInstance", wkEnqueueRejected(activity("", 2))},
	{"AckWithActivityExecuteCompletionRejected", wkAckWithActivityExecuteCompletionRejected},
	{"NegativeFetchLockTimeoutRejected", wkNegativeFetchRejected(-time.Second, 0)},
	{"NegativeFetchPollTimeoutRejected", wkNegativeFetchRejected(longLock, -time.Second)},
	{"NegativeAbandonDelayRejected", wkNegativeAbandonDelayRejected},
	{"NegativeRenewExtendRejected", wkNegativeRenewExtendRejected},
	{"EmptyLockTokenAckRejected", wkEmptyTokenRejected("ack_work_item", func(e *env) error {
		return e.p.AckWorkItem(e.ctx, "", nil)
	})},
	{"EmptyLockTokenAbandonRejected", wkEmptyTokenRejected("abandon_work_item", func(e *env) error {
		return e.p.AbandonWorkItem(e.ctx, "", 0, false)
	})},
	{"EmptyLockTokenRenewRejected", wkEmptyTokenRejected("renew_work_item_lock", func(e *env) error {
		return e.p.RenewWorkItemLock(e.ctx, "", longLock)
	})},
}

// runWorker runs every case of the Worker section on a fresh provider.
func runWorker(t *testing.T, h Harness) {
	runCases(t, h, wkCases)
}

// ---- helpers -----------------------------------------------------------------

// wkMediumLock is a lock that must hold only until the test renews it right
// after the fetch (about a second of slack); wkAfterMedium is a wait after
// which it has surely expired unless renewed.
const (
	wkMediumLock  = time.Second
	wkAfterMedium = wkMediumLock + 500*time.Millisecond
)

// wkSessionCfg is a session routing config of one owner with a long lock.
var wkSessionCfg = &duroxide.SessionFetchConfig{OwnerID: "wk-owner", LockTimeout: longLock}

// wkTagged is activity(instance, id) carrying tag.
func wkTagged(instance string, id uint64, tag string) duroxide.ActivityExecute {
	a := activity(instance, id)
	a.Tag = ptr(tag)
	return a
}

// wkEnqueueAll sends items to the worker queue in order.
func (e *env) wkEnqueueAll(items ...duroxide.ActivityExecute) {
	e.t.Helper()
	for _, it := range items {
		e.enqueueWork(it)
	}
}

// wkWantItem asserts that a fetched worker item holds exactly want.
func (e *env) wkWantItem(got *duroxide.LockedWorkItem, want duroxide.ActivityExecute) {
	e.t.Helper()
	if !reflect.DeepEqual(got.Item, want) {
		e.t.Fatalf("fetched %#v, want %#v", got.Item, want)
	}
}

// wkWantOrder fetches under f exactly the items want, in that order (among
// ordered instances: nextInOrder), then nothing more; it returns the locked
// items (held with longLock), in the order of want.
func (e *env) wkWantOrder(f duroxide.TagFilter, want ...duroxide.ActivityExecute) []*duroxide.LockedWorkItem {
	e.t.Helper()
	got := make([]*duroxide.LockedWorkItem, len(want))
	left := make([]int, len(want))
	for i := range left {
		left[i] = i
	}
	for range want {
		item := e.mustFetchWork(longLock, f)
		k := e.nextInOrder(left, func(i int) string { return want[i].Instance }, item.Item.InstanceID())
		if k < 0 {
			e.t.Fatalf("fetched %#v, want no more items of its partition", item.Item)
		}
		e.wkWantItem(item, want[k])
		got[k] = item
		left = slices.DeleteFunc(left, func(i int) bool { return i == k })
	}
	e.noWork(f)
	return got
}

// wkWantAttempts asserts the attempt count of each locked item.
func (e *env) wkWantAttempts(items []*duroxide.LockedWorkItem, n uint32) {
	e.t.Helper()
	for _, it := range items {
		if it.AttemptCount != n {
			e.t.Fatalf("AttemptCount of %+v = %d, want %d", it.Item, it.AttemptCount, n)
		}
	}
}

// wkStartAll creates each instance with a first turn (unpinned).
func (e *env) wkStartAll(instances ...string) {
	e.t.Helper()
	for _, in := range instances {
		e.start(in, nil)
	}
}

// wkTurn runs one orchestration turn of a started instance: a message
// triggers it, it is fetched and acked with c (execution 1). It returns the
// fetched item.
func (e *env) wkTurn(instance string, c duroxide.OrchestrationCommit) *duroxide.OrchestrationItem {
	e.t.Helper()
	e.enqueue(duroxide.ExternalRaised{Instance: instance, Name: "wk", Data: "turn"}, 0)
	item := e.fetchInstance(instance)
	c.ExecutionID = 1
	e.ack(item.LockToken, c)
	return item
}

// wkScheduled is the ActivityScheduled event (id = act.ID) of act.
func wkScheduled(act duroxide.ActivityExecute) duroxide.Event {
	return event(act.ID, act.Instance, act.ExecutionID, duroxide.ActivityScheduledEvent{
		Name: act.Name, Input: act.Input, SessionID: act.SessionID, Tag: act.Tag,
	})
}

// wkSchedule runs a turn of instance that schedules acts through the ack's
// WorkerItems (with their ActivityScheduled events).
func (e *env) wkSchedule(instance string, acts ...duroxide.ActivityExecute) {
	e.t.Helper()
	var c duroxide.OrchestrationCommit
	for _, a := range acts {
		c.HistoryDelta = append(c.HistoryDelta, wkScheduled(a))
		c.WorkerItems = append(c.WorkerItems, a)
	}
	e.wkTurn(instance, c)
}

// wkCancels names activities ids of execution 1 of instance.
func wkCancels(instance string, ids ...uint64) []duroxide.ScheduledActivityIdentifier {
	var out []duroxide.ScheduledActivityIdentifier
	for _, id := range ids {
		out = append(out, duroxide.ScheduledActivityIdentifier{Instance: instance, ExecutionID: 1, ActivityID: id})
	}
	return out
}

// wkCancel runs a turn of instance that records a cancel request (event
// eventID) and cancels activities ids of execution 1; it returns the
// fetched item.
func (e *env) wkCancel(instance string, eventID uint64, ids ...uint64) *duroxide.OrchestrationItem {
	e.t.Helper()
	return e.wkTurn(instance, duroxide.OrchestrationCommit{
		HistoryDelta:        []duroxide.Event{event(eventID, instance, 1, duroxide.ActivityCancelRequestedEvent{Reason: "wk"})},
		CancelledActivities: wkCancels(instance, ids...),
	})
}

// wkWantMessages fetches the next orchestration item and asserts that it is
// instance's with exactly the messages want; with no want, that no
// orchestration work is available at all.
func (e *env) wkWantMessages(instance string, want ...duroxide.WorkItem) {
	e.t.Helper()
	if len(want) == 0 {
		e.noFetch(nil)
		return
	}
	item := e.fetchInstance(instance)
	if !reflect.DeepEqual(item.Messages, want) {
		e.t.Fatalf("messages of %q = %#v, want %#v", instance, item.Messages, want)
	}
}

// ---- worker queue ------------------------------------------------------------

// wkFetchEmptyQueueReturnsNothing: fetch_work_item returns None when the queue
// is empty, under every filter (duroxide docs/provider-implementation-guide.md
// checklist, Worker Queue).
func wkFetchEmptyQueueReturnsNothing(e *env) {
	for _, f := range []duroxide.TagFilter{duroxide.DefaultOnly(), duroxide.AnyTag(), duroxide.TagsOnly("a"), duroxide.DefaultAndTags("a")} {
		w, err := e.p.FetchWorkItem(e.ctx, longLock, 0, nil, f)
		if err != nil || w != nil {
			e.t.Fatalf("FetchWorkItem(%v) on empty queue = %+v, %v; want nil, nil", f.Kind, w, err)
		}
	}
}

// wkFetchReturnsEnqueuedItemUnchanged: the fetched item is the enqueued
// ActivityExecute field for field, with a non-empty token and attempt 1.
func wkFetchReturnsEnqueuedItemUnchanged(e *env) {
	want := duroxide.ActivityExecute{Instance: "wk-a", ExecutionID: 3, ID: 7, Name: "Charge", Input: `{"amount":5}`}
	e.enqueueWork(want)
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	e.wkWantItem(w, want)
	if w.LockToken == "" || w.AttemptCount != 1 {
		e.t.Fatalf("LockToken %q AttemptCount %d, want a token and 1", w.LockToken, w.AttemptCount)
	}
}

// wkFetchLocksWithUniqueTokens: every fetch locks with a token of its own, also
// when the same item is fetched again (duroxide
// docs/provider-implementation-guide.md checklist).
func wkFetchLocksWithUniqueTokens(e *env) {
	e.wkEnqueueAll(activity("wk-a", 2), activity("wk-a", 3), activity("wk-b", 2))
	seen := map[string]bool{}
	for _, w := range e.wkWantOrder(duroxide.AnyTag(), activity("wk-a", 2), activity("wk-a", 3), activity("wk-b", 2)) {
		seen[w.LockToken] = true
		e.abandonWork(w.LockToken, 0, false)
	}
	for _, w := range e.wkWantOrder(duroxide.AnyTag(), activity("wk-a", 2), activity("wk-a", 3), activity("wk-b", 2)) {
		seen[w.LockToken] = true
	}
	if len(seen) != 6 || seen[""] {
		e.t.Fatalf("6 fetches gave tokens %v, want 6 distinct non-empty ones", seen)
	}
}

// wkWorkerPeekLockSemantics: a fetch locks the item without removing it: it is
// invisible to other fetches while locked, still there after an abandon, and
// gone only after the ack
// (provider_validation::queue_semantics::test_worker_peek_lock_semantics).
func wkWorkerPeekLockSemantics(e *env) {
	e.enqueueWork(activity("wk-a", 2))
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	e.noWork(duroxide.AnyTag())
	e.abandonWork(w.LockToken, 0, false)
	w = e.mustFetchWork(longLock, duroxide.DefaultOnly())
	e.wkWantItem(w, activity("wk-a", 2))
	e.ackWork(w.LockToken, nil)
	e.noWork(duroxide.AnyTag())
}

// wkFetchIncrementsAttemptCount: each fetch counts an attempt, whether the
// previous one ended by abandon or by lock expiry (duroxide
// docs/provider-implementation-guide.md checklist).
func wkFetchIncrementsAttemptCount(e *env) {
	e.enqueueWork(activity("wk-a", 2))
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	e.abandonWork(w.LockToken, 0, false)
	w = e.mustFetchWork(shortLock, duroxide.DefaultOnly())
	e.wkWantAttempts([]*duroxide.LockedWorkItem{w}, 2)
	e.wait(afterShort)
	w = e.mustFetchWork(longLock, duroxide.DefaultOnly())
	e.wkWantAttempts([]*duroxide.LockedWorkItem{w}, 3)
}

// wkWorkerQueueFIFOOrdering: items are dequeued in enqueue order
// (provider_validation::queue_semantics::test_worker_queue_fifo_ordering;
// duroxide.Provider docs "Order").
func wkWorkerQueueFIFOOrdering(e *env) {
	items := []duroxide.ActivityExecute{activity("wk-c", 9), activity("wk-a", 4), activity("wk-b", 2), activity("wk-a", 3), activity("wk-c", 1)}
	e.wkEnqueueAll(items...)
	e.wkWantAttempts(e.wkWantOrder(duroxide.DefaultOnly(), items...), 1)
}

// wkWorkerAckAtomicity: one AckWorkItem call both removes the item and makes
// the completion fetchable by the orchestrator
// (provider_validation::queue_semantics::test_worker_ack_atomicity; duroxide
// docs/provider-implementation-guide.md pitfall 2).
func wkWorkerAckAtomicity(e *env) {
	e.start("wk-a", nil)
	e.enqueueWork(activity("wk-a", 2))
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	e.ackWork(w.LockToken, completed("wk-a", 2))
	e.noWork(duroxide.AnyTag())
	e.wkWantMessages("wk-a", completed("wk-a", 2))
}

// wkLostLockTokenHandling: an item whose holder never acks is redelivered after
// its lock expires, with a new token and attempt 2; the lost token can no
// longer ack, the new one can
// (provider_validation::queue_semantics::test_lost_lock_token_handling).
func wkLostLockTokenHandling(e *env) {
	e.start("wk-a", nil)
	e.enqueueWork(activity("wk-a", 2))
	lost := e.mustFetchWork(shortLock, duroxide.DefaultOnly())
	e.wait(afterShort)
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	e.wkWantItem(w, activity("wk-a", 2))
	if w.LockToken == lost.LockToken || w.AttemptCount != 2 {
		e.t.Fatalf("redelivery: token %q (lost %q), attempt %d; want a new token and attempt 2", w.LockToken, lost.LockToken, w.AttemptCount)
	}
	wantPermanent(e.t, e.p.AckWorkItem(e.ctx, lost.LockToken, completed("wk-a", 2)), duroxide.ErrLockLost, "ack_work_item", "lock_token")
	e.ackWork(w.LockToken, completed("wk-a", 2))
	e.wkWantMessages("wk-a", completed("wk-a", 2))
}

// wkAckUnknownTokenFails: an ack with a token never issued is permanent,
// enqueues nothing and leaves the really locked item locked and ackable
// (duroxide docs/provider-implementation-guide.md checklist "fails when token
// not found").
func wkAckUnknownTokenFails(e *env) {
	e.start("wk-a", nil)
	e.enqueueWork(activity("wk-a", 2))
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	wantPermanent(e.t, e.p.AckWorkItem(e.ctx, "wk-no-such-token", completed("wk-a", 2)), duroxide.ErrLockLost, "ack_work_item", "lock_token")
	e.noWork(duroxide.AnyTag())
	e.wkWantMessages("wk-a")
	e.ackWork(w.LockToken, nil)
}

// wkAckExpiredLockFailsAndRedelivers: an ack after the lock expired is
// permanent, enqueues no completion, and the item goes to the next fetch
// (duroxide docs/provider-implementation-guide.md checklist "fails when lock
// has expired").
func wkAckExpiredLockFailsAndRedelivers(e *env) {
	e.start("wk-a", nil)
	e.enqueueWork(activity("wk-a", 2))
	w := e.mustFetchWork(shortLock, duroxide.DefaultOnly())
	e.wait(afterShort)
	wantPermanent(e.t, e.p.AckWorkItem(e.ctx, w.LockToken, completed("wk-a", 2)), duroxide.ErrLockLost, "ack_work_item", "lock_token")
	e.wkWantMessages("wk-a")
	again := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	e.wkWantItem(again, activity("wk-a", 2))
	e.wkWantAttempts([]*duroxide.LockedWorkItem{again}, 2)
}

// wkAckNilCompletionOnlyDeletes: a nil completion (cancelled activity) deletes
// the item and enqueues nothing (duroxide src/providers/mod.rs ack_work_item
// "None").
func wkAckNilCompletionOnlyDeletes(e *env) {
	e.start("wk-a", nil)
	e.enqueueWork(activity("wk-a", 2))
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	e.ackWork(w.LockToken, nil)
	e.noWork(duroxide.AnyTag())
	e.wkWantMessages("wk-a")
}

// wkAckCompletionGoesToItsInstance: the completion lands in the orchestrator
// queue of the instance it names, not another one.
func wkAckCompletionGoesToItsInstance(e *env) {
	e.wkStartAll("wk-a", "wk-b")
	e.enqueueWork(activity("wk-b", 2))
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	failed := duroxide.ActivityFailed{Instance: "wk-b", ExecutionID: 1, ID: 2, Details: duroxide.ApplicationFailure("boom")}
	e.ackWork(w.LockToken, failed)
	e.wkWantMessages("wk-b", failed)
	e.wkWantMessages("wk-a")
}

// wkAckTwiceFails: after an ack the same token is unknown: a second ack is
// permanent and delivers no second completion (no double ack).
func wkAckTwiceFails(e *env) {
	e.start("wk-a", nil)
	e.enqueueWork(activity("wk-a", 2))
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	e.ackWork(w.LockToken, completed("wk-a", 2))
	wantPermanent(e.t, e.p.AckWorkItem(e.ctx, w.LockToken, completed("wk-a", 2)), duroxide.ErrLockLost, "ack_work_item", "lock_token")
	e.wkWantMessages("wk-a", completed("wk-a", 2))
}

// wkAbandonMakesItemVisibleAgain: abandon without delay unlocks the item at
// once, unchanged, and the old token is then unknown (duroxide
// docs/provider-implementation-guide.md checklist).
func wkAbandonMakesItemVisibleAgain(e *env) {
	e.enqueueWork(wkTagged("wk-a", 2, "gpu"))
	w := e.mustFetchWork(longLock, duroxide.TagsOnly("gpu"))
	e.abandonWork(w.LockToken, 0, false)
	again := e.mustFetchWork(longLock, duroxide.TagsOnly("gpu"))
	e.wkWantItem(again, wkTagged("wk-a", 2, "gpu"))
	wantPermanent(e.t, e.p.AckWorkItem(e.ctx, w.LockToken, nil), duroxide.ErrLockLost, "ack_work_item", "lock_token")
}

// wkAbandonWithDelayHidesItemUntilDelay: an abandoned item with a delay is
// invisible until the delay has passed, then fetchable again.
func wkAbandonWithDelayHidesItemUntilDelay(e *env) {
	const delay = 700 * time.Millisecond
	e.enqueueWork(activity("wk-a", 2))
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	begin := time.Now()
	e.abandonWork(w.LockToken, delay, false)
	e.noWork(duroxide.AnyTag())
	var again *duroxide.LockedWorkItem
	eventually(e.t, delay+2*time.Second, "abandoned item visible again", func() bool {
		again = e.fetchWork(longLock, nil, duroxide.DefaultOnly())
		return again != nil
	})
	if el := time.Since(begin); el < delay-10*time.Millisecond {
		e.t.Fatalf("item visible again after %v, before its %v delay", el, delay)
	}
	e.wkWantItem(again, activity("wk-a", 2))
}

// wkAbandonIgnoreAttemptUndoesCount: ignoreAttempt undoes the attempt the fetch
// counted (duroxide src/providers/mod.rs abandon_work_item ignore_attempt).
func wkAbandonIgnoreAttemptUndoesCount(e *env) {
	e.enqueueWork(activity("wk-a", 2))
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	e.abandonWork(w.LockToken, 0, true)
	e.wkWantAttempts([]*duroxide.LockedWorkItem{e.mustFetchWork(longLock, duroxide.DefaultOnly())}, 1)
}

// wkAbandonUnknownTokenFails: abandoning a token never issued is permanent
// (duroxide.Provider docs overrides duroxide
// docs/provider-implementation-guide.md's idempotent abandon) and unlocks
// nothing.
func wkAbandonUnknownTokenFails(e *env) {
	e.enqueueWork(activity("wk-a", 2))
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	wantPermanent(e.t, e.p.AbandonWorkItem(e.ctx, "wk-no-such-token", 0, false), duroxide.ErrLockLost, "abandon_work_item", "lock_token")
	e.noWork(duroxide.AnyTag())
	e.ackWork(w.LockToken, nil)
}

// wkRenewExtendsLockPastOriginalExpiry: a renewed lock holds past the original
// expiry: no redelivery, and the holder can still ack (duroxide
// docs/provider-implementation-guide.md checklist).
func wkRenewExtendsLockPastOriginalExpiry(e *env) {
	e.enqueueWork(activity("wk-a", 2))
	w := e.mustFetchWork(wkMediumLock, duroxide.DefaultOnly())
	if err := e.p.RenewWorkItemLock(e.ctx, w.LockToken, longLock); err != nil {
		e.t.Fatalf("RenewWorkItemLock: %v", err)
	}
	e.wait(wkAfterMedium)
	e.noWork(duroxide.AnyTag())
	e.ackWork(w.LockToken, nil)
}

// wkRenewExpiredLockFails: renewing an expired lock is permanent (duroxide
// docs/provider-implementation-guide.md pitfall 5) and the item is redelivered.
func wkRenewExpiredLockFails(e *env) {
	e.enqueueWork(activity("wk-a", 2))
	w := e.mustFetchWork(shortLock, duroxide.DefaultOnly())
	e.wait(afterShort)
	wantPermanent(e.t, e.p.RenewWorkItemLock(e.ctx, w.LockToken, longLock), duroxide.ErrLockLost, "renew_work_item_lock", "lock_token")
	e.wkWantItem(e.mustFetchWork(longLock, duroxide.DefaultOnly()), activity("wk-a", 2))
}

// wkRenewUnknownTokenFails: renewing a token never issued is permanent
// (duroxide docs/provider-implementation-guide.md checklist) and extends
// nothing.
func wkRenewUnknownTokenFails(e *env) {
	e.enqueueWork(activity("wk-a", 2))
	w := e.mustFetchWork(shortLock, duroxide.DefaultOnly())
	wantPermanent(e.t, e.p.RenewWorkItemLock(e.ctx, "wk-no-such-token", longLock), duroxide.ErrLockLost, "renew_work_item_lock", "lock_token")
	e.wait(afterShort)
	e.wkWantItem(e.mustFetchWork(longLock, duroxide.DefaultOnly()), activity("wk-a", 2))
	wantPermanent(e.t, e.p.AckWorkItem(e.ctx, w.LockToken, nil), duroxide.ErrLockLost, "ack_work_item", "lock_token")
}

// wkRenewAfterAckFails: renewal fails permanently after the item was acked
// (duroxide src/providers/mod.rs renew_work_item_lock "fails gracefully after
// ack").
func wkRenewAfterAckFails(e *env) {
	e.enqueueWork(activity("wk-a", 2))
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	e.ackWork(w.LockToken, nil)
	wantPermanent(e.t, e.p.RenewWorkItemLock(e.ctx, w.LockToken, longLock), duroxide.ErrLockLost, "renew_work_item_lock", "lock_token")
	e.noWork(duroxide.AnyTag())
}

// ---- tag filtering -----------------------------------------------------------

// wkDefaultOnlyReturnsOnlyUntagged: DefaultOnly returns only untagged items;
// tagged ones stay queued (duroxide docs/provider-implementation-guide.md
// checklist, Activity Tag Filtering).
func wkDefaultOnlyReturnsOnlyUntagged(e *env) {
	e.wkEnqueueAll(wkTagged("wk-a", 2, "gpu"), activity("wk-a", 3), wkTagged("wk-a", 4, "cpu"), activity("wk-a", 5))
	e.wkWantOrder(duroxide.DefaultOnly(), activity("wk-a", 3), activity("wk-a", 5))
	e.wkWantOrder(duroxide.AnyTag(), wkTagged("wk-a", 2, "gpu"), wkTagged("wk-a", 4, "cpu"))
}

// wkTagsOnlyReturnsOnlyMemberTags: TagsOnly("gpu") returns only items tagged
// "gpu", never untagged or other tags (duroxide
// docs/provider-implementation-guide.md checklist).
func wkTagsOnlyReturnsOnlyMemberTags(e *env) {
	e.wkEnqueueAll(activity("wk-a", 2), wkTagged("wk-a", 3, "cpu"), wkTagged("wk-a", 4, "gpu"), wkTagged("wk-a", 5, "gpu2"))
	e.wkWantOrder(duroxide.TagsOnly("gpu"), wkTagged("wk-a", 4, "gpu"))
	e.wkWantOrder(duroxide.AnyTag(), activity("wk-a", 2), wkTagged("wk-a", 3, "cpu"), wkTagged("wk-a", 5, "gpu2"))
}

// wkTagsOnlySeveralTags: TagsOnly with several tags returns the items of any
// of them, in enqueue order across the tag queues.
func wkTagsOnlySeveralTags(e *env) {
	e.wkEnqueueAll(activity("wk-a", 2), wkTagged("wk-a", 3, "a"), wkTagged("wk-a", 4, "x"),
		wkTagged("wk-a", 5, "c"), wkTagged("wk-a", 6, "b"), wkTagged("wk-a", 7, "a"))
	e.wkWantOrder(duroxide.TagsOnly("c", "a", "b"),
		wkTagged("wk-a", 3, "a"), wkTagged("wk-a", 5, "c"), wkTagged("wk-a", 6, "b"), wkTagged("wk-a", 7, "a"))
	e.wkWantOrder(duroxide.AnyTag(), activity("wk-a", 2), wkTagged("wk-a", 4, "x"))
}

// wkDefaultAndReturnsUntaggedAndMemberTags: DefaultAnd(["gpu"]) returns
// untagged items and items tagged "gpu", not other tags (duroxide
// docs/provider-implementation-guide.md checklist).
func wkDefaultAndReturnsUntaggedAndMemberTags(e *env) {
	e.wkEnqueueAll(wkTagged("wk-a", 2, "cpu"), activity("wk-a", 3), wkTagged("wk-a", 4, "gpu"))
	e.wkWantOrder(duroxide.DefaultAndTags("gpu"), activity("wk-a", 3), wkTagged("wk-a", 4, "gpu"))
	e.wkWantOrder(duroxide.AnyTag(), wkTagged("wk-a", 2, "cpu"))
}

// wkDefaultAndPicksOldestAcrossQueues: DefaultAnd takes the oldest item across
// the default and tag queues, interleaving them in enqueue order.
func wkDefaultAndPicksOldestAcrossQueues(e *env) {
	e.wkEnqueueAll(wkTagged("wk-a", 2, "gpu"), activity("wk-a", 3), wkTagged("wk-a", 4, "fpga"),
		activity("wk-a", 5), wkTagged("wk-a", 6, "gpu"), wkTagged("wk-a", 7, "x"))
	e.wkWantOrder(duroxide.DefaultAndTags("gpu", "fpga"), wkTagged("wk-a", 2, "gpu"), activity("wk-a", 3),
		wkTagged("wk-a", 4, "fpga"), activity("wk-a", 5), wkTagged("wk-a", 6, "gpu"))
	e.wkWantOrder(duroxide.AnyTag(), wkTagged("wk-a", 7, "x"))
}

// wkAnyTagReturnsEverythingInEnqueueOrder: Any returns every item, tagged or
// not, in enqueue order (duroxide docs/provider-implementation-guide.md
// checklist).
func wkAnyTagReturnsEverythingInEnqueueOrder(e *env) {
	items := []duroxide.ActivityExecute{wkTagged("wk-a", 2, "z"), activity("wk-b", 3), wkTagged("wk-a", 4, "a"),
		activity("wk-a", 5), wkTagged("wk-c", 6, "z")}
	e.wkEnqueueAll(items...)
	e.wkWantOrder(duroxide.AnyTag(), items...)
}

// wkNoTagsReturnsNothing: None returns no item whatever is queued, and takes
// nothing (duroxide docs/provider-implementation-guide.md checklist).
func wkNoTagsReturnsNothing(e *env) {
	items := []duroxide.ActivityExecute{activity("wk-a", 2), wkTagged("wk-a", 3, "gpu")}
	e.wkEnqueueAll(items...)
	e.noWork(duroxide.NoTags())
	e.wkWantAttempts(e.wkWantOrder(duroxide.AnyTag(), items...), 1)
}

// wkNoTagsWaitsOutPollTimeout: with a poll timeout, None waits the timeout
// out (it does not spin or return early) and still returns no work.
func wkNoTagsWaitsOutPollTimeout(e *env) {
	const poll = 500 * time.Millisecond
	items := []duroxide.ActivityExecute{activity("wk-a", 2), wkTagged("wk-a", 3, "gpu")}
	e.wkEnqueueAll(items...)
	begin := time.Now()
	w, err := e.p.FetchWorkItem(e.ctx, longLock, poll, nil, duroxide.NoTags())
	if el := time.Since(begin); err != nil || w != nil || el < poll {
		e.t.Fatalf("FetchWorkItem(None, poll %v) = %+v, %v after %v; want nil, nil after the full timeout", poll, w, err, el)
	}
	e.wkWantAttempts(e.wkWantOrder(duroxide.AnyTag(), items...), 1)
}

// wkEmptyStringTagIsNotUntagged: "" is an ordinary tag, distinct from
// untagged (duroxide.TagFilter docs).
func wkEmptyStringTagIsNotUntagged(e *env) {
	e.wkEnqueueAll(wkTagged("wk-a", 2, ""), activity("wk-a", 3))
	e.wkWantOrder(duroxide.DefaultOnly(), activity("wk-a", 3))
	e.wkWantOrder(duroxide.TagsOnly(""), wkTagged("wk-a", 2, ""))
}

// wkTagPersistsThroughEnqueueForWorker: enqueue_for_worker stores the tag: the
// fetched item carries it (duroxide docs/provider-implementation-guide.md
// checklist).
func wkTagPersistsThroughEnqueueForWorker(e *env) {
	want := wkTagged("wk-a", 2, "gpu")
	e.enqueueWork(want)
	e.wkWantItem(e.mustFetchWork(longLock, duroxide.AnyTag()), want)
}

// wkTagPersistsThroughOrchestrationAck: WorkerItems of an orchestration ack
// keep their tags and are routed by them (duroxide
// docs/provider-implementation-guide.md checklist "both paths").
func wkTagPersistsThroughOrchestrationAck(e *env) {
	e.start("wk-a", nil)
	e.wkSchedule("wk-a", wkTagged("wk-a", 2, "gpu"), activity("wk-a", 3))
	e.wkWantOrder(duroxide.DefaultOnly(), activity("wk-a", 3))
	e.wkWantOrder(duroxide.TagsOnly("gpu"), wkTagged("wk-a", 2, "gpu"))
	e.noWork(duroxide.AnyTag())
}

// wkInvalidTagFilter: an invalid filter is a permanent fetch_work_item error
// and locks or counts nothing (duroxide.Provider docs "Invalid input";
// TagFilter.Validate).
func wkInvalidTagFilter(f duroxide.TagFilter) func(e *env) {
	return func(e *env) {
		items := []duroxide.ActivityExecute{activity("wk-a", 2), wkTagged("wk-a", 3, "a")}
		e.wkEnqueueAll(items...)
		w, err := e.p.FetchWorkItem(e.ctx, longLock, 0, nil, f)
		wantPermanent(e.t, err, duroxide.ErrInvalidInput, "fetch_work_item")
		if w != nil {
			e.t.Fatalf("rejected fetch returned %+v", w.Item)
		}
		e.wkWantAttempts(e.wkWantOrder(duroxide.AnyTag(), items...), 1)
	}
}

// ---- sessions ----------------------------------------------------------------

// wkNoSessionConfigSkipsSessionItems: with session == nil only items without a
// SessionID are returned; the session item stays queued for a session-aware
// fetch (duroxide docs/provider-implementation-guide.md "SessionFetchConfig",
// checklist Session Routing).
func wkNoSessionConfigSkipsSessionItems(e *env) {
	sess := activity("wk-a", 2)
	sess.SessionID = ptr("s1")
	e.wkEnqueueAll(sess, activity("wk-a", 3))
	e.wkWantOrder(duroxide.AnyTag(), activity("wk-a", 3))
	w, err := e.p.FetchWorkItem(e.ctx, longLock, 0, wkSessionCfg, duroxide.AnyTag())
	if err != nil || w == nil {
		e.t.Fatalf("session-aware fetch = %v, %v; want the session item", w, err)
	}
	e.wkWantItem(w, sess)
	e.wkWantAttempts([]*duroxide.LockedWorkItem{w}, 1)
}

// ---- lock-stealing cancellation ----------------------------------------------

// wkCancelQueuedActivity: cancelling an activity still queued removes it: it is
// never fetchable afterwards (duroxide docs/provider-implementation-guide.md
// "Activity Cancellation via Lock Stealing").
func wkCancelQueuedActivity(e *env) {
	e.start("wk-a", nil)
	e.wkSchedule("wk-a", activity("wk-a", 2))
	e.wkCancel("wk-a", 3, 2)
	e.noWork(duroxide.AnyTag())
	w, err := e.p.FetchWorkItem(e.ctx, longLock, 0, wkSessionCfg, duroxide.AnyTag())
	if err != nil || w != nil {
		e.t.Fatalf("session-aware fetch after cancel = %+v, %v; want nil, nil", w, err)
	}
}

// wkCancelLockedActivity: cancelling an activity a worker holds makes that
// worker's renew, ack and abandon fail permanently, its completion never
// reaches the orchestrator, and a sibling activity's lock is unaffected
// (duroxide docs/provider-implementation-guide.md lock stealing steps 2-4;
// duroxide src/providers/mod.rs ack_work_item "Error on Missing Entry").
func wkCancelLockedActivity(e *env) {
	e.start("wk-a", nil)
	e.wkSchedule("wk-a", activity("wk-a", 2), activity("wk-a", 3))
	held := e.wkWantOrder(duroxide.DefaultOnly(), activity("wk-a", 2), activity("wk-a", 3))
	e.wkCancel("wk-a", 4, 2)
	tok := held[0].LockToken
	wantPermanent(e.t, e.p.RenewWorkItemLock(e.ctx, tok, longLock), duroxide.ErrLockLost, "renew_work_item_lock", "lock_token")
	wantPermanent(e.t, e.p.AckWorkItem(e.ctx, tok, completed("wk-a", 2)), duroxide.ErrLockLost, "ack_work_item", "lock_token")
	wantPermanent(e.t, e.p.AbandonWorkItem(e.ctx, tok, 0, false), duroxide.ErrLockLost, "abandon_work_item", "lock_token")
	e.noWork(duroxide.AnyTag())
	e.wkWantMessages("wk-a")
	if err := e.p.RenewWorkItemLock(e.ctx, held[1].LockToken, longLock); err != nil {
		e.t.Fatalf("sibling RenewWorkItemLock: %v", err)
	}
	e.ackWork(held[1].LockToken, completed("wk-a", 3))
	e.wkWantMessages("wk-a", completed("wk-a", 3))
}

// wkCancelledLockedActivityNeverRedelivered: a cancelled activity whose lock
// then expires does not come back: cancellation deleted it, not just the lock.
func wkCancelledLockedActivityNeverRedelivered(e *env) {
	e.start("wk-a", nil)
	e.wkSchedule("wk-a", activity("wk-a", 2))
	w := e.mustFetchWork(shortLock, duroxide.DefaultOnly())
	e.wkCancel("wk-a", 3, 2)
	e.wait(afterShort)
	e.noWork(duroxide.AnyTag())
	wantPermanent(e.t, e.p.AckWorkItem(e.ctx, w.LockToken, completed("wk-a", 2)), duroxide.ErrLockLost, "ack_work_item", "lock_token")
	e.wkWantMessages("wk-a")
}

// wkSameTurnScheduleAndCancel: an ack that schedules and cancels the same
// activity leaves nothing queued, because worker items are enqueued before
// cancellations are applied (duroxide docs/provider-implementation-guide.md
// pitfall 4; duroxide.Provider docs ack order); the turn's other activity is
// queued.
func wkSameTurnScheduleAndCancel(e *env) {
	e.start("wk-a", nil)
	e.wkTurn("wk-a", duroxide.OrchestrationCommit{
		HistoryDelta: []duroxide.Event{wkScheduled(activity("wk-a", 2)), wkScheduled(activity("wk-a", 3)),
			event(4, "wk-a", 1, duroxide.ActivityCancelRequestedEvent{Reason: "lost select"})},
		WorkerItems:         []duroxide.WorkItem{activity("wk-a", 2), activity("wk-a", 3)},
		CancelledActivities: wkCancels("wk-a", 2),
	})
	e.wkWantOrder(duroxide.AnyTag(), activity("wk-a", 3))
}

// wkCancelLeavesOtherActivitiesUntouched: a cancellation matches instance,
// execution and activity id together: other ids, the same id of another
// execution and the same id of another instance stay queued.
func wkCancelLeavesOtherActivitiesUntouched(e *env) {
	e.start("wk-a", nil)
	e.wkSchedule("wk-a", activity("wk-a", 2), activity("wk-a", 3))
	otherExec := activity("wk-a", 2)
	otherExec.ExecutionID = 2
	e.wkEnqueueAll(otherExec, activity("wk-b", 2))
	e.wkCancel("wk-a", 4, 2)
	e.wkWantAttempts(e.wkWantOrder(duroxide.AnyTag(), activity("wk-a", 3), otherExec, activity("wk-b", 2)), 1)
}

// wkCancelOfFinishedActivityIsIgnored: cancelling an activity that already
// completed matches nothing: the ack succeeds, the completion was delivered,
// and the instance's other activity stays queued (ScheduledActivityIdentifier
// docs).
func wkCancelOfFinishedActivityIsIgnored(e *env) {
	e.start("wk-a", nil)
	e.wkSchedule("wk-a", activity("wk-a", 2), activity("wk-a", 3))
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	e.wkWantItem(w, activity("wk-a", 2))
	e.ackWork(w.LockToken, completed("wk-a", 2))
	item := e.wkCancel("wk-a", 4, 2)
	want := []duroxide.WorkItem{completed("wk-a", 2), duroxide.ExternalRaised{Instance: "wk-a", Name: "wk", Data: "turn"}}
	if !reflect.DeepEqual(item.Messages, want) {
		e.t.Fatalf("cancel turn messages = %#v, want %#v", item.Messages, want)
	}
	e.wkWantOrder(duroxide.AnyTag(), activity("wk-a", 3))
	e.wkWantMessages("wk-a")
}

// ---- invalid input -----------------------------------------------------------

// wkEnqueueRejected: EnqueueForWorker of anything but an ActivityExecute with
// an instance is a permanent enqueue_for_worker error and queues nothing in
// either queue (duroxide.Provider docs "Invalid input").
func wkEnqueueRejected(item duroxide.WorkItem) func(e *env) {
	return func(e *env) {
		wantPermanent(e.t, e.p.EnqueueForWorker(e.ctx, item), duroxide.ErrInvalidInput, "enqueue_for_worker")
		e.noWork(duroxide.AnyTag())
		w, err := e.p.FetchWorkItem(e.ctx, longLock, 0, wkSessionCfg, duroxide.AnyTag())
		if err != nil || w != nil {
			e.t.Fatalf("session-aware fetch after rejected enqueue = %+v, %v; want nil, nil", w, err)
		}
		e.noFetch(nil)
	}
}

// wkAckWithActivityExecuteCompletionRejected: an ActivityExecute as completion
// is a permanent ack_work_item error; the item stays locked and can still be
// acked with a proper completion (provider_validation ack atomicity: all or
// nothing).
func wkAckWithActivityExecuteCompletionRejected(e *env) {
	e.start("wk-a", nil)
	e.enqueueWork(activity("wk-a", 2))
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	wantPermanent(e.t, e.p.AckWorkItem(e.ctx, w.LockToken, activity("wk-a", 3)), duroxide.ErrInvalidInput, "ack_work_item")
	e.noWork(duroxide.AnyTag())
	e.wkWantMessages("wk-a")
	e.ackWork(w.LockToken, completed("wk-a", 2))
	e.wkWantMessages("wk-a", completed("wk-a", 2))
}

// wkNegativeFetchRejected: a negative lock or poll timeout is a permanent
// fetch_work_item error that locks and counts nothing (duroxide.Provider docs).
func wkNegativeFetchRejected(lock, poll time.Duration) func(e *env) {
	return func(e *env) {
		e.enqueueWork(activity("wk-a", 2))
		w, err := e.p.FetchWorkItem(e.ctx, lock, poll, nil, duroxide.DefaultOnly())
		wantPermanent(e.t, err, duroxide.ErrInvalidInput, "fetch_work_item")
		if w != nil {
			e.t.Fatalf("rejected fetch returned %+v", w.Item)
		}
		e.wkWantAttempts(e.wkWantOrder(duroxide.DefaultOnly(), activity("wk-a", 2)), 1)
	}
}

// wkNegativeAbandonDelayRejected: a negative abandon delay is a permanent error
// and the item stays locked by its holder (duroxide.Provider docs).
func wkNegativeAbandonDelayRejected(e *env) {
	e.enqueueWork(activity("wk-a", 2))
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	wantPermanent(e.t, e.p.AbandonWorkItem(e.ctx, w.LockToken, -time.Second, false), duroxide.ErrInvalidInput, "abandon_work_item")
	e.noWork(duroxide.AnyTag())
	if err := e.p.RenewWorkItemLock(e.ctx, w.LockToken, longLock); err != nil {
		e.t.Fatalf("RenewWorkItemLock after rejected abandon: %v", err)
	}
	e.ackWork(w.LockToken, nil)
}

// wkNegativeRenewExtendRejected: a negative extension is a permanent error and
// does not shorten or drop the lock (duroxide.Provider docs).
func wkNegativeRenewExtendRejected(e *env) {
	e.enqueueWork(activity("wk-a", 2))
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	wantPermanent(e.t, e.p.RenewWorkItemLock(e.ctx, w.LockToken, -time.Second), duroxide.ErrInvalidInput, "renew_work_item_lock")
	e.noWork(duroxide.AnyTag())
	e.ackWork(w.LockToken, nil)
}

// wkEmptyTokenRejected: an empty lock token given to op (through call) is a
// permanent lock_token error and leaves the locked item as it was
// (duroxide.Provider docs "Invalid input").
func wkEmptyTokenRejected(op string, call func(e *env) error) func(e *env) {
	return func(e *env) {
		e.enqueueWork(activity("wk-a", 2))
		w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
		wantPermanent(e.t, call(e), duroxide.ErrLockLost, op, "lock_token")
		e.noWork(duroxide.AnyTag())
		e.ackWork(w.LockToken, nil)
	}
}
