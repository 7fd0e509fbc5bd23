package redisprovider

import "context"

// WaitParked returns once at least n fetch calls of p wait in long polls
// with nothing found for them: the pollers of their classes found nothing
// since their last wake-up and are blocked on, so only a wake-up (new work,
// a due time) or their poll timeouts return them. A test starts work after
// its fetches block with it, rather than sleeping and hoping they did
// (providertest's long-poll suite does when the provider has it). ctx ends
// the wait with its error.
func (p *partition) WaitParked(ctx context.Context, n int) error { return p.set.waitParked(ctx, n) }

// WaitParked is Provider.WaitParked over every partition: a fetch that
// waits on every partition is parked once each partition's poller is.
func (pp *Provider) WaitParked(ctx context.Context, n int) error {
	return pp.set.waitParked(ctx, n)
}

// waitParked waits, ringing by ringing of the bell, until parked reaches n.
func (s *pollSet) waitParked(ctx context.Context, n int) error {
	for {
		changed := s.bell.wait()
		if s.parked() >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// parked counts the callers waiting in a class whose pollers all sleep.
func (s *pollSet) parked() int {
	n := 0
	for _, d := range s.demands() {
		if d.asleep() {
			n += d.waitingCount()
		}
	}
	return n
}

// demands returns the demands of the set's fetch classes.
func (s *pollSet) demands() []*demand {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*demand, 0, len(s.classes))
	for _, d := range s.classes {
		out = append(out, d)
	}
	return out
}

// asleep reports whether every poller of d sleeps.
func (d *demand) asleep() bool {
	for _, pl := range d.pollers {
		if !pl.asleep() {
			return false
		}
	}
	return true
}

// waitingCount counts the callers waiting in d's line.
func (d *demand) waitingCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, r := range d.waiting {
		if r.state.Load() == reqWaiting {
			n++
		}
	}
	return n
}

// asleep reports whether pl is clean, holds no request and is blocked on:
// only a popped marker or a due time makes it run.
func (pl *poller) asleep() bool {
	h := pl.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if pl.dirty || pl.busy.Load() {
		return false
	}
	for _, k := range pl.spec.keys {
		if !h.watching[k] {
			return false
		}
	}
	return true
}
