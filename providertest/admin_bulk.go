package providertest

import (
	"slices"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// admBulkDeleteCases lists the DeleteInstanceBulk cases.
func admBulkDeleteCases() []envCase {
	return []envCase{
		{"BulkDeleteTerminalRootsOnly", admBulkTerminalRoots},
		{"BulkDeleteCompletedBefore", admBulkCompletedBefore},
		{"BulkDeleteLimit", admBulkLimit},
		{"BulkDeleteLimitAppliesToEligibleRoots", admBulkLimitEligible},
		{"BulkDeleteInstanceIDs", admBulkInstanceIDs},
		{"BulkDeleteFiltersCombined", admBulkCombined},
	}
}

// admBulk runs DeleteInstanceBulk or fails the test.
func admBulk(e *env, f duroxide.InstanceFilter) duroxide.DeleteInstanceResult {
	e.t.Helper()
	res, err := adm(e).DeleteInstanceBulk(e.ctx, f)
	if err != nil {
		e.t.Fatalf("DeleteInstanceBulk(%+v): %v", f, err)
	}
	return res
}

// admCompleted creates completed root instances.
func admCompleted(e *env, ids ...string) {
	e.t.Helper()
	for _, id := range ids {
		kvStart(e, id).complete()
	}
}

// admBulkTerminalRoots proves DeleteInstanceBulk deletes Completed and Failed
// roots (one completed by its first ack) with their children and silently skips
// Running and ContinuedAsNew roots and a terminal root whose child still runs
// (duroxide src/providers/mod.rs delete_instance_bulk).
func admBulkTerminalRoots(e *env) {
	kvStart(e, "run")
	done, dchild := kvStart(e, "done"), kvStartChild(e, "dchild", "done")
	dchild.complete()
	done.complete()
	fail := kvStart(e, "fail")
	fail.fail()
	done2 := kvStart(e, "done2")
	kvStartChild(e, "rchild", "done2")
	done2.complete()
	admOneShot(e, "oneshot")
	kvStart(e, "can").endAsNew()
	res := admBulk(e, duroxide.InstanceFilter{})
	want := duroxide.DeleteInstanceResult{InstancesDeleted: 4, ExecutionsDeleted: 4,
		EventsDeleted: admEvents(done, 1) + admEvents(dchild, 1) + admEvents(fail, 1) + 2}
	if res != want {
		e.t.Fatalf("DeleteInstanceBulk({}) = %+v, want %+v", res, want)
	}
	admWantInstances(e, "run", "done2", "rchild", "can")
	for _, id := range []string{"done", "dchild", "fail", "oneshot"} {
		admWantGone(e, id, 1)
	}
}

// admCompletedAt completes a new root instance and returns its completion
// time as the provider recorded it.
func admCompletedAt(e *env, id string) uint64 {
	e.t.Helper()
	kvStart(e, id).complete()
	return admExec(e, id, 1).CompletedAt
}

// admBulkCompletedBefore proves CompletedBefore selects instances that
// completed strictly before it.
func admBulkCompletedBefore(e *env) {
	ta := admCompletedAt(e, "a")
	e.wait(admApart)
	tb := admCompletedAt(e, "b")
	if tb <= ta+1 {
		e.t.Fatalf("completion times %d, %d are not apart; cannot test CompletedBefore", ta, tb)
	}
	if res := admBulk(e, duroxide.InstanceFilter{CompletedBefore: ta}); res.InstancesDeleted != 0 {
		e.t.Fatalf("CompletedBefore = a's completion time deleted %+v, want nothing", res)
	}
	if res := admBulk(e, duroxide.InstanceFilter{CompletedBefore: ta + 1}); res.InstancesDeleted != 1 {
		e.t.Fatalf("CompletedBefore just after a deleted %+v, want 1 instance", res)
	}
	admWantInstances(e, "b")
	if res := admBulk(e, duroxide.InstanceFilter{CompletedBefore: tb + 1}); res.InstancesDeleted != 1 {
		e.t.Fatalf("CompletedBefore just after b deleted %+v, want 1 instance", res)
	}
	admWantInstances(e)
}

// admBulkLimit proves Limit caps how many instances one call deletes and 0
// means the default batch.
func admBulkLimit(e *env) {
	admCompleted(e, "a", "b", "c")
	if res := admBulk(e, duroxide.InstanceFilter{Limit: 2}); res.InstancesDeleted != 2 || res.ExecutionsDeleted != 2 {
		e.t.Fatalf("DeleteInstanceBulk(Limit 2) = %+v, want 2 instances", res)
	}
	if n := len(admList(e)); n != 1 {
		e.t.Fatalf("%d instances left after Limit 2, want 1", n)
	}
	if res := admBulk(e, duroxide.InstanceFilter{}); res.InstancesDeleted != 1 {
		e.t.Fatalf("DeleteInstanceBulk(Limit 0) = %+v, want the last instance", res)
	}
	admWantInstances(e)
}

// admBulkLimitEligible proves Limit is applied last, to eligible roots: a
// terminal root that cannot be deleted (its child still runs) does not use up
// the limit (duroxide src/providers/mod.rs delete_instance_bulk "limit ...
// (applied last)").
func admBulkLimitEligible(e *env) {
	blocked := kvStart(e, "blocked")
	kvStartChild(e, "running-child", "blocked")
	blocked.complete()
	e.wait(admApart) // blocked is the oldest completion: a limit applied before eligibility would be spent on it
	admCompleted(e, "a", "b")
	res := admBulk(e, duroxide.InstanceFilter{Limit: 1})
	if res.InstancesDeleted != 1 {
		e.t.Fatalf("DeleteInstanceBulk(Limit 1) = %+v, want 1 instance (a or b)", res)
	}
	res = admBulk(e, duroxide.InstanceFilter{InstanceIDs: []string{"blocked", "a", "b"}, Limit: 1})
	if res.InstancesDeleted != 1 {
		e.t.Fatalf("DeleteInstanceBulk(blocked, a, b, Limit 1) = %+v, want the remaining one of a, b", res)
	}
	admWantInstances(e, "blocked", "running-child")
}

// admBulkInstanceIDs proves InstanceIDs is an allow-list: unknown, Running
// and sub-orchestration ids in it are skipped without error, and an empty
// (non-nil) list selects nothing.
func admBulkInstanceIDs(e *env) {
	admCompleted(e, "a", "b", "d")
	kvStart(e, "run")
	admFamily(e)
	if res := admBulk(e, duroxide.InstanceFilter{InstanceIDs: []string{}}); res != (duroxide.DeleteInstanceResult{}) {
		e.t.Fatalf("DeleteInstanceBulk(empty allow-list) = %+v, want nothing deleted", res)
	}
	admWantInstances(e, "a", "b", "d", "run", "p", "c")
	res := admBulk(e, duroxide.InstanceFilter{InstanceIDs: []string{"a", "d", "run", "ghost", "c"}})
	if want := (duroxide.DeleteInstanceResult{InstancesDeleted: 2, ExecutionsDeleted: 2, EventsDeleted: 4}); res != want {
		e.t.Fatalf("DeleteInstanceBulk(a, d, run, ghost, c) = %+v, want %+v", res, want)
	}
	admWantInstances(e, "b", "run", "p", "c")
}

// admBulkCombined proves InstanceIDs, CompletedBefore and Limit are ANDed.
func admBulkCombined(e *env) {
	admCompleted(e, "a", "b")
	e.wait(admApart)
	tc := admCompletedAt(e, "c")
	admCompleted(e, "d")
	res := admBulk(e, duroxide.InstanceFilter{InstanceIDs: []string{"a", "b", "c"}, CompletedBefore: tc, Limit: 1})
	if res.InstancesDeleted != 1 {
		e.t.Fatalf("DeleteInstanceBulk(a,b,c before c, Limit 1) = %+v, want 1 instance", res)
	}
	left := admList(e)
	if !slices.Contains(left, "c") || !slices.Contains(left, "d") || len(left) != 3 {
		e.t.Fatalf("left %q, want c, d and one of a, b", left)
	}
}
