package duroxide

import "errors"

// ProviderError is the error every Provider and ProviderAdmin method returns (possibly
// wrapped with fmt.Errorf("...: %w", err)). The runtime does not parse messages; the only
// thing it acts on is Retryable:
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
	// Message says what went wrong. Errors about lock tokens contain the word
	// "lock_token" so operators and tests can recognise them.
	Message string
	// Retryable selects the runtime's reaction; see the type documentation.
	Retryable bool
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

// Retryable builds a transient error: the runtime will retry the operation.
func Retryable(operation, message string) *ProviderError {
	return &ProviderError{Operation: operation, Message: message, Retryable: true}
}

// Permanent builds an error that retrying cannot fix.
func Permanent(operation, message string) *ProviderError {
	return &ProviderError{Operation: operation, Message: message}
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
