package redisprovider

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// Long polling.
//
// Scripts that make work eligible set a one-member marker on the wake key of
// each class of fetcher that can take it (a capability filter, a tag queue,
// the claimable sessions of a queue, an owner's sessions). A fetch that finds
// nothing sleeps in the process-wide waiter of its set of wake keys; each
// marker popped for the waiter wakes one sleeping fetcher, which runs its
// script again. A fetcher that takes work while more is eligible puts the
// marker back (in the script), so a burst is handed out one fetcher after
// another, across every process, without waking fetchers that would find
// nothing.
//
// The waiters park connections in BZPOPMIN through blockers: one per set of
// wake keys that no owner has to itself (a session owner's, a sticky
// route's owner's). The fetchers of different owners (a runtime without
// WorkerNodeID makes every worker slot its own session owner) differ only
// in their owner's key, so their waiters share one
// blocker, which blocks on the shared keys and every owner's key at once and
// hands a popped marker to a waiter that listens on its key. A process parks
// one connection per kind of fetcher, whatever its number of slots. A
// fetcher that joins with a key the blocker's call in flight does not cover
// sets the blocker's control key (Keys.WaiterControl), so the call returns
// and blocks again on the new set; a waiter whose fetchers all left lingers
// in the call for a while, as its fetcher is usually back soon.
//
// An empty fetch also learns when to run again: when the next delayed item,
// timer or lock expiry is due, and after 10 s at the latest (U.REFRESH in
// lua/lib_util.lua). Only one fetch per due time is needed, by anyone: it
// applies what is due, which sets the markers of the fetchers that can take
// it. So the first empty fetch that learns of a due time claims it (U.claim)
// and its waiter wakes one fetcher then; every other one sleeps until its
// refresh. A due time that appears while fetchers sleep arms their markers
// when no claimed one comes first and one of them would otherwise sleep past
// it (U.due). A claim whose waiter has no fetcher left when its time comes
// goes to another waiter of the queue in this process, or back to Redis
// (lua/release_due.lua), which wakes the queue's standby. A claim made by a
// fetch with no poll timeout goes to a waiter of the queue at once, or
// back; so do the claims of a waiter dropped, and Close gives back what is
// pending.
//
// Waiters of different key sets can share a key (a claimable-session or
// plain queue both the fetchers of owner o1 and of owner o2 take from), so a
// marker handed to one of them may be the only announcement for the other's
// fetchers. A popped marker is therefore owed to Redis until a script of the
// waiter's fetchers that started after the pop has answered it (that script
// saw the work and passed the marker on itself if more is eligible). A
// marker popped for a waiter whose fetchers all left, or unanswered when the
// last one leaves (its script ran before the pop, then it left with work or at
// its timeout), is held for holdMarker: a fetcher back within it runs its
// script at once and answers it (a Partitioned fetch joins every partition's
// waiter for a moment and is usually back soon); else it is put back and the
// waiter dropped, so its blocker does not pop it again.
//
// A fetch call that finds its waiter idle and nothing changed since the last
// empty fetch (no wake-up, that fetch's rerun time not reached) does not run
// its script: an idle process costs one script per waiter and one BZPOPMIN
// per blocker per 10 s, whatever the number of fetchers.

