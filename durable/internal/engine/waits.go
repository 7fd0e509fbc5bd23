package engine

import (
	"sort"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// waitQueue matches the arrivals of one name (external events, or messages
// of one persistent queue) to its subscriptions, by duroxide's positional
// rule: the k-th uncancelled subscription of a name, in subscription order,
// gets the k-th arrival kept for that name. It is the one place that rule
// lives: delivery to code, the waits a terminal turn unsubscribes and the
// messages ContinueAsNew carries forward all read it.
type waitQueue struct {
	live      []uint64       // uncancelled subscriptions, in subscription order
	pos       map[uint64]int // subscription -> its index in live
	cancelled map[uint64]bool
	arrivals  []arrival
}

// arrival is one kept event or message; seq orders arrivals across names.
type arrival struct {
	seq  uint64
	data string
}

func newWaitQueue() *waitQueue {
	return &waitQueue{pos: map[uint64]int{}, cancelled: map[uint64]bool{}}
}

func (q *waitQueue) subscribe(id uint64) {
	if _, ok := q.pos[id]; ok || q.cancelled[id] {
		return
	}
	q.pos[id] = len(q.live)
	q.live = append(q.live, id)
}

// cancel takes a subscription out of line: later ones move up.
func (q *waitQueue) cancel(id uint64) {
	q.cancelled[id] = true
	i, ok := q.pos[id]
	if !ok {
		return
	}
	delete(q.pos, id)
	q.live = append(q.live[:i], q.live[i+1:]...)
	for j := i; j < len(q.live); j++ {
		q.pos[q.live[j]] = j
	}
}

// hasOpenSlot reports whether an uncancelled subscription still waits for
// an arrival: an external event is only kept when one does.
func (q *waitQueue) hasOpenSlot() bool { return len(q.live) > len(q.arrivals) }

func (q *waitQueue) arrive(a arrival) { q.arrivals = append(q.arrivals, a) }

// delivered returns the arrival of subscription id, if it has one.
func (q *waitQueue) delivered(id uint64) (string, bool) {
	i, ok := q.pos[id]
	if !ok || i >= len(q.arrivals) {
		return "", false
	}
	return q.arrivals[i].data, true
}

// waiting lists the subscriptions that have no arrival.
func (q *waitQueue) waiting() []uint64 {
	if len(q.arrivals) >= len(q.live) {
		return nil
	}
	return q.live[len(q.arrivals):]
}

// unclaimed lists the arrivals no subscription takes.
func (q *waitQueue) unclaimed() []arrival {
	if len(q.live) >= len(q.arrivals) {
		return nil
	}
	return q.arrivals[len(q.live):]
}

// waitQueues are the waitQueues of one kind of wait, by name.
type waitQueues struct {
	byName map[string]*waitQueue
	name   map[uint64]string // subscription -> its name
	seq    *uint64           // shared arrival counter of the execution
}

func newWaitQueues(seq *uint64) waitQueues {
	return waitQueues{byName: map[string]*waitQueue{}, name: map[uint64]string{}, seq: seq}
}

func (w waitQueues) queue(name string) *waitQueue {
	q, ok := w.byName[name]
	if !ok {
		q = newWaitQueue()
		w.byName[name] = q
	}
	return q
}

func (w waitQueues) subscribe(id uint64, name string) {
	w.name[id] = name
	w.queue(name).subscribe(id)
}

func (w waitQueues) cancel(id uint64) {
	if name, ok := w.name[id]; ok {
		w.queue(name).cancel(id)
	}
}

// arrive keeps data for name; onlyIfWaited drops it when no subscription
// has an open slot (external events).
func (w waitQueues) arrive(name, data string, onlyIfWaited bool) bool {
	q := w.queue(name)
	if onlyIfWaited && !q.hasOpenSlot() {
		return false
	}
	*w.seq++
	q.arrive(arrival{seq: *w.seq, data: data})
	return true
}

func (w waitQueues) delivered(id uint64) (string, bool) {
	name, ok := w.name[id]
	if !ok {
		return "", false
	}
	return w.queue(name).delivered(id)
}

// waiting lists every subscription without an arrival, in subscription
// (event id) order.
func (w waitQueues) waiting() []uint64 {
	var out []uint64
	for _, q := range w.byName {
		out = append(out, q.waiting()...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// unclaimed lists, in arrival order, the arrivals of every name that no
// subscription takes, as [name, data] pairs.
func (w waitQueues) unclaimed() [][2]string {
	type named struct {
		name string
		arrival
	}
	var all []named
	for name, q := range w.byName {
		for _, a := range q.unclaimed() {
			all = append(all, named{name, a})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].seq < all[j].seq })
	out := make([][2]string, len(all))
	for i, a := range all {
		out[i] = [2]string{a.name, a.data}
	}
	return out
}

// waits is an execution's wait state: its external events and its
// persistent queues.
type waits struct {
	arrivalSeq uint64 // orders arrivals across names and kinds
	externals  waitQueues
	queues     waitQueues
}

func newWaits() *waits {
	w := &waits{}
	w.externals, w.queues = newWaitQueues(&w.arrivalSeq), newWaitQueues(&w.arrivalSeq)
	return w
}

// waitsOf replays only the wait rules over a history, for a turn that ends
// before its code ran.
func waitsOf(h []duroxide.Event) *waits {
	w := newWaits()
	for _, ev := range h {
		w.observe(ev)
	}
	return w
}

// observe applies one history event to the wait state and reports whether
// it kept an arrival, which may let waiting code go on.
func (w *waits) observe(ev duroxide.Event) bool {
	switch k := ev.Kind.(type) {
	case duroxide.ExternalSubscribedEvent:
		w.externals.subscribe(ev.EventID, k.Name)
	case duroxide.QueueSubscribedEvent:
		w.queues.subscribe(ev.EventID, k.Name)
	case duroxide.ExternalSubscribedCancelledEvent:
		if ev.SourceEventID != nil {
			w.externals.cancel(*ev.SourceEventID)
		}
	case duroxide.QueueSubscriptionCancelledEvent:
		if ev.SourceEventID != nil {
			w.queues.cancel(*ev.SourceEventID)
		}
	case duroxide.ExternalEventEvent:
		// An event nobody waits for stays in history for audit only.
		return w.externals.arrive(k.Name, k.Data, true)
	case duroxide.QueueEventDeliveredEvent:
		return w.queues.arrive(k.Name, k.Data, false)
	}
	return false
}
