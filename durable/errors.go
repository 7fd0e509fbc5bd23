package durable

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/duroxide-go/duroxide-redis/durable/internal/engine"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The sentinels below classify durable's typed errors with errors.Is; the
// typed errors themselves (errors.As) carry the details. ErrCancelled
// (future.go) and ErrTimeout (client.go) belong to the same family.
var (
	// ErrActivityFailed classifies an *ActivityError.
	ErrActivityFailed = errors.New("durable: activity failed")
	// ErrChildFailed classifies a *ChildError (a failed sub-orchestration).
	ErrChildFailed = errors.New("durable: sub-orchestration failed")
	// ErrPanicked classifies a *PanicError, and a child or instance whose
	// code panicked.
	ErrPanicked = errors.New("durable: orchestration code panicked")
	// ErrRetryExhausted classifies a *RetryError: the retry policy gave up.
	ErrRetryExhausted = errors.New("durable: retries exhausted")
	// ErrNondeterminism classifies a *NondeterminismError.
	ErrNondeterminism = errors.New("durable: nondeterminism")
	// ErrDecode classifies a *DecodeError.
	ErrDecode = errors.New("durable: decode failed")
	// ErrInvalidInput classifies an *InvalidInputError: durable rejected a
	// call's arguments before anything reached the provider.
	ErrInvalidInput = errors.New("durable: invalid input")
	// ErrAlreadyExists classifies a client start of an instance that
	// exists or whose start is already waiting (see UseExisting). It is
	// duroxide.ErrAlreadyExists, the kind the provider reports.
	ErrAlreadyExists = duroxide.ErrAlreadyExists
	// ErrNotFound classifies a raise, enqueue or cancel of an instance that
	// does not exist and has no start waiting. It is duroxide.ErrNotFound.
	ErrNotFound = duroxide.ErrNotFound
)

// ActivityError is how a failed activity reaches orchestration code (Get on
// its future, or the last attempt of ScheduleActivityWithRetry).
// errors.Is(err, ErrActivityFailed) reports true; so does errors.As with a
// *TaskError target, which receives the same message.
type ActivityError struct {
	// Name is the activity's registered name.
	Name string
	// Message is what the activity's error said (duroxide's display message
	// of the recorded failure, without durable's non-retryable marker).
	Message string
	// Attempt is the 1-based attempt of ScheduleActivityWithRetry that
	// failed; 1 for a plain ScheduleActivity.
	Attempt uint32
	// Retryable is false when the activity returned NonRetryable(err): the
	// retry policy makes no further attempts.
	Retryable bool
	// Details is the failure as recorded in history.
	Details duroxide.ErrorDetails
}

// Error returns the activity's message, exactly as duroxide hands it to
// orchestration code (an orchestration returning it records that string).
func (e *ActivityError) Error() string { return e.Message }

// Is reports whether target is ErrActivityFailed.
func (e *ActivityError) Is(target error) bool { return target == ErrActivityFailed }

// As lets errors.As(err, **TaskError) see the failure as the older,
// untyped TaskError.
func (e *ActivityError) As(target any) bool { return asTaskError(e.Message, target) }

// ChildError is how a failed sub-orchestration reaches its parent.
// errors.Is(err, ErrChildFailed) reports true, and errors.Is with
// ErrCancelled, ErrPanicked or ErrNondeterminism too when the child was
// cancelled, panicked or diverged from its history; errors.As with a
// *TaskError target receives the same message.
type ChildError struct {
	// Name is the child's orchestration name; Instance its instance id.
	Name, Instance string
	// Message is duroxide's display message of the child's failure.
	Message string
	// Details is the failure as recorded in history.
	Details duroxide.ErrorDetails
}

// Error returns the child's failure message, as duroxide hands it on.
func (e *ChildError) Error() string { return e.Message }

// Is reports whether target is ErrChildFailed, or ErrCancelled for a
// cancelled child.
func (e *ChildError) Is(target error) bool {
	return target == ErrChildFailed || detailsAre(e.Details, target)
}

// detailsAre reports whether recorded failure details are of the kind
// target classifies: ErrCancelled, ErrPanicked or ErrNondeterminism.
func detailsAre(d duroxide.ErrorDetails, target error) bool {
	if d.Configuration != nil {
		return target == ErrNondeterminism
	}
	a := d.Application
	if a == nil {
		return false
	}
	switch target {
	case ErrCancelled:
		return a.Kind.Variant == duroxide.AppErrorCancelled
	case ErrPanicked:
		return a.Kind.Variant == duroxide.AppErrorPanicked
	}
	return false
}

// As lets errors.As(err, **TaskError) see the failure as a TaskError.
func (e *ChildError) As(target any) bool { return asTaskError(e.Message, target) }

// PanicError is what Get returns for a Go block that panicked (the panic
// also fails the instance, with duroxide's Panicked details).
// errors.Is(err, ErrPanicked) reports true.
type PanicError struct {
	// Value is the panic value, rendered as text.
	Value string
}

// Error returns duroxide's message for a panic.
func (e *PanicError) Error() string { return "orchestration panicked: " + e.Value }

