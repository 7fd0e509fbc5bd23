package durable

import (
	"encoding/json"

	"github.com/duroxide-go/duroxide-redis/durable/internal/engine"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// RuntimeStatus is the coarse state of an instance as a client sees it.
type RuntimeStatus int

const (
	// StatusNotFound: no history for the instance (never started, or not yet
	// picked up by a dispatcher).
	StatusNotFound RuntimeStatus = iota
	// StatusRunning: started, not terminal (also between ContinueAsNew
	// executions).
	StatusRunning
	// StatusCompleted: the orchestration returned an output.
	StatusCompleted
	// StatusFailed: the orchestration failed, was cancelled, or was poisoned.
	StatusFailed
)

// String names the status as duroxide does.
func (s RuntimeStatus) String() string {
	switch s {
	case StatusRunning:
		return "Running"
	case StatusCompleted:
		return "Completed"
	case StatusFailed:
		return "Failed"
	}
	return "NotFound"
}

// OrchestrationStatus is duroxide's OrchestrationStatus: the state, the
// output or failure, and the custom status with its version counter.
type OrchestrationStatus struct {
	Status              RuntimeStatus
	Output              string                 // StatusCompleted
	Failure             *duroxide.ErrorDetails // StatusFailed
	CustomStatus        *string
	CustomStatusVersion uint64
}

// IsTerminal reports Completed or Failed.
func (s OrchestrationStatus) IsTerminal() bool {
	return s.Status == StatusCompleted || s.Status == StatusFailed
}

// FailureMessage is duroxide's display message of the failure ("" unless failed).
func (s OrchestrationStatus) FailureMessage() string {
	if s.Failure == nil {
		return ""
	}
	return engine.DisplayMessage(*s.Failure)
}

// Err is the failure of a failed instance as a typed error, nil unless
// Failed: a *NondeterminismError when its code and history parted ways,
// otherwise an *OrchestrationError (errors.Is(err, ErrCancelled) for a
// cancelled instance).
func (s OrchestrationStatus) Err() error {
	if s.Status != StatusFailed || s.Failure == nil {
		return nil
	}
	if c := s.Failure.Configuration; c != nil && c.Message != nil {
		return nondeterminismError(*c.Message)
	}
	return &OrchestrationError{Message: s.FailureMessage(), Details: *s.Failure}
}

// OrchestrationError is a failed instance's failure (OrchestrationStatus.Err).
type OrchestrationError struct {
	// Message is duroxide's display message of Details.
	Message string
	Details duroxide.ErrorDetails
}

// Error returns the failure message.
func (e *OrchestrationError) Error() string { return e.Message }

// Is reports whether target is ErrCancelled for a cancelled instance, or
// ErrPanicked for one whose code panicked.
func (e *OrchestrationError) Is(target error) bool { return detailsAre(e.Details, target) }

// DecodeOutput decodes the JSON output of a completed instance into v.
func (s OrchestrationStatus) DecodeOutput(v any) error {
	if s.Status != StatusCompleted {
		return invalidInput("decode_output", "instance is %s, not Completed", s.Status)
	}
	if err := json.Unmarshal([]byte(s.Output), v); err != nil {
		return &DecodeError{Kind: "output", Err: err}
	}
	return nil
}
