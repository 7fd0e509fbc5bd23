package redisprovider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Callers and pollers (see poller.go).
//
// A fetch waits as a request in its class's demand, shared by the class's
// pollers in every partition of the Provider. The oldest request goes to the dirty poller that has
// waited longest for one, before it runs its script: a partition runs a
// script only for a caller that waits, one caller is served by one
// partition, and partitions with work take turns. Work goes to the request;
// nothing puts it back in line, for the next dirty poller.
// A caller leaves at its timeout, its context's end or Close; one whose
// request a poller took first waits for that script's answer, and gives
// work taken as its context ended back to Redis without counting an
// attempt, so nothing it asked for stays locked behind it.

// pollSet is the demands of a provider's fetch classes over its partitions.
type pollSet struct {
	parts []*partition
	// bell rings at every change of its pollers' and callers' state
	bell bell

	mu      sync.Mutex
	classes map[string]*demand
}

// newPollSet makes parts (a namespace's partitions, in order) share one
// set of demands.
func newPollSet(parts []*partition) *pollSet {
	s := &pollSet{parts: parts, classes: make(map[string]*demand)}
	for k, p := range parts {
		p.set, p.part = s, k
	}
	return s
}

// classID names a fetch class: its operation and its script's arguments
// (the lock token aside), the same in every partition.
func classID(op string, a args) string {
	var b strings.Builder
	b.WriteString(op)
	for _, v := range a {
		b.WriteByte(0)
		fmt.Fprint(&b, v)
	}
	return b.String()
}

// class returns the demand of class id, creating its pollers with spec,
// which builds a partition's side of the class.
func (s *pollSet) class(id string, spec func(p *partition) fetchSpec) *demand {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.classes[id]; d != nil {
		return d
	}
	d := &demand{bell: &s.bell}
	for k, p := range s.parts {
		d.pollers = append(d.pollers, p.hub.add(d, k, spec(p)))
	}
	s.classes[id] = d
	return d
}

// pollResult is what a poller hands a request.
type pollResult struct {
	item any
	part int
	err  error
}

// request is a caller waiting for work.
type request struct {
	part int // the partition it takes from; -1: any
	// done is closed when its caller's context ends: no script is run for
	// a caller that is leaving anyway
	done  <-chan struct{}
	state atomic.Int32
	out   chan pollResult // buffered: a delivery never blocks
}

// Request states: waiting in line, taken by a poller whose script runs for
// it, taken and left by its caller (who waits for the script's answer, so
// that work it took is returned or given back before the caller returns),
// answered, or left before a poller took it.
const (
	reqWaiting int32 = iota
	reqTaken
	reqLeaving
	reqDone
	reqGone
)

// ended reports whether the caller's context has ended.
func (r *request) ended() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// leave withdraws the request: true when no poller had taken it; false
// when the caller must read its answer from out (answered already, or a
// script runs for it, whose answer comes next).
func (r *request) leave() bool {
	for {
		switch st := r.state.Load(); st {
		case reqWaiting:
			if r.state.CompareAndSwap(st, reqGone) {
				return true
			}
		case reqTaken:
			if r.state.CompareAndSwap(st, reqLeaving) {
				return false
			}
		default:
			return false
		}
	}
}

// answer hands res to a taken request's caller; false when its caller left
// (before it was taken, or while its script ran past the caller's grace):
// the answerer then gives back an item.
func (r *request) answer(res pollResult) bool {
	if r.state.CompareAndSwap(reqTaken, reqDone) || r.state.CompareAndSwap(reqLeaving, reqDone) {
		r.out <- res
		return true
	}
	return false
}

// demand is the callers waiting for one fetch class and its pollers. Lock
// order: a hub's mutex before a demand's.
type demand struct {
	pollers []*poller // by partition
	bell    *bell     // its pollSet's
	// waited says a caller has waited for the class: from then on its
	// clean pollers are blocked on
	waited atomic.Bool

	mu      sync.Mutex
	waiting []*request // oldest first
	wanting []*poller  // dirty pollers without a request, longest waiting first
}

