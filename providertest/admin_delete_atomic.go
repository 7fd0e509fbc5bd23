package providertest

import (
	"slices"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// admDeleteAtomicCases lists the DeleteInstancesAtomic cases.
func admDeleteAtomicCases() []envCase {
	return []envCase{
		{"DeleteAtomicRemovesEverything", admDeleteEverything},
		{"DeleteAtomicRefusesRunningWithoutForce", admDeleteRefusesRunning},
		{"DeleteAtomicOrphanCheck", admDeleteOrphanCheck},
		{"DeleteAtomicChildAloneUnlinksParent", admDeleteChildAlone},
		{"DeleteAtomicCountsOnlyExisting", admDeleteCountsExisting},
		{"DeleteAtomicForceStopsInFlightAck", admDeleteInFlightAck},
		{"InFlightAckFailsAfterRecreate", admInFlightAckAfterRecreate},
		{"StaleActivityCompletionAfterRecreate", admStaleCompletion},
		{"RecreatedInstanceStartsClean", admRecreateClean},
	}
}

// admDeleteEverything proves a force delete removes every trace of an instance
// (two executions of history, orchestrator messages visible and delayed, a
// future timer, worker items queued and locked, KV store and delta, custom
// status), reports the counts, and leaves another instance untouched (duroxide
// src/providers/mod.rs delete_instances_atomic "Complete cleanup").
func admDeleteEverything(e *env) {
	y := kvStart(e, "bystander")
	y.turn("", kvSet("k", "y", 1), duroxide.CustomStatusUpdatedEvent{Status: ptr("y")})
	x := kvStart(e, "victim")
	x.continueAsNew(kvSet("a", "1", 1))
	base := x.next
	x.turnWith(duroxide.OrchestrationCommit{
		WorkerItems: []duroxide.WorkItem{admAct("victim", 2, base+2), admAct("victim", 2, base+3)},
		OrchestratorItems: []duroxide.WorkItem{
			duroxide.TimerFired{Instance: "victim", ExecutionID: 2, ID: base + 4, FireAtMs: admNowMs() + 60_000}},
	}, kvSet("b", "2", 2), duroxide.CustomStatusUpdatedEvent{Status: ptr("busy")}, admSched(), admSched(),
		duroxide.TimerCreatedEvent{FireAtMs: admNowMs() + 60_000})
	locked := e.fetchWork(longLock, nil, duroxide.DefaultOnly())
	e.enqueue(duroxide.ExternalRaised{Instance: "victim", Name: "now", Data: "1"}, 0)
	e.enqueue(duroxide.ExternalRaised{Instance: "victim", Name: "later", Data: "2"}, time.Minute)
	e.enqueueWork(admAct("bystander", 1, 9))
	admWantDepths(e, 1, 2, 2)
	res, err := adm(e).DeleteInstancesAtomic(e.ctx, []string{"victim"}, true)
	admWantDeleted(e.t, "DeleteInstancesAtomic(victim)", res, err, duroxide.DeleteInstanceResult{
		InstancesDeleted: 1, ExecutionsDeleted: 2, EventsDeleted: admEvents(x, 1, 2), QueueMessagesDeleted: 5})
	admWantGone(e, "victim", 2)
	err = e.p.AckWorkItem(e.ctx, locked.LockToken, duroxide.ActivityCompleted{Instance: "victim", ExecutionID: 2, ID: base + 2, Result: "1"})
	wantPermanent(e.t, err, duroxide.ErrLockLost, "ack_work_item")
	admWantDepths(e, 0, 1, 0)
	e.noFetch(nil)
	if w := e.fetchWork(longLock, nil, duroxide.DefaultOnly()); w == nil || w.Item.InstanceID() != "bystander" {
		e.t.Fatalf("FetchWorkItem = %+v, want the bystander's item", w)
	}
	admWantBystander(e, y)
}

// admWantBystander asserts the bystander instance of admDeleteEverything is
// intact.
func admWantBystander(e *env, y *kvInst) {
	e.t.Helper()
	admWantInstances(e, y.id)
	y.wantLive(map[string]string{"k": "y"})
	if cs, err := e.p.GetCustomStatus(e.ctx, y.id, 0); err != nil || cs == nil || cs.Status == nil || *cs.Status != "y" {
		e.t.Fatalf("GetCustomStatus(bystander) = %+v, %v; want status y", cs, err)
	}
	got, err := adm(e).ReadHistory(e.ctx, y.id)
	if err != nil {
		e.t.Fatalf("ReadHistory(bystander): %v", err)
	}
	sameEvents(e.t, "bystander history", got, y.hist[1])
	admWantMetrics(e, duroxide.SystemMetrics{TotalInstances: 1, TotalExecutions: 1, RunningInstances: 1, TotalEvents: admEvents(y, 1)})
}

// admDeleteRefusesRunningWithoutForce proves force=false refuses a batch with a
// Running instance and deletes nothing of it, while force=true deletes it
// (duroxide src/providers/mod.rs "Force semantics", "Atomicity").
func admDeleteRefusesRunning(e *env) {
	a := adm(e)
	done := kvStart(e, "done")
	done.complete()
	kvStart(e, "run")
	_, err := a.DeleteInstancesAtomic(e.ctx, []string{"done", "run"}, false)
	wantPermanent(e.t, err, duroxide.ErrConflict, "delete_instances_atomic")
	admWantInstances(e, "done", "run")
	got, err := a.ReadHistory(e.ctx, "done")
	if err != nil {
		e.t.Fatalf("ReadHistory(done): %v", err)
	}
	sameEvents(e.t, "history of done after the refused delete", got, done.hist[1])
	if st := admInfo(e, "done").Status; st != "Completed" {
		e.t.Fatalf("status of done = %q after the refused delete, want Completed", st)
	}
	res, err := a.DeleteInstancesAtomic(e.ctx, []string{"done"}, false)
	admWantDeleted(e.t, "DeleteInstancesAtomic(done)", res, err, duroxide.DeleteInstanceResult{InstancesDeleted: 1, ExecutionsDeleted: 1, EventsDeleted: 2})
	res, err = a.DeleteInstancesAtomic(e.ctx, []string{"run"}, true)
	admWantDeleted(e.t, "DeleteInstancesAtomic(run, force)", res, err, duroxide.DeleteInstanceResult{InstancesDeleted: 1, ExecutionsDeleted: 1, EventsDeleted: 1})
	admWantInstances(e)
}

// admFamily creates completed parent p with completed child c.
func admFamily(e *env) (p, c *kvInst) {
	e.t.Helper()
	p, c = kvStart(e, "p"), kvStartChild(e, "c", "p")
	c.complete()
	p.complete()
	return p, c
}

// admDeleteOrphanCheck proves a batch holding a parent but not its child is
// refused even with force, deleting nothing, and succeeds with both (duroxide
// src/providers/mod.rs "Orphan detection").
func admDeleteOrphanCheck(e *env) {
	a := adm(e)
	p, c := admFamily(e)
	_, err := a.DeleteInstancesAtomic(e.ctx, []string{"p"}, true)
	wantPermanent(e.t, err, duroxide.ErrConflict, "delete_instances_atomic")
	admWantInstances(e, "p", "c")
	if kids, err := a.ListChildren(e.ctx, "p"); err != nil || !slices.Equal(kids, []string{"c"}) {
		e.t.Fatalf("ListChildren(p) = %q, %v after the refused delete; want [c]", kids, err)
	}
	res, err := a.DeleteInstancesAtomic(e.ctx, []string{"p", "c"}, false)
	admWantDeleted(e.t, "DeleteInstancesAtomic(p, c)", res, err, duroxide.DeleteInstanceResult{
		InstancesDeleted: 2, ExecutionsDeleted: 2, EventsDeleted: admEvents(p, 1) + admEvents(c, 1)})
	admWantGone(e, "p", 1)
	admWantGone(e, "c", 1)
}

// admDeleteChildAlone proves deleting a leaf child through the atomic
// primitive unlinks it from its parent's children and tree.
func admDeleteChildAlone(e *env) {
	a := adm(e)
	admFamily(e)
	res, err := a.DeleteInstancesAtomic(e.ctx, []string{"c"}, false)
	admWantDeleted(e.t, "DeleteInstancesAtomic(c)", res, err, duroxide.DeleteInstanceResult{InstancesDeleted: 1, ExecutionsDeleted: 1, EventsDeleted: 2})
	admWantGone(e, "c", 1)
	if kids, err := a.ListChildren(e.ctx, "p"); err != nil || len(kids) != 0 {
		e.t.Fatalf("ListChildren(p) = %q, %v after deleting its child; want none", kids, err)
	}
	tree, err := a.GetInstanceTree(e.ctx, "p")
	if err != nil || !slices.Equal(tree.AllIDs, []string{"p"}) {
		e.t.Fatalf("GetInstanceTree(p) = %+v, %v; want only p", tree, err)
	}
	res, err = a.DeleteInstance(e.ctx, "p", false)
	admWantDeleted(e.t, "DeleteInstance(p)", res, err, duroxide.DeleteInstanceResult{InstancesDeleted: 1, ExecutionsDeleted: 1, EventsDeleted: 2})
}

// admDeleteCountsExisting proves DeleteInstancesAtomic counts only instances
// that existed (a repeated id once) and that unknown ids are no error
// (duroxide.Provider docs "Admin edge cases").
func admDeleteCountsExisting(e *env) {
	a := adm(e)
	kvStart(e, "a").complete()
	res, err := a.DeleteInstancesAtomic(e.ctx, []string{"ghost"}, false)
	admWantDeleted(e.t, "DeleteInstancesAtomic(ghost)", res, err, duroxide.DeleteInstanceResult{})
	res, err = a.DeleteInstancesAtomic(e.ctx, []string{"ghost"}, true)
	admWantDeleted(e.t, "DeleteInstancesAtomic(ghost, force)", res, err, duroxide.DeleteInstanceResult{})
	admWantInstances(e, "a")
	res, err = a.DeleteInstancesAtomic(e.ctx, []string{"ghost", "a", "ghost2", "a"}, false)
	admWantDeleted(e.t, "DeleteInstancesAtomic(ghost, a, ghost2, a)", res, err, duroxide.DeleteInstanceResult{InstancesDeleted: 1, ExecutionsDeleted: 1, EventsDeleted: 2})
	admWantGone(e, "a", 1)
}

// admDeleteInFlightAck proves a force delete of a locked instance makes its
// in-flight ack fail and recreate nothing: no record, history, KV, custom
// status, queued items or stored keys (duroxide src/providers/mod.rs "Prevent
// ack recreation").
func admDeleteInFlightAck(e *env) {
	x := kvStart(e, "x")
	x.turn("", kvSet("a", "1", 1))
	item := x.poke()
	res, err := adm(e).DeleteInstancesAtomic(e.ctx, []string{"x"}, true)
	admWantDeleted(e.t, "DeleteInstancesAtomic(x, force)", res, err, duroxide.DeleteInstanceResult{
		InstancesDeleted: 1, ExecutionsDeleted: 1, EventsDeleted: 2, QueueMessagesDeleted: 1})
	base := x.next
	out := `"done"`
	err = e.p.AckOrchestrationItem(e.ctx, item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID: 1,
		HistoryDelta: x.events(kvSet("b", "2", 2), duroxide.CustomStatusUpdatedEvent{Status: ptr("s")}, admSched(),
			duroxide.OrchestrationCompletedEvent{Output: out}),
		WorkerItems:       []duroxide.WorkItem{admAct("x", 1, base+2)},
		OrchestratorItems: []duroxide.WorkItem{duroxide.ExternalRaised{Instance: "other", Name: "ev", Data: "1"}},
		Metadata: duroxide.ExecutionMetadata{Status: "Completed", Output: &out,
			OrchestrationName: "Orch", OrchestrationVersion: "1.0.0"},
	})
	wantPermanent(e.t, err, duroxide.ErrLockLost, "ack_orchestration_item")
	admWantGone(e, "x", 1)
	admWantInstances(e)
	admWantDepths(e, 0, 0, 0)
	e.noFetch(nil)
	if w := e.fetchWork(longLock, nil, duroxide.AnyTag()); w != nil {
		e.t.Fatalf("FetchWorkItem returned %+v after the failed ack, want nothing", w.Item)
	}
	if e.h.StoredKeys != nil {
		admStoredKeys(e)
	}
}

