package dxotel

import (
	"context"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"go.opentelemetry.io/otel/attribute"
)

// The ack-and-fetch pass-throughs. A combined call is one span, named after
// its method and parented like the ack (to the span of the unit it acks).
// The ack's effects are recorded as for the plain ack (the unit's outcome,
// the turn or activity counters, poison) whenever the ack applied, which
// includes a *duroxide.FetchAfterAckError; what the fetch half locked goes
// on a "fetched" event, so the span's own attributes keep naming the acked
// unit. The outcome is the fetch's: ok, empty when nothing arrived within
// the poll timeout (the duration then includes the long poll, as for a plain
// fetch), error. The fetched unit needs nothing more: the runtime hands it
// to the Observer exactly like a plainly fetched one.
//
// The wrapper cannot see the moment an ack applies inside one call, and a
// combined call on an idle queue returns only when its long poll ends (30s
// by the runtime's default). So the inner combined call runs without the long
// poll: its ack is recorded, and the acked unit's span ended, as soon as it
// returns, and when it found nothing the inner plain fetch waits out the rest
// of the poll timeout, its error the fetch half's. That is the contract's own
// definition of the fetch half (a fetch that long-polls once the ack
// applied); it costs one more round trip on an idle queue and none when the
// combined call finds work. A combined call whose ack failed leaves the
// unit's span open for the runtime's fallback (a plain ack, an abandon).

// orchestrationAckFetch passes duroxide.OrchestrationAckFetcher through.
type orchestrationAckFetch[C context.Context] struct{ w *provider }

// AckOrchestrationItemAndFetch traces the combined call (see above).
func (m orchestrationAckFetch[C]) AckOrchestrationItemAndFetch(ctx C, lockToken string, commit duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	inner := m.w.inner
	return m.w.ackTurnAndFetch(ctx, "ack_orchestration_item_and_fetch", lockToken, commit, pollTimeout,
		func(ctx context.Context, poll time.Duration) (*duroxide.OrchestrationItem, error) {
			return inner.(duroxide.OrchestrationAckFetcher).AckOrchestrationItemAndFetch(ctx, lockToken, commit, lockTimeout, poll, filter)
		}, func(ctx context.Context, poll time.Duration) (*duroxide.OrchestrationItem, error) {
			return inner.FetchOrchestrationItem(ctx, lockTimeout, poll, filter)
		})
}

// ackTurnAndFetch traces a turn's ack-and-fetch, plain or history-free.
func (w *provider) ackTurnAndFetch(ctx context.Context, op, lockToken string, commit duroxide.OrchestrationCommit, pollTimeout time.Duration,
	ackFetch, fetch func(ctx context.Context, poll time.Duration) (*duroxide.OrchestrationItem, error)) (*duroxide.OrchestrationItem, error) {
	return ackAndFetch(w, ctx, op, lockToken, pollTimeout, ackFetch, fetch,
		func(ctx context.Context) { w.turnCommitted(ctx, lockToken, commit) }, orchestrationItemAttrs, commitAttrs(commit)...)
}

// ackAndFetch traces one ack-and-fetch call: ackFetch is the inner combined
// call and fetch the inner plain fetch, each with the poll timeout given;
// acked records the ack's effects once it applied, locked names what the
// fetch half locked.
func ackAndFetch[T any](w *provider, ctx context.Context, op, lockToken string, pollTimeout time.Duration,
	ackFetch, fetch func(ctx context.Context, poll time.Duration) (*T, error),
	acked func(context.Context), locked func(*T) []attribute.KeyValue, attrs ...attribute.KeyValue) (*T, error) {
	return do(w, ctx, op, lockToken, func(ctx context.Context, c *call) (*T, error) {
		start := time.Now()
		first := pollTimeout
		if first > 0 {
			first = 0 // a negative timeout goes through, for the inner call to reject
		}
		item, err := ackFetch(ctx, first)
		if !ackApplied(err) {
			return item, err
		}
		acked(ctx)
		w.handedOver(lockToken)
		if rest := pollTimeout - time.Since(start); err == nil && item == nil && rest > 0 {
			if item, err = fetch(ctx, rest); err != nil {
				err = &duroxide.FetchAfterAckError{Err: err}
			}
		}
		c.fetched(err, locked(item), true)
		return item, err
	}, attrs...)
}

// workAckFetch passes duroxide.WorkAckFetcher through.
type workAckFetch[C context.Context] struct{ w *provider }

// AckWorkItemAndFetch traces the combined call (see above).
func (m workAckFetch[C]) AckWorkItemAndFetch(ctx C, lockToken string, completion duroxide.WorkItem,
	lockTimeout, pollTimeout time.Duration, session *duroxide.SessionFetchConfig, tags duroxide.TagFilter) (*duroxide.LockedWorkItem, error) {
	w := m.w
	return ackAndFetch(w, ctx, "ack_work_item_and_fetch", lockToken, pollTimeout,
		func(ctx context.Context, poll time.Duration) (*duroxide.LockedWorkItem, error) {
			return w.inner.(duroxide.WorkAckFetcher).AckWorkItemAndFetch(ctx, lockToken, completion, lockTimeout, poll, session, tags)
		}, func(ctx context.Context, poll time.Duration) (*duroxide.LockedWorkItem, error) {
			return w.inner.FetchWorkItem(ctx, lockTimeout, poll, session, tags)
		}, func(ctx context.Context) { w.activityAcked(ctx, lockToken, completion) }, lockedWorkItemAttrs, workItemAttrs(completion)...)
}

// ackApplied reports whether an ack-and-fetch call's ack is durable: it
// succeeded, or only its fetch half failed.
func ackApplied(err error) bool { return err == nil || duroxide.FetchFailedAfterAck(err) }

// orchestrationAckReport passes duroxide.OrchestrationAckReporter through:
// the same span as the plain or history-free combined call, and applied
// runs when the inner call reports the ack, which it does before its
// (here zero) poll.
type orchestrationAckReport[C context.Context] struct{ w *provider }

// AckOrchestrationItemAndFetchReporting traces the combined call (see above).
func (m orchestrationAckReport[C]) AckOrchestrationItemAndFetchReporting(ctx C, lockToken string, commit duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter, lazy bool, applied func()) (*duroxide.OrchestrationItem, error) {
	inner := m.w.inner
	op, fetch := "ack_orchestration_item_and_fetch", inner.FetchOrchestrationItem
	if lf, ok := inner.(duroxide.LazyHistoryFetcher); lazy && ok {
		op, fetch = "ack_orchestration_item_and_fetch_lazy", lf.FetchOrchestrationItemLazy
	}
	return m.w.ackTurnAndFetch(ctx, op, lockToken, commit, pollTimeout,
		func(ctx context.Context, poll time.Duration) (*duroxide.OrchestrationItem, error) {
			return inner.(duroxide.OrchestrationAckReporter).AckOrchestrationItemAndFetchReporting(ctx, lockToken, commit, lockTimeout, poll, filter, lazy, applied)
		}, func(ctx context.Context, poll time.Duration) (*duroxide.OrchestrationItem, error) {
			return fetch(ctx, lockTimeout, poll, filter)
		})
}
