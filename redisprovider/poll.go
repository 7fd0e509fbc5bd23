package redisprovider

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Long polling.
//
// Scripts that make work eligible set a one-member marker on the wake key of
// each class of fetcher that can take it (a capability filter, a tag queue,
// the claimable sessions of a queue, an owner's sessions). A fetch that finds
// nothing sleeps in the process-wide waiter of its set of wake keys. The
// waiter parks one connection in BZPOPMIN on those keys; each marker it pops
// wakes one sleeping fetcher, which runs its script again. A fetcher that
// takes work while more is eligible puts the marker back (in the script), so
// a burst is handed out one fetcher after another, across every process,
// without waking fetchers that would find nothing.
//
// An empty fetch also learns when to run again: when the next delayed item,
// timer or lock expiry is due, and after 10 s at the latest (U.REFRESH in
// lua/lib_util.lua). The waiter wakes one fetcher then. A due time that
// appears while fetchers sleep arms their markers when one of them would
// otherwise sleep past it (U.due).
//
// Waiters of different key sets can share a key (a claimable-session or
// plain queue both the fetchers of owner o1 and of owner o2 take from), so a
// marker one of them pops may be the only announcement for the other's
// fetchers. A popped marker is therefore owed to Redis until a script of the
// waiter's fetchers that started after the pop has answered it (that script
// saw the work and passed the marker on itself if more is eligible). When the
// last local fetcher leaves with such a marker unanswered (its script ran
// before the pop, then it left with work or at its timeout), the marker is put
// back, as one popped with no fetcher left is.
//
// A fetch call that finds its waiter idle and nothing changed since the last
// empty fetch (no wake-up, that fetch's rerun time not reached) does not run
// its script: an idle process costs one script and one BZPOPMIN per 10 s,
// whatever the number of fetchers.

const (
	// maxBlock caps one BZPOPMIN: Redis is asked again at least this often,
	// and a failover is noticed within it even without a connection error.
	maxBlock = 10 * time.Second
	// retryPause spaces the waiter's attempts while Redis fails.
	retryPause = 200 * time.Millisecond
	// rearmTimeout bounds putting back a popped wake-up marker.
	rearmTimeout = 5 * time.Second
)

// tryFunc runs a fetch script once. found reports taken work. due is how long
// until the caller's script must run again (something becomes eligible, or
// its registration needs refreshing); with work taken it is -1 unless the
// script saw that nothing more is eligible.
type tryFunc func(ctx context.Context) (found bool, due time.Duration, err error)

// poll runs try until it finds work, pollTimeout passes or ctx ends. With a
// zero pollTimeout it runs one round only. early, when not nil, is the first
// round, run even when the waiter knows nothing changed: it changes the
// state itself (the ack of an ack-and-fetch). It runs before the fetcher
// joins its waiter, so a call that finds work (the usual case) never makes
// the waiter pop a marker it must then put back.
func (p *Provider) poll(ctx context.Context, keys []string, pollTimeout time.Duration, early, try tryFunc) error {
	if pollTimeout <= 0 {
		if early != nil {
			try = early
		}
		_, _, err := try(ctx)
		return err
	}
	deadline := time.NewTimer(pollTimeout)
	defer deadline.Stop()
	var first *round
	if early != nil {
		r, err := p.earlyRound(ctx, keys, early)
		if r == nil {
			return err
		}
		first = r
	}
	w := p.waits.join(keys)
	woken := false // holding a wake-up this fetcher has not used yet
	defer func() { p.waits.leave(w, woken) }()
	// a waiter that replaced the one the early round began with never saw
	// its answer: its first round runs the script
	mustRun := false
	if first != nil {
		if first.w == w {
			w.record(first.epoch, first.due)
		} else {
			mustRun = true
		}
	}
	for {
		epoch, fresh := w.begin()
		fresh, mustRun = fresh && !mustRun, false
		if fresh {
			woken = false // another fetcher's script already answered it
		} else {
			if err := ctx.Err(); err != nil {
				return err
			}
			found, due, err := try(ctx)
			woken = false
			if err != nil {
				return err // the script may not have run: what is owed stays owed
			}
			w.record(epoch, due)
			if found {
				return nil
			}
		}
		done, err := w.sleep(ctx, deadline.C)
		if done {
			return err
		}
		woken = true
	}
}

// round is an empty round run before its fetcher joined the waiter w: the
// epoch it began in and its rerun time.
type round struct {
	w     *waiter
	epoch uint64
	due   time.Duration
}

// earlyRound runs early against the waiter of keys without joining it. It
// returns nil when the fetch is over (work found, or err).
func (p *Provider) earlyRound(ctx context.Context, keys []string, early tryFunc) (*round, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := p.waits.peek(keys)
	epoch, _ := w.begin()
	found, due, err := early(ctx)
	if err != nil || found {
		return nil, err
	}
	return &round{w: w, epoch: epoch, due: due}, nil
}