// admInFlightAckAfterRecreate proves the ack of a turn fetched before its
// instance was force-deleted fails even after the instance was started again
// and locked anew, and does not disturb the new lock, its messages or its
// history.
func admInFlightAckAfterRecreate(e *env) {
	old := kvStart(e, "x")
	stale := old.poke()
	if _, err := adm(e).DeleteInstancesAtomic(e.ctx, []string{"x"}, true); err != nil {
		e.t.Fatalf("DeleteInstancesAtomic(x, force): %v", err)
	}
	e.enqueue(startItem("x", "Orch"), 0)
	fresh := e.fetchInstance("x")
	out := `"stale"`
	err := e.p.AckOrchestrationItem(e.ctx, stale.LockToken, duroxide.OrchestrationCommit{
		ExecutionID:  1,
		HistoryDelta: old.events(duroxide.OrchestrationCompletedEvent{Output: out}),
		Metadata:     duroxide.ExecutionMetadata{Status: "Completed", Output: &out, OrchestrationName: "Orch"},
	})
	wantPermanent(e.t, err, duroxide.ErrLockLost, "ack_orchestration_item")
	if len(fresh.Messages) != 1 || len(fresh.History) != 0 {
		e.t.Fatalf("fetch of the new instance = %d messages, %d events; want its StartOrchestration and no history",
			len(fresh.Messages), len(fresh.History))
	}
	x := &kvInst{e: e, id: "x", exec: 1, next: 1, hist: map[uint64][]duroxide.Event{}}
	x.ack(fresh, duroxide.OrchestrationCommit{Metadata: duroxide.ExecutionMetadata{OrchestrationName: "Orch", OrchestrationVersion: "1.0.0"}},
		duroxide.OrchestrationStartedEvent{Name: "Orch", Version: "1.0.0", Input: `"in"`})
	got, err := adm(e).ReadHistory(e.ctx, "x")
	if err != nil {
		e.t.Fatalf("ReadHistory: %v", err)
	}
	sameEvents(e.t, "history of the new instance", got, x.hist[1])
	if info := admInfo(e, "x"); info.Status != "Running" || info.Output != nil {
		e.t.Fatalf("GetInstanceInfo = %+v, want Running without output", info)
	}
}

