package providertest

import (
	"reflect"
	"testing"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The UnknownObjects section: what every Provider and ProviderAdmin method
// that names an instance answers for an instance that does not exist, for an
// execution that does not exist, and for an instance that has history but
// no record (acks whose metadata named no orchestration). docs/internals.md's table
// "Unknown instances and executions" lists the same cells. The answers follow
// duroxide's sqlite provider where it has one (reads of missing data are
// empty, not errors; lookups that must describe a record are not-found; bulk
// operations skip what does not exist) and ProviderAdmin's documented rule
// that lookups of unknown instances are errors, so "" or 0 never stands for
// a missing instance.

func init() { register("UnknownObjects", runUnknown) }

// Names of the section's fixture: unkKnown exists with execution 1, unkNoRec
// has executions 1 and 2 but no record, unkGhost and execution unkExec of
// unkKnown do not exist.
const (
	unkGhost = "ghost"
	unkKnown = "known"
	unkNoRec = "norecord"
	unkExec  = 7
)

// runUnknown runs one case per (method, kind of missing object).
func runUnknown(t *testing.T, h Harness) {
	runCases(t, h, append(unkProviderCases(), unkAdminCases()...))
}

// unkCase is a case that starts from the section's fixture.
func unkCase(name string, run func(e *env)) envCase {
	return envCase{name, func(e *env) {
		unkFixture(e)
		run(e)
	}}
}

// unkFixture creates unkKnown (history [1], execution 1) and unkNoRec
// (executions 1 and 2 with 2 and 3 events, no record).
func unkFixture(e *env) {
	e.t.Helper()
	e.start(unkKnown, nil)
	e.orcTurnWithoutRecord(unkNoRec, 1)
	e.orcTurnWithoutRecord(unkNoRec, 2)
}

// unkWantEvents asserts events are those of execution exec of unkNoRec with
// the given ids (their timestamps are the provider's, so ids and execution
// are what a reader can check).
func unkWantEvents(t *testing.T, what string, got []duroxide.Event, exec uint64, ids ...uint64) {
	t.Helper()
	if !reflect.DeepEqual(eventIDs(got), ids) {
		t.Fatalf("%s: event ids %v, want %v of execution %d", what, eventIDs(got), ids, exec)
	}
	for _, ev := range got {
		if ev.InstanceID != unkNoRec || ev.ExecutionID != exec {
			t.Fatalf("%s: event %d belongs to %s execution %d, want %s execution %d", what, ev.EventID, ev.InstanceID, ev.ExecutionID, unkNoRec, exec)
		}
	}
}

// unkProviderCases lists the cells of the Provider methods.
func unkProviderCases() []envCase {
	return []envCase{
		unkCase("Read/UnknownInstance", func(e *env) { e.orcWantHistory(unkGhost, 0) }),
		unkCase("Read/NoRecord", func(e *env) { unkWantEvents(e.t, "Read", e.read(unkNoRec, 0), 2, 1, 2, 3) }),
		unkCase("ReadWithExecution/UnknownInstance", func(e *env) { e.orcWantHistory(unkGhost, 1) }),
		unkCase("ReadWithExecution/UnknownExecution", func(e *env) { e.orcWantHistory(unkKnown, unkExec) }),
		unkCase("ReadWithExecution/NoRecord", func(e *env) {
			unkWantEvents(e.t, "ReadWithExecution", e.read(unkNoRec, 1), 1, 1, 2)
		}),
		unkCase("AppendWithExecution/UnknownInstance", func(e *env) {
			e.orcAppend(unkGhost, 1, 1, 2)
			e.orcWantHistory(unkGhost, 1, 1, 2)
			e.orcWantRecord(unkGhost, false)
		}),
		unkCase("AppendWithExecution/UnknownExecution", func(e *env) {
			e.orcAppend(unkKnown, unkExec, 1)
			e.orcWantHistory(unkKnown, unkExec, 1)
			e.orcWantHistory(unkKnown, 1, 1)
		}),
		unkCase("AppendWithExecution/NoRecord", func(e *env) {
			e.orcAppend(unkNoRec, 2, 4)
			e.orcWantHistory(unkNoRec, 2, 1, 2, 3, 4)
			e.orcWantRecord(unkNoRec, false)
		}),
		unkCase("EnqueueForOrchestrator/UnknownInstance", unkEnqueueGhost),
		unkCase("EnqueueForOrchestrator/UnknownExecution", unkEnqueueStaleExecution),
		unkCase("EnqueueForOrchestrator/NoRecord", unkEnqueueNoRecord),
		unkCase("EnqueueForWorker/UnknownInstance", func(e *env) { unkWorkerAccepts(e, activity(unkGhost, 2)) }),
		unkCase("EnqueueForWorker/UnknownExecution", func(e *env) {
			unkWorkerAccepts(e, duroxide.ActivityExecute{Instance: unkKnown, ExecutionID: unkExec, ID: 2, Name: "Act", Input: `"x"`})
		}),
		unkCase("EnqueueForWorker/NoRecord", func(e *env) { unkWorkerAccepts(e, activity(unkNoRec, 3)) }),
		unkCase("GetCustomStatus/UnknownInstance", func(e *env) { e.orcWantStatus(unkGhost, 0, nil) }),
		unkCase("GetCustomStatus/NoRecord", func(e *env) { e.orcWantStatus(unkNoRec, 0, nil) }),
		unkCase("GetKVValueAndAllValues/UnknownInstance", func(e *env) { kvWantLive(e, unkGhost, map[string]string{}, "k") }),
		unkCase("GetKVValueAndAllValues/NoRecord", func(e *env) { kvWantLive(e, unkNoRec, map[string]string{}, "k") }),
		unkCase("GetInstanceStats/UnknownInstance", func(e *env) { e.orcWantRecord(unkGhost, false) }),
		unkCase("GetInstanceStats/NoRecord", func(e *env) { e.orcWantRecord(unkNoRec, false) }),
	}
}

// unkEnqueueGhost proves a message to an unknown instance is queued and fetched
// like any other, with no name, no history and execution 1, and creates no
// record (provider_validation::error_handling::
// provider_validation::error_handling::test_missing_instance_metadata does the
// same through the runtime's start).
func unkEnqueueGhost(e *env) {
	item := e.orcLock(unkGhost, orcRaise(unkGhost, "1"))
	e.orcWantDescribed(item, "", "")
	e.orcWantExecution(item, 1)
	if len(item.History) != 0 {
		e.t.Fatalf("unknown instance fetched with history %v", eventIDs(item.History))
	}
	e.orcWantRecord(unkGhost, false)
}

// unkEnqueueStaleExecution proves a completion for an execution the instance
// never had is delivered to the current execution's turn: the provider does
// not filter messages by execution (the runtime drops stale ones).
func unkEnqueueStaleExecution(e *env) {
	msg := duroxide.ActivityCompleted{Instance: unkKnown, ExecutionID: unkExec, ID: 2, Result: `"late"`}
	item := e.orcLock(unkKnown, msg)
	e.orcWantExecution(item, 1)
	sameEvents(e.t, "fetched history", item.History, e.read(unkKnown, 1))
}

// unkEnqueueNoRecord proves a message to an instance without a record is
// fetched with the latest execution and its history, as Read sees it, and
// creates no record.
func unkEnqueueNoRecord(e *env) {
	item := e.orcLock(unkNoRec, orcRaise(unkNoRec, "x"))
	e.orcWantExecution(item, 2)
	unkWantEvents(e.t, "fetched history", item.History, 2, 1, 2, 3)
	e.orcWantRecord(unkNoRec, false)
}

// unkWorkerAccepts proves the worker queue takes an activity whatever its
// instance or execution: it is fetched back unchanged.
func unkWorkerAccepts(e *env, act duroxide.ActivityExecute) {
	e.t.Helper()
	e.enqueueWork(act)
	sameItems(e.t, "worker queue", []duroxide.WorkItem{e.mustFetchWork(longLock, duroxide.AnyTag()).Item}, act)
}

// unkAdminCases lists the cells of the ProviderAdmin methods.
func unkAdminCases() []envCase {
	nf := func(op string, call func(a duroxide.ProviderAdmin, e *env, id string) error, id string) func(e *env) {
		return func(e *env) { admWantNotFound(e.t, call(adm(e), e, id), op) }
	}
	return []envCase{
		unkCase("ListInstances/UnknownAndNoRecordNotListed", func(e *env) {
			admWantInstances(e, unkKnown)
			admWantSet(e.t, "ListInstancesByStatus(Running)", admByStatus(e, "Running"), unkKnown)
		}),
		unkCase("ListExecutions/UnknownInstance", func(e *env) { admWantExecutions(e, unkGhost) }),
		unkCase("ListExecutions/NoRecord", func(e *env) { admWantExecutions(e, unkNoRec, 1, 2) }),
		unkCase("ReadHistoryWithExecutionID/UnknownInstance", func(e *env) { unkWantAdminHistory(e, unkGhost, 1, 0) }),
		unkCase("ReadHistoryWithExecutionID/UnknownExecution", func(e *env) { unkWantAdminHistory(e, unkKnown, unkExec, 0) }),
		unkCase("ReadHistoryWithExecutionID/NoRecord", func(e *env) {
			unkWantAdminHistory(e, unkNoRec, 1, 1, 1, 2)
		}),
		unkCase("ReadHistory/UnknownInstance", nf("read_history", unkReadHistory, unkGhost)),
		unkCase("ReadHistory/NoRecord", func(e *env) { unkWantAdminHistory(e, unkNoRec, 0, 2, 1, 2, 3) }),
		unkCase("LatestExecutionID/UnknownInstance", nf("latest_execution_id", unkLatest, unkGhost)),
		unkCase("LatestExecutionID/NoRecord", func(e *env) { admWantLatest(e, unkNoRec, 2) }),
		unkCase("GetInstanceInfo/UnknownInstance", nf("get_instance_info", unkInfo, unkGhost)),
		unkCase("GetInstanceInfo/NoRecord", nf("get_instance_info", unkInfo, unkNoRec)),
		unkCase("GetExecutionInfo/UnknownInstance", nf("get_execution_info", unkExecInfo(1), unkGhost)),
		unkCase("GetExecutionInfo/UnknownExecution", nf("get_execution_info", unkExecInfo(unkExec), unkKnown)),
		unkCase("GetExecutionInfo/NoRecord", unkExecInfoNoRecord),
		unkCase("ListChildren/UnknownInstance", func(e *env) { unkWantChildren(e, unkGhost) }),
		unkCase("ListChildren/NoRecord", func(e *env) { unkWantChildren(e, unkNoRec) }),
		unkCase("GetParentID/UnknownInstance", nf("get_parent_id", unkParent, unkGhost)),
		unkCase("GetParentID/NoRecord", nf("get_parent_id", unkParent, unkNoRec)),
		unkCase("GetInstanceTree/UnknownInstance", func(e *env) { unkWantTree(e, unkGhost) }),
		unkCase("GetInstanceTree/NoRecord", func(e *env) { unkWantTree(e, unkNoRec) }),
		unkCase("DeleteInstancesAtomic/UnknownInstance", unkDeleteAtomicGhost),
		unkCase("DeleteInstancesAtomic/NoRecord", unkDeleteAtomicNoRecord),
		unkCase("DeleteInstance/UnknownInstance", nf("delete_instance", unkDelete, unkGhost)),
		unkCase("DeleteInstance/NoRecord", func(e *env) {
			admWantNotFound(e.t, unkDelete(adm(e), e, unkNoRec), "delete_instance")
			admWantExecutions(e, unkNoRec, 1, 2)
		}),
		unkCase("DeleteInstanceBulk/UnknownAndNoRecordSkipped", unkDeleteBulk),
		unkCase("PruneExecutions/UnknownInstance", nf("prune_executions", unkPrune, unkGhost)),
		unkCase("PruneExecutions/NoRecord", func(e *env) {
			admWantNotFound(e.t, unkPrune(adm(e), e, unkNoRec), "prune_executions")
			admWantExecutions(e, unkNoRec, 1, 2)
		}),
		unkCase("PruneExecutionsBulk/UnknownAndNoRecordSkipped", unkPruneBulk),
	}
}

// The lookups that must fail for a missing instance, as error-only calls.

func unkReadHistory(a duroxide.ProviderAdmin, e *env, id string) error {
	return errOf(a.ReadHistory(e.ctx, id))
}

func unkLatest(a duroxide.ProviderAdmin, e *env, id string) error {
	return errOf(a.LatestExecutionID(e.ctx, id))
}

func unkInfo(a duroxide.ProviderAdmin, e *env, id string) error {
	return errOf(a.GetInstanceInfo(e.ctx, id))
}

func unkExecInfo(exec uint64) func(a duroxide.ProviderAdmin, e *env, id string) error {
	return func(a duroxide.ProviderAdmin, e *env, id string) error {
		return errOf(a.GetExecutionInfo(e.ctx, id, exec))
	}
}

func unkParent(a duroxide.ProviderAdmin, e *env, id string) error {
	return errOf(a.GetParentID(e.ctx, id))
}

func unkDelete(a duroxide.ProviderAdmin, e *env, id string) error {
	return errOf(a.DeleteInstance(e.ctx, id, true))
}

func unkPrune(a duroxide.ProviderAdmin, e *env, id string) error {
	return errOf(a.PruneExecutions(e.ctx, id, duroxide.PruneOptions{}))
}

// unkWantAdminHistory asserts ReadHistoryWithExecutionID (execution 0:
// ReadHistory) of id returns the events ids of execution of without error
// (no ids: empty).
func unkWantAdminHistory(e *env, id string, exec, of uint64, ids ...uint64) {
	e.t.Helper()
	a := adm(e)
	var got []duroxide.Event
	var err error
	if exec == 0 {
		got, err = a.ReadHistory(e.ctx, id)
	} else {
		got, err = a.ReadHistoryWithExecutionID(e.ctx, id, exec)
	}
	if err != nil {
		e.t.Fatalf("admin history of %s execution %d: %v", id, exec, err)
	}
	if len(ids) == 0 && len(got) != 0 {
		e.t.Fatalf("admin history of %s execution %d = %v, want empty", id, exec, eventIDs(got))
	}
	if len(ids) > 0 {
		unkWantEvents(e.t, "admin history of "+id, got, of, ids...)
	}
}

// unkExecInfoNoRecord proves an execution of an instance without a record
// is described like any other: it exists, is Running and counts its events.
func unkExecInfoNoRecord(e *env) {
	info := admExec(e, unkNoRec, 2)
	if info.ExecutionID != 2 || info.Status != "Running" || info.EventCount != 3 {
		e.t.Fatalf("GetExecutionInfo(%s, 2) = %+v, want execution 2, Running, 3 events", unkNoRec, info)
	}
}

// unkWantChildren asserts id has no children and asking is not an error
// (sqlite's list_children is a query on parent ids).
func unkWantChildren(e *env, id string) {
	e.t.Helper()
	kids, err := adm(e).ListChildren(e.ctx, id)
	if err != nil || len(kids) != 0 {
		e.t.Fatalf("ListChildren(%s) = %q, %v; want none, no error", id, kids, err)
	}
}

// unkWantTree asserts the tree of id is id alone: duroxide's default
// get_instance_tree walks list_children from the id it is given without
// checking that it exists.
func unkWantTree(e *env, id string) {
	e.t.Helper()
	tree, err := adm(e).GetInstanceTree(e.ctx, id)
	want := duroxide.InstanceTree{RootID: id, AllIDs: []string{id}}
	if err != nil || !reflect.DeepEqual(tree, want) {
		e.t.Fatalf("GetInstanceTree(%s) = %+v, %v; want %+v", id, tree, err, want)
	}
}

// unkDeleteAtomicGhost proves deleting an unknown id, with or without
// force, succeeds and counts nothing (sqlite's delete_instances_atomic
// deletes by id and counts rows), leaving other instances alone.
func unkDeleteAtomicGhost(e *env) {
	for _, force := range []bool{false, true} {
		res, err := adm(e).DeleteInstancesAtomic(e.ctx, []string{unkGhost}, force)
		admWantDeleted(e.t, "DeleteInstancesAtomic(ghost)", res, err, duroxide.DeleteInstanceResult{})
	}
	admWantInstances(e, unkKnown)
	e.orcWantHistory(unkKnown, 0, 1)
}

// unkDeleteAtomicNoRecord proves deleting an instance without a record
// removes its executions and history (no instance is counted: there was no
// record), so stray history can be cleaned up.
func unkDeleteAtomicNoRecord(e *env) {
	res, err := adm(e).DeleteInstancesAtomic(e.ctx, []string{unkNoRec}, false)
	admWantDeleted(e.t, "DeleteInstancesAtomic(norecord)", res, err, duroxide.DeleteInstanceResult{
		ExecutionsDeleted: 2, EventsDeleted: 5})
	admWantExecutions(e, unkNoRec)
	e.orcWantHistory(unkNoRec, 0)
	e.orcWantHistory(unkNoRec, 1)
}

// unkDeleteBulk proves DeleteInstanceBulk skips ids without a record
// (only terminal roots are eligible) and deletes nothing of them.
func unkDeleteBulk(e *env) {
	res, err := adm(e).DeleteInstanceBulk(e.ctx, duroxide.InstanceFilter{InstanceIDs: []string{unkGhost, unkNoRec}})
	admWantDeleted(e.t, "DeleteInstanceBulk(ghost, norecord)", res, err, duroxide.DeleteInstanceResult{})
	admWantExecutions(e, unkNoRec, 1, 2)
}

// unkPruneBulk proves PruneExecutionsBulk skips ids without a record and
// prunes nothing of them.
func unkPruneBulk(e *env) {
	res, err := adm(e).PruneExecutionsBulk(e.ctx, duroxide.InstanceFilter{InstanceIDs: []string{unkGhost, unkNoRec}}, duroxide.PruneOptions{})
	admWantPruned(e.t, "PruneExecutionsBulk(ghost, norecord)", res, err, duroxide.PruneResult{})
	admWantExecutions(e, unkNoRec, 1, 2)
}
