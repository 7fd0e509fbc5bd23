package providertest

import (
	"fmt"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Executions (provider_validation::multi_execution; duroxide
// src/providers/mod.rs ack execution_id and read; duroxide.Provider docs:
// current execution = max(current, ExecutionID)).

// orcExecutionCases lists the multi-execution cases.
func orcExecutionCases() []envCase {
	return []envCase{
		{"ExecutionIsolation", orcExecutionIsolation},
		{"LatestExecutionDetection", orcLatestExecution},
		{"ExecutionIDSequencing", orcExecutionSequencing},
		{"ContinueAsNewCreatesNewExecution", orcContinueAsNewCase},
		{"ExecutionHistoryPersistence", orcHistoryPersistence},
		{"CurrentExecutionNeverMovesBack", orcCurrentIsMax},
		{"FetchLoadsCurrentExecutionHistory", orcFetchLoadsHistory},
		{"LatestExecutionWithoutInstanceRecord", orcLatestWithoutRecord},
	}
}

// orcCAN is the ContinueAsNew message an execution sends to its instance.
func orcCAN(instance string) duroxide.ContinueAsNew {
	return duroxide.ContinueAsNew{Instance: instance, Orchestration: "Orch", Input: `"again"`}
}

// orcEndWithContinueAsNew acks a turn of execution exec that ends it with
// ContinueAsNew: the event, the message to itself and the status.
func (e *env) orcEndWithContinueAsNew(instance string, exec uint64) {
	e.t.Helper()
	prev := e.read(instance, exec)
	item := e.orcLock(instance, orcRaise(instance, "end"))
	e.orcWantExecution(item, exec)
	next := prev[len(prev)-1].EventID + 1
	e.ack(item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID:       exec,
		HistoryDelta:      []duroxide.Event{event(next, instance, exec, duroxide.OrchestrationContinuedAsNewEvent{Input: `"again"`})},
		OrchestratorItems: []duroxide.WorkItem{orcCAN(instance)},
		Metadata:          duroxide.ExecutionMetadata{Status: "ContinuedAsNew", Output: ptr(`"again"`)},
	})
}

// orcStartNext fetches the ContinueAsNew message (still delivered for
// execution exec-1) and acks execution exec's first turn.
func (e *env) orcStartNext(instance string, exec uint64) {
	e.t.Helper()
	item := e.fetchInstance(instance)
	e.wantMessages(item, orcCAN(instance))
	e.orcWantExecution(item, exec-1)
	e.ack(item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID:  exec,
		HistoryDelta: []duroxide.Event{started(instance, exec, "Orch", "1.0.0")},
		Metadata:     duroxide.ExecutionMetadata{Status: "Running", OrchestrationName: "Orch", OrchestrationVersion: "1.0.0"},
	})
}

// orcContinueAsNew moves instance from execution exec-1 to exec the way the
// runtime does.
func (e *env) orcContinueAsNew(instance string, exec uint64) {
	e.t.Helper()
	e.orcEndWithContinueAsNew(instance, exec-1)
	e.orcStartNext(instance, exec)
}

// orcWantExecution asserts the execution a fetched item belongs to.
func (e *env) orcWantExecution(item *duroxide.OrchestrationItem, exec uint64) {
	e.t.Helper()
	if item.ExecutionID != exec {
		e.t.Fatalf("fetched %s for execution %d, want %d", item.Instance, item.ExecutionID, exec)
	}
}

// orcWantEventsOf asserts every event of an execution carries its ids.
func (e *env) orcWantEventsOf(instance string, exec uint64) {
	e.t.Helper()
	for _, ev := range e.read(instance, exec) {
		if ev.InstanceID != instance || ev.ExecutionID != exec {
			e.t.Fatalf("execution %d of %s holds event %d of %s execution %d", exec, instance, ev.EventID, ev.InstanceID, ev.ExecutionID)
		}
	}
}