// match hands the oldest waiting requests to the pollers that have waited
// longest for one (of their partition), each marked taken. The caller holds
// d.mu.
func (d *demand) match() {
	kept := d.waiting[:0]
	for _, r := range d.waiting {
		if r.state.Load() != reqWaiting {
			continue // left: dropped
		}
		i := slices.IndexFunc(d.wanting, func(pl *poller) bool { return r.part < 0 || r.part == pl.part })
		if i < 0 || !r.state.CompareAndSwap(reqWaiting, reqTaken) {
			kept = append(kept, r)
			continue
		}
		pl := d.wanting[i]
		d.wanting = slices.Delete(d.wanting, i, i+1)
		pl.busy.Store(true)
		pl.inbox <- r // never blocks: a poller holds one request at most
	}
	clear(d.waiting[len(kept):])
	d.waiting = kept
	d.bell.ring()
}

// push queues r, for the poller that has waited longest.
func (d *demand) push(r *request) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.waiting = append(d.waiting, r)
	d.match()
}

// want queues a dirty poller for the next request, behind the others; it
// reports whether the poller holds a request now.
func (d *demand) want(pl *poller) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !pl.busy.Load() && !slices.Contains(d.wanting, pl) {
		d.wanting = append(d.wanting, pl)
	}
	d.match()
	return pl.busy.Load()
}

// unwant takes a poller that became clean out of line.
func (d *demand) unwant(pl *poller) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if i := slices.Index(d.wanting, pl); i >= 0 {
		d.wanting = slices.Delete(d.wanting, i, i+1)
	}
	d.bell.ring()
}

// putBack returns a request whose run found nothing (or that a clean
// poller got) to the head of the line, for another dirty poller; a caller
// that is leaving gets its empty answer instead.
func (d *demand) putBack(r *request) {
	if !r.state.CompareAndSwap(reqTaken, reqWaiting) {
		r.answer(pollResult{})
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.waiting = slices.Insert(d.waiting, 0, r)
	d.match()
}

// hasWaiting reports whether a caller waits that partition part may serve.
func (d *demand) hasWaiting(part int) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range d.waiting {
		if r.state.Load() == reqWaiting && (r.part < 0 || r.part == part) {
			return true
		}
	}
	return false
}

// wait queues a request of d and waits for its answer until pollTimeout
// passes, ctx ends or the provider closes: the item and its partition, or
// (nil, 0, nil) for none in time. part restricts it to one partition (-1:
// any). A caller whose request a poller took waits for its script's answer
// (a round trip; detachGrace at most) before it leaves, and gives back an
// item answered as ctx ended.
func (s *pollSet) wait(ctx context.Context, d *demand, part int, pollTimeout time.Duration) (any, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	if !d.waited.Swap(true) {
		// what rounds without a wait learned was learned unwatched: a
		// marker set since may have expired
		for _, pl := range d.pollers {
			pl.h.wake(pl)
		}
	}
	r := &request{part: part, done: ctx.Done(), out: make(chan pollResult, 1)}
	d.push(r)
	t := time.NewTimer(pollTimeout)
	defer t.Stop()
	select {
	case res := <-r.out:
		return s.result(ctx, d, res)
	case <-t.C:
	case <-ctx.Done():
	case <-s.parts[0].closed:
	}
	left := r.leave()
	d.bell.ring()
	if left {
		return nil, 0, ctx.Err()
	}
	// a script runs for it: its answer, for as long as a script the caller
	// ran itself would be waited for past the caller's deadline
	grace := time.NewTimer(detachGrace)
	defer grace.Stop()
	select {
	case res := <-r.out:
		return s.result(ctx, d, res)
	case <-grace.C:
	}
	if r.state.CompareAndSwap(reqLeaving, reqGone) {
		return nil, 0, ctx.Err() // its poller gives back what it takes
	}
	return s.result(ctx, d, <-r.out)
}

// result returns a request's answer, giving its item back when ctx ended:
// the caller gets the work or its context's error, and then nothing of it
// stays locked.
func (s *pollSet) result(ctx context.Context, d *demand, res pollResult) (any, int, error) {
	if err := ctx.Err(); err != nil {
		if res.item != nil {
			d.pollers[res.part].spec.giveBack(res.item)
		}
		return nil, 0, err
	}
	return res.item, res.part, res.err
}

// bell tells whoever waits for a state of the pollers (tests, through
// wait) that it may have changed. Nothing is allocated while nobody waits.
type bell struct {
	mu sync.Mutex
	ch chan struct{}
}

// ring wakes the waiters.
func (b *bell) ring() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch != nil {
		close(b.ch)
		b.ch = nil
	}
}

// wait returns a channel closed at the next ring: take it, check the
// state, then wait on it, and no change is missed.
func (b *bell) wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch == nil {
		b.ch = make(chan struct{})
	}
	return b.ch
}
