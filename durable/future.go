package durable

import "errors"

// Awaitable is any Future, whatever its value type; Select and Join take it.
type Awaitable interface {
	base() *future
}

// TaskError is how a failed activity or sub-orchestration reaches
// orchestration code: Message is duroxide's display message of the failure's
// ErrorDetails (the application error's message for ordinary failures).
type TaskError struct {
	Message string
}

// Error returns the failure message.
func (e *TaskError) Error() string { return e.Message }

// ErrCancelled classifies the error Get returns for a future that was
// cancelled before it resolved: errors.Is(err, ErrCancelled).
var ErrCancelled = errors.New("future cancelled")

// CancelledError is what Get returns for a future that was cancelled before
// it resolved (a Select loser, a future given up with Cancel, or one a
// cancelled Go block still waited for). It names what the future waited
// for; errors.Is(err, ErrCancelled) reports true.
type CancelledError struct {
	// What is what the future waited for: "activity", "timer", "external
	// event", "queue message", "sub-orchestration" or "go block".
	What string
}

// Error names the operation and what was cancelled.
func (e *CancelledError) Error() string {
	return "durable: get: the " + e.What + " future was cancelled before it resolved"
}

// Is reports whether target is ErrCancelled.
func (e *CancelledError) Is(target error) bool { return target == ErrCancelled }

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

// future is the untyped core of every Future: one scheduled action (token)
// plus a readiness check against the context state, evaluated only when
// orchestration code waits on it, as duroxide polls its futures.
type future struct {
	ctx       *OrchestrationContext
	token     uint64
	kind      scheduleKind
	check     func() (value string, err error, ready bool)
	block     *OrchestrationContext // kindGo: the block's context
	done      bool
	cancelled bool
	value     string
	err       error
}

func (f *future) base() *future { return f }

// poll evaluates the future once; a resolved future stays resolved.
func (f *future) poll() bool {
	if f.done || f.cancelled {
		return f.done
	}
	if v, err, ok := f.check(); ok {
		f.done, f.value, f.err = true, v, err
	}
	return f.done
}

// settled reports whether the future will not change any more: it resolved
// or was cancelled.
func (f *future) settled() bool { return f.poll() || f.cancelled }

// cancel is what dropping an unfinished future does in duroxide.
func (f *future) cancel() {
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

// Future is the pending result of something an orchestration scheduled.
// Scheduling only records intent; Get blocks the orchestration (handing
// control back to the replay engine) until the result is in history.
type Future[T any] struct {
	f      *future
	decode func(string) (T, error)
}

func (f Future[T]) base() *future { return f.f }

// Get waits for the result. A failed activity or sub-orchestration returns a
// *TaskError; a typed future whose payload does not decode returns the decode
// error. Get on a future cancelled before it resolved (a Select loser, or
// after Cancel) returns a *CancelledError (errors.Is(err, ErrCancelled)) at
// once and records nothing: awaiting a dropped future cannot happen in
// duroxide, so its history is the same as if the code had not waited.
func (f Future[T]) Get() (T, error) {
	f.f.ctx.block(f.f.settled)
	var zero T
	if !f.f.done {
		return zero, &CancelledError{What: f.f.kind.String()}
	}
	if f.f.err != nil {
		return zero, f.f.err
	}
	return f.decode(f.f.value)
}

// IsReady reports whether Get would return without waiting: the future
// resolved, or was cancelled. It evaluates the future like a poll does, so
// it is deterministic.
func (f Future[T]) IsReady() bool { return f.f.settled() }

// Cancel gives the future up. An activity gets an ActivityCancelRequested
// event and its worker sees its context cancelled; a sub-orchestration is
// cancelled; an external or queue wait is unsubscribed; a timer is simply
// ignored. This is what dropping an unfinished future does in duroxide, so
// Select calls it on its losers and the runtime calls it on every future
// still pending when an orchestration returns.
func (f Future[T]) Cancel() { f.f.cancel() }

func rawDecode(s string) (string, error) { return s, nil }

func unitDecode(string) (struct{}, error) { return struct{}{}, nil }

func typedDecode[T any](s string) (T, error) { return decodeJSON[T](s) }