const (
	// maxBlock caps one BZPOPMIN: Redis is asked again at least this often,
	// and a failover is noticed within it even without a connection error.
	maxBlock = 10 * time.Second
	// refresh is U.REFRESH: an empty fetch runs again after it at the
	// latest, and a rerun time below it is a due time its script claimed.
	refresh = 10 * time.Second
	// retryPause spaces the blocker's attempts while Redis fails.
	retryPause = 200 * time.Millisecond
	// rearmTimeout bounds putting back a popped wake-up marker, and the
	// other calls a waiter makes on its own.
	rearmTimeout = 5 * time.Second
	// linger is how long a waiter whose fetchers all left stays in its
	// blocker's calls: a slot back from its work within it finds its key
	// still blocked on, and costs no extra call.
	linger = maxBlock
	// holdMarker is how long a waiter whose fetchers left at most that long
	// ago keeps a marker popped for it before putting it back: its fetchers
	// are usually back within it (a Partitioned fetch joins every
	// partition's waiter for a moment, then leaves), and one back in time
	// takes the work the marker announced without the marker going back and
	// forth. A waiter idle for longer puts it back at once, for a fetcher of
	// another process.
	holdMarker = 50 * time.Millisecond
	// closeTimeout bounds giving back claims in Close.
	closeTimeout = time.Second
	// poolWarnEvery spaces the warnings of blockers that got no connection.
	poolWarnEvery = 10 * time.Second
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
		_, due, err := try(ctx)
		if err == nil {
			p.waits.adopt(p.waits.queueOf(keys), due)
		}
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
			w.claim(first.due)
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
			w.starting()
			found, due, err := try(ctx)
			if errors.Is(err, errRaceLost) {
				// another partition's fetch of the same call took work, so
				// this script never ran and answered nothing: a wake-up
				// this fetcher holds goes to another one as it leaves,
				// or the work it announced waits for the next refresh
				return err
			}
			woken = false
			if err != nil {
				return err // the script may not have run: what is owed stays owed
			}
			w.record(epoch, due)
			if found {
				return nil
			}
		}
		passTurn(ctx) // a racer asleep lets the next one run its script
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
	w.starting()
	found, due, err := early(ctx)
	if err != nil {
		return nil, err
	}
	if found {
		w.claim(due) // its fetcher is usually back before the claimed time
		return nil, nil
	}
	return &round{w: w, epoch: epoch, due: due}, nil
}

// waitRegistry holds the process's waiters, one per set of wake keys, and
// the blockers they share.
type waitRegistry struct {
	p  *Provider
	mu sync.Mutex
	m  map[string]*waiter
	// blockers by group: the wake keys of a waiter that are not one
	// session owner's
	blockers map[string]*blocker

	// hold is holdMarker (tests change it)
	hold time.Duration
	// onHold, when set (by tests), is called as a waiter starts holding a
	// marker, under the waiter's lock: a signal to wait on, not a poll
	onHold func()

	warnMu sync.Mutex
	warned time.Time // last warning of a blocker without connection

	// running counts the blockers' goroutines, which Close waits for
	// before it closes the blocking client: a connection closed under a
	// call in flight makes go-redis print to stderr when the call returns
	running sync.WaitGroup
}

func newWaitRegistry(p *Provider) *waitRegistry {
	return &waitRegistry{p: p, m: make(map[string]*waiter), blockers: make(map[string]*blocker), hold: holdMarker}
}

// Queues of due-time claims, as lua/lib_util.lua names them (U.queue_of).
const (
	queueOrch byte = 'o'
	queueWork byte = 'w'
)

// queueOf names the queue the fetchers of keys take from.
func (r *waitRegistry) queueOf(keys []string) byte {
	if len(keys) > 0 && r.p.keys.Family(keys[0]) == "ow" {
		return queueOrch
	}
	return queueWork
}

// join registers a fetcher with the waiter of keys, starting its blocker
// if needed, or making it block again when its call does not cover keys.
func (r *waitRegistry) join(keys []string) *waiter {
	r.mu.Lock()
	w := r.entry(keys)
	w.mu.Lock()
	w.fetchers++
	w.mu.Unlock()
	b := w.b
	start, interrupt := b.admit(w)
	r.mu.Unlock()
	if start {
		r.running.Add(1)
		go func() {
			defer r.running.Done()
			b.run()
		}()
	}
	if interrupt {
		go b.interrupt()
	}
	return w
}

// peek returns the waiter of keys without registering a fetcher, creating
// it (idle: it blocks only once a fetcher joins) if needed, so a round run
// before joining can tell whether a wake-up came meanwhile (its epoch).
func (r *waitRegistry) peek(keys []string) *waiter {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.entry(keys)
}

// entry returns the waiter of keys, creating it, attached to the blocker
// of its group, if needed. The caller holds r.mu.
func (r *waitRegistry) entry(keys []string) *waiter {
	id := strings.Join(keys, "\x00")
	w := r.m[id]
	if w != nil {
		return w
	}
	w = &waiter{r: r, id: id, keys: keys, queue: r.queueOf(keys), keySet: make(map[string]bool, len(keys)), idleSince: time.Now()}
	for _, k := range keys {
		w.keySet[k] = true
	}
	r.m[id] = w
	var shared []string
	for _, k := range keys {
		// an owner's sessions, a sticky owner's instances: its fetchers only
		if f := r.p.keys.Family(k); f != "wo" && f != "osw" {
			shared = append(shared, k)
		}
	}
	gid := strings.Join(shared, "\x00")
	b := r.blockers[gid]
	if b == nil {
		b = &blocker{r: r, id: gid, ctl: r.p.keys.WaiterControl(uuid.NewString())}
		r.blockers[gid] = b
	}
	w.b = b
	b.waiters = append(b.waiters, w)
	return w
}