// Is reports whether target is ErrPanicked.
func (e *PanicError) Is(target error) bool { return target == ErrPanicked }

// As lets errors.As(err, **TaskError) see the panic as a TaskError.
func (e *PanicError) As(target any) bool { return asTaskError(e.Error(), target) }

// RetryError is what ScheduleActivityWithRetry returns when its policy
// gives up: every attempt failed, an attempt failed with NonRetryable, or
// an attempt timed out. errors.Is(err, ErrRetryExhausted) reports true,
// errors.Is(err, ErrTimeout) too when an attempt timed out, and Unwrap
// gives the last attempt's *ActivityError (nil when the first attempt timed
// out).
type RetryError struct {
	// Activity is the activity's name; Attempts how many were scheduled.
	Activity string
	Attempts uint32
	// TimedOut reports that the last attempt ran past the policy's Timeout.
	TimedOut bool
	// Last is the last failed attempt's error, if one failed.
	Last *ActivityError
}

// retryTimeoutMessage is duroxide's error for a timed-out attempt.
const retryTimeoutMessage = "timeout: activity timed out"

// Error returns what duroxide's schedule_activity_with_retry returns: the
// timeout message, or the last attempt's message.
func (e *RetryError) Error() string {
	if e.TimedOut || e.Last == nil {
		return retryTimeoutMessage
	}
	return e.Last.Message
}

// Unwrap returns the last attempt's *ActivityError.
func (e *RetryError) Unwrap() error {
	if e.Last == nil {
		return nil
	}
	return e.Last
}

// Is reports whether target is ErrRetryExhausted, or ErrTimeout when an
// attempt timed out.
func (e *RetryError) Is(target error) bool {
	return target == ErrRetryExhausted || (e.TimedOut && target == ErrTimeout)
}

// As lets errors.As(err, **TaskError) see the result as a TaskError with
// the same message.
func (e *RetryError) As(target any) bool { return asTaskError(e.Error(), target) }

// asTaskError fills a **TaskError target with msg.
func asTaskError(msg string, target any) bool {
	t, ok := target.(**TaskError)
	if ok {
		*t = &TaskError{Message: msg}
	}
	return ok
}

// NondeterminismError describes where orchestration code and its recorded
// history part ways; OrchestrationStatus.Err returns it for an instance
// that failed that way. errors.Is(err, ErrNondeterminism) reports true.
type NondeterminismError struct {
	// Message is duroxide's nondeterminism message, as recorded.
	Message string
	// EventID is the history event where replay diverged, when the message
	// names one (0 otherwise).
	EventID uint64
	// Expected is what the code did (the action it emitted) and Found what
	// history recorded there, when the message names both.
	Expected, Found string
}

// Error returns the recorded failure message.
func (e *NondeterminismError) Error() string { return "nondeterministic: " + e.Message }

// Is reports whether target is ErrNondeterminism.
func (e *NondeterminismError) Is(target error) bool { return target == ErrNondeterminism }

// nondeterminismError parses the engine's nondeterminism messages into
// their parts; a message of another shape keeps only Message. The worded
// form ("event N in history is X, but the code Y") is the engine's since
// issue 28; the "action=X vs event=Y" form is duroxide's and older
// releases', still found in stored failures.
func nondeterminismError(msg string) *NondeterminismError {
	e := &NondeterminismError{Message: msg}
	if _, rest, ok := strings.Cut(msg, ": event "); ok {
		var id uint64
		if n, _ := fmt.Sscanf(rest, "%d in history is ", &id); n == 1 {
			e.EventID = id
			_, rest, _ = strings.Cut(rest, " in history is ")
			e.Found, e.Expected, _ = strings.Cut(rest, ", but the code ")
			return e
		}
	}
	if _, rest, ok := strings.Cut(msg, "action="); ok {
		e.Expected, e.Found, _ = strings.Cut(rest, " vs event=")
	}
	if _, rest, ok := strings.Cut(msg, "id="); ok {
		_, _ = fmt.Sscanf(rest, "%d", &e.EventID)
	}
	return e
}

// DecodeError is a payload that did not decode as the type asked for.
// errors.Is(err, ErrDecode) reports true; Unwrap gives the JSON error.
type DecodeError struct {
	// Kind is what carried the payload: "event", "queue", "activity",
	// "sub-orchestration", "value" (a key-value entry), "output" (a
	// completed instance's, OrchestrationStatus.DecodeOutput), or "activity
	// input" / "orchestration input" (a typed registration's input).
	Kind string
	// Name names it: the event, queue, activity or orchestration name, or
	// the key of a value ("" for a typed registration's input).
	Name string
	// Err is the decoder's error.
	Err error
}

// Error names what failed to decode and why.
func (e *DecodeError) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("durable: decode %s: %v", e.Kind, e.Err)
	}
	return fmt.Sprintf("durable: decode %s %q: %v", e.Kind, e.Name, e.Err)
}

// Unwrap returns the decoder's error.
func (e *DecodeError) Unwrap() error { return e.Err }

// Is reports whether target is ErrDecode.
func (e *DecodeError) Is(target error) bool { return target == ErrDecode }

