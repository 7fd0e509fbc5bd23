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

// DecodeOutput decodes the JSON output of a completed instance into v.
func (s OrchestrationStatus) DecodeOutput(v any) error {
	if s.Status != StatusCompleted {
		return duroxide.Errorf("decode_output", duroxide.ErrInvalidInput, "instance is %s, not Completed", s.Status)
	}
	return json.Unmarshal([]byte(s.Output), v)
}