// leave unregisters a fetcher. One that was woken and leaves before running
// its script passes the wake-up on, so the work it announced is not missed;
// when the last one leaves, the markers no script has answered are held
// for a fetcher that comes back, then put back (holdOwed).
func (r *waitRegistry) leave(w *waiter, woken bool) {
	w.mu.Lock()
	w.fetchers--
	if woken {
		w.wakeOne()
	}
	var owed []string
	if w.fetchers == 0 {
		w.idleSince = time.Now()
		switch {
		case r.p.isClosed():
			owed = w.takeOwed() // nobody comes back: put back while clients may still be open
		case len(w.owed) > 0:
			w.holdOwed()
		}
	}
	w.mu.Unlock()
	// no I/O under w.mu: the blocker and joining fetchers take it
	r.p.rearmAll(owed)
}

// adopt takes a due time that the script of a fetch with no poll timeout
// claimed (due < refresh; anything else is no claim): a waiter of queue q
// with fetchers runs at it, or, in a process without one, it goes back to
// Redis at once, so that a process that never waits leaves nothing running
// behind its calls.
func (r *waitRegistry) adopt(q byte, due time.Duration) {
	if due < 0 || due >= refresh {
		return
	}
	at := time.Now().Add(due)
	if !r.fetching(q, func(w *waiter) { w.claims.add(at, w.onClaim) }) {
		r.release(q, false)
	}
}

// runDue has a fetch of queue q run now for a claimed due time: a waiter
// of q with fetchers wakes one (its fetcher asleep, or busy, which runs
// again as soon as its script returns), else the claim goes back to Redis.
func (r *waitRegistry) runDue(q byte) {
	if r.p.isClosed() {
		return
	}
	if !r.fetching(q, (*waiter).wakeOne) {
		r.release(q, true)
	}
}

// fetching runs do, with w.mu held, on a waiter of queue q that has
// fetchers, one with a fetcher asleep if any; false when there is none.
func (r *waitRegistry) fetching(q byte, do func(w *waiter)) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	var busy *waiter
	for _, w := range r.m {
		if w.queue != q {
			continue
		}
		w.mu.Lock()
		if w.fetchers > 0 && len(w.sleepers) > 0 {
			do(w)
			w.mu.Unlock()
			return true
		}
		if w.fetchers > 0 && busy == nil {
			busy = w
		}
		w.mu.Unlock()
	}
	if busy == nil {
		return false
	}
	busy.mu.Lock()
	defer busy.mu.Unlock()
	if busy.fetchers == 0 { // its last fetcher left meanwhile
		return false
	}
	do(busy)
	return true
}

// release gives back the claim of queue q (see lua/release_due.lua): come
// says its time has come; otherwise (Close) a claim still ahead is dropped.
// Best effort: without it the due time is run at by the next fetch of the
// queue, U.REFRESH later at the latest.
func (r *waitRegistry) release(q byte, come bool) {
	timeout := rearmTimeout
	if !come {
		timeout = closeTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var a args
	a.str(string(q)).flag(come)
	if _, err := r.p.run(ctx, "release_due", scriptReleaseDue, a); err != nil && (!come || !r.p.isClosed()) {
		r.p.log.Warn("duroxide-redis: could not give back a claimed due time", "queue", string(q), "err", err)
	}
}

// giveBack gives back the claims of queues, still ahead: dropped waiters
// held them.
func (r *waitRegistry) giveBack(queues []byte) {
	for _, q := range queues {
		r.release(q, false)
	}
}

// close gives back the claims this process still holds: their times have
// not come, and no fetcher of this process will run at them.
func (r *waitRegistry) close() {
	r.mu.Lock()
	var pending []byte
	var owed []string
	for _, w := range r.m {
		w.mu.Lock()
		if w.claims.stop() && !slices.Contains(pending, w.queue) {
			pending = append(pending, w.queue)
		}
		if w.holding && w.fetchers == 0 { // held markers go back now
			w.holdTimer.Stop()
			w.holding = false
			owed = append(owed, w.takeOwed()...)
		}
		w.mu.Unlock()
	}
	r.mu.Unlock()
	r.giveBack(pending)
	r.p.rearmAll(owed)
}

// stopBlockers makes every blocker's call in flight return (its control
// key set) and waits, for at most wait, until the blockers have stopped:
// they stop once the provider is closed. The clients must still be open.
func (r *waitRegistry) stopBlockers(wait time.Duration) {
	r.mu.Lock()
	var running []*blocker
	for _, b := range r.blockers {
		if b.running {
			running = append(running, b)
		}
	}
	r.mu.Unlock()
	for _, b := range running {
		b.interrupt()
	}
	stopped := make(chan struct{})
	go func() {
		r.running.Wait()
		close(stopped)
	}()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-stopped:
	case <-t.C: // a server that does not answer: close under the calls
	}
}

