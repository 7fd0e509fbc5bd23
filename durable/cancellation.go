package durable

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
func (e *replayEngine) collectCancelled(ctx *OrchestrationContext) *duroxide.ErrorDetails {
	for _, fam := range cancelFamilies {
		if d := e.checkReplayedCancels(ctx, fam); d != nil {
			return d
		}
	}
	for _, fam := range cancelFamilies {
		e.recordCancels(ctx, fam)
	}
	ctx.st.cancelled = map[uint64]scheduleKind{}
	return nil
}

func (e *replayEngine) checkReplayedCancels(ctx *OrchestrationContext, fam cancelFamily) *duroxide.ErrorDetails {
	if e.persisted == 0 {
		return nil
	}
	persisted := e.baseline[:e.persisted]
	dropped := map[uint64]bool{}
	scheduled := map[uint64]bool{}
	for _, ev := range persisted {
		if fam.schedule(ev.Kind) {
			scheduled[ev.EventID] = true
		}
		if r, ok := fam.cancel(ev.Kind); ok && r == droppedFuture && ev.SourceEventID != nil {
			dropped[*ev.SourceEventID] = true
		}
	}
	now := map[uint64]bool{}
	for _, id := range ctx.st.cancelledIDs(fam.kind) {
		if scheduled[id] {
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

func (e *replayEngine) recordCancels(ctx *OrchestrationContext, fam cancelFamily) {
	done := map[uint64]bool{}
	for _, ev := range e.all() {
		if _, ok := fam.cancel(ev.Kind); ok && ev.SourceEventID != nil {
			done[*ev.SourceEventID] = true
		}
	}
	for _, id := range ctx.st.cancelledIDs(fam.kind) {
		if done[id] {
			continue
		}
		done[id] = true
		switch fam.kind {
		case kindActivity:
			e.cancelledActivityIDs = append(e.cancelledActivityIDs, id)
		case kindSubOrchestration:
			e.cancelledSubOrchs = append(e.cancelledSubOrchs, ctx.st.subOrchInstances[ctx.st.byID[id]])
		}
		src := id
		e.appendEvent(&src, fam.newEvent(droppedFuture))
	}
}
