package duroxide

import (
	"context"
	"time"
)

// StickyRoute names the runtime a context's orchestration fetches and acks
// are made for, for sticky routing (see StickyRouter).
type StickyRoute struct {
	// Owner identifies the runtime; every dispatcher of one runtime uses
	// the same owner.
	Owner string
	// Wait is how long an instance that became fetchable is offered to its
	// owner alone before any fetcher may take it: long enough for a busy
	// owner to finish a turn, short because a gone owner delays each of its
	// instances once by this much.
	Wait time.Duration
	// TTL is how long after an ack the instance stays sticky to its owner:
	// an instance idle for longer (a long timer) is fetchable by anyone at
	// once, as its owner may no longer hold its state.
	TTL time.Duration
}

type stickyRouteKey struct{}

// WithStickyRoute returns a copy of ctx whose orchestration fetches and
// acks are made for route's owner, on a provider that implements
// StickyRouter; other providers, and every other call, ignore it. A
// context keeps it through wrappers that pass their context on.
func WithStickyRoute(ctx context.Context, route StickyRoute) context.Context {
	return context.WithValue(ctx, stickyRouteKey{}, route)
}

// StickyRouteFrom returns the sticky route ctx carries, if any.
func StickyRouteFrom(ctx context.Context) (StickyRoute, bool) {
	r, ok := ctx.Value(stickyRouteKey{}).(StickyRoute)
	return r, ok
}

// StickyRouter is an optional extension of Provider: sticky routing sends the
// turns of an instance to the runtime that ran its previous turn, which may
// still hold the instance's replayed state (Temporal's sticky task queues).
// Routing is an optimisation, never a condition of correctness: a provider
// without it behaves as if every instance were routed to any fetcher.
//
// The route travels in the context (WithStickyRoute) rather than in new
// methods, so that every fetch and ack variant (plain, ack-and-fetch,
// history-free) carries it unchanged, and wrappers that override some of
// them (tracing, fault injection) keep both their overrides and the
// routing. SupportsStickyRouting reports whether the provider honours it (a
// wrapper reports what the provider it passes contexts to does).
//
// A provider that honours routes behaves exactly as without them, except:
//
//   - an orchestration ack (AckOrchestrationItem, the ack half of any
//     ack-and-fetch) whose context carries owner's route and whose commit
//     leaves the execution running (Metadata.Status "" or "Running") makes
//     the instance sticky to owner for route.TTL from the ack. Any other ack
//     of the instance ends the stickiness it had: a terminal one, one
//     without a route, or one with another owner's (which makes it sticky
//     to that owner instead);
//   - while an instance is sticky, whenever it becomes fetchable (a message
//     becomes visible, a lock is released or expires with messages pending,
//     a delay passes) only fetches carrying its owner's route may take it,
//     for the route.Wait of the ack; after that any fetch may, and owner's
//     fetches still take it first;
//   - orchestration fetches (FetchOrchestrationItem and every optional
//     fetch variant) carrying owner's route take owner's sticky instances
//     before others that are older, and wake when one becomes fetchable.
//     The capability filter applies to sticky instances as to any. So that
//     sticky work cannot starve older work, a provider may serve the oldest
//     fetchable instance first on a small share of owner's fetches.
//
// Locks, attempt counts, message batches, delays and errors are unchanged:
// stickiness only decides which fetcher may take an unlocked instance
// during the wait. Abandoning an item or letting its lock expire leaves the
// instance's stickiness as it is. An owner that is gone strands nothing:
// its instances become fetchable by anyone route.Wait after they became
// fetchable, and stop being sticky route.TTL after their last ack.
//
// A fetch or ack whose route has an empty owner, or a Wait or TTL that is
// not positive, fails with a permanent ErrInvalidInput error and changes
// nothing.
type StickyRouter interface {
	SupportsStickyRouting() bool
}