// warnBlocked logs, at most every poolWarnEvery, that a blocker got no
// connection from the blocking pool: its fetchers then run their scripts
// only at their due times and timeouts, so work waits unannounced.
func (r *waitRegistry) warnBlocked(keys int) {
	r.warnMu.Lock()
	now := time.Now()
	if now.Sub(r.warned) < poolWarnEvery {
		r.warnMu.Unlock()
		return
	}
	r.warned = now
	r.warnMu.Unlock()
	r.mu.Lock()
	blockers := len(r.blockers)
	r.mu.Unlock()
	r.p.log.Warn("duroxide-redis: a long poll got no connection from the blocking pool; its fetchers wait unannounced work out until their next due time: raise Options.BlockingPoolSize",
		"blocking_pool_size", r.p.blockingPoolSize, "blockers", blockers, "wake_keys", keys)
}

// dueTimes are pending claimed due times, earliest first, with a timer for
// the earliest. Every one is run at, even one superseded since: a claim is
// anonymous in Redis, so which of several replies holds the current one is
// not known, and one fetch too many costs less than a missed due time. The
// owner's mutex guards it.
type dueTimes struct {
	at    []time.Time
	timer *time.Timer
}

// add records a claimed time; onFire runs (in its own goroutine) when the
// earliest comes.
func (d *dueTimes) add(at time.Time, onFire func()) {
	i, found := slices.BinarySearchFunc(d.at, at, time.Time.Compare)
	if found {
		return
	}
	d.at = slices.Insert(d.at, i, at)
	if i != 0 {
		return
	}
	wait := time.Until(at)
	if d.timer == nil {
		d.timer = time.AfterFunc(wait, onFire)
	} else {
		d.timer.Reset(wait)
	}
}

// fire drops the times that have come and re-arms the timer for the next;
// it returns the latest that had come (zero: none).
func (d *dueTimes) fire() time.Time {
	now := time.Now()
	n := 0
	for n < len(d.at) && !d.at[n].After(now) {
		n++
	}
	var last time.Time
	if n > 0 {
		last = d.at[n-1]
	}
	d.at = d.at[n:]
	if len(d.at) > 0 {
		d.timer.Reset(time.Until(d.at[0]))
	}
	return last
}

// stop forgets the pending times; it reports whether there were any.
func (d *dueTimes) stop() bool {
	if d.timer != nil {
		d.timer.Stop()
	}
	pending := len(d.at) > 0
	d.at = nil
	return pending
}

