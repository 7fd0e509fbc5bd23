package redisprovider

import (
	"context"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// AckOrchestrationItem commits a turn atomically: instance and execution
// records, history (append-only), worker items, then cancellations, then
// orchestrator items, custom status, KV, deletion of the fetched messages and
// release of the lock. With an unknown or expired lock, a duplicate event id
// or invalid input nothing is written and the error is permanent.
func (p *partition) AckOrchestrationItem(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit) error {
	const op = "ack_orchestration_item"
	a, err := ackArgs(ctx, op, lockToken, commit)
	if err != nil {
		return err
	}
	_, err = p.run(ctx, op, scriptAckOrchestrationItem, a)
	return err
}

// ackArgs validates a commit and encodes it, with the sticky route of ctx,
// for ack_orchestration.lua.
func ackArgs(ctx context.Context, op, token string, c duroxide.OrchestrationCommit) (args, error) {
	if err := checkToken(op, token); err != nil {
		return nil, err
	}
	route, err := routeOf(ctx, op)
	if err != nil {
		return nil, err
	}
	if c.ExecutionID == 0 {
		return nil, invalid(op, "execution id 0")
	}
	var a args
	a.str(token).u64(c.ExecutionID)
	m := c.Metadata
	a.str(m.Status).flag(m.Output != nil).str(deref(m.Output))
	a.str(m.OrchestrationName).str(m.OrchestrationVersion).str(m.ParentInstanceID)
	a.str(canonVersion(m.PinnedDuroxideVersion))
	cs := lastCustomStatus(c.HistoryDelta)
	a.str(cs.mode).str(cs.value)
	if err := appendEvents(op, &a, c.HistoryDelta); err != nil {
		return nil, err
	}
	if err := appendWorkerItems(op, &a, c.WorkerItems); err != nil {
		return nil, err
	}
	if err := appendOrchestratorItems(op, &a, c.OrchestratorItems); err != nil {
		return nil, err
	}
	a.int(len(c.CancelledActivities))
	for _, x := range c.CancelledActivities {
		if x.Instance == "" {
			return nil, invalid(op, "cancelled activity %d has an empty instance id", x.ActivityID)
		}
		a.str(x.Instance).u64(x.ExecutionID).u64(x.ActivityID)
	}
	if err := appendKVOps(op, &a, c.HistoryDelta); err != nil {
		return nil, err
	}
	if err := appendOutbox(op, &a, outboxOf(ctx)); err != nil {
		return nil, err
	}
	route.ackArgs(&a)
	return a, nil
}

// appendEvents encodes the history delta: count, then event id and JSON.
// Ids must be non-zero and increasing; the script checks them against the
// stored history.
func appendEvents(op string, a *args, events []duroxide.Event) error {
	a.int(len(events))
	for _, e := range events {
		if e.EventID == 0 {
			return invalid(op, "event_id 0 in history delta (ids are assigned by the runtime, from 1)")
		}
		body, err := e.MarshalJSON()
		if err != nil {
			return invalid(op, "event_id %d: %v", e.EventID, err)
		}
		a.u64(e.EventID).str(string(body))
	}
	return nil
}

// appendWorkerItems encodes the activities a turn schedules.
func appendWorkerItems(op string, a *args, items []duroxide.WorkItem) error {
	a.int(len(items))
	for _, item := range items {
		if err := a.workerItem(op, item); err != nil {
			return err
		}
	}
	return nil
}

// appendOrchestratorItems encodes the messages a turn sends. A TimerFired is
// visible at its FireAtMs; everything else now ('0').
func appendOrchestratorItems(op string, a *args, items []duroxide.WorkItem) error {
	a.int(len(items))
	for _, item := range items {
		if err := a.orchestratorMessage(op, item); err != nil {
			return err
		}
	}
	return nil
}

// orchestratorMessage encodes one message a turn sends: instance, JSON and
// when it becomes visible (a TimerFired's FireAtMs, else '0': now).
func (a *args) orchestratorMessage(op string, item duroxide.WorkItem) error {
	inst, body, err := orchestratorItem(op, item)
	if err != nil {
		return err
	}
	var at uint64
	if t, ok := as[duroxide.TimerFired](item); ok {
		at = t.FireAtMs
	}
	a.str(inst).str(string(body)).at(at)
	return nil
}

// customStatus is the effect of a turn on the custom status: mode '0' none,
// '1' set value, '2' clear.
type customStatus struct{ mode, value string }

// lastCustomStatus finds the last CustomStatusUpdated of a delta: the one
// that wins.
func lastCustomStatus(events []duroxide.Event) customStatus {
	for i := len(events) - 1; i >= 0; i-- {
		if cs, ok := kindValue(events[i]).(duroxide.CustomStatusUpdatedEvent); ok {
			if cs.Status == nil {
				return customStatus{mode: "2"}
			}
			return customStatus{mode: "1", value: *cs.Status}
		}
	}
	return customStatus{mode: "0"}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// AbandonOrchestrationItem releases a lock without committing; the fetched
// messages become visible again after delay (0: at once, keeping their
// order), and ignoreAttempt undoes the attempt the fetch counted. An expired
// lock may be abandoned until another fetch takes the instance; an unknown
// token is a permanent error.
func (p *partition) AbandonOrchestrationItem(ctx context.Context, lockToken string, delay time.Duration, ignoreAttempt bool) error {
	return p.abandon(ctx, "abandon_orchestration_item", scriptAbandonOrchestrationItem, lockToken, delay, ignoreAttempt)
}

// RenewOrchestrationItemLock extends a valid, unexpired lock to now +
// extendFor. An expired or unknown lock is a permanent error.
func (p *partition) RenewOrchestrationItemLock(ctx context.Context, lockToken string, extendFor time.Duration) error {
	return p.renew(ctx, "renew_orchestration_item_lock", scriptRenewOrchestrationItemLock, lockToken, extendFor)
}

// EnqueueForOrchestrator adds a message for its instance, visible after
// delay. It never creates the instance: the first ack does.
func (p *partition) EnqueueForOrchestrator(ctx context.Context, item duroxide.WorkItem, delay time.Duration) error {
	return p.enqueueOrchestrator(ctx, "enqueue_for_orchestrator", []duroxide.WorkItem{item}, delay)
}
