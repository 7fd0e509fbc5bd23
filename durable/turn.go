package durable

import (
	"github.com/Masterminds/semver/v3"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// turnOutput is everything one orchestration turn commits.
type turnOutput struct {
	executionID uint64
	history     []duroxide.Event // persisted events of the execution (baseline)
	delta       []duroxide.Event
	worker      []duroxide.WorkItem
	orch        []duroxide.WorkItem
	cancelled   []duroxide.ScheduledActivityIdentifier
}

func (t *turnOutput) nextID() uint64 { return lastEventID(t.history, t.delta) + 1 }

func (t *turnOutput) append(instance string, source *uint64, kind duroxide.EventKind) {
	t.delta = append(t.delta, duroxide.NewEvent(t.nextID(), instance, t.executionID, source, kind))
}

// runExecution runs one turn of the execution the batch addresses: it
// records OrchestrationStarted on the first turn, replays, and turns the
// result into history, work items and cancellations (duroxide's
// run_single_execution_atomic).
func (r *Runtime) runExecution(instance string, t *turnOutput, b batch, ver *semver.Version, fn OrchestrationFunc, kv map[string]duroxide.KVEntry) {
	if len(t.history) == 0 {
		t.delta = append(t.delta, duroxide.NewEvent(duroxide.InitialEventID, instance, t.executionID, nil, startedEvent(b, ver)))
	}
	working := append(append([]duroxide.Event{}, t.history...), t.delta...)
	hi := readHistory(working)
	eng := newReplayEngine(instance, t.executionID, working, len(t.history))
	eng.kvSnapshot, eng.clock, eng.logger = kv, r.opts.Clock, r.opts.Logger
	eng.deadlock = r.opts.TurnDeadlockTimeout
	eng.prepCompletions(b.completions)
	res := eng.execute(fn, hi.input, b.name, ver.String())
	r.rememberExecution(instance, t.executionID, res.kind)

	for _, id := range eng.cancelledActivityIDs {
		t.cancelled = append(t.cancelled, duroxide.ScheduledActivityIdentifier{Instance: instance, ExecutionID: t.executionID, ActivityID: id})
	}
	var droppedChildren []duroxide.WorkItem
	for _, child := range eng.cancelledSubOrchs {
		droppedChildren = append(droppedChildren, duroxide.CancelInstance{
			Instance: childInstanceID(instance, child), Reason: "parent dropped sub-orchestration future",
		})
	}
	t.delta = append(t.delta, eng.delta...)
	r.finishTurn(instance, t, hi, eng, res)
	t.orch = append(t.orch, droppedChildren...)
}

func startedEvent(b batch, ver *semver.Version) duroxide.OrchestrationStartedEvent {
	ev := duroxide.OrchestrationStartedEvent{
		Name: b.name, Version: ver.String(), Input: b.input, ParentInstance: b.parent, ParentID: b.parentID,
	}
	if can, ok := b.start.(duroxide.ContinueAsNew); ok {
		if len(can.CarryForwardEvents) > 0 {
			cf := can.CarryForwardEvents
			ev.CarryForwardEvents = &cf
		}
		ev.InitialCustomStatus = can.InitialCustomStatus
	}
	return ev
}

// finishTurn applies the turn's result.
func (r *Runtime) finishTurn(instance string, t *turnOutput, hi historyInfo, eng *replayEngine, res turnResult) {
	switch res.kind {
	case turnContinue:
		t.dispatch(instance, eng.pending)
	case turnCompleted:
		t.detached(eng.pending)
		t.breadcrumbs(instance)
		t.append(instance, nil, duroxide.OrchestrationCompletedEvent{Output: res.output})
		if hi.parent != nil && hi.parentID != nil {
			t.orch = append(t.orch, duroxide.SubOrchCompleted{
				ParentInstance: *hi.parent, ParentExecutionID: r.parentExecution(*hi.parent), ParentID: *hi.parentID, Result: res.output,
			})
		}
	case turnFailed:
		t.detached(eng.pending)
		r.failTurn(instance, t, hi, res.details)
	case turnContinueAsNew:
		unmatched := unmatchedQueueMessages(append(append([]duroxide.Event{}, t.history...), t.delta...))
		t.breadcrumbs(instance)
		t.append(instance, nil, duroxide.OrchestrationContinuedAsNewEvent{Input: res.input})
		if len(unmatched) > maxCarryForward {
			r.opts.Logger.Warn("durable: dropping carry-forward events beyond the limit", "instance", instance,
				"dropped", len(unmatched)-maxCarryForward, "limit", maxCarryForward)
			unmatched = unmatched[:maxCarryForward]
		}
		t.orch = append(t.orch, duroxide.ContinueAsNew{
			Instance: instance, Orchestration: hi.name, Input: res.input, Version: res.version,
			CarryForwardEvents: unmatched, InitialCustomStatus: accumulatedCustomStatus(t.history, t.delta),
		})
	case turnCancelled:
		d := appFailure(duroxide.AppErrorCancelled, res.reason, "")
		out := outstanding(append(append([]duroxide.Event{}, t.history...), t.delta...))
		t.breadcrumbs(instance)
		t.append(instance, nil, duroxide.OrchestrationFailedEvent{Details: d})
		for _, child := range out.subOrchs {
			t.orch = append(t.orch, duroxide.CancelInstance{Instance: childInstanceID(instance, child), Reason: "parent canceled"})
		}
		r.notifyParentFailed(t, hi, d)
	}
}

// failTurn records a failure and tells the parent.
func (r *Runtime) failTurn(instance string, t *turnOutput, hi historyInfo, d duroxide.ErrorDetails) {
	t.breadcrumbs(instance)
	t.append(instance, nil, duroxide.OrchestrationFailedEvent{Details: d})
	r.notifyParentFailed(t, hi, d)
}

func (r *Runtime) notifyParentFailed(t *turnOutput, hi historyInfo, d duroxide.ErrorDetails) {
	if hi.parent != nil && hi.parentID != nil {
		t.orch = append(t.orch, duroxide.SubOrchFailed{
			ParentInstance: *hi.parent, ParentExecutionID: r.parentExecution(*hi.parent), ParentID: *hi.parentID, Details: d,
		})
	}
}

// dispatch turns this turn's new schedules into work items.
func (t *turnOutput) dispatch(instance string, pending []*action) {
	for _, a := range pending {
		switch a.kind {
		case actCallActivity:
			t.worker = append(t.worker, duroxide.ActivityExecute{
				Instance: instance, ExecutionID: t.executionID, ID: a.eventID, Name: a.name, Input: a.input,
				SessionID: a.sessionID, Tag: a.tag,
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
func (t *turnOutput) breadcrumbs(instance string) {
	out := outstanding(append(append([]duroxide.Event{}, t.history...), t.delta...))
	for _, id := range out.externalWaits {
		src := id
		t.append(instance, &src, duroxide.ExternalSubscribedCancelledEvent{Reason: "orchestration_terminal"})
	}
	for _, id := range out.queueWaits {
		src := id
		t.append(instance, &src, duroxide.QueueSubscriptionCancelledEvent{Reason: "orchestration_terminal"})
	}
}

// accumulatedCustomStatus is the custom status an execution ends with.
func accumulatedCustomStatus(lists ...[]duroxide.Event) *string {
	var status *string
	for _, list := range lists {
		for _, ev := range list {
			switch k := ev.Kind.(type) {
			case duroxide.OrchestrationStartedEvent:
				if k.InitialCustomStatus != nil {
					status = k.InitialCustomStatus
				}
			case duroxide.CustomStatusUpdatedEvent:
				status = k.Status
			}
		}
	}
	return status
}
