package durable

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
// error. Calling Get on a cancelled future blocks for the rest of the turn,
// as awaiting a dropped future cannot happen in duroxide.
func (f Future[T]) Get() (T, error) {
	f.f.ctx.block(f.f.poll)
	var zero T
	if f.f.err != nil {
		return zero, f.f.err
	}
	return f.decode(f.f.value)
}

// IsReady reports whether Get would return without waiting. It evaluates the
// future like a poll does, so it is deterministic.
func (f Future[T]) IsReady() bool { return f.f.poll() }

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
