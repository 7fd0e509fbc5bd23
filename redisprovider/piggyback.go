package redisprovider

import (
	"github.com/google/uuid"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Piggybacked fetches.
//
// A turn's ack schedules activities, and an activity's ack makes its
// instance ready: in a sequence, each half-step's item is for a caller of
// the same process parked in a long poll. Announced by a marker, it would
// reach that caller through the blocker's BZPOPMIN and a fetch script of
// its own. Instead the ack-and-fetch script takes it for the caller
// (lua/ack_fetch_orchestration_item.lua, lua/ack_fetch_work_item.lua): the
// ack reserves the oldest request waiting for a clean poller of the other
// queue in its partition, and its script runs that poller's fetch after its
// own, with KEEP semantics (the markers the ack set stay when more is
// eligible, for other fetchers). A step of a sequence costs two scripts and
// no blocked call.

// piggyback is a fetch for a parked caller sent inside an ack's script.
type piggyback struct {
	pl    *poller
	r     *request
	epoch uint64
	token string
}

// reserve takes the oldest request waiting for a clean poller of queue q in
// this partition, for an ack's script to fetch for; nil when none waits. A
// dirty poller runs its own script for its callers.
func (h *hub) reserve(q byte) *piggyback {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, pl := range h.pollers {
		if pl.spec.queue != q || pl.dirty || pl.busy.Load() {
			continue
		}
		if r := pl.d.reserve(pl.part); r != nil {
			return &piggyback{pl: pl, r: r, epoch: pl.epoch, token: uuid.NewString()}
		}
	}
	return nil
}

// reserveFor reserves a parked caller of queue q when the ack brings it
// work (more: the ack enqueues items for q).
func (p *partition) reserveFor(q byte, more bool) *piggyback {
	if !more {
		return nil
	}
	return p.hub.reserve(q)
}

// reserve takes the oldest request partition part may serve, marked taken.
func (d *demand) reserve(part int) *request {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, r := range d.waiting {
		if (r.part < 0 || r.part == part) && !r.ended() && r.state.CompareAndSwap(reqWaiting, reqTaken) {
			d.waiting = append(d.waiting[:i], d.waiting[i+1:]...)
			d.bell.ring()
			return r
		}
	}
	return nil
}

// args appends the piggybacked fetch to a script's arguments.
func (g *piggyback) args(a args) args {
	if g == nil {
		return a
	}
	a = append(a, string(g.pl.spec.queue), g.token)
	return append(a, g.pl.spec.args...)
}

// split hands the piggybacked fetch's part of a reply to its caller and
// returns the script's own part.
func (g *piggyback) split(op string, res any) any {
	if g == nil {
		return res
	}
	parts, ok := res.([]any)
	if !ok || len(parts) != 2 {
		g.finish(nil, duroxide.Permanent(op, "reply without the piggybacked fetch's part"))
		return res
	}
	if parts[1] == nil {
		g.skipped()
	} else {
		g.finish(parts[1], nil)
	}
	return parts[0]
}

// skipped puts back the reserved caller's request when the script did not
// run its fetch (the ack made nothing of its queue eligible): the poller's
// clean state still holds.
func (g *piggyback) skipped() {
	g.pl.d.putBack(g.r)
}

// finish answers the reserved caller: with the item fetched for it, or
// (nothing, or the script failed) by putting its request back in line.
func (g *piggyback) finish(res any, err error) {
	if g == nil {
		return
	}
	pl := g.pl
	if err != nil {
		// the fetch may have run if the reply was lost: its lock goes back
		pl.h.p.lostReply(pl.spec.op, pl.spec.abandon, g.token, err)
		pl.d.putBack(g.r)
		return
	}
	item, due, err := pl.spec.decode(newReply(pl.spec.op, res))
	pl.end(g.epoch, item != nil, due, err)
	if item == nil && err == nil {
		pl.d.putBack(g.r)
		return
	}
	if !g.r.answer(pollResult{item: item, part: pl.part, err: err}) && item != nil {
		pl.spec.giveBack(item) // its caller left
	}
}
