package duroxide

import "time"

// StickyRouter is an optional extension of Provider: sticky routing sends the
// turns of an instance to the runtime that ran its previous turn, which may
// still hold the instance's replayed state (Temporal's sticky task queues). A
// runtime checks for it with a type assertion; routing is an optimisation,
// never a condition of correctness, and a provider without it behaves as if
// every instance were routed to any fetcher.
//
// WithStickyRouting returns the provider as one runtime, owner, uses it: a
// Provider sharing this one's storage and connections whose every method is
// this provider's, except that
//
//   - its orchestration acks (AckOrchestrationItem, and the ack half of
//     AckOrchestrationItemAndFetch and of any other optional ack-and-fetch
//     call) of a commit that leaves the execution running (Metadata.Status ""
//     or "Running") make the instance sticky to owner for opts.TTL from the
//     ack. Any other ack of the instance ends the stickiness it had: a
//     terminal one, or one through a provider that is not owner's view (a
//     plain provider's, or another owner's, which makes it sticky to that
//     owner instead);
//   - while an instance is sticky, whenever it becomes fetchable (a message
//     becomes visible, a lock is released or expires with messages pending,
//     a delay passes) only fetches of owner's view may take it, for
//     opts.Wait; after that any fetch may, as if it had never been sticky;
//   - its orchestration fetches (FetchOrchestrationItem and every optional
//     fetch variant) take owner's sticky instances before others that are
//     older, and wake owner's waiting fetches when one becomes fetchable.
//     The capability filter applies to sticky instances as to any. So that
//     sticky work cannot starve older work, a provider may serve the oldest
//     fetchable instance first on a small share of owner's fetches.
//
// Locks, attempt counts, message batches, delays and errors are exactly the
// provider's: stickiness only decides which fetcher may take an unlocked
// instance during opts.Wait. Abandoning an item or letting its lock expire
// leaves the instance's stickiness as it is. An owner that is gone strands
// nothing: its instances become fetchable by anyone opts.Wait after they
// became fetchable, and stop being sticky opts.TTL after their last ack.
//
// An empty owner, or a Wait or TTL that is not positive, is a permanent
// ErrInvalidInput error.
type StickyRouter interface {
	WithStickyRouting(owner string, opts StickyOptions) (Provider, error)
}

// StickyOptions tunes sticky routing (see StickyRouter).
type StickyOptions struct {
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