// orcExecutionIsolation proves each execution keeps its own history: the same
// event ids live in both, each read returns only its execution's events, and
// appending to one leaves the other alone
// (provider_validation::multi_execution::test_execution_isolation).
func orcExecutionIsolation(e *env) {
	e.start("A", nil)
	e.orcTurn("A", orcCommit("A", 1, 2))
	e.orcContinueAsNew("A", 2)
	e.orcTurn("A", orcCommit("A", 2, 2))
	e.orcWantHistory("A", 1, 1, 2, 3)
	e.orcWantHistory("A", 2, 1, 2)
	e.orcWantEventsOf("A", 1)
	e.orcWantEventsOf("A", 2)
	e.orcAppend("A", 1, 4)
	e.orcWantHistory("A", 1, 1, 2, 3, 4)
	e.orcWantHistory("A", 2, 1, 2)
}

// orcLatestWithoutRecord proves Read follows the highest execution that has
// history when no instance record exists: acks whose metadata names no
// orchestration write history to executions 1, 2 and 3 without creating a
// record, and Read returns the newest one each time (the rule of
// provider_validation::multi_execution::test_latest_execution_detection, which
// sqlite derives from its executions table, not the instance row).
func orcLatestWithoutRecord(e *env) {
	for exec := uint64(1); exec <= 3; exec++ {
		ids := e.orcTurnWithoutRecord("ghost", exec)
		e.orcWantRecord("ghost", false)
		e.orcWantHistory("ghost", exec, ids...)
		sameEvents(e.t, fmt.Sprintf("Read after execution %d", exec), e.read("ghost", 0), e.read("ghost", exec))
	}
}

// orcTurnWithoutRecord acks one turn of execution exec of instance with
// empty metadata, so no instance record is created, appending events 1 to
// exec+1 (a different count per execution, so reads cannot be confused).
// It returns the ids appended.
func (e *env) orcTurnWithoutRecord(instance string, exec uint64) []uint64 {
	e.t.Helper()
	item := e.orcLock(instance, orcRaise(instance, fmt.Sprint(exec)))
	ids := make([]uint64, exec+1)
	for i := range ids {
		ids[i] = uint64(i + 1)
	}
	e.ack(item.LockToken, orcCommit(instance, exec, ids...))
	return ids
}

// orcLatestExecution proves Read always returns the latest execution's history
// (provider_validation::multi_execution::test_latest_execution_detection;
// duroxide src/providers/mod.rs read).
func orcLatestExecution(e *env) {
	e.start("A", nil)
	e.orcWantHistory("A", 0, 1)
	for exec := uint64(2); exec <= 3; exec++ {
		e.orcContinueAsNew("A", exec)
		e.orcTurn("A", orcCommit("A", exec, 2, 3))
		sameEvents(e.t, "Read", e.read("A", 0), e.read("A", exec))
		e.orcWantHistory("A", 0, 1, 2, 3)
	}
	if a := e.p.Admin(); a != nil {
		if latest, err := a.LatestExecutionID(e.ctx, "A"); err != nil || latest != 3 {
			e.t.Fatalf("LatestExecutionID = %d, %v; want 3", latest, err)
		}
	}
}

// orcExecutionSequencing proves fetched items report the execution the runtime
// chose: 1 for a new instance, then each execution id acked
// (provider_validation::multi_execution::test_execution_id_sequencing).
func orcExecutionSequencing(e *env) {
	item := e.orcLock("A", startItem("A", "Orch"))
	e.orcWantExecution(item, 1)
	c := orcCommit("A", 1, 1)
	c.Metadata.OrchestrationName = "Orch"
	e.ack(item.LockToken, c)
	for exec := uint64(2); exec <= 3; exec++ {
		e.orcContinueAsNew("A", exec)
		item := e.orcLock("A", orcRaise("A", fmt.Sprint(exec)))
		e.orcWantExecution(item, exec)
		e.ack(item.LockToken, orcCommit("A", exec, 2))
	}
	if a := e.p.Admin(); a != nil {
		if ids, err := a.ListExecutions(e.ctx, "A"); err != nil || fmt.Sprint(ids) != "[1 2 3]" {
			e.t.Fatalf("ListExecutions = %v, %v; want [1 2 3]", ids, err)
		}
	}
}

