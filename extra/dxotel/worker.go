package dxotel

import (
	"context"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// EnqueueForWorker traces the enqueue.
func (w *provider) EnqueueForWorker(ctx context.Context, item duroxide.WorkItem) error {
	return do0(w, ctx, "enqueue_for_worker", "", func(ctx context.Context) error {
		return w.inner.EnqueueForWorker(ctx, item)
	}, workItemAttrs(item)...)
}

// FetchWorkItem traces the fetch and names the activity it locked.
func (w *provider) FetchWorkItem(ctx context.Context, lockTimeout, pollTimeout time.Duration, session *duroxide.SessionFetchConfig, tags duroxide.TagFilter) (*duroxide.LockedWorkItem, error) {
	return do(w, ctx, "fetch_work_item", "", func(ctx context.Context, c *call) (*duroxide.LockedWorkItem, error) {
		item, err := w.inner.FetchWorkItem(ctx, lockTimeout, pollTimeout, session, tags)
		c.fetched(err, lockedWorkItemAttrs(item), false)
		return item, err
	})
}

// lockedWorkItemAttrs names what a worker fetch locked; nil when it locked
// nothing.
func lockedWorkItemAttrs(item *duroxide.LockedWorkItem) []attribute.KeyValue {
	if item == nil {
		return nil
	}
	return append(workItemAttrs(item.Item), KeyAttempt.Int64(int64(item.AttemptCount)))
}

// AckWorkItem traces the ack and, once it is durable, counts the activity's
// outcome and any poison it reports.
func (w *provider) AckWorkItem(ctx context.Context, lockToken string, completion duroxide.WorkItem) error {
	return do0(w, ctx, "ack_work_item", lockToken, func(ctx context.Context) error {
		if err := w.inner.AckWorkItem(ctx, lockToken, completion); err != nil {
			return err
		}
		w.activityAcked(ctx, lockToken, completion)
		return nil
	}, workItemAttrs(completion)...)
}

// activityAcked records a durable activity ack: the outcome on the
// activity's span and in the activity counter.
func (w *provider) activityAcked(ctx context.Context, lockToken string, completion duroxide.WorkItem) {
	outcome := w.activityOutcome(ctx, completion)
	w.unitSpan(lockToken).SetAttributes(KeyOutcome.String(outcome))
	w.in.activities.Add(ctx, 1, metric.WithAttributes(KeyOutcome.String(outcome)))
}

// activityOutcome names what an acknowledged completion reports, counting
// poison on the way. A nil completion is how a runtime drops the result of a
// cancelled activity.
func (w *provider) activityOutcome(ctx context.Context, completion duroxide.WorkItem) string {
	switch c := completion.(type) {
	case nil:
		return "cancelled"
	case duroxide.ActivityFailed:
		if c.Details.Poison != nil {
			w.countPoison(ctx, c.Details.Poison)
			return "poisoned"
		}
		return "failed"
	default:
		return "completed"
	}
}

// AbandonWorkItem traces the abandon.
func (w *provider) AbandonWorkItem(ctx context.Context, lockToken string, delay time.Duration, ignoreAttempt bool) error {
	return do0(w, ctx, "abandon_work_item", lockToken, func(ctx context.Context) error {
		return w.inner.AbandonWorkItem(ctx, lockToken, delay, ignoreAttempt)
	})
}

// RenewWorkItemLock traces and counts the renewal.
func (w *provider) RenewWorkItemLock(ctx context.Context, lockToken string, extendFor time.Duration) error {
	return w.renew(ctx, "renew_work_item_lock", "work_item", lockToken, func(ctx context.Context) error {
		return w.inner.RenewWorkItemLock(ctx, lockToken, extendFor)
	})
}

// RenewSessionLock traces and counts the renewal.
func (w *provider) RenewSessionLock(ctx context.Context, ownerIDs []string, extendFor, idleTimeout time.Duration) (int, error) {
	var n int
	err := w.renew(ctx, "renew_session_lock", "session", "", func(ctx context.Context) error {
		var err error
		n, err = w.inner.RenewSessionLock(ctx, ownerIDs, extendFor, idleTimeout)
		return err
	})
	return n, err
}

// CleanupOrphanedSessions traces the sweep.
func (w *provider) CleanupOrphanedSessions(ctx context.Context, idleTimeout time.Duration) (int, error) {
	return do(w, ctx, "cleanup_orphaned_sessions", "", func(ctx context.Context, _ *call) (int, error) {
		return w.inner.CleanupOrphanedSessions(ctx, idleTimeout)
	})
}
