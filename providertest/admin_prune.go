package providertest

import (
	"slices"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// admPruneCases lists the PruneExecutions and PruneExecutionsBulk cases.
func admPruneCases() []envCase {
	return []envCase{
		{"PruneKeepLastZeroAndOneKeepOnlyCurrent", admPruneKeepLastZeroOne},
		{"PruneKeepLastN", admPruneKeepLastN},
		{"PruneNeverCurrentExecution", admPruneNeverCurrent},
		{"PruneNeverRunningExecution", admPruneNeverRunning},
		{"PruneCompletedBefore", admPruneCompletedBefore},
		{"PruneKeepsKV", admPruneKeepsKV},
		{"PruneBulkAllInstances", admPruneBulkAll},
		{"PruneBulkFilters", admPruneBulkFilter},
		{"PruneUnknownInstanceIsNotFound", admPruneUnknown},
	}
}

// admPrune runs PruneExecutions.
func admPrune(e *env, id string, opts duroxide.PruneOptions) (duroxide.PruneResult, error) {
	return adm(e).PruneExecutions(e.ctx, id, opts)
}

// admWantPrunedHistory asserts pruned executions have no history and kept
// ones their full history.
func admWantPrunedHistory(e *env, in *kvInst, kept ...uint64) {
	e.t.Helper()
	admWantExecutions(e, in.id, kept...)
	for x := uint64(1); x <= in.exec; x++ {
		want := []duroxide.Event(nil)
		if slices.Contains(kept, x) {
			want = in.hist[x]
		}
		sameEvents(e.t, "history after prune", e.read(in.id, x), want)
	}
}

// admPruneKeepLastZeroOne proves KeepLast 0 and 1 both prune every execution
// but the current one (duroxide src/providers/mod.rs "keep_last Semantics").
func admPruneKeepLastZeroOne(e *env) {
	for keep, id := range []string{"keep0", "keep1"} {
		in := admChain(e, id, 4)
		res, err := admPrune(e, id, duroxide.PruneOptions{KeepLast: keep})
		admWantPruned(e.t, "PruneExecutions("+id+")", res, err, duroxide.PruneResult{
			InstancesProcessed: 1, ExecutionsDeleted: 3, EventsDeleted: admEvents(in, 1, 2, 3)})
		admWantPrunedHistory(e, in, 4)
		admWantLatest(e, id, 4)
		_, err = adm(e).GetExecutionInfo(e.ctx, id, 1)
		admWantNotFound(e.t, err, "get_execution_info")
	}
}

// admPruneKeepLastN proves KeepLast N keeps the N most recent executions,
// pruning again removes nothing more, and the system totals drop.
func admPruneKeepLastN(e *env) {
	in := admChain(e, "x", 5)
	res, err := admPrune(e, "x", duroxide.PruneOptions{KeepLast: 3})
	admWantPruned(e.t, "PruneExecutions(KeepLast 3)", res, err, duroxide.PruneResult{
		InstancesProcessed: 1, ExecutionsDeleted: 2, EventsDeleted: admEvents(in, 1, 2)})
	admWantPrunedHistory(e, in, 3, 4, 5)
	res, err = admPrune(e, "x", duroxide.PruneOptions{KeepLast: 3})
	admWantPruned(e.t, "PruneExecutions(KeepLast 3) again", res, err, duroxide.PruneResult{InstancesProcessed: 1})
	admWantMetrics(e, duroxide.SystemMetrics{TotalInstances: 1, TotalExecutions: 3, RunningInstances: 1,
		TotalEvents: admEvents(in, 3, 4, 5)})
}

// admPruneNeverCurrent proves the current execution survives pruning even
// when it is terminal, alone or after older ones.
func admPruneNeverCurrent(e *env) {
	single := kvStart(e, "single")
	single.complete()
	res, err := admPrune(e, "single", duroxide.PruneOptions{})
	admWantPruned(e.t, "PruneExecutions(single)", res, err, duroxide.PruneResult{InstancesProcessed: 1})
	admWantPrunedHistory(e, single, 1)
	multi := admChain(e, "multi", 3)
	multi.complete()
	res, err = admPrune(e, "multi", duroxide.PruneOptions{CompletedBefore: admNowMs() + 60_000})
	admWantPruned(e.t, "PruneExecutions(multi)", res, err, duroxide.PruneResult{
		InstancesProcessed: 1, ExecutionsDeleted: 2, EventsDeleted: admEvents(multi, 1, 2)})
	admWantPrunedHistory(e, multi, 3)
	if info := admInfo(e, "multi"); info.Status != "Completed" || info.CurrentExecutionID != 3 {
		e.t.Fatalf("GetInstanceInfo(multi) = %+v after prune, want execution 3 Completed", info)
	}
}

// admPruneNeverRunning proves an execution left Running (the runtime moved
// on to a newer execution without ending it) is never pruned.
func admPruneNeverRunning(e *env) {
	in := kvStart(e, "x")
	item := in.poke()
	in.exec, in.next = 2, duroxide.InitialEventID
	in.ack(item, duroxide.OrchestrationCommit{Metadata: duroxide.ExecutionMetadata{OrchestrationName: "Orch"}},
		duroxide.OrchestrationStartedEvent{Name: "Orch", Version: "1.0.0", Input: `"skip"`})
	in.continueAsNew()
	if st := admExec(e, "x", 1).Status; st != "Running" {
		e.t.Fatalf("execution 1 status = %q, want Running (setup)", st)
	}
	res, err := admPrune(e, "x", duroxide.PruneOptions{})
	admWantPruned(e.t, "PruneExecutions", res, err, duroxide.PruneResult{
		InstancesProcessed: 1, ExecutionsDeleted: 1, EventsDeleted: admEvents(in, 2)})
	admWantPrunedHistory(e, in, 1, 3)
}

// admPruneCompletedBefore proves CompletedBefore prunes only executions that
// ended strictly before it, and combines (AND) with KeepLast.
func admPruneCompletedBefore(e *env) {
	in := kvStart(e, "x")
	in.continueAsNew()
	e.wait(admApart)
	in.continueAsNew()
	in.continueAsNew()
	t1, t2 := admExec(e, "x", 1).CompletedAt, admExec(e, "x", 2).CompletedAt
	if t2 <= t1+1 {
		e.t.Fatalf("completion times %d, %d are not apart; cannot test CompletedBefore", t1, t2)
	}
	res, err := admPrune(e, "x", duroxide.PruneOptions{CompletedBefore: t1})
	admWantPruned(e.t, "PruneExecutions(CompletedBefore = first completion)", res, err, duroxide.PruneResult{InstancesProcessed: 1})
	res, err = admPrune(e, "x", duroxide.PruneOptions{CompletedBefore: t1 + 1})
	admWantPruned(e.t, "PruneExecutions(CompletedBefore)", res, err, duroxide.PruneResult{
		InstancesProcessed: 1, ExecutionsDeleted: 1, EventsDeleted: admEvents(in, 1)})
	admWantPrunedHistory(e, in, 2, 3, 4)
	res, err = admPrune(e, "x", duroxide.PruneOptions{KeepLast: 2, CompletedBefore: admNowMs() + 60_000})
	admWantPruned(e.t, "PruneExecutions(KeepLast 2, CompletedBefore)", res, err, duroxide.PruneResult{
		InstancesProcessed: 1, ExecutionsDeleted: 1, EventsDeleted: admEvents(in, 2)})
	admWantPrunedHistory(e, in, 3, 4)
}

// admPruneKeepsKV proves pruning leaves the instance's KV alone: the live view,
// the snapshot with its timestamps and the stats of the current execution
// (duroxide docs/provider-implementation-guide.md "KV entries are
// instance-scoped").
func admPruneKeepsKV(e *env) {
	in := kvStart(e, "x")
	in.continueAsNew(kvSet("a", "1", 1))
	in.continueAsNew(kvSet("b", "22", 2))
	in.turn("", kvSet("c", "333", 3))
	before := in.stats()
	res, err := admPrune(e, "x", duroxide.PruneOptions{})
	if err != nil || res.ExecutionsDeleted != 2 {
		e.t.Fatalf("PruneExecutions = %+v, %v; want 2 executions deleted", res, err)
	}
	in.wantLive(map[string]string{"a": "1", "b": "22", "c": "333"})
	if after := in.stats(); after != before {
		e.t.Fatalf("GetInstanceStats after prune = %+v, want %+v as before", after, before)
	}
	kvWantSnapshot(e.t, in.snapshot(), map[string]duroxide.KVEntry{"a": kvEntry("1", 1), "b": kvEntry("22", 2)})
}

// admPruneBulkAll proves PruneExecutionsBulk prunes every instance and sums
// the counts.
func admPruneBulkAll(e *env) {
	a, b := admChain(e, "a", 3), admChain(e, "b", 2)
	c := kvStart(e, "c")
	c.complete()
	res, err := adm(e).PruneExecutionsBulk(e.ctx, duroxide.InstanceFilter{}, duroxide.PruneOptions{KeepLast: 1})
	admWantPruned(e.t, "PruneExecutionsBulk", res, err, duroxide.PruneResult{
		InstancesProcessed: 3, ExecutionsDeleted: 3, EventsDeleted: admEvents(a, 1, 2) + admEvents(b, 1)})
	admWantPrunedHistory(e, a, 3)
	admWantPrunedHistory(e, b, 2)
	admWantPrunedHistory(e, c, 1)
}

// admPruneBulkFilter proves PruneExecutionsBulk honours the InstanceIDs
// allow-list, Limit, and CompletedBefore (which selects instances whose
// current execution completed before it, so running ones are left alone).
func admPruneBulkFilter(e *env) {
	a := adm(e)
	d := admChain(e, "d", 3)
	admChain(e, "x", 3)
	admChain(e, "y", 3)
	res, err := a.PruneExecutionsBulk(e.ctx, duroxide.InstanceFilter{InstanceIDs: []string{"d"}}, duroxide.PruneOptions{})
	admWantPruned(e.t, "PruneExecutionsBulk(d)", res, err, duroxide.PruneResult{
		InstancesProcessed: 1, ExecutionsDeleted: 2, EventsDeleted: admEvents(d, 1, 2)})
	admWantPrunedHistory(e, d, 3)
	res, err = a.PruneExecutionsBulk(e.ctx, duroxide.InstanceFilter{InstanceIDs: []string{"x", "y"}, Limit: 1}, duroxide.PruneOptions{})
	if err != nil || res.InstancesProcessed != 1 || res.ExecutionsDeleted != 2 {
		e.t.Fatalf("PruneExecutionsBulk(x, y, Limit 1) = %+v, %v; want 1 instance, 2 executions", res, err)
	}
	nx, ny := len(admExecutions(e, "x")), len(admExecutions(e, "y"))
	if nx+ny != 4 || nx == ny {
		e.t.Fatalf("after Limit 1, x has %d executions and y %d; want one pruned to 1, the other at 3", nx, ny)
	}
	ended := admChain(e, "ended", 3)
	ended.complete()
	res, err = a.PruneExecutionsBulk(e.ctx, duroxide.InstanceFilter{CompletedBefore: admNowMs() + 60_000}, duroxide.PruneOptions{})
	admWantPruned(e.t, "PruneExecutionsBulk(CompletedBefore)", res, err, duroxide.PruneResult{
		InstancesProcessed: 1, ExecutionsDeleted: 2, EventsDeleted: admEvents(ended, 1, 2)})
	admWantPrunedHistory(e, ended, 3)
	if nx, ny = len(admExecutions(e, "x")), len(admExecutions(e, "y")); nx+ny != 4 {
		e.t.Fatalf("PruneExecutionsBulk(CompletedBefore) pruned running instances: x has %d executions, y %d", nx, ny)
	}
}

// admPruneUnknown proves PruneExecutions of an instance that does not exist
// (never seen, or only enqueued) fails exactly like GetInstanceInfo, with a
// permanent not-found error and nothing counted, while PruneExecutionsBulk
// skips such ids and prunes the rest (sqlite's prune_executions answers
// "not found" from the instances table; provider_validation::prune only
// prunes instances that exist).
func admPruneUnknown(e *env) {
	a := adm(e)
	x := admChain(e, "x", 2)
	e.enqueue(startItem("queued", "Orch"), 0)
	for _, id := range []string{"ghost", "queued"} {
		_, err := a.GetInstanceInfo(e.ctx, id)
		admWantNotFound(e.t, err, "get_instance_info")
		res, err := admPrune(e, id, duroxide.PruneOptions{})
		admWantNotFound(e.t, err, "prune_executions")
		if res != (duroxide.PruneResult{}) {
			e.t.Fatalf("PruneExecutions(%s) = %+v with its error, want nothing counted", id, res)
		}
	}
	res, err := a.PruneExecutionsBulk(e.ctx, duroxide.InstanceFilter{InstanceIDs: []string{"ghost", "queued", "x"}}, duroxide.PruneOptions{})
	admWantPruned(e.t, "PruneExecutionsBulk(ghost, queued, x)", res, err, duroxide.PruneResult{
		InstancesProcessed: 1, ExecutionsDeleted: 1, EventsDeleted: admEvents(x, 1)})
	admWantPrunedHistory(e, x, 2)
}
