package dxotel

import (
	"context"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// batchEnqueue passes duroxide.BatchEnqueuer through: a batch is one span
// and one recorded call, with the number of items as duroxide.batch.size
// (its items may be for many instances, so none is named).
type batchEnqueue[C context.Context] struct{ w *provider }

// EnqueueForOrchestratorBatch traces the batch.
func (m batchEnqueue[C]) EnqueueForOrchestratorBatch(ctx C, items []duroxide.WorkItem, delay time.Duration) error {
	return do0(m.w, ctx, "enqueue_for_orchestrator_batch", "", func(ctx context.Context) error {
		return m.w.inner.(duroxide.BatchEnqueuer).EnqueueForOrchestratorBatch(ctx, items, delay)
	}, KeyBatchSize.Int(len(items)))
}

// EnqueueForWorkerBatch traces the batch.
func (m batchEnqueue[C]) EnqueueForWorkerBatch(ctx C, items []duroxide.WorkItem) error {
	return do0(m.w, ctx, "enqueue_for_worker_batch", "", func(ctx context.Context) error {
		return m.w.inner.(duroxide.BatchEnqueuer).EnqueueForWorkerBatch(ctx, items)
	}, KeyBatchSize.Int(len(items)))
}

// checkedEnqueue passes duroxide.CheckedEnqueuer through: one span and one
// recorded call with the plain enqueue's attributes.
type checkedEnqueue[C context.Context] struct{ w *provider }

// EnqueueForOrchestratorChecked traces the checked enqueue.
func (m checkedEnqueue[C]) EnqueueForOrchestratorChecked(ctx C, item duroxide.WorkItem, opts duroxide.CheckedEnqueue) error {
	return do0(m.w, ctx, "enqueue_for_orchestrator_checked", "", func(ctx context.Context) error {
		return m.w.inner.(duroxide.CheckedEnqueuer).EnqueueForOrchestratorChecked(ctx, item, opts)
	}, workItemAttrs(item)...)
}