// InvalidInputError is durable's rejection of a call's arguments, made
// before anything reaches the provider; retrying the same call cannot
// help. errors.Is(err, ErrInvalidInput) reports true, and so does
// errors.Is(err, duroxide.ErrInvalidInput), which such errors matched
// before they were durable's own.
type InvalidInputError struct {
	// Op is the operation, e.g. "start_orchestration"; Msg says what is
	// wrong and names the object.
	Op, Msg string
}

// Error returns "operation: message".
func (e *InvalidInputError) Error() string { return e.Op + ": " + e.Msg }

// Is reports whether target is ErrInvalidInput or duroxide.ErrInvalidInput.
func (e *InvalidInputError) Is(target error) bool {
	return target == ErrInvalidInput || target == duroxide.ErrInvalidInput
}

// invalidInput builds an *InvalidInputError.
func invalidInput(op, format string, args ...any) error {
	return &InvalidInputError{Op: op, Msg: fmt.Sprintf(format, args...)}
}

// WaitTimeoutError is what the Client's wait calls return when their
// timeout passes first. errors.Is(err, ErrTimeout) and errors.Is(err,
// context.DeadlineExceeded) both report true.
type WaitTimeoutError struct {
	// Op is the wait ("wait_for_orchestration" or "wait_for_status_change").
	Op string
	// Instance is the instance waited for; Last its status at the last read.
	Instance string
	Last     OrchestrationStatus
	// Err is the transient failure of the last read when it failed (the
	// storage was unreachable at the deadline), else nil.
	Err error
}

// Error names the instance, its last status and the last read's failure.
func (e *WaitTimeoutError) Error() string {
	msg := fmt.Sprintf("durable: %s: instance %q timed out (last status %s)", e.Op, e.Instance, e.Last.Status)
	if p := e.Last.Pending; p != nil {
		// a start nobody runs: the reason is the answer to "why so long"
		msg = fmt.Sprintf("durable: %s: instance %q timed out (last status %s: %s)", e.Op, e.Instance, e.Last.Status, p.Message())
	}
	if e.Err != nil {
		msg += "; the last read failed: " + e.Err.Error()
	}
	return msg
}

// Is reports whether target is ErrTimeout or context.DeadlineExceeded.
func (e *WaitTimeoutError) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}

// nonRetryablePrefix marks, inside the recorded ActivityFailed message, a
// failure the activity declared non-retryable. duroxide writes every
// activity failure with retryable:false and retries regardless, so that
// field cannot carry the distinction without changing how duroxide's own
// histories replay; a message prefix keeps the details valid duroxide JSON
// (a duroxide runtime shows the prefix and retries as it always does).
const nonRetryablePrefix = "non-retryable: "

// NonRetryable marks err, returned by an activity, as one that another
// attempt cannot fix: ScheduleActivityWithRetry stops at once and returns
// a *RetryError whose Last has Retryable false. The mark is recorded with
// the failure, so replays decide the same way. NonRetryable(nil) is nil.
func NonRetryable(err error) error {
	if err == nil {
		return nil
	}
	return &nonRetryableError{err: err}
}

type nonRetryableError struct{ err error }

func (e *nonRetryableError) Error() string { return e.err.Error() }
func (e *nonRetryableError) Unwrap() error { return e.err }

// activityFailure is the ErrorDetails the worker records for an activity's
// error, with the non-retryable mark when the activity set one.
func activityFailure(err error) duroxide.ErrorDetails {
	var nr *nonRetryableError
	if errors.As(err, &nr) {
		return duroxide.ApplicationFailure(nonRetryablePrefix + err.Error())
	}
	return duroxide.ApplicationFailure(err.Error())
}

// origin says what a future waits for, so its failures can name it.
type origin struct {
	kind string // "activity", "sub-orchestration", "event", "queue", "go", "timer"
	name string
	// block: a Go block's future (ScheduleActivityWithRetry's names its
	// activity), whose errors are the block's own.
	block bool
}

// publicError turns the engine's task failures and cancellations into the
// public typed errors, naming what failed.
func publicError(err error, o origin, f *engine.Future) error {
	var ce *engine.CancelledError
	if errors.As(err, &ce) {
		return &CancelledError{What: ce.What}
	}
	var te *engine.TaskError
	if !errors.As(err, &te) {
		return err
	}
	if o.block {
		o.kind = "go"
	}
	switch o.kind {
	case "activity":
		msg, retryable := te.Message, true
		if a := te.Details.Application; a != nil && a.Kind.Variant == duroxide.AppErrorActivityFailed {
			if m, ok := strings.CutPrefix(msg, nonRetryablePrefix); ok {
				msg, retryable = m, false
			}
		}
		return &ActivityError{Name: o.name, Message: msg, Attempt: 1, Retryable: retryable, Details: te.Details}
	case "sub-orchestration":
		return &ChildError{Name: o.name, Instance: f.Instance(), Message: te.Message, Details: te.Details}
	case "go":
		if a := te.Details.Application; a != nil && a.Kind.Variant == duroxide.AppErrorPanicked {
			return &PanicError{Value: a.Message}
		}
	}
	return &TaskError{Message: te.Message}
}
