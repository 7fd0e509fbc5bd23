package durable

import (
	"errors"

	"github.com/duroxide-go/duroxide-redis/durable/internal/engine"
)

// Awaitable is any Future, whatever its value type; Select and Join take it.
type Awaitable interface {
	core() *engine.Future
}

// TaskError is the untyped form of a task failure: Message is duroxide's
// display message of the failure's ErrorDetails. Get returns the typed
// *ActivityError, *ChildError or *PanicError instead; each matches
// errors.As with a *TaskError target, so code written against TaskError
// keeps working.
type TaskError struct {
	Message string
}

// Error returns the failure message.
func (e *TaskError) Error() string { return e.Message }

// ErrCancelled classifies the error Get returns for a future that was
// cancelled before it resolved: errors.Is(err, ErrCancelled).
var ErrCancelled = errors.New("durable: future cancelled")

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

// Future is the pending result of something an orchestration scheduled.
// Scheduling only records intent; Get blocks the orchestration (handing
// control back to the replay engine) until the result is in history.
type Future[T any] struct {
	f      *engine.Future
	decode func(string) (T, error)
	origin origin // what the future waits for, named in its errors
}

func (f Future[T]) core() *engine.Future { return f.f }

// Get waits for the result. A failed activity returns an *ActivityError, a
// failed sub-orchestration a *ChildError, a panicked Go block a *PanicError
// (each also matches errors.As with a *TaskError target); a typed future
// whose payload does not decode returns a *DecodeError naming the activity,
// event, queue or orchestration. Get on a future cancelled before it resolved (a Select loser, or
// after Cancel) returns a *CancelledError (errors.Is(err, ErrCancelled)) at
// once and records nothing: awaiting a dropped future cannot happen in
// duroxide, so its history is the same as if the code had not waited.
func (f Future[T]) Get() (T, error) {
	v, err := f.f.Get()
	var zero T
	if err != nil {
		return zero, publicError(err, f.origin, f.f)
	}
	out, err := f.decode(v)
	if err != nil {
		return zero, &DecodeError{Kind: f.origin.kind, Name: f.origin.name, Err: err}
	}
	return out, nil
}

// IsReady reports whether Get would return without waiting: the future
// resolved, or was cancelled. It evaluates the future like a poll does, so
// it is deterministic.
func (f Future[T]) IsReady() bool { return f.f.IsReady() }

// Cancel gives the future up. An activity gets an ActivityCancelRequested
// event and its worker sees its context cancelled; a sub-orchestration is
// cancelled; an external or queue wait is unsubscribed; a timer is simply
// ignored. This is what dropping an unfinished future does in duroxide, so
// Select calls it on its losers and the runtime calls it on every future
// still pending when an orchestration returns.
func (f Future[T]) Cancel() { f.f.Cancel() }

func rawFuture(f *engine.Future, o origin) Future[string] {
	return Future[string]{f: f, decode: rawDecode, origin: o}
}

// typed turns a raw future into one that decodes its JSON payload as T.
func typed[T any](raw Future[string]) Future[T] {
	return Future[T]{f: raw.f, decode: typedDecode[T], origin: raw.origin}
}

func rawDecode(s string) (string, error) { return s, nil }

func unitDecode(string) (struct{}, error) { return struct{}{}, nil }

func typedDecode[T any](s string) (T, error) { return decodeJSON[T](s) }
