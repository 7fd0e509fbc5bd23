package engine

import (
	"fmt"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// prepCompletions turns the fetched messages into history events appended to
// the delta (duroxide's prep_completions): messages of other executions and
// duplicates are dropped, completions without a matching schedule abort the
// turn as nondeterministic, and system failures of children abort it too.
func (e *Engine) prepCompletions(msgs []duroxide.WorkItem) {
	for _, m := range msgs {
		if !e.forCurrentExecution(m) {
			e.logger.Warn("dropping completion from another execution", "instance", e.instance)
			continue
		}
		if e.alreadyRecorded(m) {
			e.logger.Warn("dropping duplicate completion", "instance", e.instance)
			continue
		}
		if d := e.checkScheduleKind(m); d != nil {
			e.logger.Warn("nondeterminism in completion batch", "instance", e.instance, "error", DisplayMessage(*d))
			e.turn.abortErr = d
			continue
		}
		e.recordMessage(m)
	}
}

func (e *Engine) forCurrentExecution(m duroxide.WorkItem) bool {
	switch w := m.(type) {
	case duroxide.ActivityCompleted:
		return w.ExecutionID == e.executionID
	case duroxide.ActivityFailed:
		return w.ExecutionID == e.executionID
	case duroxide.TimerFired:
		return w.ExecutionID == e.executionID
	case duroxide.SubOrchCompleted:
		return w.ParentExecutionID == e.executionID
	case duroxide.SubOrchFailed:
		return w.ParentExecutionID == e.executionID
	case duroxide.ExternalRaised, duroxide.QueueMessage, duroxide.CancelInstance:
		return true
	}
	return false
}

// completionRef is the schedule a completion message answers and the kind
// of schedule it must be.
func completionRef(m duroxide.WorkItem) (id uint64, kind scheduleKind, ok bool) {
	switch w := m.(type) {
	case duroxide.ActivityCompleted:
		return w.ID, kindActivity, true
	case duroxide.ActivityFailed:
		return w.ID, kindActivity, true
	case duroxide.TimerFired:
		return w.ID, kindTimer, true
	case duroxide.SubOrchCompleted:
		return w.ParentID, kindSubOrchestration, true
	case duroxide.SubOrchFailed:
		return w.ParentID, kindSubOrchestration, true
	}
	return 0, 0, false
}

// kindLabel names a schedule kind as duroxide's messages do.
func kindLabel(k scheduleKind) string {
	switch k {
	case kindActivity:
		return "activity"
	case kindTimer:
		return "timer"
	case kindSubOrchestration:
		return "suborchestration"
	case kindExternal:
		return "external"
	case kindQueue:
		return "queue"
	}
	return "go"
}

// alreadyRecorded reports a completion whose answer is already in history
// or earlier in this batch (at-least-once delivery makes duplicates normal).
func (e *Engine) alreadyRecorded(m duroxide.WorkItem) bool {
	id, kind, ok := completionRef(m)
	return ok && e.idx.answered(id, kind)
}

func (e *Engine) checkScheduleKind(m duroxide.WorkItem) *duroxide.ErrorDetails {
	id, kind, ok := completionRef(m)
	if !ok {
		return nil
	}
	if got, ok := e.idx.scheduled(id); ok && got != kindExternal && got != kindQueue {
		if got == kind {
			return nil
		}
		d := nondeterminism(fmt.Sprintf("completion kind mismatch for id=%d, expected '%s', got '%s'", id, kindLabel(got), kindLabel(kind)))
		return &d
	}
	var d duroxide.ErrorDetails
	switch kind {
	case kindActivity:
		d = nondeterminism(fmt.Sprintf("no matching schedule for completion id=%d", id))
	case kindTimer:
		d = nondeterminism(fmt.Sprintf("no matching schedule for timer id=%d", id))
	default:
		d = nondeterminism(fmt.Sprintf("no matching schedule for sub-orchestration id=%d", id))
	}
	return &d
}

// recordMessage appends the event a message becomes.
func (e *Engine) recordMessage(m duroxide.WorkItem) {
	switch w := m.(type) {
	case duroxide.ActivityCompleted:
		e.appendEvent(&w.ID, duroxide.ActivityCompletedEvent{Result: w.Result})
	case duroxide.ActivityFailed:
		e.appendFailure(&w.ID, w.Details, duroxide.ActivityFailedEvent{Details: w.Details})
	case duroxide.TimerFired:
		e.appendEvent(&w.ID, duroxide.TimerFiredEvent{FireAtMs: w.FireAtMs})
	case duroxide.ExternalRaised:
		e.appendEvent(nil, duroxide.ExternalEventEvent{Name: w.Name, Data: w.Data})
	case duroxide.QueueMessage:
		e.appendEvent(nil, duroxide.QueueEventDeliveredEvent{Name: w.Name, Data: w.Data})
	case duroxide.SubOrchCompleted:
		e.appendEvent(&w.ParentID, duroxide.SubOrchestrationCompletedEvent{Result: w.Result})
	case duroxide.SubOrchFailed:
		e.appendFailure(&w.ParentID, w.Details, duroxide.SubOrchestrationFailedEvent{Details: w.Details})
	case duroxide.CancelInstance:
		if !e.idx.completedOrFailed() && e.idx.cancelRequested == nil {
			e.appendEvent(nil, duroxide.OrchestrationCancelRequestedEvent{Reason: w.Reason})
		}
	}
}

// appendFailure records a failed task; a system failure (anything but an
// application error) also aborts the turn, as it never reaches user code.
func (e *Engine) appendFailure(source *uint64, d duroxide.ErrorDetails, kind duroxide.EventKind) {
	if isSystemError(d) {
		e.abort(d)
	}
	e.appendEvent(source, kind)
}
