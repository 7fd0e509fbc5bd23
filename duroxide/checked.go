package duroxide

import (
	"context"
	"errors"
	"time"
)

// ErrAlreadyExists classifies a start refused because its instance already exists or
// already has a start waiting to be run (see CheckedEnqueuer). Like the other kinds it
// describes a permanent failure: nothing was written.
var ErrAlreadyExists = errors.New("already exists")

// Requirement is what must hold of an instance for a CheckedEnqueuer to enqueue a
// message for it.
type Requirement int

const (
	// RequireNothing enqueues whatever the instance's state, as EnqueueForOrchestrator.
	RequireNothing Requirement = iota
	// RequireAbsent enqueues only when the instance has no record and no StartOrchestration
	// waiting in its queue; otherwise the call fails with ErrAlreadyExists. For starts.
	RequireAbsent
	// RequirePresent enqueues only when the instance has a record or a StartOrchestration
	// waiting in its queue; otherwise the call fails with ErrNotFound. For events and
	// cancellations, which an instance that never existed would never read.
	RequirePresent
)

// RequestIDLifetime is how long a CheckedEnqueuer remembers a request id: a repeat of the
// call with the same id within it is not applied again. A client repeats a call whose
// outcome it did not learn within its own deadline, far shorter than this.
const RequestIDLifetime = 10 * time.Minute

// CheckedEnqueue says how EnqueueForOrchestratorChecked enqueues.
type CheckedEnqueue struct {
	// Delay makes the message visible after it, as EnqueueForOrchestrator's delay.
	Delay time.Duration
	// Require is checked in the same atomic step as the write, so no other call can slip
	// between the check and the enqueue.
	Require Requirement
	// RequestID names the call: one made again with the same id within RequestIDLifetime
	// (because its reply was lost) changes nothing and returns nil, as the first did.
	// Empty: every call is applied. At most 200 bytes.
	RequestID string
}

// CheckedEnqueuer is an optional extension of Provider for a client's own calls (start,
// raise, enqueue, cancel): an enqueue that checks the instance's existence atomically
// with the write, and that the caller may repeat under the same request id until it
// learns the outcome, without applying it twice.
//
//   - The item is validated as EnqueueForOrchestrator validates it; an invalid item, or
//     a RequestID over 200 bytes, is a permanent ErrInvalidInput error.
//   - A RequestID already applied within RequestIDLifetime: nothing is written, nil.
//   - Require not met: a permanent ErrAlreadyExists or ErrNotFound error naming the
//     instance; nothing is written.
//   - Otherwise the item is enqueued exactly as EnqueueForOrchestrator(ctx, item, Delay)
//     would, and the request id recorded, in one atomic step.
type CheckedEnqueuer interface {
	EnqueueForOrchestratorChecked(ctx context.Context, item WorkItem, opts CheckedEnqueue) error
}
