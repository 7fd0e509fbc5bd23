package durable

import "context"

// Observer is told when the runtime starts and ends its units of work, so
// tracing can wrap them without this package importing a tracing library
// (extra/dxotel implements it with OpenTelemetry). Both methods are called
// on the dispatcher goroutine and must return quickly; the returned end
// function is called exactly once, when the unit is over, whatever its
// outcome. Outcomes themselves are visible to a provider decorator through
// the ack that follows, keyed by the LockToken given here.
type Observer interface {
	// StartTurn is called before a fetched orchestration batch is processed.
	StartTurn(t TurnInfo) (end func())
	// StartActivity is called before an activity function runs. The returned
	// context becomes the parent of the ActivityContext, so values the
	// observer puts in it (a span) reach the user's code.
	StartActivity(ctx context.Context, a ActivityInfo) (context.Context, func())
}

// TurnInfo describes one orchestration turn as fetched.
type TurnInfo struct {
	Instance      string
	Orchestration string // "" for an instance whose record does not exist yet
	ExecutionID   uint64
	Attempt       uint32 // the fetch's AttemptCount
	LockToken     string
}

// ActivityInfo describes one activity execution as fetched.
type ActivityInfo struct {
	Instance    string
	ExecutionID uint64
	Name        string
	ActivityID  uint64
	Attempt     uint32 // the fetch's AttemptCount
	LockToken   string
}

// noopObserver is the default Observer: it keeps the hook points free of nil
// checks.
type noopObserver struct{}

func (noopObserver) StartTurn(TurnInfo) func() { return func() {} }

func (noopObserver) StartActivity(ctx context.Context, _ ActivityInfo) (context.Context, func()) {
	return ctx, func() {}
}
