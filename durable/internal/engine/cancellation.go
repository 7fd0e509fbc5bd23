package engine

import (
	"fmt"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// droppedFuture is the reason duroxide records for a future given up by code.
const droppedFuture = "dropped_future"

// cancelFamily is one kind of cancellable schedule with its two event kinds.
type cancelFamily struct {
	kind     scheduleKind
	label    string
	schedule func(duroxide.EventKind) bool
	cancel   func(duroxide.EventKind) (reason string, ok bool)
	newEvent func(reason string) duroxide.EventKind
}

var cancelFamilies = []cancelFamily{
	{
		kind: kindActivity, label: "activities",
		schedule: func(k duroxide.EventKind) bool { _, ok := k.(duroxide.ActivityScheduledEvent); return ok },
		cancel: func(k duroxide.EventKind) (string, bool) {
			c, ok := k.(duroxide.ActivityCancelRequestedEvent)
			return c.Reason, ok
		},
		newEvent: func(r string) duroxide.EventKind { return duroxide.ActivityCancelRequestedEvent{Reason: r} },
	},
	{
		kind: kindSubOrchestration, label: "sub-orchestrations",
		schedule: func(k duroxide.EventKind) bool { _, ok := k.(duroxide.SubOrchestrationScheduledEvent); return ok },
		cancel: func(k duroxide.EventKind) (string, bool) {
			c, ok := k.(duroxide.SubOrchestrationCancelRequestedEvent)
			return c.Reason, ok
		},
		newEvent: func(r string) duroxide.EventKind { return duroxide.SubOrchestrationCancelRequestedEvent{Reason: r} },
	},
	{
		kind: kindExternal, label: "external waits",
		schedule: func(k duroxide.EventKind) bool { _, ok := k.(duroxide.ExternalSubscribedEvent); return ok },
		cancel: func(k duroxide.EventKind) (string, bool) {
			c, ok := k.(duroxide.ExternalSubscribedCancelledEvent)
			return c.Reason, ok
		},
		newEvent: func(r string) duroxide.EventKind { return duroxide.ExternalSubscribedCancelledEvent{Reason: r} },
	},
	{
		kind: kindQueue, label: "persistent waits",
		schedule: func(k duroxide.EventKind) bool { _, ok := k.(duroxide.QueueSubscribedEvent); return ok },
		cancel: func(k duroxide.EventKind) (string, bool) {
			c, ok := k.(duroxide.QueueSubscriptionCancelledEvent)
			return c.Reason, ok
		},
		newEvent: func(r string) duroxide.EventKind { return duroxide.QueueSubscriptionCancelledEvent{Reason: r} },
	},
}

// collectCancelled records the futures the code gave up this turn
// (duroxide's collect_cancelled_from_context). Replayed code must give up
// the same futures it gave up before: a dropped_future cancel in persisted
// history that the code no longer performs is nondeterminism.
func (r *replayRun) collectCancelled() *duroxide.ErrorDetails {
	if !r.resumed && r.persisted > 0 {
		for _, fam := range cancelFamilies {
			if d := r.checkReplayedCancels(fam); d != nil {
				return d
			}
		}
	}
	for _, fam := range cancelFamilies {
		r.recordCancels(fam)
	}
	r.ctx.st.cancelled = map[uint64]scheduleKind{}
	return nil
}

func (r *replayRun) checkReplayedCancels(fam cancelFamily) *duroxide.ErrorDetails {
	idx := r.e.idx
	dropped := idx.droppedCancels(fam.kind)
	if len(dropped) == 0 {
		return nil
	}
	now := map[uint64]bool{}
	for _, id := range r.ctx.st.cancelledIDs(fam.kind) {
		if kind, ok := idx.scheduled(id); ok && kind == fam.kind {
			now[id] = true
		}
	}
	for id := range dropped {
		if !now[id] {
			d := nondeterminism(fmt.Sprintf("cancellation mismatch (%s): baseline_dropped_future_cancel_requests=%v ctx_cancelled_in_replayed_segment=%v",
				fam.label, sortedKeys(dropped), sortedKeys(now)))
			return &d
		}
	}
	return nil
}

// recordCancels appends a cancel request for each schedule of fam the code
// gave up this turn that history has none for yet.
func (r *replayRun) recordCancels(fam cancelFamily) {
	e, st := r.e, r.ctx.st
	for _, id := range st.cancelledIDs(fam.kind) {
		if e.idx.cancelRecorded(id) {
			continue
		}
		switch fam.kind {
		case kindActivity:
			e.turn.cancelledActivityIDs = append(e.turn.cancelledActivityIDs, id)
		case kindSubOrchestration:
			e.turn.cancelledSubOrchs = append(e.turn.cancelledSubOrchs, st.subOrchInstances[st.byID[id]])
		case kindExternal:
			st.externals.cancel(id)
		case kindQueue:
			st.queues.cancel(id)
		}
		src := id
		e.appendEvent(&src, fam.newEvent(droppedFuture))
	}
}
