package engine

import (
	"sort"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// WaitingExternalEvents lists, in subscription order, the names of the
// external-event subscriptions of an execution's history that are still
// waiting for an event, by the same positional rule a turn applies: a name
// subscribed to twice and answered once is listed once. Test harnesses
// (durabletest) use it to tell when raising an event will be delivered
// rather than kept for audit only.
func WaitingExternalEvents(h []duroxide.Event) []string {
	w := waitsOf(h)
	ids := w.externals.waiting()
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = w.externals.name[id]
	}
	return names
}

// UndeliveredExternalEvents lists the event ids of an execution's
// ExternalEvent events that no subscription was waiting for when they
// arrived. duroxide keeps such an event in history for audit only: no
// WaitForEvent, not even a later one, receives it. It replays the same
// wait rules as a turn, so it agrees with what code saw.
func UndeliveredExternalEvents(h []duroxide.Event) []uint64 {
	w := newWaits()
	var ids []uint64
	for _, ev := range h {
		if _, ok := ev.Kind.(duroxide.ExternalEventEvent); ok && !w.observe(ev) {
			ids = append(ids, ev.EventID)
			continue
		}
		w.observe(ev)
	}
	return ids
}

// Subscription is a wait of an execution for an external event or a queue
// message that nothing has answered yet.
type Subscription struct {
	EventID uint64 // of its ExternalSubscribed or ExternalSubscribedPersistent
	Name    string
	Queue   bool // a persistent queue's (Dequeue), not an external event's
}

// WaitingSubscriptions lists the subscriptions of an execution's history
// still waiting, in event id order, by the rules a turn applies.
func WaitingSubscriptions(h []duroxide.Event) []Subscription {
	w := waitsOf(h)
	var out []Subscription
	for _, id := range w.externals.waiting() {
		out = append(out, Subscription{EventID: id, Name: w.externals.name[id]})
	}
	for _, id := range w.queues.waiting() {
		out = append(out, Subscription{EventID: id, Name: w.queues.name[id], Queue: true})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].EventID < out[j].EventID })
	return out
}
