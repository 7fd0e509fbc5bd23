package durable

import "github.com/duroxide-go/duroxide-redis/duroxide"

// maxCarryForward caps the queue messages ContinueAsNew carries over.
const maxCarryForward = 20

// unmatchedQueueMessages lists, in history order, the queue messages no
// uncancelled subscription consumed: ContinueAsNew carries them forward.
func unmatchedQueueMessages(h []duroxide.Event) [][2]string {
	cancelled := map[uint64]bool{}
	for _, ev := range h {
		if _, ok := ev.Kind.(duroxide.QueueSubscriptionCancelledEvent); ok && ev.SourceEventID != nil {
			cancelled[*ev.SourceEventID] = true
		}
	}
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

// openSchedules is what an execution still waits for.
type openSchedules struct {
	subOrchs      []string // instance ids as recorded
	externalWaits []uint64
	queueWaits    []uint64
}

// outstanding computes the open sub-orchestrations and waits of a history
// (duroxide's get_outstanding_schedule_ids).
func outstanding(h []duroxide.Event) openSchedules {
	var out openSchedules
	resolvedSub, cancelledSub := map[uint64]bool{}, map[uint64]bool{}
	type sub struct {
		id       uint64
		instance string
	}
	var subs []sub
	var extSubs []uint64
	pendingExt := map[string][]uint64{}
	resolvedExt, cancelledExt := map[uint64]bool{}, map[uint64]bool{}
	var queueSubs []queueSub
	arrivals := map[string]int{}
	cancelledQueue := map[uint64]bool{}
	for _, ev := range h {
		src := ev.SourceEventID
		switch k := ev.Kind.(type) {
		case duroxide.SubOrchestrationScheduledEvent:
			subs = append(subs, sub{ev.EventID, k.Instance})
		case duroxide.SubOrchestrationCompletedEvent, duroxide.SubOrchestrationFailedEvent:
			if src != nil {
				resolvedSub[*src] = true
			}
		case duroxide.SubOrchestrationCancelRequestedEvent:
			if src != nil {
				cancelledSub[*src] = true
			}
		case duroxide.ExternalSubscribedEvent:
			extSubs = append(extSubs, ev.EventID)
			pendingExt[k.Name] = append(pendingExt[k.Name], ev.EventID)
		case duroxide.ExternalEventEvent:
			if q := pendingExt[k.Name]; len(q) > 0 {
				resolvedExt[q[0]] = true
				pendingExt[k.Name] = q[1:]
			}
		case duroxide.ExternalSubscribedCancelledEvent:
			if src != nil {
				cancelledExt[*src] = true
				for name, q := range pendingExt {
					pendingExt[name] = removeID(q, *src)
				}
			}
		case duroxide.QueueSubscribedEvent:
			queueSubs = append(queueSubs, queueSub{id: ev.EventID, name: k.Name})
		case duroxide.QueueEventDeliveredEvent:
			arrivals[k.Name]++
		case duroxide.QueueSubscriptionCancelledEvent:
			if src != nil {
				cancelledQueue[*src] = true
			}
		}
	}
	for _, s := range subs {
		if !resolvedSub[s.id] && !cancelledSub[s.id] {
			out.subOrchs = append(out.subOrchs, s.instance)
		}
	}
	for _, id := range extSubs {
		if !resolvedExt[id] && !cancelledExt[id] {
			out.externalWaits = append(out.externalWaits, id)
		}
	}
	consumed := map[string]int{}
	for _, q := range queueSubs {
		if cancelledQueue[q.id] {
			continue
		}
		if consumed[q.name] < arrivals[q.name] {
			consumed[q.name]++
			continue
		}
		out.queueWaits = append(out.queueWaits, q.id)
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
	answered := map[uint64]bool{}
	for _, ev := range h {
		switch ev.Kind.(type) {
		case duroxide.ActivityCompletedEvent, duroxide.ActivityFailedEvent, duroxide.ActivityCancelRequestedEvent:
			if ev.SourceEventID != nil {
				answered[*ev.SourceEventID] = true
			}
		}
	}
	var out []uint64
	for _, ev := range h {
		if _, ok := ev.Kind.(duroxide.ActivityScheduledEvent); ok && !answered[ev.EventID] {
			out = append(out, ev.EventID)
		}
	}
	return out
}
