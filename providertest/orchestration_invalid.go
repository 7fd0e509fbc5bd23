package providertest

import (
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Invalid input and the remaining commit behaviours (duroxide.Provider docs
// "Invalid input gets a Permanent error and changes nothing"; duroxide
// docs/provider-implementation-guide.md checklist "handles cancelled_activities
// correctly", "enqueues before cancelling" and duroxide src/providers/mod.rs
// "Empty history_delta").

// orcInvalidCases lists the invalid input cases.
func orcInvalidCases() []envCase {
	return []envCase{
		{"EmptyInstanceIDs", orcEmptyInstance},
		{"ActivityExecuteToOrchestratorQueue", orcActivityToOrchestrator},
		{"ActivityExecuteInOrchestratorItems", orcActivityInOrchestratorItems},
		{"NonActivityInWorkerItems", orcNonActivityInWorkerItems},
		{"EventIDZero", orcEventIDZero},
		{"ExecutionIDZero", orcExecutionIDZero},
		{"NegativeDurations", orcNegativeDurations},
		{"EmptyLockToken", orcEmptyToken},
		{"NilWorkItem", orcNilWorkItem},
	}
}

// orcCommitCases lists the commit cases not covered by atomicity.
func orcCommitCases() []envCase {
	return []envCase{
		{"AckCancelsActivities", orcAckCancels},
		{"AckEnqueuesBeforeCancelling", orcEnqueueBeforeCancel},
		{"EmptyHistoryDeltaStillCommits", orcEmptyDelta},
	}
}

// orcMutation spoils a valid commit.
type orcMutation func(c *duroxide.OrchestrationCommit)

// orcRejectAcks locks A (history [1]) and proves each mutated rich commit
// is a permanent ack error that writes nothing and keeps the lock, which
// then takes the unspoiled commit.
func (e *env) orcRejectAcks(muts ...orcMutation) {
	e.t.Helper()
	e.start("A", nil)
	item := e.orcLock("A", orcRaise("A", "1"))
	for i, mut := range muts {
		c := orcRichCommit("A", 2)
		mut(&c)
		err := e.p.AckOrchestrationItem(e.ctx, item.LockToken, c)
		if err == nil {
			e.t.Fatalf("spoiled commit %d was accepted", i)
		}
		wantPermanent(e.t, err, duroxide.ErrInvalidInput, "ack_orchestration_item")
		e.orcWantUntouched("A", 1)
	}
	e.ack(item.LockToken, orcRichCommit("A", 2))
	e.orcWantRichCommitted("A", 1, 2, 3)
}

// orcAddOrch adds a message to a commit's orchestrator items.
func orcAddOrch(item duroxide.WorkItem) orcMutation {
	return func(c *duroxide.OrchestrationCommit) { c.OrchestratorItems = append(c.OrchestratorItems, item) }
}

// orcAddWork adds an item to a commit's worker items.
func orcAddWork(item duroxide.WorkItem) orcMutation {
	return func(c *duroxide.OrchestrationCommit) { c.WorkerItems = append(c.WorkerItems, item) }
}

// orcEmptyInstance proves empty instance ids are rejected by enqueue, read,
// append and in an ack's items, changing nothing (duroxide.Provider docs
// invalid input).
func orcEmptyInstance(e *env) {
	for _, item := range []duroxide.WorkItem{orcRaise("", "x"), startItem("", "Orch"), completed("", 2)} {
		wantPermanent(e.t, e.p.EnqueueForOrchestrator(e.ctx, item, 0), duroxide.ErrInvalidInput, "enqueue_for_orchestrator")
	}
	_, err := e.p.Read(e.ctx, "")
	wantPermanent(e.t, err, duroxide.ErrInvalidInput, "read")
	_, err = e.p.ReadWithExecution(e.ctx, "", 1)
	wantPermanent(e.t, err, duroxide.ErrInvalidInput, "read_with_execution")
	wantPermanent(e.t, e.p.AppendWithExecution(e.ctx, "", 1, orcEvents("", 1, 1)), duroxide.ErrInvalidInput, "append_with_execution")
	e.noFetch(nil)
	e.orcRejectAcks(orcAddOrch(orcRaise("", "x")), orcAddWork(activity("", 9)))
}

// orcActivityToOrchestrator proves an ActivityExecute sent to the orchestrator
// queue (value or pointer) is rejected and lands in neither queue
// (duroxide.Provider docs invalid input).
func orcActivityToOrchestrator(e *env) {
	act := activity("A", 2)
	for _, item := range []duroxide.WorkItem{act, &act} {
		wantPermanent(e.t, e.p.EnqueueForOrchestrator(e.ctx, item, 0), duroxide.ErrInvalidInput, "enqueue_for_orchestrator")
	}
	e.noFetch(nil)
	e.noWork(duroxide.AnyTag())
}

// orcActivityInOrchestratorItems proves an ack with an ActivityExecute among
// its orchestrator items is rejected without effect and the lock survives
// (duroxide.Provider docs invalid input).
func orcActivityInOrchestratorItems(e *env) {
	act := activity("A", 9)
	e.orcRejectAcks(orcAddOrch(act), orcAddOrch(&act))
}

// orcNonActivityInWorkerItems proves an ack with anything but an
// ActivityExecute among its worker items is rejected without effect and the
// lock survives (duroxide.Provider docs invalid input).
func orcNonActivityInWorkerItems(e *env) {
	e.orcRejectAcks(orcAddWork(orcRaise("A", "x")), orcAddWork(startItem("B", "Orch")), orcAddWork(completed("A", 2)))
}

// orcEventIDZero proves event id 0 is invalid in an ack's delta and in an
// append, and nothing is written (duroxide.Provider docs).
func orcEventIDZero(e *env) {
	for _, ids := range [][]uint64{{0}, {5, 0}} {
		err := e.p.AppendWithExecution(e.ctx, "B", 1, orcEvents("B", 1, ids...))
		wantPermanent(e.t, err, duroxide.ErrInvalidInput, "append_with_execution")
	}
	e.orcWantHistory("B", 1)
	e.orcRejectAcks(
		func(c *duroxide.OrchestrationCommit) { c.HistoryDelta[0].EventID = 0 },
		func(c *duroxide.OrchestrationCommit) { c.HistoryDelta = orcEvents("A", 1, 0) },
	)
}

// orcExecutionIDZero proves execution id 0 is invalid in an ack and in an
// append, and nothing is written.
func orcExecutionIDZero(e *env) {
	err := e.p.AppendWithExecution(e.ctx, "B", 0, orcEvents("B", 0, 1))
	wantPermanent(e.t, err, duroxide.ErrInvalidInput, "append_with_execution")
	if h, err := e.p.ReadWithExecution(e.ctx, "B", 0); err == nil && len(h) != 0 {
		e.t.Fatalf("execution 0 holds %v after a rejected append", eventIDs(h))
	}
	e.orcWantHistory("B", 0)
	e.orcRejectAcks(func(c *duroxide.OrchestrationCommit) { c.ExecutionID = 0 })
}

// orcNegativeDurations proves negative delays, lock timeouts, poll timeouts and
// extensions are rejected: nothing is enqueued, locked, counted, released or
// extended (duroxide.Provider docs).
func orcNegativeDurations(e *env) {
	wantPermanent(e.t, e.p.EnqueueForOrchestrator(e.ctx, orcRaise("B", "x"), -time.Second), duroxide.ErrInvalidInput, "enqueue_for_orchestrator")
	e.noFetch(nil)
	e.enqueue(orcRaise("A", "1"), 0)
	_, err := e.p.FetchOrchestrationItem(e.ctx, -time.Second, 0, nil)
	wantPermanent(e.t, err, duroxide.ErrInvalidInput, "fetch_orchestration_item")
	_, err = e.p.FetchOrchestrationItem(e.ctx, longLock, -time.Second, nil)
	wantPermanent(e.t, err, duroxide.ErrInvalidInput, "fetch_orchestration_item")
	item := e.fetchInstance("A")
	e.orcWantAttempt(item, 1)
	wantPermanent(e.t, e.p.AbandonOrchestrationItem(e.ctx, item.LockToken, -time.Second, false), duroxide.ErrInvalidInput, "abandon_orchestration_item")
	wantPermanent(e.t, e.p.RenewOrchestrationItemLock(e.ctx, item.LockToken, -time.Second), duroxide.ErrInvalidInput, "renew_orchestration_item_lock")
	e.noFetch(nil)
	e.ack(item.LockToken, orcCommit("A", 1, 1))
	e.noFetch(nil)
}

// orcEmptyToken proves ack, abandon and renew with an empty token are
// permanent lock_token errors that leave an existing lock alone.
func orcEmptyToken(e *env) {
	item := e.orcLock("A", orcRaise("A", "1"))
	wantPermanent(e.t, e.p.AckOrchestrationItem(e.ctx, "", orcCommit("A", 1, 1)), duroxide.ErrLockLost, "ack_orchestration_item", "lock_token")
	wantPermanent(e.t, e.p.AbandonOrchestrationItem(e.ctx, "", 0, false), duroxide.ErrLockLost, "abandon_orchestration_item", "lock_token")
	wantPermanent(e.t, e.p.RenewOrchestrationItemLock(e.ctx, "", longLock), duroxide.ErrLockLost, "renew_orchestration_item_lock", "lock_token")
	e.noFetch(nil)
	e.orcWantHistory("A", 0)
	e.ack(item.LockToken, orcCommit("A", 1, 1))
	e.orcWantHistory("A", 0, 1)
}

// orcNilWorkItem proves a nil work item (nil interface or nil pointer) is
// rejected by enqueue and in either item list of an ack.
func orcNilWorkItem(e *env) {
	var none *duroxide.ExternalRaised
	for _, item := range []duroxide.WorkItem{nil, none} {
		wantPermanent(e.t, e.p.EnqueueForOrchestrator(e.ctx, item, 0), duroxide.ErrInvalidInput, "enqueue_for_orchestrator")
	}
	e.noFetch(nil)
	var noAct *duroxide.ActivityExecute
	e.orcRejectAcks(orcAddOrch(nil), orcAddOrch(none), orcAddWork(nil), orcAddWork(noAct))
}

// orcAckCancels proves cancelled activities are removed from the worker queue
// by exact (instance, execution, activity id), leaving activities of other
// executions and instances (duroxide docs/provider-implementation-guide.md
// "handles cancelled_activities correctly").
func orcAckCancels(e *env) {
	e.start("A", nil)
	c := orcCommit("A", 1, 2, 3)
	c.WorkerItems = []duroxide.WorkItem{activity("A", 2), activity("A", 3)}
	e.orcTurn("A", c)
	otherExec := duroxide.ActivityExecute{Instance: "A", ExecutionID: 2, ID: 2, Name: "Act", Input: `"x"`}
	e.enqueueWork(otherExec)
	e.enqueueWork(activity("B", 2))
	c = orcCommit("A", 1, 4)
	c.CancelledActivities = []duroxide.ScheduledActivityIdentifier{{Instance: "A", ExecutionID: 1, ActivityID: 2}}
	e.orcTurn("A", c)
	e.sameItemsInOrder("worker queue", e.orcDrainWork(), activity("A", 3), otherExec, activity("B", 2))
}

// orcEnqueueBeforeCancel proves an activity scheduled and cancelled in the same
// ack is gone: the ack enqueues before it cancels (duroxide
// docs/provider-implementation-guide.md "enqueues before cancelling
// (ordering)").
func orcEnqueueBeforeCancel(e *env) {
	e.start("A", nil)
	c := orcCommit("A", 1, 2, 3)
	c.WorkerItems = []duroxide.WorkItem{activity("A", 2), activity("A", 3)}
	c.CancelledActivities = []duroxide.ScheduledActivityIdentifier{{Instance: "A", ExecutionID: 1, ActivityID: 3}}
	e.orcTurn("A", c)
	sameItems(e.t, "worker queue", e.orcDrainWork(), activity("A", 2))
}

// orcEmptyDelta proves an ack with no events still enqueues its items, deletes
// the fetched messages and releases the lock (duroxide src/providers/mod.rs
// "Empty history_delta: still process queues and release lock").
func orcEmptyDelta(e *env) {
	e.start("A", nil)
	item := e.orcLock("A", orcRaise("A", "1"))
	e.ack(item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID:       1,
		WorkerItems:       []duroxide.WorkItem{activity("A", 5)},
		OrchestratorItems: []duroxide.WorkItem{orcRaise("B", "b")},
	})
	e.orcWantHistory("A", 0, 1)
	sameItems(e.t, "worker queue", e.orcDrainWork(), activity("A", 5))
	e.wantMessages(e.fetchInstance("B"), orcRaise("B", "b"))
	e.orcLock("A", orcRaise("A", "2"))
}
