package redisprovider

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The enqueue scripts take any number of items, so a batch costs one round
// trip and one script run (one clock read, one library prelude) instead of
// one per item.

var _ duroxide.BatchEnqueuer = (*partition)(nil)

// EnqueueForOrchestratorBatch enqueues items as EnqueueForOrchestrator does,
// all in one atomic script, in slice order; one invalid item rejects the
// batch (see duroxide.BatchEnqueuer).
func (p *partition) EnqueueForOrchestratorBatch(ctx context.Context, items []duroxide.WorkItem, delay time.Duration) error {
	return p.enqueueOrchestrator(ctx, "enqueue_for_orchestrator_batch", items, delay)
}

// EnqueueForWorkerBatch enqueues items as EnqueueForWorker does, all in one
// atomic script, in slice order; one invalid item rejects the batch.
func (p *partition) EnqueueForWorkerBatch(ctx context.Context, items []duroxide.WorkItem) error {
	return p.enqueueWorker(ctx, "enqueue_for_worker_batch", items)
}

// enqueueOrchestrator validates items and runs lua/enqueue_for_orchestrator.lua
// once for all of them.
func (p *partition) enqueueOrchestrator(ctx context.Context, op string, items []duroxide.WorkItem, delay time.Duration) error {
	if err := checkDurations(op, delay); err != nil {
		return err
	}
	if len(items) == 0 {
		return nil
	}
	var a args
	a.ms(delay).int(len(items))
	for i, item := range items {
		inst, body, err := orchestratorItem(op, item)
		if err != nil {
			return atPosition(err, len(items), i)
		}
		a.str(inst).str(string(body))
	}
	_, err := p.run(ctx, op, scriptEnqueueForOrchestrator, a)
	return err
}

// enqueueWorker validates items and runs lua/enqueue_for_worker.lua once for
// all of them.
func (p *partition) enqueueWorker(ctx context.Context, op string, items []duroxide.WorkItem) error {
	if len(items) == 0 {
		return nil
	}
	var a args
	a.int(len(items))
	for i, item := range items {
		if err := a.workerItem(op, item); err != nil {
			return atPosition(err, len(items), i)
		}
	}
	_, err := p.run(ctx, op, scriptEnqueueForWorker, a)
	return err
}

// atPosition names the rejected item of a batch in err's message; a single
// item's error is left as it is.
func atPosition(err error, n, i int) error {
	var pe *duroxide.ProviderError
	if n == 1 || !errors.As(err, &pe) {
		return err
	}
	c := *pe
	c.Message = "item " + strconv.Itoa(i) + " of the batch: " + c.Message
	return &c
}
