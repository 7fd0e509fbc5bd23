package providertest

import (
	"fmt"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Orchestrator queue semantics: visibility (timers, delays), batch and instance
// order, orphan QueueMessages, abandon and attempt counts
// (provider_validation::queue_semantics::test_timer_delayed_visibility;
// duroxide docs/provider-implementation-guide.md enqueue_orchestrator_work,
// abandon_orchestration_item and "QueueMessage"; duroxide src/providers/mod.rs
// ack "TimerFired Items"; duroxide.Provider docs "Time", "Order", "Orphan
// QueueMessage", "Abandon").

// orcQueueCases lists the queue semantics cases.
func orcQueueCases() []envCase {
	return []envCase{
		{"FetchEmptyQueueReturnsNone", orcFetchEmpty},
		{"TimerDelayedVisibility", orcTimerVisibility},
		{"EnqueuedTimerUsesOnlyDelay", orcEnqueuedTimer},
		{"EnqueueWithDelay", orcEnqueueDelay},
		{"EarlierDelayVisibleFirst", orcEarlierDelay},
		{"BatchInEnqueueOrder", orcBatchOrder},
		{"BatchOrderIsEnqueueNotVisibilityOrder", orcBatchNotVisibilityOrder},
		{"FetchTagsAllVisibleMessages", orcTagsAllVisible},
		{"FetchTagsLargeBatch", orcTagsLargeBatch},
		{"InstancesFetchedInEnqueueOrder", orcInstanceOrder},
		{"OrphanQueueMessageDropped", orcOrphanDropped},
		{"QueueMessageWithStartDelivered", orcQueueMessageWithStart},
		{"QueueMessageForInstanceWithHistoryDelivered", orcQueueMessageWithHistory},
	}
}

// orcAbandonCases lists the abandon and attempt count cases.
func orcAbandonCases() []envCase {
	return []envCase{
		{"AbandonDelayAppliesToFetchedBatchOnly", orcAbandonDelay},
		{"AbandonIgnoreAttemptDecrements", orcAbandonIgnore},
		{"AbandonUnknownTokenIsPermanent", orcAbandonUnknown},
		{"AttemptCountMaxOverBatchAndPerFetch", orcAttemptCount},
	}
}

// orcQueued is a persistent QueueMessage for instance.
func orcQueued(instance, data string) duroxide.QueueMessage {
	return duroxide.QueueMessage{Instance: instance, Name: "q", Data: `"` + data + `"`}
}

// orcWantAttempt asserts the attempt count of a fetched item.
func (e *env) orcWantAttempt(item *duroxide.OrchestrationItem, n uint32) {
	e.t.Helper()
	if item.AttemptCount != n {
		e.t.Fatalf("%s fetched with attempt %d, want %d", item.Instance, item.AttemptCount, n)
	}
}

// orcWaitDelayed waits for delayed work and checks it became visible no
// earlier than visibleAt and is exactly msgs of instance.
func (e *env) orcWaitDelayed(visibleAt time.Time, instance string, msgs ...duroxide.WorkItem) *duroxide.OrchestrationItem {
	e.t.Helper()
	item, at := e.waitFetch(orcDelayedWithin, "delayed work of "+instance)
	if at.Before(visibleAt.Add(-orcClockSlack)) {
		e.t.Fatalf("delayed work fetched %v before it was due", visibleAt.Sub(at))
	}
	if item.Instance != instance {
		e.t.Fatalf("fetched %q, want %q", item.Instance, instance)
	}
	e.wantMessages(item, msgs...)
	return item
}

// orcFetchEmpty proves a fetch on an empty queue returns no item and no error,
// and that it locks nothing (provider_validation checklist
// "fetch_orchestration_item returns None when queue empty").
func orcFetchEmpty(e *env) {
	e.noFetch(nil)
	e.enqueue(orcRaise("A", "1"), 0)
	item := e.fetchInstance("A")
	e.ack(item.LockToken, orcCommit("A", 1, 1))
	e.noFetch(nil)
}

// orcTimerVisibility proves a TimerFired sent in an ack's orchestrator items
// becomes visible at its FireAtMs, not before
// (provider_validation::queue_semantics::test_timer_delayed_visibility;
// duroxide.Provider docs "Time").
func orcTimerVisibility(e *env) {
	e.start("A", nil)
	item := e.orcLock("A", orcRaise("A", "1"))
	fire := time.Now().Add(orcTimerIn)
	timer := duroxide.TimerFired{Instance: "A", ExecutionID: 1, ID: 2, FireAtMs: uint64(fire.UnixMilli())}
	c := duroxide.OrchestrationCommit{
		ExecutionID:       1,
		HistoryDelta:      []duroxide.Event{event(2, "A", 1, duroxide.TimerCreatedEvent{FireAtMs: timer.FireAtMs})},
		OrchestratorItems: []duroxide.WorkItem{timer},
	}
	e.ack(item.LockToken, c)
	e.noFetch(nil)
	e.orcWaitDelayed(fire, "A", timer)
}

// orcEnqueuedTimer proves EnqueueForOrchestrator uses only its delay argument,
// whatever the item: a TimerFired due in an hour enqueued without delay is
// visible now, one due long ago enqueued with a delay is not (duroxide.Provider
// docs "Time").
func orcEnqueuedTimer(e *env) {
	future := duroxide.TimerFired{Instance: "A", ExecutionID: 1, ID: 2, FireAtMs: uint64(time.Now().Add(time.Hour).UnixMilli())}
	e.enqueue(future, 0)
	item := e.fetchInstance("A")
	e.wantMessages(item, future)
	e.ack(item.LockToken, orcCommit("A", 1, 1))
	past := duroxide.TimerFired{Instance: "A", ExecutionID: 1, ID: 3, FireAtMs: 1}
	begin := time.Now()
	e.enqueue(past, orcTimerIn)
	e.noFetch(nil)
	e.orcWaitDelayed(begin.Add(orcTimerIn), "A", past)
}

// orcEnqueueDelay proves a message enqueued with a delay is invisible until the
// delay passed while undelayed work of other instances flows (duroxide
// docs/provider-implementation-guide.md enqueue_orchestrator_work; duroxide
// src/providers/mod.rs enqueue_for_orchestrator delay).
func orcEnqueueDelay(e *env) {
	begin := time.Now()
	e.enqueue(orcRaise("A", "delayed"), orcTimerIn)
	e.enqueue(orcRaise("B", "now"), 0)
	b := e.fetchInstance("B")
	e.ack(b.LockToken, orcCommit("B", 1, 1))
	e.noFetch(nil)
	e.orcWaitDelayed(begin.Add(orcTimerIn), "A", orcRaise("A", "delayed"))
}

// orcEarlierDelay proves delayed work due before everything already waiting
// (a lock, a later delayed message) becomes visible at its own time: what
// a provider knew to be due first when it last looked is no longer first.
func orcEarlierDelay(e *env) {
	e.enqueue(orcRaise("L", "1"), 0)
	e.mustFetch(longLock)
	e.enqueue(orcRaise("A", "later"), longLock)
	e.noFetch(nil)
	begin := time.Now()
	e.enqueue(orcRaise("B", "sooner"), orcTimerIn)
	e.noFetch(nil)
	e.orcWaitDelayed(begin.Add(orcTimerIn), "B", orcRaise("B", "sooner"))
	e.noFetch(nil)
}

// orcBatchOrder proves a batch holds its instance's messages of every kind in
// enqueue order, and only that instance's (duroxide.Provider docs "Order";
// duroxide src/providers/mod.rs "All messages in the batch must belong to the
// SAME instance").
func orcBatchOrder(e *env) {
	a := []duroxide.WorkItem{
		startItem("A", "Orch"), orcRaise("A", "1"), completed("A", 2),
		duroxide.ActivityFailed{Instance: "A", ExecutionID: 1, ID: 3, Details: duroxide.ApplicationFailure("boom")},
		duroxide.TimerFired{Instance: "A", ExecutionID: 1, ID: 4, FireAtMs: 5},
		duroxide.SubOrchCompleted{ParentInstance: "A", ParentExecutionID: 1, ParentID: 5, Result: `"r"`},
		duroxide.CancelInstance{Instance: "A", Reason: "stop"}, orcRaise("A", "2"),
	}
	b := []duroxide.WorkItem{orcRaise("B", "1"), orcRaise("B", "2")}
	for i, m := range a {
		e.enqueue(m, 0)
		if i < len(b) {
			e.enqueue(b[i], 0)
		}
	}
	e.wantMessages(e.fetchInstance("A"), a...)
	e.wantMessages(e.fetchInstance("B"), b...)
}

// orcBatchNotVisibilityOrder proves a batch is in enqueue order, not in
// visibility order: a delayed message enqueued first comes before one that was
// visible earlier (duroxide.Provider docs "Order").
func orcBatchNotVisibilityOrder(e *env) {
	e.enqueue(orcRaise("A", "first-delayed"), 300*time.Millisecond)
	e.enqueue(orcRaise("A", "second-now"), 0)
	e.wait(time.Second)
	e.wantMessages(e.fetchInstance("A"), orcRaise("A", "first-delayed"), orcRaise("A", "second-now"))
}

// orcTagsAllVisible proves a fetch takes every visible message of the instance
// and the ack deletes them all, leaving other instances' messages (duroxide
// docs/provider-implementation-guide.md "fetch_orchestration_item() tags all
// visible messages").
func orcTagsAllVisible(e *env) {
	msgs := []duroxide.WorkItem{startItem("A", "Orch"), orcRaise("A", "1"), completed("A", 2)}
	e.enqueue(msgs[0], 0)
	e.enqueue(orcRaise("B", "b"), 0)
	e.enqueue(msgs[1], 0)
	e.enqueue(msgs[2], 0)
	item := e.fetchInstance("A")
	e.wantMessages(item, msgs...)
	e.ack(item.LockToken, orcCommit("A", 1, 1))
	e.wantMessages(e.fetchInstance("B"), orcRaise("B", "b"))
	e.noFetch(nil)
}

// orcTagsLargeBatch proves a batch of thousands of messages is fetched whole
// and in order, and acked away whole (a provider that reads, tags or deletes
// messages in bounded slices must not lose the slices' edges).
func orcTagsLargeBatch(e *env) {
	const n = 2100
	msgs := []duroxide.WorkItem{startItem("A", "Orch")}
	for i := range n {
		msgs = append(msgs, orcRaise("A", fmt.Sprint(i)))
	}
	for _, m := range msgs {
		e.enqueue(m, 0)
	}
	item := e.fetchInstance("A")
	e.wantMessages(item, msgs...)
	e.orcWantAttempt(item, 1)
	e.ack(item.LockToken, orcCommit("A", 1, 1))
	e.noFetch(nil)
	e.enqueue(orcRaise("A", "after"), 0)
	again := e.fetchInstance("A")
	e.wantMessages(again, orcRaise("A", "after"))
	e.orcWantAttempt(again, 1)
}

// orcInstanceOrder proves the instance whose oldest visible message was
// enqueued first is fetched first, whatever arrives for it later
// (duroxide.Provider docs).
func orcInstanceOrder(e *env) {
	e.enqueue(orcRaise("A", "1"), 0)
	e.enqueue(orcRaise("B", "1"), 0)
	e.enqueue(orcRaise("C", "1"), 0)
	e.enqueue(orcRaise("A", "2"), 0)
	e.wantMessages(e.fetchInstance("A"), orcRaise("A", "1"), orcRaise("A", "2"))
	e.fetchInstance("B")
	e.fetchInstance("C")
}

// orcOrphanDropped proves QueueMessages for an instance with no history and no
// StartOrchestration in the batch are deleted, not returned and not kept: the
// fetch moves on, other messages of the batch are delivered, and a later start
// does not see them (duroxide docs/provider-implementation-guide.md
// "QueueMessage"; duroxide.Provider docs "Orphan QueueMessage").
func orcOrphanDropped(e *env) {
	e.enqueue(orcQueued("W", "orphan"), 0)
	e.noFetch(nil) // only an orphan: no item, no error
	e.enqueue(orcQueued("X", "orphan"), 0)
	e.enqueue(orcQueued("Z", "orphan"), 0)
	e.enqueue(orcRaise("Z", "kept"), 0)
	e.enqueue(orcRaise("Y", "y"), 0)
	e.wantMessages(e.fetchInstance("Z"), orcRaise("Z", "kept"))
	e.wantMessages(e.fetchInstance("Y"), orcRaise("Y", "y"))
	e.noFetch(nil)
	for _, inst := range []string{"W", "X"} {
		e.enqueue(startItem(inst, "Orch"), 0)
		e.wantMessages(e.fetchInstance(inst), startItem(inst, "Orch"))
	}
}

// orcQueueMessageWithStart proves QueueMessages in the same batch as a
// StartOrchestration are delivered, before or after it, in enqueue order
// (duroxide docs/provider-implementation-guide.md "QueueMessage";
// duroxide.Provider docs "Orphan QueueMessage").
func orcQueueMessageWithStart(e *env) {
	msgs := []duroxide.WorkItem{orcQueued("X", "1"), startItem("X", "Orch"), orcQueued("X", "2")}
	e.orcLock("X", msgs...)
}

// orcQueueMessageWithHistory proves QueueMessages for an instance that has
// history are delivered: one started by a turn, and one whose history was only
// appended (duroxide docs/provider-implementation-guide.md "Events enqueued
// after the orchestration starts are always kept"; duroxide.Provider docs).
func orcQueueMessageWithHistory(e *env) {
	e.start("X", nil)
	e.orcLock("X", orcQueued("X", "1"))
	e.orcAppend("Y", 1, 1)
	e.orcLock("Y", orcQueued("Y", "1"))
}

// orcAbandonDelay proves an abandon's delay applies to the fetched batch only:
// a message that arrived during the lock is fetchable at once, the abandoned
// one only after the delay (duroxide.Provider docs "Abandon"; duroxide
// docs/provider-implementation-guide.md abandon_orchestration_item).
func orcAbandonDelay(e *env) {
	e.start("A", nil)
	item := e.orcLock("A", orcRaise("A", "1"))
	e.enqueue(orcRaise("A", "late"), 0)
	begin := time.Now()
	e.abandon(item.LockToken, orcTimerIn, false)
	late := e.fetchInstance("A")
	e.wantMessages(late, orcRaise("A", "late"))
	e.orcWantAttempt(late, 1)
	e.ack(late.LockToken, orcCommit("A", 1, 2))
	e.noFetch(nil)
	again := e.orcWaitDelayed(begin.Add(orcTimerIn), "A", orcRaise("A", "1"))
	e.orcWantAttempt(again, 2)
}

// orcAbandonIgnore proves ignoreAttempt takes back the attempt the fetch
// counted, repeatedly, without ever going below zero (a refetch reports 1
// again), while a plain abandon keeps it (duroxide src/providers/mod.rs abandon
// ignore_attempt "never below 0").
func orcAbandonIgnore(e *env) {
	e.enqueue(orcRaise("A", "1"), 0)
	for _, step := range []struct {
		want   uint32
		ignore bool
	}{{1, true}, {1, true}, {1, false}, {2, true}, {2, false}, {3, true}} {
		item := e.fetchInstance("A")
		e.orcWantAttempt(item, step.want)
		e.abandon(item.LockToken, 0, step.ignore)
	}
	e.orcWantAttempt(e.fetchInstance("A"), 3)
}

// orcAbandonUnknown proves abandon with an unknown token is a permanent
// lock_token error with no effect: a token never issued, one already abandoned,
// one already acked (duroxide src/providers/mod.rs abandon "Invalid lock tokens
// MUST return an error"; duroxide.Provider docs "unknown token permanent").
func orcAbandonUnknown(e *env) {
	wantPermanent(e.t, e.p.AbandonOrchestrationItem(e.ctx, "never-issued", 0, false), duroxide.ErrLockLost, "abandon_orchestration_item", "lock_token")
	item := e.orcLock("A", orcRaise("A", "1"))
	e.abandon(item.LockToken, 0, false)
	again := e.fetchInstance("A")
	wantPermanent(e.t, e.p.AbandonOrchestrationItem(e.ctx, item.LockToken, 0, false), duroxide.ErrLockLost, "abandon_orchestration_item", "lock_token")
	e.noFetch(nil) // the second lock survived the stale abandon
	e.ack(again.LockToken, orcCommit("A", 1, 1))
	wantPermanent(e.t, e.p.AbandonOrchestrationItem(e.ctx, again.LockToken, 0, true), duroxide.ErrLockLost, "abandon_orchestration_item", "lock_token")
	e.noFetch(nil)
	e.orcWantHistory("A", 0, 1)
}

// orcAttemptCount proves the attempt count increments on every fetch and a
// batch reports the largest count of its messages; new messages after an ack
// start again at 1 (duroxide src/providers/mod.rs fetch attempt_count;
// duroxide.Provider docs).
func orcAttemptCount(e *env) {
	e.enqueue(orcRaise("A", "1"), 0)
	for want := uint32(1); want <= 2; want++ {
		item := e.fetchInstance("A")
		e.orcWantAttempt(item, want)
		e.abandon(item.LockToken, 0, false)
	}
	e.enqueue(orcRaise("A", "2"), 0)
	item := e.fetchInstance("A")
	e.wantMessages(item, orcRaise("A", "1"), orcRaise("A", "2"))
	e.orcWantAttempt(item, 3)
	e.abandon(item.LockToken, 0, false)
	item = e.fetchInstance("A")
	e.orcWantAttempt(item, 4)
	e.ack(item.LockToken, orcCommit("A", 1, 1))
	e.orcWantAttempt(e.orcLock("A", orcRaise("A", "3")), 1)
}
