package duroxide

import "context"

// Limit is the flow control of one activity name at dispatch: how many of
// its items may be locked at once, across every process, and how fast they
// may be handed out. A zero field sets no bound of its kind.
type Limit struct {
	// Name is the activity name the limit applies to.
	Name string
	// Concurrency bounds the items of the name locked at once (0: none). A
	// lock held by a worker that died counts until it expires.
	Concurrency int
	// RatePerSecond bounds how many items of the name are handed out per
	// second on average (0: none), a token bucket.
	RatePerSecond float64
	// Burst is the bucket's size: how many items may be handed out at once
	// after a quiet spell. With a rate it must be at least 1.
	Burst int
}

// FlowLimiter is an optional extension of Provider that limits dispatch per
// activity name. The limits live in the store, so every process of a
// namespace obeys the same ones; an item is bound by the limit its name had
// when it was enqueued. When an activity was scheduled with a limit key,
// the limit of its name applies to each key value on its own (a limit per
// customer, say). A limited item does not hold back the items behind it:
// while its name is at its limit, the fetch hands out the next eligible item.
//
// A negative or non-finite bound, an empty name, or a rate without burst is
// an ErrInvalidInput error naming the operation and the name.
type FlowLimiter interface {
	// SetLimit sets (or replaces) the limit of l.Name.
	SetLimit(ctx context.Context, l Limit) error
	// DeleteLimit removes the limit of name; true when there was one. Items
	// queued under it are no longer held back.
	DeleteLimit(ctx context.Context, name string) (bool, error)
	// Limits lists the limits set, by name.
	Limits(ctx context.Context) ([]Limit, error)
}
