package durable

import "github.com/duroxide-go/duroxide-redis/duroxide"

// maxCarryForward caps the queue messages ContinueAsNew carries over.
const maxCarryForward = 20

// unmatchedQueueMessages lists, in history order, the queue messages no
// uncancelled subscription consumed: ContinueAsNew carries them forward.
func unmatchedQueueMessages(h []duroxide.Event) [][2]string {
	cancelled := answeredSources(h, func(k duroxide.EventKind) bool {
		_, ok := k.(duroxide.QueueSubscriptionCancelledEvent)
		return ok
	})
	active := map[string]int{}
	for _, ev := range h {
		if s, ok := ev.Kind.(duroxide.QueueSubscribedEvent); ok && !cancelled[ev.EventID] {
			active[s.Name]++
		}
	}
	consumed := map[string]int{}
	var out [][2]string
	for _, ev := range h {
		d, ok := ev.Kind.(duroxide.QueueEventDeliveredEvent)
		if !ok {
			continue
		}
		if consumed[d.Name] < active[d.Name] {
			consumed[d.Name]++
			continue
		}
		out = append(out, [2]string{d.Name, d.Data})
	}
	return out
}

// openSchedules is what an execution still waits for (duroxide's
// get_outstanding_schedule_ids, minus activities, which inflightActivities
// covers).
type openSchedules struct {
	subOrchs      []string // instance ids as recorded
	externalWaits []uint64
	queueWaits    []uint64
}

func outstanding(h []duroxide.Event) openSchedules {
	return openSchedules{subOrchs: openSubOrchestrations(h), externalWaits: openExternalWaits(h), queueWaits: openQueueWaits(h)}
}

// answeredSources collects the source ids of the events answer selects.
func answeredSources(h []duroxide.Event, answer func(duroxide.EventKind) bool) map[uint64]bool {
	out := map[uint64]bool{}
	for _, ev := range h {
		if answer(ev.Kind) && ev.SourceEventID != nil {
			out[*ev.SourceEventID] = true
		}
	}
	return out
}

func openSubOrchestrations(h []duroxide.Event) []string {
	done := answeredSources(h, func(k duroxide.EventKind) bool {
		switch k.(type) {
		case duroxide.SubOrchestrationCompletedEvent, duroxide.SubOrchestrationFailedEvent, duroxide.SubOrchestrationCancelRequestedEvent:
			return true
		}
		return false
	})
	var out []string
	for _, ev := range h {
		if s, ok := ev.Kind.(duroxide.SubOrchestrationScheduledEvent); ok && !done[ev.EventID] {
			out = append(out, s.Instance)
		}
	}
	return out
}

// openExternalWaits: each ExternalEvent answers the oldest uncancelled
// subscription of its name that is open at that point of the history.
func openExternalWaits(h []duroxide.Event) []uint64 {
	pending := map[string][]uint64{}
	var subs []uint64
	closed := map[uint64]bool{}
	for _, ev := range h {
		switch k := ev.Kind.(type) {
		case duroxide.ExternalSubscribedEvent:
			subs = append(subs, ev.EventID)
			pending[k.Name] = append(pending[k.Name], ev.EventID)
		case duroxide.ExternalEventEvent:
			if q := pending[k.Name]; len(q) > 0 {
				closed[q[0]] = true
				pending[k.Name] = q[1:]
			}
		case duroxide.ExternalSubscribedCancelledEvent:
			if ev.SourceEventID != nil {
				closed[*ev.SourceEventID] = true
				for name, q := range pending {
					pending[name] = removeID(q, *ev.SourceEventID)
				}
			}
		}
	}
	var out []uint64
	for _, id := range subs {
		if !closed[id] {
			out = append(out, id)
		}
	}
	return out
}

// openQueueWaits: uncancelled queue subscriptions consume that queue's
// messages in subscription order, wherever the messages sit in history.
func openQueueWaits(h []duroxide.Event) []uint64 {
	cancelled := answeredSources(h, func(k duroxide.EventKind) bool {
		_, ok := k.(duroxide.QueueSubscriptionCancelledEvent)
		return ok
	})
	arrivals := map[string]int{}
	for _, ev := range h {
		if d, ok := ev.Kind.(duroxide.QueueEventDeliveredEvent); ok {
			arrivals[d.Name]++
		}
	}
	var out []uint64
	for _, ev := range h {
		s, ok := ev.Kind.(duroxide.QueueSubscribedEvent)
		if !ok || cancelled[ev.EventID] {
			continue
		}
		if arrivals[s.Name] > 0 {
			arrivals[s.Name]--
			continue
		}
		out = append(out, ev.EventID)
	}
	return out
}

func removeID(ids []uint64, id uint64) []uint64 {
	out := ids[:0:0]
	for _, x := range ids {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}

// inflightActivities are scheduled activities with neither an answer nor a
// cancel request, in schedule order.
func inflightActivities(h []duroxide.Event) []uint64 {
	answered := answeredSources(h, func(k duroxide.EventKind) bool {
		switch k.(type) {
		case duroxide.ActivityCompletedEvent, duroxide.ActivityFailedEvent, duroxide.ActivityCancelRequestedEvent:
			return true
		}
		return false
	})
	var out []uint64
	for _, ev := range h {
		if _, ok := ev.Kind.(duroxide.ActivityScheduledEvent); ok && !answered[ev.EventID] {
			out = append(out, ev.EventID)
		}
	}
	return out
}
