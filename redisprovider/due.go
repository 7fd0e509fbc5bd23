package redisprovider

import (
	"context"
	"time"
)

// The due loop: due work apart from fetch.
//
// Timers, delayed items and messages, expiring locks and sessions become
// eligible at a time, not by a write. Each partition's hub runs one loop,
// from its first poller to Close, that runs lua/move_due.lua when the
// earliest of them comes: the script applies what is due (which sets the
// wake-up markers of the fetchers that can take it) and says when to run
// next, U.REFRESH later at the latest. A script that schedules something
// earlier than that sets the loops' marker (K.duewake), which the hub's
// blocker pops like any other, so the loop learns the new time at once.
// Every process runs a loop per partition, and one of them claims each due
// time: the others run at their refresh, so a due time costs one run
// however many processes there are (see U.due and U.plan in
// lua/lib_util.lua). A loop that closes gives its claim up, which wakes
// another. Fetches never wait for due times and keep no claims: an idle
// runtime costs one script per partition per refresh, whatever its slot
// count.

// kickDue makes the due loop run now: its marker was popped.
func (h *hub) kickDue() {
	select {
	case h.duekick <- struct{}{}:
	default:
	}
}

// dueLoop runs move_due at once, then whenever its last run said or its
// marker is popped, until Close.
func (h *hub) dueLoop() {
	defer h.running.Done()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-h.p.closed:
			return
		case <-h.duekick:
			if !t.Stop() {
				select {
				case <-t.C:
				default:
				}
			}
		case <-t.C:
		}
		t.Reset(h.moveDue())
		h.ring() // its plan is state the pollSet's waiters may watch
	}
}

// moveDue runs lua/move_due.lua once and returns how long until it runs
// again.
func (h *hub) moveDue() time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), rearmTimeout)
	defer cancel()
	var a args
	res, err := h.p.run(ctx, "move_due", scriptMoveDue, *a.str(h.id).flag(false))
	if err == nil {
		r := newReply("move_due", res)
		now, next := r.int(0), r.int(1)
		if err = r.err; err == nil {
			return max(time.Duration(next-now)*time.Millisecond, 0)
		}
	}
	if !h.p.isClosed() {
		h.warnDue(err)
	}
	return retryPause
}

// warnDue logs, at most every poolWarnEvery, that the due loop failed: due
// work then waits for a fetch that applies it itself.
func (h *hub) warnDue(err error) {
	if h.mayWarn(&h.dueWarned) {
		h.p.log.Warn("duroxide-redis: the due loop could not move due work to ready; it retries", "err", err)
	}
}

// leaveDue gives up the due time the loop claimed, so another process's
// loop runs at it (Close). Best effort: without it that time waits for the
// others' refresh.
func (h *hub) leaveDue() {
	ctx, cancel := context.WithTimeout(context.Background(), rearmTimeout)
	defer cancel()
	var a args
	if _, err := h.p.run(ctx, "move_due", scriptMoveDue, *a.str(h.id).flag(true)); err != nil {
		h.p.log.Warn("duroxide-redis: could not give up the due loop's claim", "err", err)
	}
}
