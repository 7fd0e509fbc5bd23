package main

import (
	"testing"
)

func TestPruneKeepsTheNewestExecutions(t *testing.T) {
	d := newDeployment(t)
	d.finish(t, "loop-1", "Loop", "0") // executions 1..4
	d.finish(t, "loop-2", "Loop", "1") // executions 1..3

	got := decode[pruneJSON](t, d.cli("prune", "loop-1", "--keep-last", "2", "--json"))
	if got.Instances != 1 || got.Executions != 2 || got.Events == 0 {
		t.Fatalf("prune loop-1: %+v", got)
	}
	if ex := decode[instanceDetail](t, d.cli("show", "loop-1", "--json")).Executions; len(ex) != 2 || ex[0].Execution != 3 || ex[1].Execution != 4 {
		t.Fatalf("loop-1 kept %+v", ex)
	}
	expectFailure(t, d.cli("history", "loop-1", "--execution", "1"), exitNotFound, "execution 1 of instance loop-1 not found")

	expect(t, d.cli("prune", "--all", "--keep-last", "1"), 0, "pruned 3 executions", "of 2 instances")
	for _, id := range []string{"loop-1", "loop-2"} {
		if ex := decode[instanceDetail](t, d.cli("show", id, "--json")).Executions; len(ex) != 1 {
			t.Errorf("%s kept %+v", id, ex)
		}
	}
}

func TestDeleteOneTreeOrEveryOldOne(t *testing.T) {
	d := greeted(t)
	d.finish(t, "done-1", "Child", "x")
	expect(t, d.cli("start", "Waiter", "w-1"), 0)
	d.waitRunning(t, "w-1")
	child := decode[instanceDetail](t, d.cli("show", "greet-1", "--json")).Children[0]

	expectFailure(t, d.cli("delete", child), exitConflict, "is a sub-orchestration of greet-1: delete its root instead")
	expectFailure(t, d.cli("delete", "w-1"), exitConflict, "instance w-1 is Running: cancel it first, or pass --force")

	got := decode[deleteJSON](t, d.cli("delete", "greet-1", "--json"))
	if got.Instances != 2 || got.Executions != 2 || got.Events == 0 {
		t.Fatalf("delete greet-1: %+v", got)
	}
	for _, id := range []string{"greet-1", child} {
		expectFailure(t, d.cli("show", id), exitNotFound, "not found")
	}

	// a cutoff in the past spares done-1, one in the future takes it; the
	// running w-1 is never a candidate
	expect(t, d.cli("delete", "--completed-before", "1h"), 0, "deleted 0 instances")
	expect(t, d.cli("delete", "--completed-before", "2999-01-01T00:00:00Z"), 0, "deleted 1 instances")
	expect(t, d.cli("instances"), 0, "w-1", "1 shown, the last page")

	expect(t, d.cli("delete", "w-1", "--force"), 0, "deleted 1 instances")
	expect(t, d.cli("instances"), 0, "no instances")
}
