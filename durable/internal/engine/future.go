package engine

import "github.com/duroxide-go/duroxide-redis/duroxide"

// TaskError is how a failed activity, sub-orchestration or panicking Go
// block reaches orchestration code: Message is duroxide's display message of
// the failure's ErrorDetails (the application error's message for ordinary
// failures), Details the failure itself. The public API hands it on as one
// of its typed errors (durable.ActivityError, ChildError, PanicError).
type TaskError struct {
	Message string
	Details duroxide.ErrorDetails
}

// failure is the TaskError of a recorded failure.
func failure(d duroxide.ErrorDetails) *TaskError {
	return &TaskError{Message: DisplayMessage(d), Details: d}
}

// Error returns the failure message.
func (e *TaskError) Error() string { return e.Message }

// scheduleKind is what a future waits for; cancelling one records the
// matching cancel event (timers record nothing, as in duroxide).
type scheduleKind int

const (
	kindActivity scheduleKind = iota
	kindTimer
	kindExternal
	kindQueue
	kindSubOrchestration
	kindGo // a Go block: cancelling it cancels what the block still waits for
)

// Future is the untyped core of every future of the public API: one
// scheduled action (token) plus a readiness check against the context
// state, evaluated only when orchestration code waits on it, as duroxide
// polls its futures.
type Future struct {
	ctx       *Context
	token     uint64
	kind      scheduleKind
	check     func() (value string, err error, ready bool)
	block     *Context // kindGo: the block's context
	done      bool
	cancelled bool
	value     string
	err       error
}

// poll evaluates the future once; a resolved future stays resolved.
func (f *Future) poll() bool {
	if f.done || f.cancelled {
		return f.done
	}
	if v, err, ok := f.check(); ok {
		f.done, f.value, f.err = true, v, err
	}
	return f.done
}

// cancel is what dropping an unfinished future does in duroxide.
func (f *Future) cancel() {
	if f.done || f.cancelled {
		return
	}
	f.cancelled = true
	if f.kind == kindGo {
		f.block.cancelPending()
		return
	}
	f.ctx.st.markCancelled(f.token, f.kind)
}

// Get waits for the result: the raw payload, a *TaskError for a failed
// activity or sub-orchestration, what a Go block returned, or, for a future
// cancelled before it resolved, a *CancelledError at once (awaiting a
// dropped future cannot happen in duroxide, so nothing is recorded).
func (f *Future) Get() (string, error) {
	f.ctx.block(f.settled)
	if !f.done {
		return "", &CancelledError{What: f.kind.String()}
	}
	return f.value, f.err
}

// IsReady reports whether Get would return without waiting: the future
// resolved, or was cancelled. It evaluates the future like a poll does, so
// it is deterministic.
func (f *Future) IsReady() bool { return f.settled() }

// settled reports whether the future will not change any more: it resolved
// or was cancelled.
func (f *Future) settled() bool { return f.poll() || f.cancelled }

// CancelledError is Get's answer for a future cancelled before it resolved;
// What names what it waited for. The public API hands it on as
// durable.CancelledError.
type CancelledError struct {
	What string
}

// Error names what was cancelled.
func (e *CancelledError) Error() string {
	return "durable: get: the " + e.What + " future was cancelled before it resolved"
}

// String names what a future of the kind waits for, in errors.
func (k scheduleKind) String() string {
	switch k {
	case kindActivity:
		return "activity"
	case kindTimer:
		return "timer"
	case kindExternal:
		return "external event"
	case kindQueue:
		return "queue message"
	case kindSubOrchestration:
		return "sub-orchestration"
	case kindGo:
		return "go block"
	}
	return "unknown"
}

// Instance is a sub-orchestration future's child instance id as recorded
// ("" before its SubOrchestrationScheduled is, and for other futures).
func (f *Future) Instance() string { return f.ctx.st.subOrchInstances[f.token] }

// Cancel gives the future up, as dropping an unfinished future does in
// duroxide (see cancel).
func (f *Future) Cancel() { f.cancel() }
