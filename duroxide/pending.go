package duroxide

import (
	"context"
	"fmt"
	"time"
)

// PendingStart is why the start of an instance that has no history yet did
// not run: a runtime fetched the start and handed it back. duroxide keeps
// such a start queued, retrying with backoff until another runtime runs it or
// it is poisoned; the instance has no record meanwhile, so without a note a
// client sees it as not found.
type PendingStart struct {
	// Instance is the instance whose start is pending.
	Instance string
	// Orchestration and Version are what the start asks for; Version is ""
	// when it names none (the newest registered one would run).
	Orchestration string
	Version       string
	// Attempt is the attempt count of the fetch that handed the start back
	// (1 for the first), MaxAttempts the runtime's poison threshold: the
	// start is poisoned at the fetch after attempt MaxAttempts. Both are 0
	// for a start no runtime was handed: one held by its orchestration
	// name's limit on running instances (its Reason says so).
	Attempt     uint32
	MaxAttempts uint32
	// Reason says why the runtime could not run it, completing "orchestration
	// X (version V) ...", e.g. "is not registered in the runtimes that
	// fetched it".
	Reason string
	// NotedAtMs is when the note was written (provider clock, ms since the
	// epoch).
	NotedAtMs uint64
}

// Message is the one-line form tools show: "pending start: " + Cause() +
// " (attempt N of M)", without the attempt when no runtime fetched it yet
// (Attempt 0: a start a flow limit holds).
func (p PendingStart) Message() string {
	if p.Attempt == 0 {
		return "pending start: " + p.Cause()
	}
	attempt := fmt.Sprintf("attempt %d", p.Attempt)
	if p.MaxAttempts > 0 {
		attempt += fmt.Sprintf(" of %d", p.MaxAttempts)
	}
	return fmt.Sprintf("pending start: %s (%s)", p.Cause(), attempt)
}

// Cause is "orchestration X (version V) " + Reason, e.g. "orchestration X
// (version 2.0.0) is not registered in the runtimes that fetched it"; a
// start that names no version shows version "any".
func (p PendingStart) Cause() string {
	version := p.Version
	if version == "" {
		version = "any"
	}
	return fmt.Sprintf("orchestration %s (version %s) %s", p.Orchestration, version, p.Reason)
}

// PendingStartNoter is an optional extension of Provider that makes a start
// no runtime can run visible before it is poisoned. Runtimes and clients
// find it with a type assertion; without it a handed-back start shows as
// not found until the poison failure creates the instance.
//
// A note is about an instance that has no record: the provider keeps it only
// while that holds, and removes it when the instance is created (its first
// ack, which may be the poison failure's) or deleted. Notes are not history:
// writing one changes no event, status or counter that duroxide defines.
type PendingStartNoter interface {
	// AbandonOrchestrationItemWithNote is AbandonOrchestrationItem that, in
	// the same atomic step and only if the locked instance has no record
	// yet, stores note as the instance's pending-start note (replacing an
	// older one; note.Instance is ignored: the lock names the instance). An
	// instance that has a record is abandoned without a note. Lock errors
	// are those of AbandonOrchestrationItem, and nothing is written then.
	AbandonOrchestrationItemWithNote(ctx context.Context, lockToken string, delay time.Duration, ignoreAttempt bool, note PendingStart) error
	// PendingStart returns the note of instance, or nil when it has none or
	// when the instance has a record (a note outlives nothing it describes).
	PendingStart(ctx context.Context, instance string) (*PendingStart, error)
	// ListPendingStarts returns up to limit notes (limit >= 1, else an
	// ErrInvalidInput error), the most recently written first.
	ListPendingStarts(ctx context.Context, limit int) ([]PendingStart, error)
}
