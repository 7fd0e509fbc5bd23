package providertest

import (
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// admStoredKeysCases lists the cases proving deletion leaves nothing behind.
func admStoredKeysCases() []envCase {
	return []envCase{
		{"StoredKeysEmptyAfterDeletingEverything", admStoredKeysEverything},
		{"StoredKeysEmptyAfterDeleteAndSessionCleanup", admStoredKeysSession},
	}
}

// admStoredKeysEverything proves deleting every instance of a busy workload
// (a parent with a child, KV store and delta, custom status, two executions,
// worker items queued, tagged, of an unclaimed session and locked, a future
// timer, delayed and visible messages, an in-flight orchestration lock)
// leaves no stored instance data (Harness.StoredKeys).
func admStoredKeysEverything(e *env) {
	if e.h.StoredKeys == nil {
		e.t.Skip("Harness.StoredKeys is nil: cannot check that deletion leaves nothing behind")
	}
	a := adm(e)
	p, c := kvStart(e, "p"), kvStartChild(e, "c", "p")
	c.complete(kvSet("ck", "1", 1))
	p.complete(kvSet("pk", "1", 1), duroxide.CustomStatusUpdatedEvent{Status: ptr("p")})
	x := kvStart(e, "x")
	x.continueAsNew(kvSet("a", "1", 1))
	base := x.next
	session, tag := admAct("x", 2, base+3), admAct("x", 2, base+4)
	session.SessionID, tag.Tag = ptr("s1"), ptr("gpu")
	x.turnWith(duroxide.OrchestrationCommit{
		WorkerItems: []duroxide.WorkItem{admAct("x", 2, base+2), session, tag},
		OrchestratorItems: []duroxide.WorkItem{
			duroxide.TimerFired{Instance: "x", ExecutionID: 2, ID: base + 5, FireAtMs: admNowMs() + 60_000}},
	}, kvSet("b", "2", 2), duroxide.CustomStatusUpdatedEvent{Status: ptr("busy")}, admSched(), admSched(), admSched(),
		duroxide.TimerCreatedEvent{FireAtMs: admNowMs() + 60_000})
	if e.fetchWork(longLock, nil, duroxide.DefaultOnly()) == nil {
		e.t.Fatal("FetchWorkItem returned nothing, want the plain activity")
	}
	e.enqueue(duroxide.ExternalRaised{Instance: "x", Name: "later", Data: "1"}, time.Minute)
	e.enqueue(duroxide.ExternalRaised{Instance: "x", Name: "now", Data: "2"}, 0)
	e.fetchInstance("x")
	e.enqueue(duroxide.ExternalRaised{Instance: "x", Name: "during", Data: "3"}, 0)
	if res, err := a.DeleteInstance(e.ctx, "p", false); err != nil || res.InstancesDeleted != 2 {
		e.t.Fatalf("DeleteInstance(p) = %+v, %v; want 2 instances", res, err)
	}
	if res, err := a.DeleteInstance(e.ctx, "x", true); err != nil || res.InstancesDeleted != 1 {
		e.t.Fatalf("DeleteInstance(x, force) = %+v, %v; want 1 instance", res, err)
	}
	admStoredKeys(e)
	admWantInstances(e)
	admWantMetrics(e, duroxide.SystemMetrics{})
	admWantDepths(e, 0, 0, 0)
}

// admStoredKeysSession proves that after deleting an instance whose session
// activity a worker had claimed, the session is an orphan that
// CleanupOrphanedSessions removes once its lock expires, leaving no stored
// data. (A session still locked by a live worker is owner state, not instance
// state, so it may outlive the instance until then.)
func admStoredKeysSession(e *env) {
	if e.h.StoredKeys == nil {
		e.t.Skip("Harness.StoredKeys is nil: cannot check that deletion leaves nothing behind")
	}
	x := kvStart(e, "x")
	one, two := admAct("x", 1, x.next), admAct("x", 1, x.next+1)
	one.SessionID, two.SessionID = ptr("s1"), ptr("s1")
	x.turnWith(duroxide.OrchestrationCommit{WorkerItems: []duroxide.WorkItem{one, two}}, admSched(), admSched())
	w, err := e.p.FetchWorkItem(e.ctx, longLock, 0, &duroxide.SessionFetchConfig{OwnerID: "w1", LockTimeout: shortLock}, duroxide.DefaultOnly())
	if err != nil || w == nil {
		e.t.Fatalf("FetchWorkItem(session) = %v, %v; want the session activity", w, err)
	}
	if res, err := adm(e).DeleteInstance(e.ctx, "x", true); err != nil || res.InstancesDeleted != 1 {
		e.t.Fatalf("DeleteInstance(x, force) = %+v, %v; want 1 instance", res, err)
	}
	wantPermanent(e.t, e.p.AckWorkItem(e.ctx, w.LockToken, nil), duroxide.ErrLockLost, "ack_work_item")
	e.wait(afterShort)
	if n, err := e.p.CleanupOrphanedSessions(e.ctx, 0); err != nil || n != 1 {
		e.t.Fatalf("CleanupOrphanedSessions = %d, %v; want 1 (the deleted instance's session)", n, err)
	}
	admStoredKeys(e)
}
