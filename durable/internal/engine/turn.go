package engine

import (
	"github.com/Masterminds/semver/v3"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// turnOutput is everything one orchestration turn commits. Its events go
// through the execution's index, which numbers them and answers every
// question the commit asks of history.
type turnOutput struct {
	instance    string
	executionID uint64
	idx         *historyIndex
	delta       []duroxide.Event
	worker      []duroxide.WorkItem
	orch        []duroxide.WorkItem
	cancelled   []duroxide.ScheduledActivityIdentifier
}

func newTurnOutput(instance string, executionID uint64, idx *historyIndex) *turnOutput {
	return &turnOutput{instance: instance, executionID: executionID, idx: idx}
}

func (t *turnOutput) append(source *uint64, kind duroxide.EventKind) {
	t.add(duroxide.NewEvent(t.idx.lastID+1, t.instance, t.executionID, source, kind))
}

// fail ends the execution with duroxide's OrchestrationFailed (failed.go).
func (t *turnOutput) fail(d duroxide.ErrorDetails) {
	t.add(failedEvent(t.idx.lastID+1, d))
}

func (t *turnOutput) add(ev duroxide.Event) {
	t.delta = append(t.delta, ev)
	t.idx.add(ev)
}

// runExecution runs one turn of the execution the batch addresses on eng:
// it records OrchestrationStarted on the first turn, runs the code, and
// turns the result into history, work items and cancellations (duroxide's
// run_single_execution_atomic). It reports whether the execution is still
// running afterwards, so the engine may be cached.
func (r turnRunner) runExecution(t *turnOutput, eng *Engine, b Batch, ver *semver.Version, fn Func) turnKind {
	instance := t.instance
	eng.beginTurn()
	if eng.idx.count == 0 {
		eng.record(duroxide.NewEvent(duroxide.InitialEventID, instance, t.executionID, nil, startedEvent(b, ver)))
		eng.turn.nextEventID = eng.idx.lastID + 1
	}
	hi := eng.idx.info()
	eng.clock, eng.logger, eng.deadlock = r.env.Clock, r.env.Logger, r.env.DeadlockTimeout
	if r.env.MaxPayloadBytes > 0 {
		eng.maxPayload = r.env.MaxPayloadBytes
	}
	eng.prepCompletions(b.Completions)
	res := eng.execute(fn, hi.Input, b.Name, ver.String())

	for _, id := range eng.turn.cancelledActivityIDs {
		t.cancelled = append(t.cancelled, duroxide.ScheduledActivityIdentifier{Instance: instance, ExecutionID: t.executionID, ActivityID: id})
	}
	var droppedChildren []duroxide.WorkItem
	for _, child := range eng.turn.cancelledSubOrchs {
		droppedChildren = append(droppedChildren, duroxide.CancelInstance{
			Instance: childInstanceID(instance, child), Reason: "parent dropped sub-orchestration future",
		})
	}
	t.delta = append(t.delta, eng.turn.delta...)
	r.finishTurn(t, hi, eng, res)
	t.orch = append(t.orch, droppedChildren...)
	return res.kind
}

func startedEvent(b Batch, ver *semver.Version) duroxide.OrchestrationStartedEvent {
	ev := duroxide.OrchestrationStartedEvent{
		Name: b.Name, Version: ver.String(), Input: b.Input, ParentInstance: b.Parent, ParentID: b.ParentID,
	}
	if can, ok := b.Start.(duroxide.ContinueAsNew); ok {
		if len(can.CarryForwardEvents) > 0 {
			cf := can.CarryForwardEvents
			ev.CarryForwardEvents = &cf
		}
		ev.InitialCustomStatus = can.InitialCustomStatus
	}
	return ev
}

// finishTurn applies the turn's result.
func (r turnRunner) finishTurn(t *turnOutput, hi HistoryInfo, eng *Engine, res turnResult) {
	switch res.kind {
	case turnContinue:
		t.dispatch(eng.turn.pending)
	case turnCompleted:
		t.detached(eng.turn.pending)
		t.breadcrumbs(eng)
		t.append(nil, duroxide.OrchestrationCompletedEvent{Output: res.output})
		if hi.Parent != nil && hi.ParentID != nil {
			t.orch = append(t.orch, duroxide.SubOrchCompleted{
				ParentInstance: *hi.Parent, ParentExecutionID: r.env.ParentExecution(*hi.Parent), ParentID: *hi.ParentID, Result: res.output,
			})
		}
	case turnFailed:
		t.detached(eng.turn.pending)
		t.breadcrumbs(eng)
		r.failTurn(t, hi, res.details)
	case turnContinueAsNew:
		unmatched := eng.unmatchedQueueMessages()
		t.breadcrumbs(eng)
		t.append(nil, duroxide.OrchestrationContinuedAsNewEvent{Input: res.input})
		if len(unmatched) > maxCarryForward {
			r.env.Logger.Warn("durable: dropping carry-forward events beyond the limit", "instance", t.instance,
				"dropped", len(unmatched)-maxCarryForward, "limit", maxCarryForward)
			unmatched = unmatched[:maxCarryForward]
		}
		t.orch = append(t.orch, duroxide.ContinueAsNew{
			Instance: t.instance, Orchestration: hi.Name, Input: res.input, Version: res.version,
			CarryForwardEvents: unmatched, InitialCustomStatus: t.idx.customStatus,
		})
	case turnCancelled:
		d := appFailure(duroxide.AppErrorCancelled, res.reason, "")
		children := eng.idx.openSubOrchestrations()
		t.breadcrumbs(eng)
		t.fail(d)
		for _, child := range children {
			t.orch = append(t.orch, duroxide.CancelInstance{Instance: childInstanceID(t.instance, child), Reason: "parent canceled"})
		}
		r.notifyParentFailed(t, hi, d)
	}
}

// failTurn records a failure and tells the parent.
func (r turnRunner) failTurn(t *turnOutput, hi HistoryInfo, d duroxide.ErrorDetails) {
	t.fail(d)
	r.notifyParentFailed(t, hi, d)
}

func (r turnRunner) notifyParentFailed(t *turnOutput, hi HistoryInfo, d duroxide.ErrorDetails) {
	if hi.Parent != nil && hi.ParentID != nil {
		t.orch = append(t.orch, duroxide.SubOrchFailed{
			ParentInstance: *hi.Parent, ParentExecutionID: r.env.ParentExecution(*hi.Parent), ParentID: *hi.ParentID, Details: d,
		})
	}
}

// dispatch turns this turn's new schedules into work items.
func (t *turnOutput) dispatch(pending []*action) {
	instance := t.instance
	for _, a := range pending {
		switch a.kind {
		case actCallActivity:
			t.worker = append(t.worker, duroxide.ActivityExecute{
				Instance: instance, ExecutionID: t.executionID, ID: a.eventID, Name: a.name, Input: a.input,
				SessionID: a.sessionID, Tag: a.tag, LimitKey: a.limitKey,
			})
		case actCreateTimer:
			t.orch = append(t.orch, duroxide.TimerFired{Instance: instance, ExecutionID: t.executionID, ID: a.eventID, FireAtMs: a.fireAtMs})
		case actStartSubOrchestration:
			parent, id := instance, a.eventID
			t.orch = append(t.orch, duroxide.StartOrchestration{
				Instance: childInstanceID(instance, a.instance), Orchestration: a.name, Input: a.input, Version: a.version,
				ParentInstance: &parent, ParentID: &id, ExecutionID: duroxide.InitialExecutionID,
			})
		case actStartDetached:
			t.orch = append(t.orch, detachedStart(a))
		}
	}
}

// detached starts the fire-and-forget orchestrations of a terminal turn.
func (t *turnOutput) detached(pending []*action) {
	for _, a := range pending {
		if a.kind == actStartDetached {
			t.orch = append(t.orch, detachedStart(a))
		}
	}
}

func detachedStart(a *action) duroxide.StartOrchestration {
	return duroxide.StartOrchestration{
		Instance: a.instance, Orchestration: a.name, Input: a.input, Version: a.version, ExecutionID: duroxide.InitialExecutionID,
	}
}

// breadcrumbs unsubscribes the waits still open when an execution ends.
func (t *turnOutput) breadcrumbs(eng *Engine) {
	out := eng.outstanding()
	for _, id := range out.externalWaits {
		src := id
		t.append(&src, duroxide.ExternalSubscribedCancelledEvent{Reason: "orchestration_terminal"})
	}
	for _, id := range out.queueWaits {
		src := id
		t.append(&src, duroxide.QueueSubscriptionCancelledEvent{Reason: "orchestration_terminal"})
	}
}
