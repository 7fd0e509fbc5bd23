package providertest

import (
	"slices"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// admDeleteInstanceCases lists the DeleteInstance cases.
func admDeleteInstanceCases() []envCase {
	return []envCase{
		{"DeleteInstanceCascadesThreeLevels", admDeleteCascade},
		{"DeleteInstanceOfSubOrchestrationRefused", admDeleteSubOrch},
		{"DeleteInstanceUnknownIsNotFound", admDeleteUnknown},
		{"DeleteInstanceRunningNeedsForce", admDeleteRunningNeedsForce},
	}
}

// admDeleteCascade proves DeleteInstance of a root removes its whole
// three-level tree, including a pending message of the grandchild (duroxide
// src/providers/mod.rs "Cascade delete").
func admDeleteCascade(e *env) {
	p, c, g := kvStart(e, "p"), kvStartChild(e, "c", "p"), kvStartChild(e, "g", "c")
	for _, in := range []*kvInst{g, c, p} {
		in.complete()
	}
	e.enqueue(duroxide.ExternalRaised{Instance: "g", Name: "late", Data: "1"}, time.Minute)
	res, err := adm(e).DeleteInstance(e.ctx, "p", false)
	admWantDeleted(e.t, "DeleteInstance(p)", res, err, duroxide.DeleteInstanceResult{InstancesDeleted: 3, ExecutionsDeleted: 3,
		EventsDeleted: admEvents(p, 1) + admEvents(c, 1) + admEvents(g, 1), QueueMessagesDeleted: 1})
	for _, id := range []string{"p", "c", "g"} {
		admWantGone(e, id, 1)
	}
	admWantDepths(e, 0, 0, 0)
	admWantMetrics(e, duroxide.SystemMetrics{})
}

// admDeleteSubOrch proves DeleteInstance refuses a sub-orchestration, even with
// force, and changes nothing (duroxide src/providers/mod.rs delete_instance).
func admDeleteSubOrch(e *env) {
	a := adm(e)
	admFamily(e)
	_, err := a.DeleteInstance(e.ctx, "c", true)
	wantPermanent(e.t, err, duroxide.ErrConflict, "delete_instance")
	admWantInstances(e, "p", "c")
	if kids, err := a.ListChildren(e.ctx, "p"); err != nil || !slices.Equal(kids, []string{"c"}) {
		e.t.Fatalf("ListChildren(p) = %q, %v after the refused delete; want [c]", kids, err)
	}
	if info := admInfo(e, "c"); info.Status != "Completed" || info.ParentInstanceID != "p" {
		e.t.Fatalf("GetInstanceInfo(c) = %+v after the refused delete", info)
	}
}

// admDeleteUnknown proves DeleteInstance of an unknown instance (or one that
// was only enqueued) is a permanent "not found" error, with or without force.
func admDeleteUnknown(e *env) {
	a := adm(e)
	e.enqueue(startItem("queued", "Orch"), 0)
	for _, id := range []string{"ghost", "queued"} {
		for _, force := range []bool{false, true} {
			_, err := a.DeleteInstance(e.ctx, id, force)
			wantPermanent(e.t, err, duroxide.ErrNotFound, "delete_instance", "not found")
		}
	}
}

// admDeleteRunningNeedsForce proves DeleteInstance without force refuses a
// Running root and a terminal root with a Running descendant, deleting
// nothing; with force both go.
func admDeleteRunningNeedsForce(e *env) {
	a := adm(e)
	kvStart(e, "run")
	p := kvStart(e, "p")
	kvStartChild(e, "c", "p")
	p.complete()
	for _, id := range []string{"run", "p"} {
		_, err := a.DeleteInstance(e.ctx, id, false)
		wantPermanent(e.t, err, duroxide.ErrConflict, "delete_instance")
	}
	admWantInstances(e, "run", "p", "c")
	res, err := a.DeleteInstance(e.ctx, "p", true)
	if err != nil || res.InstancesDeleted != 2 {
		e.t.Fatalf("DeleteInstance(p, force) = %+v, %v; want 2 instances", res, err)
	}
	res, err = a.DeleteInstance(e.ctx, "run", true)
	if err != nil || res.InstancesDeleted != 1 {
		e.t.Fatalf("DeleteInstance(run, force) = %+v, %v; want 1 instance", res, err)
	}
	admWantInstances(e)
}