// admStaleCompletion proves an activity completion acked by a worker that
// fetched it before its instance was force-deleted and started again fails,
// and never reaches the new instance, whose own activity of the same id is
// unaffected.
func admStaleCompletion(e *env) {
	schedule := func() *kvInst {
		in := kvStart(e, "x")
		in.turnWith(duroxide.OrchestrationCommit{WorkerItems: []duroxide.WorkItem{admAct("x", 1, in.next)}}, admSched())
		return in
	}
	schedule()
	old := e.fetchWork(longLock, nil, duroxide.DefaultOnly())
	if old == nil {
		e.t.Fatal("FetchWorkItem returned nothing, want the activity")
	}
	res, err := adm(e).DeleteInstancesAtomic(e.ctx, []string{"x"}, true)
	if err != nil || res.InstancesDeleted != 1 {
		e.t.Fatalf("DeleteInstancesAtomic(x, force) = %+v, %v; want 1 instance deleted", res, err)
	}
	schedule()
	err = e.p.AckWorkItem(e.ctx, old.LockToken, duroxide.ActivityCompleted{Instance: "x", ExecutionID: 1, ID: 2, Result: `"stale"`})
	wantPermanent(e.t, err, duroxide.ErrLockLost, "ack_work_item")
	e.noFetch(nil)
	admWantDepths(e, 0, 1, 0)
	fresh := e.fetchWork(longLock, nil, duroxide.DefaultOnly())
	if fresh == nil || fresh.LockToken == old.LockToken {
		e.t.Fatalf("FetchWorkItem = %+v, want the new instance's activity with a new token", fresh)
	}
	if err := e.p.AckWorkItem(e.ctx, fresh.LockToken, duroxide.ActivityCompleted{Instance: "x", ExecutionID: 1, ID: 2, Result: `"fresh"`}); err != nil {
		e.t.Fatalf("AckWorkItem(new activity): %v", err)
	}
	msgs := e.fetchInstance("x").Messages
	if len(msgs) != 1 || msgs[0] != (duroxide.ActivityCompleted{Instance: "x", ExecutionID: 1, ID: 2, Result: `"fresh"`}) {
		e.t.Fatalf("new instance received %+v, want only the fresh completion", msgs)
	}
}

