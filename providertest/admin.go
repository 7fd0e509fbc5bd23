package providertest

import (
	"slices"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The Admin section: ProviderAdmin (duroxide
// docs/provider-implementation-guide.md "Implementing ProviderAdmin", duroxide
// src/providers/mod.rs ProviderAdmin trait docs,
// provider_validation::management, duroxide.Provider docs ProviderAdmin and
// "Admin edge cases"). Workloads are built through the public Provider API only
// (kvInst, defined with the KV section).

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
	runGroups(t, h, []caseGroup{
		{"Discovery", admDiscoveryCases()},
		{"DeleteAtomic", admDeleteAtomicCases()},
		{"DeleteInstance", admDeleteInstanceCases()},
		{"BulkDelete", admBulkDeleteCases()},
		{"Prune", admPruneCases()},
		{"StoredKeys", admStoredKeysCases()},
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

// admApart is how long a case lets pass on the provider's clock (env.wait)
// between two writes whose millisecond timestamps must differ by more than
// one, for filters like CompletedBefore: t + 1 to separate them. With
// Harness.Advance it costs no real time.
const admApart = 2 * time.Millisecond

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
func admStoredKeys(e *env) {
	e.t.Helper()
	if e.h.StoredKeys == nil {
		e.t.Skip("Harness.StoredKeys is nil: cannot check that deletion leaves nothing behind")
	}
	if keys := e.h.StoredKeys(e.t, e.p); len(keys) != 0 {
		e.t.Fatalf("after deleting every instance, StoredKeys = %q, want none", keys)
	}
}
