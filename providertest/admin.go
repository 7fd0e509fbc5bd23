package providertest

import (
	"slices"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The Admin section: ProviderAdmin (seed 000 "Implementing ProviderAdmin",
// seed 003 ProviderAdmin trait docs, seed 001 "Management Tests", CONTRACT.md
// ProviderAdmin and "Admin edge cases"). Workloads are built through the
// public Provider API only (kvInst, defined with the KV section).

func init() { register("Admin", runAdmin) }

// admTimeSlack bounds how far a server timestamp may lie outside the client's
// view of the interval in which it was taken.
const admTimeSlack = 5000

// runAdmin runs the management cases; the whole section is skipped when the
// provider has no management capability.
func runAdmin(t *testing.T, h Harness) {
	if h.New(t).Admin() == nil {
		t.Skip("Provider.Admin() returned nil: the provider has no ProviderAdmin, management cases skipped")
	}
	runCases(t, h, []envCase{
		{"ListInstancesNewestFirst", admListInstances},
		{"ListInstancesByStatus", admListByStatus},
		{"ListInstancesByStatusFollowsCurrentExecution", admListByStatusFollows},
		{"ListExecutionsAscending", admListExecutions},
		{"ReadHistoryLatestAndByExecution", admReadHistory},
		{"LatestExecutionID", admLatestExecution},
		{"UnknownInstanceIsNotFound", admUnknown},
		{"GetInstanceInfo", admInstanceInfo},
		{"GetInstanceInfoTracksUpdates", admInstanceInfoUpdates},
		{"GetExecutionInfo", admExecutionInfo},
		{"HierarchyChildrenParentTree", admHierarchy},
		{"GetSystemMetrics", admSystemMetrics},
		{"GetQueueDepthsVisibleUnlocked", admQueueDepths},
		{"GetQueueDepthsTimerQueue", admQueueDepthsTimers},
		{"GetQueueDepthsDelayedAbandon", admQueueDepthsAbandonDelay},
		{"GetQueueDepthsExpiredLocksCountAgain", admQueueDepthsExpired},
		{"DeleteAtomicRemovesEverything", admDeleteEverything},
		{"DeleteAtomicRefusesRunningWithoutForce", admDeleteRefusesRunning},
		{"DeleteAtomicOrphanCheck", admDeleteOrphanCheck},
		{"DeleteAtomicChildAloneUnlinksParent", admDeleteChildAlone},
		{"DeleteAtomicCountsOnlyExisting", admDeleteCountsExisting},
		{"DeleteAtomicForceStopsInFlightAck", func(e *env) { admDeleteInFlightAck(e, h) }},
		{"InFlightAckFailsAfterRecreate", admInFlightAckAfterRecreate},
		{"StaleActivityCompletionAfterRecreate", admStaleCompletion},
		{"RecreatedInstanceStartsClean", admRecreateClean},
		{"DeleteInstanceCascadesThreeLevels", admDeleteCascade},
		{"DeleteInstanceOfSubOrchestrationRefused", admDeleteSubOrch},
		{"DeleteInstanceUnknownIsNotFound", admDeleteUnknown},
		{"DeleteInstanceRunningNeedsForce", admDeleteRunningNeedsForce},
		{"BulkDeleteTerminalRootsOnly", admBulkTerminalRoots},
		{"BulkDeleteCompletedBefore", admBulkCompletedBefore},
		{"BulkDeleteLimit", admBulkLimit},
		{"BulkDeleteLimitAppliesToEligibleRoots", admBulkLimitEligible},
		{"BulkDeleteInstanceIDs", admBulkInstanceIDs},
		{"BulkDeleteFiltersCombined", admBulkCombined},
		{"PruneKeepLastZeroAndOneKeepOnlyCurrent", admPruneKeepLastZeroOne},
		{"PruneKeepLastN", admPruneKeepLastN},
		{"PruneNeverCurrentExecution", admPruneNeverCurrent},
		{"PruneNeverRunningExecution", admPruneNeverRunning},
		{"PruneCompletedBefore", admPruneCompletedBefore},
		{"PruneKeepsKV", admPruneKeepsKV},
		{"PruneBulkAllInstances", admPruneBulkAll},
		{"PruneBulkFilters", admPruneBulkFilter},
		{"PruneUnknownInstanceIsNotFound", admPruneUnknown},
		{"StoredKeysEmptyAfterDeletingEverything", func(e *env) { admStoredKeysEverything(e, h) }},
		{"StoredKeysEmptyAfterDeleteAndSessionCleanup", func(e *env) { admStoredKeysSession(e, h) }},
	})
}

// ---- helpers -------------------------------------------------------------

// adm returns the provider's ProviderAdmin, skipping the case when it has none.
func adm(e *env) duroxide.ProviderAdmin {
	e.t.Helper()
	a := e.p.Admin()
	if a == nil {
		e.t.Skip("Provider.Admin() returned nil")
	}
	return a
}

// admNowMs is the client's wall clock in ms since the epoch.
func admNowMs() uint64 { return uint64(time.Now().UnixMilli()) }

// admWantTime asserts a server timestamp lies in [before, after] give or
// take admTimeSlack.
func admWantTime(t *testing.T, what string, ts, before, after uint64) {
	t.Helper()
	if ts+admTimeSlack < before || ts > after+admTimeSlack {
		t.Fatalf("%s = %d, want a time between %d and %d (±%d ms)", what, ts, before, after, admTimeSlack)
	}
}

// admAct is the ActivityExecute of scheduled event id of an execution.
func admAct(instance string, execution, id uint64) duroxide.ActivityExecute {
	return duroxide.ActivityExecute{Instance: instance, ExecutionID: execution, ID: id, Name: "Act", Input: `"x"`}
}

// admSched is the ActivityScheduled event kind matching admAct.
func admSched() duroxide.ActivityScheduledEvent {
	return duroxide.ActivityScheduledEvent{Name: "Act", Input: `"x"`}
}

// admList returns ListInstances or fails the test.
func admList(e *env) []string {
	e.t.Helper()
	ids, err := adm(e).ListInstances(e.ctx)
	if err != nil {
		e.t.Fatalf("ListInstances: %v", err)
	}
	return ids
}

// admWantSet asserts got holds exactly want, in any order.
func admWantSet(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	g, w := slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	if !slices.Equal(g, w) {
		t.Fatalf("%s = %q, want %q (any order)", what, got, want)
	}
}

// admWantInstances asserts ListInstances holds exactly want, in any order.
func admWantInstances(e *env, want ...string) {
	e.t.Helper()
	admWantSet(e.t, "ListInstances", admList(e), want...)
}

// admByStatus returns ListInstancesByStatus or fails the test.
func admByStatus(e *env, status string) []string {
	e.t.Helper()
	ids, err := adm(e).ListInstancesByStatus(e.ctx, status)
	if err != nil {
		e.t.Fatalf("ListInstancesByStatus(%q): %v", status, err)
	}
	return ids
}

// admExecutions returns ListExecutions or fails the test.
func admExecutions(e *env, id string) []uint64 {
	e.t.Helper()
	ids, err := adm(e).ListExecutions(e.ctx, id)
	if err != nil {
		e.t.Fatalf("ListExecutions(%q): %v", id, err)
	}
	return ids
}

// admWantExecutions asserts ListExecutions returns want, ascending.
func admWantExecutions(e *env, id string, want ...uint64) {
	e.t.Helper()
	if got := admExecutions(e, id); !slices.Equal(got, want) {
		e.t.Fatalf("ListExecutions(%q) = %v, want %v", id, got, want)
	}
}

// admInfo returns GetInstanceInfo or fails the test.
func admInfo(e *env, id string) duroxide.InstanceInfo {
	e.t.Helper()
	info, err := adm(e).GetInstanceInfo(e.ctx, id)
	if err != nil {
		e.t.Fatalf("GetInstanceInfo(%q): %v", id, err)
	}
	return info
}

// admExec returns GetExecutionInfo or fails the test.
func admExec(e *env, id string, execution uint64) duroxide.ExecutionInfo {
	e.t.Helper()
	info, err := adm(e).GetExecutionInfo(e.ctx, id, execution)
	if err != nil {
		e.t.Fatalf("GetExecutionInfo(%q, %d): %v", id, execution, err)
	}
	return info
}

// admWantNotFound asserts a permanent "not found" error of op.
func admWantNotFound(t *testing.T, err error, op string) {
	t.Helper()
	wantPermanent(t, err, duroxide.ErrNotFound, op, "not found")
}

// admEvents is the number of events acked in the given executions of in.
func admEvents(in *kvInst, executions ...uint64) uint64 {
	var n uint64
	for _, x := range executions {
		n += uint64(len(in.hist[x]))
	}
	return n
}

// admWantGone asserts nothing of instance id is visible any more: listings,
// record, parent link, executions 1..executions, history, KV, custom status,
// stats.
func admWantGone(e *env, id string, executions uint64) {
	e.t.Helper()
	a := adm(e)
	if slices.Contains(admList(e), id) {
		e.t.Fatalf("ListInstances still lists deleted instance %q", id)
	}
	for _, st := range []string{"Running", "Completed", "Failed", "ContinuedAsNew"} {
		if slices.Contains(admByStatus(e, st), id) {
			e.t.Fatalf("ListInstancesByStatus(%q) still lists deleted instance %q", st, id)
		}
	}
	_, err := a.GetInstanceInfo(e.ctx, id)
	admWantNotFound(e.t, err, "get_instance_info")
	_, err = a.GetParentID(e.ctx, id)
	admWantNotFound(e.t, err, "get_parent_id")
	if ids, err := a.ListExecutions(e.ctx, id); err != nil {
		wantPermanent(e.t, err, duroxide.ErrNotFound, "list_executions")
	} else if len(ids) != 0 {
		e.t.Fatalf("ListExecutions(%q) = %v after delete, want none", id, ids)
	}
	for x := uint64(1); x <= executions; x++ {
		if evs, err := e.p.ReadWithExecution(e.ctx, id, x); err != nil || len(evs) != 0 {
			e.t.Fatalf("ReadWithExecution(%q, %d) = %d events, %v after delete; want none", id, x, len(evs), err)
		}
	}
	if evs, err := e.p.Read(e.ctx, id); err != nil || len(evs) != 0 {
		e.t.Fatalf("Read(%q) = %d events, %v after delete; want none", id, len(evs), err)
	}
	kvWantLive(e, id, nil, "a", "b", "k")
	if cs, err := e.p.GetCustomStatus(e.ctx, id, 0); err != nil || cs != nil {
		e.t.Fatalf("GetCustomStatus(%q, 0) = %+v, %v after delete; want nil, nil", id, cs, err)
	}
	kvStatsWantNil(e, id)
	if kids, err := a.ListChildren(e.ctx, id); err != nil || len(kids) != 0 {
		e.t.Fatalf("ListChildren(%q) = %q, %v after delete; want none", id, kids, err)
	}
}

// admWantMetrics asserts GetSystemMetrics.
func admWantMetrics(e *env, want duroxide.SystemMetrics) {
	e.t.Helper()
	got, err := adm(e).GetSystemMetrics(e.ctx)
	if err != nil || got != want {
		e.t.Fatalf("GetSystemMetrics = %+v, %v; want %+v", got, err, want)
	}
}

// admDepths returns GetQueueDepths or fails the test.
func admDepths(e *env) duroxide.QueueDepths {
	e.t.Helper()
	d, err := adm(e).GetQueueDepths(e.ctx)
	if err != nil {
		e.t.Fatalf("GetQueueDepths: %v", err)
	}
	return d
}

// admWantDepths asserts GetQueueDepths.
func admWantDepths(e *env, orch, work, timer int) {
	e.t.Helper()
	want := duroxide.QueueDepths{OrchestratorQueue: orch, WorkerQueue: work, TimerQueue: timer}
	if got := admDepths(e); got != want {
		e.t.Fatalf("GetQueueDepths = %+v, want %+v", got, want)
	}
}

// admWantDeleted asserts a DeleteInstanceResult (and no error).
func admWantDeleted(t *testing.T, what string, got duroxide.DeleteInstanceResult, err error, want duroxide.DeleteInstanceResult) {
	t.Helper()
	if err != nil || got != want {
		t.Fatalf("%s = %+v, %v; want %+v, nil", what, got, err, want)
	}
}

// admWantPruned asserts a PruneResult (and no error).
func admWantPruned(t *testing.T, what string, got duroxide.PruneResult, err error, want duroxide.PruneResult) {
	t.Helper()
	if err != nil || got != want {
		t.Fatalf("%s = %+v, %v; want %+v, nil", what, got, err, want)
	}
}

// admChain creates instance id with n executions: each has a turn with one
// event, all but the last end ContinuedAsNew; the last is Running.
func admChain(e *env, id string, n int) *kvInst {
	e.t.Helper()
	in := kvStart(e, id)
	for i := 1; i < n; i++ {
		in.turn("", duroxide.ExternalEventEvent{Name: "poke", Data: `"x"`})
		in.continueAsNew()
	}
	in.turn("", duroxide.ExternalEventEvent{Name: "poke", Data: `"x"`})
	return in
}

// admStoredKeys asserts Harness.StoredKeys reports nothing, skipping when the
// harness lacks the hook.
func admStoredKeys(e *env, h Harness) {
	e.t.Helper()
	if h.StoredKeys == nil {
		e.t.Skip("Harness.StoredKeys is nil: cannot check that deletion leaves nothing behind")
	}
	if keys := h.StoredKeys(e.t, e.p); len(keys) != 0 {
		e.t.Fatalf("after deleting every instance, StoredKeys = %q, want none", keys)
	}
}

// ---- discovery -------------------------------------------------------------

// admListInstances proves ListInstances returns every created instance,
// newest first, and never an instance that was only enqueued (seed 001
// test_list_instances; seed 003 "sorted by creation time (newest first)").
func admListInstances(e *env) {
	admWantInstances(e)
	for _, id := range []string{"a", "b", "c"} {
		kvStart(e, id)
		time.Sleep(5 * time.Millisecond)
	}
	e.enqueue(startItem("queued", "Orch"), 0)
	if got := admList(e); !slices.Equal(got, []string{"c", "b", "a"}) {
		e.t.Fatalf("ListInstances = %q, want [c b a] (newest first)", got)
	}
}

// admListByStatus proves ListInstancesByStatus filters by the status of each
// instance's current execution, including one created and completed by a
// single ack (seed 001 test_list_instances_by_status).
func admListByStatus(e *env) {
	kvStart(e, "run")
	kvStart(e, "done").complete()
	kvStart(e, "fail").fail()
	kvStart(e, "next").continueAsNew()
	admOneShot(e, "oneshot")
	kvStart(e, "can").endAsNew() // last: leaves its ContinueAsNew queued
	admWantSet(e.t, "Running", admByStatus(e, "Running"), "run", "next")
	admWantSet(e.t, "Completed", admByStatus(e, "Completed"), "done", "oneshot")
	admWantSet(e.t, "Failed", admByStatus(e, "Failed"), "fail")
	admWantSet(e.t, "ContinuedAsNew", admByStatus(e, "ContinuedAsNew"), "can")
	admWantSet(e.t, "Bogus", admByStatus(e, "Bogus"))
}

// admOneShot creates an instance whose first ack both starts and completes
// it.
func admOneShot(e *env, id string) {
	e.t.Helper()
	e.enqueue(startItem(id, "Orch"), 0)
	item := e.fetchInstance(id)
	out := `"done"`
	e.ack(item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID: 1,
		HistoryDelta: []duroxide.Event{started(id, 1, "Orch", "1.0.0"),
			event(2, id, 1, duroxide.OrchestrationCompletedEvent{Output: out})},
		Metadata: duroxide.ExecutionMetadata{Status: "Completed", Output: &out,
			OrchestrationName: "Orch", OrchestrationVersion: "1.0.0"},
	})
}

// admWantOnlyIn asserts instance id is listed under status and under no
// other status.
func admWantOnlyIn(e *env, id, status string) {
	e.t.Helper()
	for _, s := range []string{"Running", "Completed", "Failed", "ContinuedAsNew"} {
		if got := slices.Contains(admByStatus(e, s), id); got != (s == status) {
			e.t.Fatalf("ListInstancesByStatus(%q) lists %q: %v, want %v (current status %s)", s, id, got, s == status, status)
		}
	}
}

// admListByStatusFollows proves an instance moves between status lists as
// its current execution changes (ContinuedAsNew, then a Running new
// execution, then Completed).
func admListByStatusFollows(e *env) {
	x := kvStart(e, "x")
	admWantOnlyIn(e, "x", "Running")
	x.endAsNew()
	admWantOnlyIn(e, "x", "ContinuedAsNew")
	x.startNext(nil)
	admWantOnlyIn(e, "x", "Running")
	x.complete()
	admWantOnlyIn(e, "x", "Completed")
}

// admListExecutions proves ListExecutions returns every execution id in
// ascending order (seed 001 test_list_executions).
func admListExecutions(e *env) {
	admChain(e, "x", 3)
	kvStart(e, "single")
	admWantExecutions(e, "x", 1, 2, 3)
	admWantExecutions(e, "single", 1)
}

// admReadHistory proves ReadHistory returns the latest execution's events
// and ReadHistoryWithExecutionID each execution's, exactly as acked.
func admReadHistory(e *env) {
	a := adm(e)
	x := admChain(e, "x", 2)
	got, err := a.ReadHistory(e.ctx, "x")
	if err != nil {
		e.t.Fatalf("ReadHistory: %v", err)
	}
	sameEvents(e.t, "ReadHistory(x)", got, x.hist[2])
	for _, id := range []uint64{1, 2} {
		got, err := a.ReadHistoryWithExecutionID(e.ctx, "x", id)
		if err != nil {
			e.t.Fatalf("ReadHistoryWithExecutionID(x, %d): %v", id, err)
		}
		sameEvents(e.t, "ReadHistoryWithExecutionID", got, x.hist[id])
	}
}

// admWantLatest asserts LatestExecutionID.
func admWantLatest(e *env, id string, want uint64) {
	e.t.Helper()
	if got, err := adm(e).LatestExecutionID(e.ctx, id); err != nil || got != want {
		e.t.Fatalf("LatestExecutionID(%q) = %d, %v; want %d", id, got, err, want)
	}
}

// admLatestExecution proves LatestExecutionID follows the current execution:
// it moves when the new execution's first turn is acked.
func admLatestExecution(e *env) {
	x := kvStart(e, "x")
	admWantLatest(e, "x", 1)
	x.endAsNew()
	admWantLatest(e, "x", 1)
	x.startNext(nil)
	admWantLatest(e, "x", 2)
	x.continueAsNew()
	admWantLatest(e, "x", 3)
}

// admUnknown proves the operations that need an instance return a permanent
// "not found" error for an unknown one, including an instance that was only
// enqueued and an unknown execution of a known instance (CONTRACT "Admin
// edge cases").
func admUnknown(e *env) {
	a := adm(e)
	kvStart(e, "known")
	e.enqueue(startItem("queued", "Orch"), 0)
	for _, id := range []string{"ghost", "queued"} {
		_, err := a.LatestExecutionID(e.ctx, id)
		admWantNotFound(e.t, err, "latest_execution_id")
		_, err = a.GetInstanceInfo(e.ctx, id)
		admWantNotFound(e.t, err, "get_instance_info")
		_, err = a.GetExecutionInfo(e.ctx, id, 1)
		admWantNotFound(e.t, err, "get_execution_info")
		_, err = a.GetParentID(e.ctx, id)
		admWantNotFound(e.t, err, "get_parent_id")
	}
	_, err := a.GetExecutionInfo(e.ctx, "known", 7)
	admWantNotFound(e.t, err, "get_execution_info")
}

// admInstanceInfo proves GetInstanceInfo of a new instance: name, version,
// execution, Running status, no output, plausible times, root (seed 001
// test_get_instance_info).
func admInstanceInfo(e *env) {
	before := admNowMs()
	kvStart(e, "x")
	after := admNowMs()
	info := admInfo(e, "x")
	want := duroxide.InstanceInfo{InstanceID: "x", OrchestrationName: "Orch", OrchestrationVersion: "1.0.0",
		CurrentExecutionID: 1, Status: "Running", CreatedAt: info.CreatedAt, UpdatedAt: info.UpdatedAt}
	if info.Output != nil || info != want {
		e.t.Fatalf("GetInstanceInfo = %+v, want %+v", info, want)
	}
	admWantTime(e.t, "CreatedAt", info.CreatedAt, before, after)
	admWantTime(e.t, "UpdatedAt", info.UpdatedAt, before, after)
	if info.UpdatedAt < info.CreatedAt {
		e.t.Fatalf("UpdatedAt %d < CreatedAt %d", info.UpdatedAt, info.CreatedAt)
	}
}

// admInstanceInfoUpdates proves GetInstanceInfo follows later acks: version
// changes, the current execution after ContinueAsNew, the final status and
// output, UpdatedAt moving forward while CreatedAt stays.
func admInstanceInfoUpdates(e *env) {
	x := kvStart(e, "x")
	first := admInfo(e, "x")
	time.Sleep(5 * time.Millisecond)
	x.turnWith(duroxide.OrchestrationCommit{Metadata: duroxide.ExecutionMetadata{OrchestrationVersion: "1.1.0"}})
	info := admInfo(e, "x")
	if info.OrchestrationVersion != "1.1.0" || info.CreatedAt != first.CreatedAt || info.UpdatedAt <= first.UpdatedAt {
		e.t.Fatalf("after a version change GetInstanceInfo = %+v (before %+v): want version 1.1.0, same CreatedAt, later UpdatedAt", info, first)
	}
	x.continueAsNew()
	if info = admInfo(e, "x"); info.CurrentExecutionID != 2 || info.Status != "Running" || info.Output != nil {
		e.t.Fatalf("after ContinueAsNew GetInstanceInfo = %+v, want execution 2 Running without output", info)
	}
	x.complete()
	info = admInfo(e, "x")
	if info.Status != "Completed" || info.Output == nil || *info.Output != `"done"` || info.CurrentExecutionID != 2 {
		e.t.Fatalf("after completion GetInstanceInfo = %+v, want execution 2 Completed with output \"done\"", info)
	}
}

// admWantExec asserts an execution's status, output, event count and
// whether it has a completion time (not before its start).
func admWantExec(e *env, in *kvInst, execution uint64, status string, output *string) duroxide.ExecutionInfo {
	e.t.Helper()
	info := admExec(e, in.id, execution)
	ended := status != "Running"
	if info.ExecutionID != execution || info.Status != status || info.EventCount != len(in.hist[execution]) ||
		(info.CompletedAt != 0) != ended || (ended && info.CompletedAt < info.StartedAt) ||
		(info.Output == nil) != (output == nil) || (output != nil && *info.Output != *output) {
		e.t.Fatalf("GetExecutionInfo(%q, %d) = %+v (output %v), want status %s, %d events, output %v, completed %v",
			in.id, execution, info, info.Output, status, len(in.hist[execution]), output, ended)
	}
	return info
}

// admExecutionInfo proves GetExecutionInfo: event count, start time,
// CompletedAt 0 while running and set on Completed, Failed and
// ContinuedAsNew (seed 001 test_get_execution_info; CONTRACT "Admin edge
// cases").
func admExecutionInfo(e *env) {
	before := admNowMs()
	x := kvStart(e, "x")
	info := admWantExec(e, x, 1, "Running", nil)
	admWantTime(e.t, "StartedAt", info.StartedAt, before, admNowMs())
	x.turn("", duroxide.ExternalEventEvent{Name: "poke", Data: `"x"`}, admSched())
	admWantExec(e, x, 1, "Running", nil)
	x.continueAsNew()
	info = admWantExec(e, x, 1, "ContinuedAsNew", ptr(`"next"`))
	admWantTime(e.t, "CompletedAt", info.CompletedAt, before, admNowMs())
	admWantExec(e, x, 2, "Running", nil)
	x.complete()
	admWantExec(e, x, 2, "Completed", ptr(`"done"`))
	f := kvStart(e, "f")
	f.fail()
	admWantExec(e, f, 1, "Failed", ptr(`"boom"`))
}

// admHierarchy proves ListChildren, GetParentID and GetInstanceTree over a
// parent with two children and a grandchild created through acks with
// Metadata.ParentInstanceID.
func admHierarchy(e *env) {
	a := adm(e)
	kvStart(e, "p")
	kvStartChild(e, "c1", "p")
	kvStartChild(e, "c2", "p")
	kvStartChild(e, "g", "c1")
	for id, want := range map[string][]string{"p": {"c1", "c2"}, "c1": {"g"}, "c2": nil, "g": nil, "ghost": nil} {
		kids, err := a.ListChildren(e.ctx, id)
		if err != nil {
			e.t.Fatalf("ListChildren(%q): %v", id, err)
		}
		admWantSet(e.t, "ListChildren("+id+")", kids, want...)
	}
	for id, want := range map[string]string{"p": "", "c1": "p", "c2": "p", "g": "c1"} {
		if got, err := a.GetParentID(e.ctx, id); err != nil || got != want {
			e.t.Fatalf("GetParentID(%q) = %q, %v; want %q", id, got, err, want)
		}
		if got := admInfo(e, id).ParentInstanceID; got != want {
			e.t.Fatalf("GetInstanceInfo(%q).ParentInstanceID = %q, want %q", id, got, want)
		}
	}
	for root, want := range map[string][]string{"p": {"p", "c1", "c2", "g"}, "c1": {"c1", "g"}, "g": {"g"}} {
		tree, err := a.GetInstanceTree(e.ctx, root)
		if err != nil || tree.RootID != root {
			e.t.Fatalf("GetInstanceTree(%q) = %+v, %v", root, tree, err)
		}
		admWantSet(e.t, "GetInstanceTree("+root+").AllIDs", tree.AllIDs, want...)
	}
}

// admSystemMetrics proves GetSystemMetrics totals follow instances as they
// start, complete, fail, continue as new and get deleted (seed 001
// test_get_system_metrics).
func admSystemMetrics(e *env) {
	admWantMetrics(e, duroxide.SystemMetrics{})
	a, b, c := kvStart(e, "a"), kvStart(e, "b"), kvStart(e, "c")
	admWantMetrics(e, duroxide.SystemMetrics{TotalInstances: 3, TotalExecutions: 3, RunningInstances: 3, TotalEvents: 3})
	a.complete()
	admWantMetrics(e, duroxide.SystemMetrics{TotalInstances: 3, TotalExecutions: 3, RunningInstances: 2, CompletedInstances: 1, TotalEvents: 4})
	b.fail()
	admWantMetrics(e, duroxide.SystemMetrics{TotalInstances: 3, TotalExecutions: 3, RunningInstances: 1,
		CompletedInstances: 1, FailedInstances: 1, TotalEvents: 5})
	c.continueAsNew()
	admWantMetrics(e, duroxide.SystemMetrics{TotalInstances: 3, TotalExecutions: 4, RunningInstances: 1,
		CompletedInstances: 1, FailedInstances: 1, TotalEvents: 7})
	res, err := adm(e).DeleteInstance(e.ctx, "a", false)
	admWantDeleted(e.t, "DeleteInstance(a)", res, err, duroxide.DeleteInstanceResult{InstancesDeleted: 1, ExecutionsDeleted: 1, EventsDeleted: 2})
	admWantMetrics(e, duroxide.SystemMetrics{TotalInstances: 2, TotalExecutions: 3, RunningInstances: 1, FailedInstances: 1, TotalEvents: 5})
}

// admQueueDepths proves OrchestratorQueue and WorkerQueue count unlocked
// items visible now: locking takes items out of the count, abandoning puts
// them back (seed 001 test_get_queue_depths; CONTRACT "Admin edge cases").
func admQueueDepths(e *env) {
	admWantDepths(e, 0, 0, 0)
	e.enqueue(startItem("a", "Orch"), 0)
	e.enqueue(duroxide.ExternalRaised{Instance: "a", Name: "ev", Data: "1"}, 0)
	e.enqueue(startItem("b", "Orch"), 0)
	admWantDepths(e, 3, 0, 0)
	e.enqueueWork(admAct("a", 1, 2))
	e.enqueueWork(admAct("b", 1, 2))
	admWantDepths(e, 3, 2, 0)
	item := e.fetchInstance("a")
	admWantDepths(e, 1, 2, 0)
	w := e.fetchWork(longLock, nil, duroxide.DefaultOnly())
	if w == nil {
		e.t.Fatal("FetchWorkItem returned nothing, want an item")
	}
	admWantDepths(e, 1, 1, 0)
	e.abandonWork(w.LockToken, 0, false)
	e.abandon(item.LockToken, 0, false)
	admWantDepths(e, 3, 2, 0)
}

// admQueueDepthsTimers proves TimerQueue counts orchestrator messages visible
// later (a delayed enqueue, a future TimerFired of an ack) and that a
// message moves to OrchestratorQueue once it is visible, as does a
// TimerFired whose time has passed.
func admQueueDepthsTimers(e *env) {
	x := kvStart(e, "x")
	e.enqueue(duroxide.ExternalRaised{Instance: "x", Name: "late", Data: "1"}, time.Minute)
	admWantDepths(e, 0, 0, 1)
	base := x.next
	x.turnWith(duroxide.OrchestrationCommit{OrchestratorItems: []duroxide.WorkItem{
		duroxide.TimerFired{Instance: "x", ExecutionID: 1, ID: base, FireAtMs: admNowMs() + 60_000},
	}}, duroxide.TimerCreatedEvent{FireAtMs: admNowMs() + 60_000})
	admWantDepths(e, 0, 0, 2)
	e.enqueue(duroxide.ExternalRaised{Instance: "x", Name: "soon", Data: "2"}, 300*time.Millisecond)
	admWantDepths(e, 0, 0, 3)
	want := duroxide.QueueDepths{OrchestratorQueue: 1, TimerQueue: 2}
	eventually(e.t, 10*time.Second, "the delayed message counted as visible", func() bool { return admDepths(e) == want })
	base = x.next
	x.turnWith(duroxide.OrchestrationCommit{OrchestratorItems: []duroxide.WorkItem{
		duroxide.TimerFired{Instance: "x", ExecutionID: 1, ID: base, FireAtMs: admNowMs() - 10_000},
	}}, duroxide.TimerCreatedEvent{FireAtMs: admNowMs() - 10_000})
	admWantDepths(e, 1, 0, 2)
}

// admQueueDepthsAbandonDelay proves items abandoned with a delay are not
// counted as visible now: the orchestrator messages count as visible later
// (TimerQueue) and the worker item is not counted (TimerQueue counts
// orchestrator messages only).
func admQueueDepthsAbandonDelay(e *env) {
	e.enqueue(startItem("a", "Orch"), 0)
	e.enqueue(duroxide.ExternalRaised{Instance: "a", Name: "ev", Data: "1"}, 0)
	e.enqueueWork(admAct("a", 1, 2))
	item := e.fetchInstance("a")
	w := e.fetchWork(longLock, nil, duroxide.DefaultOnly())
	if w == nil {
		e.t.Fatal("FetchWorkItem returned nothing, want an item")
	}
	admWantDepths(e, 0, 0, 0)
	e.abandon(item.LockToken, time.Minute, false)
	e.abandonWork(w.LockToken, time.Minute, false)
	admWantDepths(e, 0, 0, 2)
	e.noFetch(nil)
}

// admQueueDepthsExpired proves items whose lock expired are unlocked and
// visible again, so they count in OrchestratorQueue / WorkerQueue before
// anyone fetches them again.
func admQueueDepthsExpired(e *env) {
	e.enqueue(startItem("a", "Orch"), 0)
	e.enqueue(duroxide.ExternalRaised{Instance: "a", Name: "ev", Data: "1"}, 0)
	e.enqueueWork(admAct("a", 1, 2))
	if item := e.fetch(shortLock, nil); item == nil {
		e.t.Fatal("FetchOrchestrationItem returned nothing, want instance a")
	}
	if w := e.fetchWork(shortLock, nil, duroxide.DefaultOnly()); w == nil {
		e.t.Fatal("FetchWorkItem returned nothing, want an item")
	}
	admWantDepths(e, 0, 0, 0)
	time.Sleep(afterShort)
	admWantDepths(e, 2, 1, 0)
}

// ---- DeleteInstancesAtomic ---------------------------------------------------

// admDeleteEverything proves a force delete removes every trace of an
// instance (two executions of history, orchestrator messages visible and
// delayed, a future timer, worker items queued and locked, KV store and
// delta, custom status), reports the counts, and leaves another instance
// untouched (seed 003 delete_instances_atomic "Complete cleanup").
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

// admDeleteRefusesRunningWithoutForce proves force=false refuses a batch with
// a Running instance and deletes nothing of it, while force=true deletes it
// (seed 003 "Force semantics", "Atomicity").
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
// refused even with force, deleting nothing, and succeeds with both (seed 003
// "Orphan detection").
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
// that existed (a repeated id once) and that unknown ids are no error (CONTRACT "Admin edge
// cases").
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
// status, queued items or stored keys (seed 003 "Prevent ack recreation").
func admDeleteInFlightAck(e *env, h Harness) {
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
	if h.StoredKeys != nil {
		admStoredKeys(e, h)
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

// ---- DeleteInstance ------------------------------------------------------------

// admDeleteCascade proves DeleteInstance of a root removes its whole
// three-level tree, including a pending message of the grandchild (seed 003
// "Cascade delete").
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

// admDeleteSubOrch proves DeleteInstance refuses a sub-orchestration, even
// with force, and changes nothing (seed 003 delete_instance).
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

// ---- DeleteInstanceBulk ------------------------------------------------------------

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
// roots (one completed by its first ack) with their children and silently skips Running and ContinuedAsNew
// roots and a terminal root whose child still runs (seed 003
// delete_instance_bulk).
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
	time.Sleep(20 * time.Millisecond)
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
// terminal root that cannot be deleted (its child still runs) does not use
// up the limit (seed 003 delete_instance_bulk "limit ... (applied last)").
func admBulkLimitEligible(e *env) {
	blocked := kvStart(e, "blocked")
	kvStartChild(e, "running-child", "blocked")
	blocked.complete()
	time.Sleep(5 * time.Millisecond)
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
	time.Sleep(20 * time.Millisecond)
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

// ---- pruning -------------------------------------------------------------------

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

// admPruneKeepLastZeroOne proves KeepLast 0 and 1 both prune every
// execution but the current one (seed 003 "keep_last Semantics").
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
	time.Sleep(20 * time.Millisecond)
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

// admPruneKeepsKV proves pruning leaves the instance's KV alone: the live
// view, the snapshot with its timestamps and the stats of the current
// execution (seed 000 "KV entries are instance-scoped").
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

// ---- nothing left behind -------------------------------------------------------

// admStoredKeysEverything proves deleting every instance of a busy workload
// (a parent with a child, KV store and delta, custom status, two executions,
// worker items queued, tagged, of an unclaimed session and locked, a future
// timer, delayed and visible messages, an in-flight orchestration lock)
// leaves no stored instance data (Harness.StoredKeys).
func admStoredKeysEverything(e *env, h Harness) {
	if h.StoredKeys == nil {
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
	admStoredKeys(e, h)
	admWantInstances(e)
	admWantMetrics(e, duroxide.SystemMetrics{})
	admWantDepths(e, 0, 0, 0)
}

// admStoredKeysSession proves that after deleting an instance whose session
// activity a worker had claimed, the session is an orphan that
// CleanupOrphanedSessions removes once its lock expires, leaving no stored
// data. (A session still locked by a live worker is owner state, not instance
// state, so it may outlive the instance until then.)
func admStoredKeysSession(e *env, h Harness) {
	if h.StoredKeys == nil {
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
	time.Sleep(afterShort)
	if n, err := e.p.CleanupOrphanedSessions(e.ctx, 0); err != nil || n != 1 {
		e.t.Fatalf("CleanupOrphanedSessions = %d, %v; want 1 (the deleted instance's session)", n, err)
	}
	admStoredKeys(e, h)
}
