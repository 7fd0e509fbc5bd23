package duroxide

import (
	"context"
	"time"
)

// BatchEnqueuer is an optional extension of Provider: many messages enqueued in one
// storage call, for clients that start or signal many instances at once. Callers check
// for it with a type assertion and otherwise enqueue item by item; both must leave the
// same queues behind.
//
// For both methods:
//   - Every item is validated as the single-item method validates it, before anything is
//     written; one invalid item is a permanent ErrInvalidInput error naming its position,
//     and nothing of the batch is enqueued.
//   - Otherwise the whole batch is enqueued atomically: all items or, on error, none
//     (a retryable error leaves open whether the batch was applied, as for one item).
//   - Items are enqueued in slice order, so they keep that order in their queues exactly
//     as if enqueued one by one.
//   - An empty batch is a no-op and returns nil.
//   - A batch is one atomic storage step: callers keep batches to a size whose single step
//     is acceptable to the storage (hundreds, not millions, of items).
type BatchEnqueuer interface {
	// EnqueueForOrchestratorBatch is EnqueueForOrchestrator(ctx, item, delay) for each
	// item, in one step.
	EnqueueForOrchestratorBatch(ctx context.Context, items []WorkItem, delay time.Duration) error
	// EnqueueForWorkerBatch is EnqueueForWorker(ctx, item) for each item, in one step.
	EnqueueForWorkerBatch(ctx context.Context, items []WorkItem) error
}