// admRecreateClean proves an instance started again under the id of a
// force-deleted one inherits nothing: executions, history, KV store and
// delta, custom status and counters start afresh.
func admRecreateClean(e *env) {
	old := kvStart(e, "x")
	old.continueAsNew(kvSet("a", "1", 1), duroxide.CustomStatusUpdatedEvent{Status: ptr("old")})
	old.turn("", kvSet("b", "2", 2))
	if _, err := adm(e).DeleteInstancesAtomic(e.ctx, []string{"x"}, true); err != nil {
		e.t.Fatalf("DeleteInstancesAtomic(x, force): %v", err)
	}
	x := kvStart(e, "x")
	admWantExecutions(e, "x", 1)
	got, err := adm(e).ReadHistory(e.ctx, "x")
	if err != nil {
		e.t.Fatalf("ReadHistory: %v", err)
	}
	sameEvents(e.t, "history of the new instance", got, x.hist[1])
	x.wantLive(nil, "a", "b")
	if cs, err := e.p.GetCustomStatus(e.ctx, "x", 0); err != nil || cs != nil {
		e.t.Fatalf("GetCustomStatus = %+v, %v; want nil (never set on the new instance)", cs, err)
	}
	if st := x.stats(); st != (duroxide.InstanceStats{HistoryEventCount: 1, HistorySizeBytes: kvBytes(e.t, x.hist[1])}) {
		e.t.Fatalf("GetInstanceStats = %+v, want one event and no KV", st)
	}
	kvWantSnapshot(e.t, x.snapshot(), nil)
	admWantMetrics(e, duroxide.SystemMetrics{TotalInstances: 1, TotalExecutions: 1, RunningInstances: 1, TotalEvents: admEvents(x, 1)})
}