// waitRegistry holds the process's waiters, one per set of wake keys.
type waitRegistry struct {
	p  *Provider
	mu sync.Mutex
	m  map[string]*waiter
}

func newWaitRegistry(p *Provider) *waitRegistry {
	return &waitRegistry{p: p, m: make(map[string]*waiter)}
}

// join registers a fetcher with the waiter of keys, starting it if needed.
func (r *waitRegistry) join(keys []string) *waiter {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, w := r.entry(keys)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fetchers++
	if !w.running {
		w.running = true
		go w.run(r, id)
	}
	return w
}

// peek returns the waiter of keys without registering a fetcher, creating
// it (idle: it blocks only once a fetcher joins) if needed, so a round run
// before joining can tell whether a wake-up came meanwhile (its epoch).
func (r *waitRegistry) peek(keys []string) *waiter {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, w := r.entry(keys)
	return w
}

// entry returns the waiter of keys and its id, creating it if needed. The
// caller holds r.mu.
func (r *waitRegistry) entry(keys []string) (string, *waiter) {
	id := strings.Join(keys, "\x00")
	w := r.m[id]
	if w == nil {
		w = &waiter{p: r.p, keys: keys}
		r.m[id] = w
	}
	return id, w
}

// leave unregisters a fetcher. One that was woken and leaves before running
// its script passes the wake-up on, so the work it announced is not missed;
// the last one to leave puts back the markers no script has answered.
func (r *waitRegistry) leave(w *waiter, woken bool) {
	w.mu.Lock()
	w.fetchers--
	if woken {
		w.wakeOne()
	}
	var owed []string
	if w.fetchers == 0 {
		owed = w.takeOwed()
	}
	w.mu.Unlock()
	// no I/O under w.mu: the waiter and joining fetchers take it
	for _, key := range owed {
		w.rearm(key)
	}
}

// waiter blocks in BZPOPMIN on one set of wake keys for the local fetchers.
type waiter struct {
	p    *Provider
	keys []string

	mu       sync.Mutex
	fetchers int
	running  bool
	epoch    uint64          // counts wake-ups: an empty fetch older than one proves nothing
	sleepers []chan struct{} // fetchers waiting for a wake-up, oldest first
	pending  bool            // a wake-up found no sleeper: the next one runs at once
	due      time.Time       // when the last empty fetch must run again; zero: no empty fetch since the last wake-up
	dueTimer *time.Timer
	// owed maps each popped wake key no script has answered yet to the epoch
	// its wake-up started; a script begun in that epoch or later answers it.
	owed map[string]uint64
}

// record notes a round of a fetcher's script begun in epoch: it answered
// the wake-ups popped before, and with due >= 0 (nothing more eligible) the
// next fetch may wait at once.
func (w *waiter) record(epoch uint64, due time.Duration) {
	w.answered(epoch)
	if due >= 0 {
		w.idle(epoch, due)
	}
}

// answered records that a script begun in epoch has run: it saw every wake-up
// popped before it began.
func (w *waiter) answered(epoch uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for key, at := range w.owed {
		if at <= epoch {
			delete(w.owed, key)
		}
	}
}

// takeOwed returns the popped keys no script has answered and forgets them.
// The caller holds w.mu.
func (w *waiter) takeOwed() []string {
	keys := make([]string, 0, len(w.owed))
	for key := range w.owed {
		keys = append(keys, key)
	}
	clear(w.owed)
	return keys
}

// begin starts a round of a fetcher: the epoch its script result will belong
// to, and whether the state is known unchanged so the script can be skipped.
func (w *waiter) begin() (uint64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.epoch, !w.pending && !w.due.IsZero() && time.Now().Before(w.due)
}

// idle records an empty fetch of epoch that must run again after due.
func (w *waiter) idle(epoch uint64, due time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if epoch != w.epoch {
		return // a wake-up came meanwhile: the result is already stale
	}
	at := time.Now().Add(due)
	if !w.due.IsZero() && !at.Before(w.due) {
		return
	}
	w.due = at
	if w.dueTimer == nil {
		w.dueTimer = time.AfterFunc(due, w.onDue)
	} else {
		w.dueTimer.Reset(due)
	}
}

// onDue wakes one fetcher when its rerun time comes: its script applies what
// is due and passes the marker on if more is eligible.
func (w *waiter) onDue() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wakeOne()
}

