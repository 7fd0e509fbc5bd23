package duroxide

import (
	"errors"
	"fmt"
)

// Error kinds. A *ProviderError carries at most one kind, and errors.Is finds it through
// the ProviderError and any fmt.Errorf("%w") layers around it, so callers branch on the
// kind of a failure, never on its text:
//
//	if errors.Is(err, duroxide.ErrLockLost) { /* another dispatcher owns the work now */ }
//
// Kinds describe permanent failures; a retryable error carries ErrUnavailable or none.
var (
	// ErrLockLost: the lock token is unknown, already used, or its lock expired. For a
	// worker item it is also the cancellation signal (the item was removed under it).
	ErrLockLost = errors.New("lock lost")
	// ErrNotFound: the instance, execution or other named object does not exist.
	ErrNotFound = errors.New("not found")
	// ErrInvalidInput: the caller's arguments break the contract; nothing was written.
	ErrInvalidInput = errors.New("invalid input")
	// ErrDuplicateEvent: an appended event id is not after the last stored one.
	ErrDuplicateEvent = errors.New("duplicate event")
	// ErrUndecodable: stored data (history, a work item, KV) cannot be decoded.
	ErrUndecodable = errors.New("undecodable stored data")
	// ErrConflict: the object exists but its state forbids the operation (deleting a
	// running instance without force, deleting a sub-orchestration on its own).
	ErrConflict = errors.New("conflict")
	// ErrUnavailable: the storage could not be reached or was busy; always retryable.
	ErrUnavailable = errors.New("storage unavailable")
)

// ProviderError is the error every Provider and ProviderAdmin method returns (possibly
// wrapped with fmt.Errorf("...: %w", err)). The runtime acts on two things, never on the
// message: Retryable, and the kind (see ErrLockLost and its siblings) through errors.Is.
//
//   - Retryable errors are transient: the storage could not be reached or was busy
//     (connection refused, timeouts, Redis LOADING / BUSY / TRYAGAIN, failover). The
//     runtime backs off and repeats the same call, so a retryable failure must not have
//     changed anything durable, or must be safe to repeat.
//   - Permanent errors will fail again if retried unchanged: an unknown or expired lock
//     token, a duplicate event, invalid input, data that cannot be decoded. For ack and
//     renew of work items a permanent error is also the cancellation signal the worker
//     dispatcher relies on, so providers must not downgrade it to retryable.
//
// A cancelled context is reported with an error for which errors.Is(err, ctx.Err()) holds
// (put ctx.Err() in Err); it never leaves a lock held.
type ProviderError struct {
	// Operation is the provider method that failed, in duroxide's snake_case naming
	// (e.g. "ack_orchestration_item"), so logs line up with the Rust providers.
	Operation string
	// Message says what went wrong and names the object ("lock_token abc expired").
	Message string
	// Retryable selects the runtime's reaction; see the type documentation.
	Retryable bool
	// Kind is one of the Err* kinds of this package, or nil when none applies.
	// errors.Is(err, Kind) holds.
	Kind error
	// Err is the optional underlying cause; it is exposed through Unwrap so that
	// errors.Is / errors.As see through the ProviderError.
	Err error
}

// Error returns "operation: message". The cause is deliberately not appended: Message is
// expected to already describe it, and callers reach the cause through Unwrap.
func (e *ProviderError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return e.Operation + ": " + e.Message
}

// Unwrap returns the cause, so errors.Is(err, context.Canceled) works on provider errors.
func (e *ProviderError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// Is reports whether target is this error's kind, so errors.Is classifies it.
func (e *ProviderError) Is(target error) bool {
	return e != nil && e.Kind != nil && target == e.Kind
}

// Retryable builds a transient error: the runtime will retry the operation.
func Retryable(operation, message string) *ProviderError {
	return &ProviderError{Operation: operation, Message: message, Retryable: true, Kind: ErrUnavailable}
}

// Permanent builds an error that retrying cannot fix, of no particular kind.
func Permanent(operation, message string) *ProviderError {
	return &ProviderError{Operation: operation, Message: message}
}

// Errorf builds a permanent error of the given kind (ErrNotFound, ErrLockLost, ...) whose
// message is formatted like fmt.Sprintf.
func Errorf(operation string, kind error, format string, args ...any) *ProviderError {
	return &ProviderError{Operation: operation, Message: fmt.Sprintf(format, args...), Kind: kind}
}

// IsRetryable reports whether err wraps a *ProviderError with Retryable set, looking
// through any number of fmt.Errorf("%w") layers. The outermost *ProviderError decides,
// so a provider can classify a retryable cause as permanent. Errors that are not provider
// errors (including nil) are not retryable: an unclassified failure is safer to surface
// than to retry forever.
func IsRetryable(err error) bool {
	var pe *ProviderError
	return errors.As(err, &pe) && pe != nil && pe.Retryable
}
