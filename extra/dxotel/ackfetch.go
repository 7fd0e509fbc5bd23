package dxotel

import (
	"context"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"go.opentelemetry.io/otel/attribute"
)

// The ack-and-fetch pass-throughs. A combined call is one round trip, so it
// is one span, named after its method and parented like the ack (to the span
// of the unit it acks). The ack's effects are recorded as for the plain ack
// (the unit's outcome, the turn or activity counters, poison) whenever the
// ack applied, which includes a *duroxide.FetchAfterAckError; what the fetch
// half locked goes on a "fetched" event, so the span's own attributes keep
// naming the acked unit. The outcome is the fetch's: ok, empty when nothing
// arrived within the poll timeout (the duration then includes the long
// poll, as for a plain fetch), error. The fetched unit needs nothing more:
// the runtime hands it to the Observer exactly like a plainly fetched one.
//
// The acked unit's span ends where the combined call starts, once the call
// reports the ack applied: what follows is the wait for the next unit (up to
// the runtime's long-poll timeout when the queue is idle), which is not the
// acked unit's time. The call's own span, its child, shows the ack and the
// wait. A combined call whose ack failed leaves the unit's span open for the
// runtime's fallback (a plain ack, an abandon) as usual.

// orchestrationAckFetch passes duroxide.OrchestrationAckFetcher through.
type orchestrationAckFetch struct{ w *provider }

// AckOrchestrationItemAndFetch traces the combined call (see above).
func (m orchestrationAckFetch) AckOrchestrationItemAndFetch(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return m.w.ackTurnAndFetch(ctx, "ack_orchestration_item_and_fetch", lockToken, commit, func(ctx context.Context) (*duroxide.OrchestrationItem, error) {
		return m.w.inner.(duroxide.OrchestrationAckFetcher).AckOrchestrationItemAndFetch(ctx, lockToken, commit, lockTimeout, pollTimeout, filter)
	})
}

// ackTurnAndFetch traces a turn's ack-and-fetch, plain or history-free.
func (w *provider) ackTurnAndFetch(ctx context.Context, op, lockToken string, commit duroxide.OrchestrationCommit,
	ackFetch func(context.Context) (*duroxide.OrchestrationItem, error)) (*duroxide.OrchestrationItem, error) {
	return ackAndFetch(w, ctx, op, lockToken, ackFetch, func(ctx context.Context) { w.turnCommitted(ctx, lockToken, commit) },
		orchestrationItemAttrs, commitAttrs(commit)...)
}

// ackAndFetch traces one ack-and-fetch call: acked records the ack's effects
// once it applied, locked names what the fetch half locked.
func ackAndFetch[T any](w *provider, ctx context.Context, op, lockToken string, ackFetch func(context.Context) (*T, error),
	acked func(context.Context), locked func(*T) []attribute.KeyValue, attrs ...attribute.KeyValue) (*T, error) {
	return do(w, ctx, op, lockToken, func(ctx context.Context, c *call) (*T, error) {
		start := time.Now()
		item, err := ackFetch(ctx)
		if ackApplied(err) {
			acked(ctx)
			w.handedOver(lockToken, start)
		}
		c.fetched(err, locked(item), true)
		return item, err
	}, attrs...)
}

// workAckFetch passes duroxide.WorkAckFetcher through.
type workAckFetch struct{ w *provider }

// AckWorkItemAndFetch traces the combined call (see above).
func (m workAckFetch) AckWorkItemAndFetch(ctx context.Context, lockToken string, completion duroxide.WorkItem,
	lockTimeout, pollTimeout time.Duration, session *duroxide.SessionFetchConfig, tags duroxide.TagFilter) (*duroxide.LockedWorkItem, error) {
	w := m.w
	return ackAndFetch(w, ctx, "ack_work_item_and_fetch", lockToken, func(ctx context.Context) (*duroxide.LockedWorkItem, error) {
		return w.inner.(duroxide.WorkAckFetcher).AckWorkItemAndFetch(ctx, lockToken, completion, lockTimeout, pollTimeout, session, tags)
	}, func(ctx context.Context) { w.activityAcked(ctx, lockToken, completion) }, lockedWorkItemAttrs, workItemAttrs(completion)...)
}

// ackApplied reports whether an ack-and-fetch call's ack is durable: it
// succeeded, or only its fetch half failed.
func ackApplied(err error) bool { return err == nil || duroxide.FetchFailedAfterAck(err) }
