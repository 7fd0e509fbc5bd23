package providertest

import (
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The Batch section: the optional duroxide.BatchEnqueuer. A batch must leave
// the queues exactly as enqueueing its items one by one would (same order,
// same delay), reject the whole batch for one invalid item, and treat an
// empty batch as a no-op. A provider without the interface skips it.

func init() { register("Batch", runBatch) }

// btCases lists the section's cases.
var btCases = []envCase{
	{"WorkerBatchKeepsOrder", btWorkerBatchKeepsOrder},
	{"WorkerBatchWithInvalidItemEnqueuesNothing", btWorkerBatchWithInvalidItemEnqueuesNothing},
	{"OrchestratorBatchReachesEachInstanceInOrder", btOrchestratorBatchReachesEachInstanceInOrder},
	{"OrchestratorBatchWithInvalidItemEnqueuesNothing", btOrchestratorBatchWithInvalidItemEnqueuesNothing},
	{"OrchestratorBatchDelayAppliesToAll", btOrchestratorBatchDelayAppliesToAll},
	{"OrchestratorBatchNegativeDelayRejected", btOrchestratorBatchNegativeDelayRejected},
	{"EmptyBatchesAreNoOps", btEmptyBatchesAreNoOps},
}

func runBatch(t *testing.T, h Harness) {
	if _, ok := h.New(t).(duroxide.BatchEnqueuer); !ok {
		t.Skip("the provider does not implement duroxide.BatchEnqueuer")
	}
	runCases(t, h, btCases)
}

// be is the provider's BatchEnqueuer.
func (e *env) be() duroxide.BatchEnqueuer { return e.p.(duroxide.BatchEnqueuer) }

// btWorkerBatchKeepsOrder: a batch's activities are fetched in slice order,
// across tag queues as an AnyTag fetch sees them.
func btWorkerBatchKeepsOrder(e *env) {
	gpu := activity("bt-a", 3)
	gpu.Tag = ptr("gpu")
	batch := []duroxide.WorkItem{activity("bt-a", 2), gpu, activity("bt-b", 4)}
	if err := e.be().EnqueueForWorkerBatch(e.ctx, batch); err != nil {
		e.t.Fatalf("EnqueueForWorkerBatch: %v", err)
	}
	var got []duroxide.WorkItem
	for range batch {
		got = append(got, e.mustFetchWork(longLock, duroxide.AnyTag()).Item)
	}
	e.sameItemsInOrder("fetched batch", got, batch...)
	e.noWork(duroxide.AnyTag())
}

// btWorkerBatchWithInvalidItemEnqueuesNothing: one item for the wrong queue
// rejects the batch before anything is written.
func btWorkerBatchWithInvalidItemEnqueuesNothing(e *env) {
	batch := []duroxide.WorkItem{activity("bt-a", 2), completed("bt-a", 2)}
	wantPermanent(e.t, e.be().EnqueueForWorkerBatch(e.ctx, batch), duroxide.ErrInvalidInput, "enqueue_for_worker_batch", "item 1")
	e.noWork(duroxide.AnyTag())
}

// btOrchestratorBatchReachesEachInstanceInOrder: starts of two instances and
// an event for the first, in one batch: each instance gets its own messages
// in batch order.
func btOrchestratorBatchReachesEachInstanceInOrder(e *env) {
	ev := duroxide.ExternalRaised{Instance: "bt-a", Name: "go", Data: "1"}
	batch := []duroxide.WorkItem{startItem("bt-a", "Orch"), startItem("bt-b", "Orch"), ev}
	if err := e.be().EnqueueForOrchestratorBatch(e.ctx, batch, 0); err != nil {
		e.t.Fatalf("EnqueueForOrchestratorBatch: %v", err)
	}
	e.wantMessages(e.fetchInstance("bt-a"), startItem("bt-a", "Orch"), ev)
	e.wantMessages(e.fetchInstance("bt-b"), startItem("bt-b", "Orch"))
	e.noFetch(nil)
}

// btOrchestratorBatchWithInvalidItemEnqueuesNothing: an ActivityExecute in
// an orchestrator batch rejects all of it.
func btOrchestratorBatchWithInvalidItemEnqueuesNothing(e *env) {
	batch := []duroxide.WorkItem{startItem("bt-a", "Orch"), activity("bt-a", 2)}
	wantPermanent(e.t, e.be().EnqueueForOrchestratorBatch(e.ctx, batch, 0), duroxide.ErrInvalidInput, "enqueue_for_orchestrator_batch", "item 1")
	e.noFetch(nil)
}

// btOrchestratorBatchDelayAppliesToAll: the delay hides every message of the
// batch until it passes.
func btOrchestratorBatchDelayAppliesToAll(e *env) {
	batch := []duroxide.WorkItem{startItem("bt-a", "Orch"), startItem("bt-b", "Orch")}
	if err := e.be().EnqueueForOrchestratorBatch(e.ctx, batch, shortLock); err != nil {
		e.t.Fatalf("EnqueueForOrchestratorBatch: %v", err)
	}
	e.noFetch(nil)
	e.wait(afterShort)
	e.fetchInstance("bt-a")
	e.fetchInstance("bt-b")
}

// btOrchestratorBatchNegativeDelayRejected: a negative delay is invalid
// input, as for one item.
func btOrchestratorBatchNegativeDelayRejected(e *env) {
	err := e.be().EnqueueForOrchestratorBatch(e.ctx, []duroxide.WorkItem{startItem("bt-a", "Orch")}, -time.Second)
	wantPermanent(e.t, err, duroxide.ErrInvalidInput, "enqueue_for_orchestrator_batch")
	e.noFetch(nil)
}

// btEmptyBatchesAreNoOps: empty batches succeed and enqueue nothing.
func btEmptyBatchesAreNoOps(e *env) {
	if err := e.be().EnqueueForWorkerBatch(e.ctx, nil); err != nil {
		e.t.Fatalf("empty EnqueueForWorkerBatch: %v", err)
	}
	if err := e.be().EnqueueForOrchestratorBatch(e.ctx, []duroxide.WorkItem{}, 0); err != nil {
		e.t.Fatalf("empty EnqueueForOrchestratorBatch: %v", err)
	}
	e.noWork(duroxide.AnyTag())
	e.noFetch(nil)
}