// sleep waits for a wake-up, the deadline, ctx or Close. done reports that
// the fetch must return (with err).
func (w *waiter) sleep(ctx context.Context, deadline <-chan time.Time) (done bool, err error) {
	w.mu.Lock()
	if w.pending {
		w.pending = false
		w.mu.Unlock()
		return false, nil
	}
	ch := make(chan struct{})
	w.sleepers = append(w.sleepers, ch)
	w.mu.Unlock()
	select {
	case <-ch:
		return false, nil
	case <-deadline:
		done = true
	case <-ctx.Done():
		done, err = true, ctx.Err()
	case <-w.p.closed:
		done = true
	}
	w.forget(ch)
	return done, err
}

// forget removes a sleeper that leaves. If a wake-up was handed to it in the
// meantime, the wake-up goes to another fetcher instead of being lost.
func (w *waiter) forget(ch chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, c := range w.sleepers {
		if c == ch {
			w.sleepers = append(w.sleepers[:i], w.sleepers[i+1:]...)
			return
		}
	}
	w.wakeOne()
}

// wakeOne wakes the longest-sleeping fetcher, or lets the next one run at
// once. The caller holds w.mu.
func (w *waiter) wakeOne() {
	w.forgetIdle()
	if len(w.sleepers) == 0 {
		w.pending = true
		return
	}
	close(w.sleepers[0])
	w.sleepers = w.sleepers[1:]
}

// wakeAll wakes every sleeping fetcher (the connection failed: each will see
// why). The caller holds w.mu.
func (w *waiter) wakeAll() {
	w.forgetIdle()
	for _, ch := range w.sleepers {
		close(ch)
	}
	w.sleepers = nil
}

// forgetIdle drops what the last empty fetch vouched for: something
// happened. The caller holds w.mu.
func (w *waiter) forgetIdle() {
	w.epoch++
	w.due = time.Time{}
	if w.dueTimer != nil {
		w.dueTimer.Stop()
	}
}

// run is the waiter's loop: it blocks while fetchers wait and stops when none
// is left or the provider closes.
func (w *waiter) run(r *waitRegistry, id string) {
	for {
		r.mu.Lock()
		w.mu.Lock()
		if w.fetchers == 0 {
			w.running, w.pending = false, false
			w.forgetIdle()
			clear(w.owed)
			delete(r.m, id)
			w.mu.Unlock()
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		w.mu.Unlock()
		if !w.block() {
			return
		}
	}
}

// block waits once in BZPOPMIN; it returns false when the provider is closed.
func (w *waiter) block() bool {
	args := make([]any, 0, len(w.keys)+2)
	args = append(args, "BZPOPMIN")
	for _, k := range w.keys {
		args = append(args, k)
	}
	args = append(args, strconv.FormatFloat(maxBlock.Seconds(), 'f', 3, 64))
	res, err := w.p.blocking.Do(context.Background(), args...).Result()
	if w.p.isClosed() {
		return false
	}
	key := poppedKey(res)
	w.mu.Lock()
	rearm, pause := false, false
	switch {
	case err == nil:
		if w.fetchers == 0 {
			rearm = true
		} else {
			w.wakeOne()
			w.owe(key)
		}
	case !errors.Is(err, redis.Nil):
		// a killed connection, failover or restart: the fetchers find out
		// with their next script; the pause keeps a dead server from being
		// hammered
		w.wakeAll()
		pause = true
	}
	w.mu.Unlock()
	// no I/O under w.mu: joining fetchers take it
	if rearm {
		w.rearm(key)
	}
	if pause {
		time.Sleep(retryPause)
	}
	return true
}

// owe records that the wake-up just handed out came from a marker popped
// from key and is owed until a script answers it. The caller holds w.mu.
func (w *waiter) owe(key string) {
	if key == "" {
		return
	}
	if w.owed == nil {
		w.owed = make(map[string]uint64)
	}
	w.owed[key] = w.epoch
}

// isClosed reports whether Close was called.
func (p *Provider) isClosed() bool {
	select {
	case <-p.closed:
		return true
	default:
		return false
	}
}

// poppedKey returns the key of a BZPOPMIN reply, or "" for none.
func poppedKey(res any) string {
	const popKey = 0 // BZPOPMIN replies key, member, score
	v, ok := res.([]any)
	if !ok || len(v) <= popKey {
		return ""
	}
	key, _ := v[popKey].(string)
	return key
}

// rearm puts back a popped marker nobody here will answer (the last local
// fetcher left), so a fetcher elsewhere still gets it. Best effort: a failure
// only delays that fetcher until its next scheduled run.
func (w *waiter) rearm(key string) {
	if key == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), rearmTimeout)
	defer cancel()
	var a args
	if _, err := w.p.run(ctx, "rearm_wake", scriptRearmWake, *a.str(key)); err != nil && !w.p.isClosed() {
		// after Close the clients may be gone: the attempt was all that was owed
		w.p.log.Warn("duroxide-redis: could not put back a wake-up marker", "key", key, "err", err)
	}
}