// waiter is the fetchers of one set of wake keys: who sleeps, what their
// last empty fetch vouches for, and the markers owed.
type waiter struct {
	r      *waitRegistry
	id     string
	keys   []string
	keySet map[string]bool
	queue  byte
	b      *blocker // set once, under r.mu

	mu        sync.Mutex
	fetchers  int
	idleSince time.Time       // when fetchers last fell to 0
	epoch     uint64          // counts wake-ups: an empty fetch older than one proves nothing
	sleepers  []chan struct{} // fetchers waiting for a wake-up, oldest first
	pending   bool            // a wake-up found no sleeper: the next one runs at once
	due       time.Time       // when the last empty fetch must run again; zero: no empty fetch since the last wake-up
	dueTimer  *time.Timer
	claims    dueTimes // due times its fetchers' scripts claimed: kept across wake-ups
	// started is when the latest script of its fetchers was sent (unix ns)
	started atomic.Int64
	// owed maps each popped wake key no script has answered yet to the epoch
	// its wake-up started; a script begun in that epoch or later answers it.
	owed map[string]uint64
	// holdTimer puts back the markers owed when no fetcher came for them
	// (see blocker.wake); holding says it is armed
	holdTimer *time.Timer
	holding   bool
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

// idle records an empty fetch of epoch that must run again after due. A
// due time its script claimed is run at whatever happens meanwhile; the
// refresh only while nothing did.
func (w *waiter) idle(epoch uint64, due time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	claimed := due < refresh
	if claimed {
		w.claims.add(time.Now().Add(due), w.onClaim)
	}
	if epoch != w.epoch {
		return // a wake-up came meanwhile: the result is already stale
	}
	at := time.Now().Add(due)
	if !w.due.IsZero() && !at.Before(w.due) {
		return
	}
	w.due = at
	if claimed {
		return // the claim's timer wakes a fetcher then
	}
	if w.dueTimer == nil {
		w.dueTimer = time.AfterFunc(due, w.onDue)
	} else {
		w.dueTimer.Reset(due)
	}
}

// claim records a due time a round's script claimed (due < refresh)
// outside the epoch bookkeeping: a round run before its fetcher joined
// this waiter.
func (w *waiter) claim(due time.Duration) {
	if due < 0 || due >= refresh {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.claims.add(time.Now().Add(due), w.onClaim)
}

// onDue wakes one fetcher when its rerun time comes: its script refreshes
// its registration.
func (w *waiter) onDue() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wakeOne()
}

// starting notes that a fetcher's script is about to be sent.
func (w *waiter) starting() { w.started.Store(time.Now().UnixNano()) }

// ranSince reports whether a script of w's fetchers was sent at or after
// at: it ran after the due time at came on the server, so its maintenance
// applied what was due, and its answer registered w's keys again and
// claimed the next due time (or found it claimed). A claim that comes then
// needs no fetch of its own: under load, the fetches of acks run at nearly
// every due time anyway.
func (w *waiter) ranSince(at time.Time) bool { return w.started.Load() >= at.UnixNano() }

// onClaim runs a fetch when a claimed due time comes: one of the waiter's
// fetchers, or, with none left, another waiter's (runDue).
func (w *waiter) onClaim() {
	w.mu.Lock()
	at := w.claims.fire()
	if at.IsZero() || w.ranSince(at) {
		w.mu.Unlock()
		return
	}
	if w.fetchers > 0 {
		w.wakeOne()
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	w.r.runDue(w.queue)
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
	case <-w.r.p.closed:
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

// owe records that the wake-up just handed out came from a marker popped
// from key and is owed until a script answers it. The caller holds w.mu.
func (w *waiter) owe(key string) {
	if w.owed == nil {
		w.owed = make(map[string]uint64)
	}
	w.owed[key] = w.epoch
}

// blocker parks one connection in BZPOPMIN on the wake keys of its waiters
// and hands each popped marker to one of them. r.mu guards its fields.
type blocker struct {
	r       *waitRegistry
	id      string // its group: the wake keys its waiters share
	ctl     string // its control key, popped only to block again
	waiters []*waiter
	running bool
	// watching holds the keys of the call in flight (or about to be sent)
	watching     map[string]bool
	interrupting bool // the control key is being set
	next         int  // where the search for a waiter to wake starts
}

// admit notes that w has a fetcher: whether the blocker must start, or be
// interrupted because its call does not cover w's keys. The caller holds
// r.mu.
func (b *blocker) admit(w *waiter) (start, interrupt bool) {
	if !b.running {
		b.running = true
		return true, false
	}
	if b.interrupting {
		return false, false
	}
	for _, k := range w.keys {
		if !b.watching[k] {
			b.interrupting = true
			return false, true
		}
	}
	return false, false
}

// interrupt sets the control key, so the call in flight returns and the
// next one covers the keys of every waiter. Should it fail, those keys are
// blocked on from the next call, maxBlock later at the latest.
func (b *blocker) interrupt() {
	ctx, cancel := context.WithTimeout(context.Background(), rearmTimeout)
	defer cancel()
	var a args
	if _, err := b.r.p.run(ctx, "rearm_wake", scriptRearmWake, *a.str(b.ctl)); err != nil && !b.r.p.isClosed() {
		b.r.p.log.Warn("duroxide-redis: could not make a waiter block on a new wake key", "key", b.ctl, "err", err)
	}
}

// run is the blocker's loop: it blocks while it has waiters and stops when
// none is left or the provider closes.
func (b *blocker) run() {
	for {
		keys, gave := b.prepare()
		b.r.giveBack(gave)
		if keys == nil {
			return
		}
		args := make([]any, 0, len(keys)+2)
		args = append(args, "BZPOPMIN")
		for _, k := range keys {
			args = append(args, k)
		}
		args = append(args, strconv.FormatFloat(maxBlock.Seconds(), 'f', 3, 64))
		// sent once: a re-sent BZPOPMIN whose first reply was lost would pop
		// a second marker, announced work nobody is told of
		cmd := redis.NewCmd(context.Background(), args...)
		_ = b.r.p.blocking.Process(context.Background(), sendOnce(cmd))
		res, err := cmd.Result()
		if b.r.p.isClosed() {
			return
		}
		b.deliver(res, err, len(keys))
	}
}

// prepare drops the waiters that lingered long enough without fetchers and
// returns the keys of the next call, its control key last; nil when no
// waiter is left (the blocker has stopped). gave lists the queues of the
// claims the dropped waiters held, to give back.
func (b *blocker) prepare() (keys []string, gave []byte) {
	r := b.r
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	gave = b.drop(func(w *waiter) bool { return now.Sub(w.idleSince) >= linger })
	if len(b.waiters) == 0 {
		b.running = false
		if r.blockers[b.id] == b {
			delete(r.blockers, b.id)
		}
		return nil, gave
	}
	keys = make([]string, 0, len(b.waiters)+4)
	b.watching = make(map[string]bool, cap(keys))
	for _, w := range b.waiters {
		for _, k := range w.keys {
			if !b.watching[k] {
				b.watching[k] = true
				keys = append(keys, k)
			}
		}
	}
	b.interrupting = false
	return append(keys, b.ctl), gave
}

// drop detaches the waiters without fetchers for which gone holds: they
// leave the registry (a fetcher joining later makes a new one). It returns
// the queues of the claims they held, which nobody here will run at. The
// caller holds r.mu.
func (b *blocker) drop(gone func(w *waiter) bool) (gave []byte) {
	r := b.r
	keep := b.waiters[:0]
	for _, w := range b.waiters {
		w.mu.Lock()
		if w.fetchers > 0 || w.holding || !gone(w) {
			// a waiter holding markers is dropped when its hold ends
			w.mu.Unlock()
			keep = append(keep, w)
			continue
		}
		w.forgetIdle()
		clear(w.owed)
		if w.claims.stop() && !slices.Contains(gave, w.queue) {
			gave = append(gave, w.queue)
		}
		w.mu.Unlock()
		if r.m[w.id] == w {
			delete(r.m, w.id)
		}
	}
	clear(b.waiters[len(keep):])
	b.waiters = keep
	return gave
}

// deliver hands what a call returned to the waiters: a popped marker wakes
// one fetcher of a waiter that listens on its key (or goes back to Redis
// when none has a fetcher); a failure wakes every fetcher, which will see
// it in its own script.
func (b *blocker) deliver(res any, err error, keys int) {
	switch {
	case err == nil:
		key := poppedKey(res)
		if key == "" || key == b.ctl {
			return
		}
		if woken, gave := b.wake(key); !woken {
			b.r.giveBack(gave)
			b.r.p.rearm(key)
		}
	case errors.Is(err, redis.Nil):
	default:
		// a killed connection, failover or restart: the fetchers find out
		// with their next script; the pause keeps a dead server from being
		// hammered
		b.r.mu.Lock()
		for _, w := range b.waiters {
			w.mu.Lock()
			w.wakeAll()
			w.mu.Unlock()
		}
		b.r.mu.Unlock()
		if errors.Is(err, redis.ErrPoolTimeout) {
			b.r.warnBlocked(keys)
		}
		time.Sleep(retryPause)
	}
}

// wake hands the marker popped from key to a waiter that listens on it and
// has fetchers, one with a fetcher asleep if possible, taking turns; else
// to one on key whose fetchers left a moment ago, which holds it for a
// fetcher that comes back (holdOwed). It reports false otherwise: the
// waiters that lingered on key are dropped, so the marker put back is not
// popped here again (gave: the queues of their claims).
func (b *blocker) wake(key string) (woken bool, gave []byte) {
	r := b.r
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(b.waiters)
	var busy *waiter
	for i := range n {
		w := b.waiters[(b.next+i)%n]
		if !w.keySet[key] {
			continue
		}
		w.mu.Lock()
		if w.fetchers > 0 && len(w.sleepers) > 0 {
			w.wakeOne()
			w.owe(key)
			w.mu.Unlock()
			b.next = (b.next + i + 1) % n
			return true, nil
		}
		if w.fetchers > 0 && busy == nil {
			busy = w
		}
		w.mu.Unlock()
	}
	if busy != nil {
		// Not deferred: the busy waiter may have lost its last fetcher since
		// it was seen, and drop below locks every waiter, this one too (a
		// deferred unlock deadlocked the blocker and every fetcher joining
		// the registry after it, seen once in a Cluster run).
		busy.mu.Lock()
		if busy.fetchers > 0 {
			busy.wakeOne()
			busy.owe(key)
			busy.mu.Unlock()
			return true, nil
		}
		busy.mu.Unlock()
	}
	now := time.Now()
	for _, w := range b.waiters {
		w.mu.Lock()
		if w.keySet[key] && w.fetchers == 0 && (w.holding || now.Sub(w.idleSince) < r.hold) {
			// its fetchers left a moment ago: likely back before long
			w.wakeOne()
			w.owe(key)
			w.holdOwed()
			w.mu.Unlock()
			return true, nil
		}
		w.mu.Unlock()
	}
	return false, b.drop(func(w *waiter) bool { return w.keySet[key] })
}

// holdOwed arms the timer that puts back the markers owed unless a
// fetcher joins and answers them first. The caller holds w.mu.
func (w *waiter) holdOwed() {
	if w.holding {
		return
	}
	w.holding = true
	if w.r.onHold != nil {
		w.r.onHold()
	}
	if w.holdTimer == nil {
		w.holdTimer = time.AfterFunc(w.r.hold, func() { w.r.endHold(w) })
	} else {
		w.holdTimer.Reset(w.r.hold)
	}
}

// endHold runs when a waiter's hold ends: a waiter still without fetchers
// puts back the markers no script answered and is dropped, so its blocker
// does not pop them again.
func (r *waitRegistry) endHold(w *waiter) {
	r.mu.Lock()
	w.mu.Lock()
	w.holding = false
	if w.fetchers > 0 || len(w.owed) == 0 {
		w.mu.Unlock()
		r.mu.Unlock()
		return // a fetcher answers them, or puts them back as it leaves
	}
	owed := w.takeOwed()
	w.mu.Unlock()
	gave := w.b.drop(func(x *waiter) bool { return x == w })
	r.mu.Unlock()
	r.giveBack(gave)
	r.p.rearmAll(owed)
}

// rouse wakes every fetcher of every waiter and has the next round of each
// waiter run its script (WakeFetchers): pending covers a fetcher whose
// script is running now and saw the state from before.
func (r *waitRegistry) rouse() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range r.m {
		w.mu.Lock()
		w.wakeAll()
		w.pending = true
		w.mu.Unlock()
	}
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

// rearmAll puts back the popped markers of keys (see rearm).
func (p *Provider) rearmAll(keys []string) {
	for _, key := range keys {
		p.rearm(key)
	}
}

// rearm puts back a popped marker nobody here will answer (the last local
// fetcher left), so a fetcher elsewhere still gets it. Best effort: a failure
// only delays that fetcher until its next scheduled run.
func (p *Provider) rearm(key string) {
	if key == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), rearmTimeout)
	defer cancel()
	var a args
	if _, err := p.run(ctx, "rearm_wake", scriptRearmWake, *a.str(key)); err != nil && !p.isClosed() {
		// after Close the clients may be gone: the attempt was all that was owed
		p.log.Warn("duroxide-redis: could not put back a wake-up marker", "key", key, "err", err)
	}
}
