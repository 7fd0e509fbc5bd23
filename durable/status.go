package durable

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

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
	// StatusPending: no history yet, but a runtime fetched the start and
	// handed it back, saying why (OrchestrationStatus.Pending): typically an
	// orchestration or version no runtime that fetched it has registered.
	// The start stays queued and is retried with backoff until a runtime
	// runs it or it is poisoned (then StatusFailed). Reported only by a
	// provider that implements duroxide.PendingStartNoter; with another, such
	// an instance is StatusNotFound until then.
	StatusPending
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
	case StatusPending:
		return "Pending"
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
	// Pending says why the start of a StatusPending instance has not run.
	Pending *duroxide.PendingStart
	// FailureCause is why the runtime failed the instance when its failure
	// details do not say: the cause of a poison failure it could name (e.g.
	// "orchestration X (version V) is not registered in the runtimes that
	// fetched it"). The details stay exactly what duroxide records; the
	// cause is read from the execution's output, where the runtime stores it
	// after the display message.
	FailureCause string
	// Paused: a StatusRunning instance is paused (Client.PauseInstance): no
	// turn of it runs until it is resumed. Pausing is not a status of
	// duroxide's; it is read on a provider that pauses
	// (duroxide.InstancePauser), with the instance record when the
	// provider reports it there (duroxide.InstanceInfo.Pause).
	Paused bool
}

// IsTerminal reports Completed or Failed.
func (s OrchestrationStatus) IsTerminal() bool {
	return s.Status == StatusCompleted || s.Status == StatusFailed
}

// FailureMessage is duroxide's display message of the failure ("" unless
// failed), followed by "; cause: " and FailureCause when there is one.
func (s OrchestrationStatus) FailureMessage() string {
	if s.Failure == nil {
		return ""
	}
	if s.FailureCause != "" {
		return engine.DisplayMessage(*s.Failure) + poisonCauseSeparator + s.FailureCause
	}
	return engine.DisplayMessage(*s.Failure)
}

// pendingStart reads the pending-start note of an instance without
// history, nil when the provider keeps none.
func (c *Client) pendingStart(ctx context.Context, instance string) (*duroxide.PendingStart, error) {
	n, ok := c.p.(duroxide.PendingStartNoter)
	if !ok {
		return nil, nil
	}
	return n.PendingStart(ctx, instance)
}

// failureCause reads back the cause the runtime stored after a poison
// failure's display message in the execution's output ("" when it named
// none, or the provider has no management calls), from info when Status
// read the record already.
func (c *Client) failureCause(ctx context.Context, instance string, d duroxide.ErrorDetails, info *duroxide.InstanceInfo) (string, error) {
	a := c.p.Admin()
	if d.Poison == nil || a == nil {
		return "", nil
	}
	if info == nil {
		read, err := a.GetInstanceInfo(ctx, instance) // its current execution's, the one Read returned
		if errors.Is(err, duroxide.ErrNotFound) {
			return "", nil // deleted since the history was read
		}
		if err != nil {
			return "", err
		}
		info = &read
	}
	if info.Output == nil {
		return "", nil
	}
	cause, _ := strings.CutPrefix(*info.Output, engine.DisplayMessage(d)+poisonCauseSeparator)
	if cause == *info.Output { // no cause after the message
		return "", nil
	}
	return cause, nil
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
