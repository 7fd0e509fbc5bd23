package redisprovider

import (
	"context"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

var (
	_ duroxide.CheckedEnqueuer = (*partition)(nil)
	_ duroxide.CheckedEnqueuer = (*Provider)(nil)
)

// maxRequestID bounds a request id: it becomes a key.
const maxRequestID = 200

// requirements maps each duroxide.Requirement to its word in
// lua/enqueue_for_orchestrator_checked.lua.
var requirements = map[duroxide.Requirement]string{
	duroxide.RequireNothing: "",
	duroxide.RequireAbsent:  "absent",
	duroxide.RequirePresent: "present",
}

// EnqueueForOrchestratorChecked enqueues item as EnqueueForOrchestrator
// does if its instance is what opts.Require asks, and at most once per
// opts.RequestID, checking and writing in one script (see
// duroxide.CheckedEnqueuer).
func (p *partition) EnqueueForOrchestratorChecked(ctx context.Context, item duroxide.WorkItem, opts duroxide.CheckedEnqueue) error {
	const op = "enqueue_for_orchestrator_checked"
	if err := checkDurations(op, opts.Delay); err != nil {
		return err
	}
	req, ok := requirements[opts.Require]
	if !ok {
		return invalid(op, "unknown requirement %d", opts.Require)
	}
	if len(opts.RequestID) > maxRequestID {
		return invalid(op, "request id of %d bytes (at most %d)", len(opts.RequestID), maxRequestID)
	}
	inst, body, err := orchestratorItem(op, item)
	if err != nil {
		return err
	}
	var a args
	a.str(opts.RequestID).ms(duroxide.RequestIDLifetime).str(req).ms(opts.Delay).str(inst).str(string(body))
	_, err = p.run(ctx, op, scriptEnqueueForOrchestratorChecked, a)
	return err
}

// EnqueueForOrchestratorChecked enqueues in the instance's partition, where
// its record, its queue and the request id's mark live.
func (pp *Provider) EnqueueForOrchestratorChecked(ctx context.Context, item duroxide.WorkItem, opts duroxide.CheckedEnqueue) error {
	return pp.of(itemInstance(item)).EnqueueForOrchestratorChecked(ctx, item, opts)
}