// orcContinueAsNewCase proves that acking execution 2 after a ContinueAsNew
// switches Read to execution 2 while ReadWithExecution(1) still returns the old
// history, and the next fetch loads execution 2
// (provider_validation::multi_execution::test_continue_as_new_creates_new_execution;
// duroxide.Provider docs ContinueAsNew).
func orcContinueAsNewCase(e *env) {
	e.start("A", nil)
	e.orcTurn("A", orcCommit("A", 1, 2))
	old := e.read("A", 1)
	e.orcEndWithContinueAsNew("A", 1)
	e.orcWantHistory("A", 0, 1, 2, 3) // still execution 1
	e.orcStartNext("A", 2)
	e.orcWantHistory("A", 0, 1)
	e.orcWantEventsOf("A", 2)
	sameEvents(e.t, "execution 1", e.read("A", 1)[:2], old)
	e.orcWantHistory("A", 1, 1, 2, 3)
	item := e.orcLock("A", orcRaise("A", "x"))
	e.orcWantExecution(item, 2)
	sameEvents(e.t, "fetched history", item.History, e.read("A", 2))
}

// orcHistoryPersistence proves every execution's history persists unchanged
// while later executions grow
// (provider_validation::multi_execution::test_execution_history_persistence).
func orcHistoryPersistence(e *env) {
	e.start("A", nil)
	e.orcContinueAsNew("A", 2)
	e.orcTurn("A", orcCommit("A", 2, 2))
	e.orcContinueAsNew("A", 3)
	first, second := e.read("A", 1), e.read("A", 2)
	e.orcTurn("A", orcCommit("A", 3, 2, 3))
	e.orcTurn("A", orcCommit("A", 3, 4))
	sameEvents(e.t, "execution 1", e.read("A", 1), first)
	sameEvents(e.t, "execution 2", e.read("A", 2), second)
	e.orcWantHistory("A", 1, 1, 2)
	e.orcWantHistory("A", 2, 1, 2, 3)
	e.orcWantHistory("A", 3, 1, 2, 3, 4)
}

// orcCurrentIsMax proves an ack for an older execution appends to it without
// moving the current execution back (duroxide.Provider docs: current execution
// = max(current, ExecutionID); duroxide docs/provider-implementation-guide.md
// ack pseudocode MAX).
func orcCurrentIsMax(e *env) {
	e.start("A", nil)
	e.orcContinueAsNew("A", 2)
	e.orcTurn("A", orcCommit("A", 1, 3))
	e.orcWantHistory("A", 1, 1, 2, 3)
	e.orcWantHistory("A", 0, 1)
	e.orcWantExecution(e.orcLock("A", orcRaise("A", "x")), 2)
}

// orcFetchLoadsHistory proves a fetch loads the current execution's full
// history, ordered, as Read returns it (duroxide
// docs/provider-implementation-guide.md "fetch_orchestration_item() loads
// correct history"; duroxide src/providers/mod.rs "History Loading").
func orcFetchLoadsHistory(e *env) {
	item := e.orcLock("A", startItem("A", "Orch"))
	if len(item.History) != 0 || item.HistoryError != "" {
		e.t.Fatalf("new instance fetched with history %v / error %q, want none", eventIDs(item.History), item.HistoryError)
	}
	e.ack(item.LockToken, orcCommit("A", 1, 1, 2))
	e.orcTurn("A", orcCommit("A", 1, 3, 4))
	item = e.orcLock("A", orcRaise("A", "x"))
	sameEvents(e.t, "fetched history", item.History, e.read("A", 1))
	e.orcWantHistory("A", 0, 1, 2, 3, 4)
}
