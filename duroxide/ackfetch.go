package duroxide

import (
	"context"
	"errors"
	"time"
)

// WorkAckFetcher is an optional extension of Provider: a worker that has finished one
// activity acks it and fetches its next one in a single storage call instead of two. The
// runtime checks for it with a type assertion and falls back to AckWorkItem followed by
// FetchWorkItem when the provider does not have it; both paths must behave the same.
//
// AckWorkItemAndFetch is AckWorkItem(ctx, lockToken, completion) followed, only once
// that ack is applied, by FetchWorkItem(ctx, lockTimeout, pollTimeout, session, tags):
//
//   - Arguments of both halves are validated before anything is written; invalid ones
//     (a bad tag filter, an empty owner id, a negative duration) are a permanent
//     ErrInvalidInput error and nothing is acked.
//   - If the ack fails, the error is exactly what AckWorkItem would return (ErrLockLost
//     for a cancelled item or a lost lock, nothing applied) and nothing is fetched.
//     As with AckWorkItem, a retryable error leaves open whether the ack was applied.
//   - Once the ack is applied, the result is the fetch's: an item, locked as by
//     FetchWorkItem, or (nil, nil) when no work arrived within pollTimeout. The ack
//     stays applied whatever happens to the fetch; a failure of the fetch half is
//     returned wrapped in a *FetchAfterAckError, so errors.As tells the caller that the
//     activity is completed and only the next item is missing. A cancelled ctx while
//     long polling after the ack is such an error too.
//   - Long polling starts after the ack: the call waits for work only when the ack is
//     durable, so a completion is never held back by an idle queue.
type WorkAckFetcher interface {
	AckWorkItemAndFetch(ctx context.Context, lockToken string, completion WorkItem,
		lockTimeout, pollTimeout time.Duration, session *SessionFetchConfig, tags TagFilter) (*LockedWorkItem, error)
}

// OrchestrationAckFetcher is the orchestrator's counterpart of WorkAckFetcher, optional in
// the same way: AckOrchestrationItemAndFetch is AckOrchestrationItem(ctx, lockToken,
// commit) followed, once that ack is applied, by FetchOrchestrationItem(ctx, lockTimeout,
// pollTimeout, filter), with the same rules for validation, for errors of either half
// (*FetchAfterAckError once the turn is committed) and for long polling after the ack.
//
// The fetch half may return the instance just acked, when messages arrived for it during
// the turn: its lock was released by the ack, so it is as eligible as any other instance.
type OrchestrationAckFetcher interface {
	AckOrchestrationItemAndFetch(ctx context.Context, lockToken string, commit OrchestrationCommit,
		lockTimeout, pollTimeout time.Duration, filter *DispatcherCapabilityFilter) (*OrchestrationItem, error)
}

// FetchAfterAckError reports that the fetch half of an ack-and-fetch call failed after
// its ack was applied. The ack is durable; Err is the fetch's error (a *ProviderError, or
// the context's error) with its kind and retryability, reachable through Unwrap.
type FetchAfterAckError struct {
	Err error
}

// Error says the ack was applied, then the fetch's error.
func (e *FetchAfterAckError) Error() string {
	return "ack applied, then fetch failed: " + e.Err.Error()
}

// Unwrap returns the fetch's error, so errors.Is classifies it as usual.
func (e *FetchAfterAckError) Unwrap() error { return e.Err }

// FetchFailedAfterAck reports whether err, returned by an ack-and-fetch call, is a failure
// of the fetch half only: the ack itself is durable and must not be retried.
func FetchFailedAfterAck(err error) bool {
	var fa *FetchAfterAckError
	return errors.As(err, &fa)
}

// OrchestrationAckReporter is an optional extension of OrchestrationAckFetcher: the
// same ack-and-fetch of a turn, which also tells its caller as soon as its ack half is
// applied, before its fetch half waits for work. A caller that must not act on an ack
// before it is durable but need not wait for the next item (the runtime hands a committed
// turn's replayed state to its instance cache, where the dispatcher that fetches the
// instance's next message waits for it) does so in applied instead of after the call
// returns, up to a whole poll timeout later.
//
//   - Everything else is AckOrchestrationItemAndFetch's (lazy false) or, lazy true,
//     LazyHistoryFetcher's AckOrchestrationItemAndFetchLazy's: arguments, errors, result.
//   - applied (may be nil) runs at most once, on the calling goroutine, once the ack is
//     durable and before the fetch half waits; it must be quick: no blocking and no
//     calls to the provider. A call that fails before its ack applied never runs it, so
//     the caller still acts on the call's result when applied did not run.
type OrchestrationAckReporter interface {
	AckOrchestrationItemAndFetchReporting(ctx context.Context, lockToken string, commit OrchestrationCommit,
		lockTimeout, pollTimeout time.Duration, filter *DispatcherCapabilityFilter, lazy bool, applied func()) (*OrchestrationItem, error)
}
