package providertest

import (
	"sync/atomic"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Atomicity of the turn commit (provider_validation::atomicity; duroxide
// docs/provider-implementation-guide.md "ack_orchestration_item() — The Atomic
// Commit": all steps succeed or fail together, the lock is validated first and
// released last).

// orcAtomicityCases lists the atomicity cases.
func orcAtomicityCases() []envCase {
	return []envCase{
		{"AtomicityFailureRollback", orcFailureRollback},
		{"MultiOperationAtomicAck", orcMultiOpAck},
		{"LockReleasedOnlyOnSuccessfulAck", orcLockReleasedOnSuccess},
		{"ConcurrentAckPrevention", orcConcurrentAck},
	}
}

// orcPeer is the instance a rich commit sends a message to.
func orcPeer(instance string) string { return instance + "-peer" }

// orcRichCommit is a commit touching every part of the store: history (the
// events ids, then a CustomStatusUpdated "busy"), a worker item, a message
// for another instance and terminal metadata.
func orcRichCommit(instance string, ids ...uint64) duroxide.OrchestrationCommit {
	c := orcCommit(instance, 1, ids...)
	next := ids[len(ids)-1] + 1
	c.HistoryDelta = append(c.HistoryDelta, orcStatusEvent(instance, next, ptr("busy")))
	c.WorkerItems = []duroxide.WorkItem{activity(instance, next)}
	c.OrchestratorItems = []duroxide.WorkItem{orcRaise(orcPeer(instance), "from-"+instance)}
	c.Metadata = duroxide.ExecutionMetadata{Status: "Completed", Output: ptr(`"done"`)}
	return c
}

// orcWantUntouched asserts that no part of a rich commit of instance was
// written while its lock is still held: history is ids, no custom status, no
// worker item, no orchestrator message fetchable, status still Running.
func (e *env) orcWantUntouched(instance string, ids ...uint64) {
	e.t.Helper()
	e.orcWantUntouchedUnlocked(instance, ids...)
	e.noFetch(nil)
}

// orcWantUntouchedUnlocked is orcWantUntouched without the queue check, for
// instances whose lock is gone.
func (e *env) orcWantUntouchedUnlocked(instance string, ids ...uint64) {
	e.t.Helper()
	e.orcWantHistory(instance, 0, ids...)
	e.orcWantStatus(instance, 0, nil)
	e.noWork(duroxide.AnyTag())
	if info := e.orcWantRecord(instance, true); info != nil && info.Status != "Running" {
		e.t.Fatalf("instance status = %q after a rejected ack, want Running", info.Status)
	}
}

// orcWantRichCommitted asserts every effect of a rich commit on instance
// whose history is now history (its last event the status update).
func (e *env) orcWantRichCommitted(instance string, history ...uint64) {
	e.t.Helper()
	last := history[len(history)-1]
	e.orcWantHistory(instance, 0, history...)
	e.orcWantStatus(instance, 0, &duroxide.CustomStatus{Status: ptr("busy"), Version: 1})
	sameItems(e.t, "worker queue", e.orcDrainWork(), activity(instance, last))
	peer := e.fetchInstance(orcPeer(instance))
	e.wantMessages(peer, orcRaise(orcPeer(instance), "from-"+instance))
	if info := e.orcWantRecord(instance, true); info != nil && info.Status != "Completed" {
		e.t.Fatalf("instance status = %q, want Completed", info.Status)
	}
}

// orcFailureRollback proves an ack rejected for a duplicate event id writes
// nothing (history, custom status, queues, instance record) and leaves the lock
// held and usable
// (provider_validation::atomicity::test_atomicity_failure_rollback).
func orcFailureRollback(e *env) {
	e.start("A", nil)
	item := e.orcLock("A", orcRaise("A", "1"))
	err := e.p.AckOrchestrationItem(e.ctx, item.LockToken, orcRichCommit("A", 1))
	wantPermanent(e.t, err, duroxide.ErrDuplicateEvent, "ack_orchestration_item")
	e.orcWantUntouched("A", 1)
	if err := e.p.RenewOrchestrationItemLock(e.ctx, item.LockToken, longLock); err != nil {
		e.t.Fatalf("renew after the rejected ack: %v", err)
	}
	e.ack(item.LockToken, orcRichCommit("A", 2))
	e.orcWantRichCommitted("A", 1, 2, 3)
}

// orcMultiOpAck proves one ack applies history, several worker items, messages
// to several instances (including itself), metadata and custom status together,
// then releases the lock
// (provider_validation::atomicity::test_multi_operation_atomic_ack).
func orcMultiOpAck(e *env) {
	e.start("A", nil)
	item := e.orcLock("A", orcRaise("A", "1"))
	c := orcCommit("A", 1, 2, 3, 4)
	c.HistoryDelta = append(c.HistoryDelta, orcStatusEvent("A", 5, ptr("s")))
	c.WorkerItems = []duroxide.WorkItem{activity("A", 3), activity("A", 4)}
	out := map[string]duroxide.WorkItem{"B": startItem("B", "Child"), "C": orcRaise("C", "c"), "A": orcRaise("A", "self")}
	c.OrchestratorItems = []duroxide.WorkItem{out["B"], out["C"], out["A"]}
	c.Metadata = duroxide.ExecutionMetadata{Status: "Completed", Output: ptr(`"ok"`)}
	e.ack(item.LockToken, c)

	e.orcWantHistory("A", 0, 1, 2, 3, 4, 5)
	e.orcWantStatus("A", 0, &duroxide.CustomStatus{Status: ptr("s"), Version: 1})
	sameItems(e.t, "worker queue", e.orcDrainWork(), activity("A", 3), activity("A", 4))
	for range 3 {
		got := e.mustFetch(longLock)
		want, ok := out[got.Instance]
		if !ok {
			e.t.Fatalf("fetched unexpected or repeated instance %q", got.Instance)
		}
		e.wantMessages(got, want)
		delete(out, got.Instance)
	}
	e.noFetch(nil)
	if info := e.orcWantRecord("A", true); info != nil && (info.Status != "Completed" || info.Output == nil || *info.Output != `"ok"`) {
		e.t.Fatalf("instance info = %+v, want Completed with output \"ok\"", *info)
	}
}

// orcLockReleasedOnSuccess proves a failed ack keeps the instance locked (a
// message arriving meanwhile is not fetchable) and only the successful ack
// releases it
// (provider_validation::atomicity::test_lock_released_only_on_successful_ack).
func orcLockReleasedOnSuccess(e *env) {
	e.start("A", nil)
	item := e.orcLock("A", orcRaise("A", "1"))
	e.enqueue(orcRaise("A", "late"), 0)
	err := e.p.AckOrchestrationItem(e.ctx, item.LockToken, orcCommit("A", 1, 1))
	wantPermanent(e.t, err, duroxide.ErrDuplicateEvent, "ack_orchestration_item")
	e.noFetch(nil)
	e.ack(item.LockToken, orcCommit("A", 1, 2))
	e.wantMessages(e.fetchInstance("A"), orcRaise("A", "late"))
}

// orcConcurrentAck proves that of many goroutines acking with the same token
// exactly one succeeds, the others get a permanent lock_token error, and the
// turn is written once
// (provider_validation::atomicity::test_concurrent_ack_prevention).
func orcConcurrentAck(e *env) {
	const n = 16
	e.start("A", nil)
	item := e.orcLock("A", orcRaise("A", "1"))
	errs := make([]error, n)
	var wins atomic.Int32
	together(n, func(i int) {
		errs[i] = e.p.AckOrchestrationItem(e.ctx, item.LockToken, orcCommit("A", 1, 2))
		if errs[i] == nil {
			wins.Add(1)
		}
	})
	if wins.Load() != 1 {
		e.t.Fatalf("%d acks with one token succeeded, want exactly 1 (errors %v)", wins.Load(), errs)
	}
	for _, err := range errs {
		if err != nil {
			wantPermanent(e.t, err, duroxide.ErrLockLost, "ack_orchestration_item", "lock_token")
		}
	}
	e.orcWantHistory("A", 0, 1, 2)
	e.orcLock("A", orcRaise("A", "2")) // the lock was released once

}
