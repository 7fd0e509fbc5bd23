package redisprovider

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// Long polling: long-lived pollers.
//
// Scripts that make work eligible set a one-member marker on the wake key of
// each class of fetcher that can take it (a capability filter, a tag queue,
// the claimable sessions of a queue, an owner's sessions). A fetch class (one
// set of fetch arguments: filter, tags, session owner, lock timeout) has one
// poller per partition per process, alive as long as the provider: it alone
// runs the class's fetch script for the callers that wait (demand.go), one
// run at a time, and only when it may find something (it is dirty): at its
// start, after a marker of its keys was popped, when its refresh comes, or
// after a failure. A run that finds nothing makes
// it clean until one of those happens, so waiting callers cost nothing.
//
// Each partition's hub parks one connection in BZPOPMIN on the wake keys of
// its pollers that are clean or have callers waiting, and hands each popped
// marker to one of them (dirty, so it runs). A marker no poller here wants
// (no caller waits: every slot is busy) is put back for another process, and
// the pollers on its key leave the blocked set until a caller comes, so it
// is not popped here again; it is held for 50 ms first, as a slot of this
// process back from its work answers it with its next script. A poller
// that joins the set while the call in flight does not cover its keys sets
// the hub's control key, so the call returns and blocks again on the new
// set.
//
// Pollers never wait for due times: what becomes eligible later (timers,
// delayed items, expiring locks and sessions) is moved to ready by the
// hub's due loop (due.go), whose script sets the markers of the fetchers
// that can take it. An empty fetch runs again only after 10 s (U.REFRESH in
// lua/lib_util.lua), which keeps its filter registered and bounds what a
// lost marker costs.

const (
	// maxBlock caps one BZPOPMIN: Redis is asked again at least this often,
	// and a failover is noticed within it even without a connection error.
	maxBlock = 10 * time.Second
	// refresh is U.REFRESH: an empty fetch runs again after it, and the
	// due loop runs at least this often.
	refresh = 10 * time.Second
	// retryPause spaces the blocker's attempts while Redis fails.
	retryPause = 200 * time.Millisecond
	// rearmTimeout bounds putting back a popped wake-up marker, and the
	// other calls a hub makes on its own.
	rearmTimeout = 5 * time.Second
	// holdMarker is how long a marker popped for classes whose callers
	// are all busy is kept for them before it goes back to Redis.
	holdMarker = 50 * time.Millisecond
	// poolWarnEvery spaces the warnings of blockers that got no connection.
	poolWarnEvery = 10 * time.Second
)

// The queues, as lua/lib_util.lua names them (U.queue_of): piggybacked
// fetches are reserved per queue.
const (
	queueOrch byte = 'o'
	queueWork byte = 'w'
)

// fetchSpec is one partition's side of a fetch class: the wake keys its
// poller blocks on, its queue, one run of its fetch script, and how
// to give back an item nobody waits for any more (its attempt undone). op,
// args, abandon and decode let an ack's script fetch for it (piggyback.go).
type fetchSpec struct {
	keys     []string
	queue    byte
	group    string // its queue and keys but for session owners' (hub.refreshed)
	once     func(ctx context.Context) (item any, due time.Duration, err error)
	giveBack func(item any)

	op      string
	args    args // the fetch script's arguments after the lock token
	abandon luaScript
	decode  func(r *reply) (item any, due time.Duration, err error)
}

// hub is a partition's pollers and the one blocking connection they share.
type hub struct {
	p   *partition
	id  string // names its due loop's claims
	ctl string // the control key, popped only to block again

	mu      sync.Mutex
	pollers []*poller
	// blocking says the blocker runs; watching holds the keys of its call
	// in flight, and interrupting that the control key is being set
	blocking     bool
	watching     map[string]bool
	interrupting bool
	next         int // where the search for a poller to wake starts
	// held are popped markers no poller wanted, kept for holdMarker
	held      []string
	holdTimer *time.Timer
	holdFor   time.Duration // holdMarker (tests change it)

	// duekick wakes the due loop (its marker was popped, or Close)
	duekick chan struct{}

	warnMu    sync.Mutex
	warned    time.Time // last warning of a blocker without connection
	dueWarned time.Time // last warning of a failed due loop run

	// running counts the pollers' and the blocker's goroutines, which
	// Close waits for before it closes the blocking client
	running sync.WaitGroup
}

func newHub(p *partition) *hub {
	id := uuid.NewString()
	return &hub{p: p, id: id, ctl: p.keys.WaiterControl(id), holdFor: holdMarker, duekick: make(chan struct{}, 1)}
}

// ring tells waiters for a state of the pollers that it may have changed
// (see bell).
func (h *hub) ring() { h.p.set.bell.ring() }

// add creates the poller of a class with demand d in this partition and
// starts it (it begins dirty and queued, so its first caller runs the
// script).
func (h *hub) add(d *demand, part int, spec fetchSpec) *poller {
	spec.group = string(spec.queue)
	for _, k := range spec.keys {
		// an owner's sessions, a sticky owner's instances: not shared
		if f := h.p.keys.Family(k); f != "wo" && f != "osw" {
			spec.group += "\x00" + k
		}
	}
	pl := &poller{h: h, d: d, part: part, spec: spec, dirty: true, kickc: make(chan struct{}, 1), inbox: make(chan *request, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pollers = append(h.pollers, pl)
	if h.p.isClosed() {
		return pl
	}
	h.running.Add(1)
	go pl.loop()
	// dirty: it queues for the first request now, not when its goroutine
	// first runs, so a class's pollers queue in partition order and
	// partitions with work take turns from the first fetch on
	pl.d.want(pl)
	return pl
}

// poller runs one class's fetch script in one partition for the callers
// waiting in its demand. h.mu guards its state fields.
type poller struct {
	h     *hub
	d     *demand
	part  int
	spec  fetchSpec
	kickc chan struct{}
	inbox chan *request // the request its demand handed it

	// busy says its demand handed it a request it has not answered yet
	busy atomic.Bool

	dirty   bool   // a run may find something
	shunned bool   // a marker for it went back: out of the blocked set until wanted
	epoch   uint64 // counts wake-ups: a run older than one proves nothing
	rerun   *time.Timer
	// refreshing says its rerun timer runs its group's refresh
	refreshing bool
}

// kick makes the poller's loop look at its state.
func (pl *poller) kick() {
	select {
	case pl.kickc <- struct{}{}:
	default:
	}
}

// loop queues the poller for a request while it is dirty and serves the
// requests it is handed, until Close.
func (pl *poller) loop() {
	defer pl.h.running.Done()
	closed := pl.h.p.closed
	for {
		select {
		case <-pl.kickc:
			if pl.isDirty() {
				pl.d.want(pl)
			}
		case r := <-pl.inbox:
			if !pl.isDirty() {
				pl.busy.Store(false)
				pl.d.putBack(r) // cleaned by a caller's own round meanwhile
				continue
			}
			pl.serve(r)
		case <-closed:
			return
		}
	}
}

func (pl *poller) isDirty() bool {
	pl.h.mu.Lock()
	defer pl.h.mu.Unlock()
	return pl.dirty
}

// serve runs the script once for the caller r: work or an error goes to r,
// nothing puts r back in line (see demand.putBack). The poller is free
// again, and queued again while dirty, before r is answered: behind the
// others, so that partitions with work take turns, and in line before r's
// caller can ask again.
func (pl *poller) serve(r *request) {
	if r.ended() {
		pl.free()
		r.answer(pollResult{}) // its caller is leaving: no lock taken for it
		return
	}
	epoch := pl.begin(true)
	item, due, err := pl.spec.once(context.Background())
	pl.end(epoch, item != nil, due, err)
	pl.free()
	if err == nil && item == nil {
		pl.d.putBack(r)
		return
	}
	if !r.answer(pollResult{item: item, part: pl.part, err: err}) && item != nil {
		pl.spec.giveBack(item) // its caller left
	}
}

// free ends the poller's hold on its request and queues it again while it
// is dirty.
func (pl *poller) free() {
	pl.busy.Store(false)
	pl.h.ring()
	if pl.isDirty() {
		pl.d.want(pl)
	}
}

// begin notes a run of the class's script about to be sent (own: by the
// poller's loop, else a caller's own round) and returns its epoch.
func (pl *poller) begin(own bool) uint64 {
	h := pl.h
	h.mu.Lock()
	defer h.mu.Unlock()
	h.answered(pl)
	if own {
		pl.shunned = false
		h.cover(pl) // wanted now
	}
	return pl.epoch
}

// end records a run begun in epoch: a run that saw nothing more eligible
// (nothing taken, or due >= 0) makes the poller clean when no wake-up came
// meanwhile, and it runs again after due (its refresh) unless woken.
func (pl *poller) end(epoch uint64, took bool, due time.Duration, err error) {
	h := pl.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil || due < 0 {
		return // stays dirty: more is eligible, or the failure is retried
	}
	if pl.epoch != epoch {
		return // a wake-up came meanwhile: the result is already stale
	}
	pl.dirty, pl.shunned = false, false
	pl.d.unwant(pl) // rings
	if !h.refreshed(pl) {
		// only while nothing else happens
		if pl.rerun == nil {
			pl.rerun = time.AfterFunc(due, pl.onRerun)
		} else {
			pl.rerun.Reset(due)
		}
		pl.refreshing = true
	}
	h.cover(pl)
}

// refreshed reports whether another clean poller of pl's group (the same
// keys but for session owners') runs a refresh: one per group is enough.
// Its script registers the group's filter, and the markers set for the
// group reach every poller of it, owners' included, so the idle cost of a
// partition does not grow with the slots that are each their own session
// owner. The caller holds h.mu.
func (h *hub) refreshed(pl *poller) bool {
	for _, q := range h.pollers {
		if q != pl && q.refreshing && q.spec.group == pl.spec.group {
			return true
		}
	}
	return false
}

// wake makes the poller dirty and runs it. The caller holds h.mu.
func (pl *poller) wake() {
	pl.dirty = true
	pl.epoch++
	pl.h.ring()
	if pl.rerun != nil {
		pl.rerun.Stop()
	}
	pl.refreshing = false
	pl.kick()
}

// wake makes pl dirty and runs it.
func (h *hub) wake(pl *poller) {
	h.mu.Lock()
	defer h.mu.Unlock()
	pl.wake()
}

// onRerun runs the poller when its refresh comes: its script renews its
// registration.
func (pl *poller) onRerun() {
	pl.h.mu.Lock()
	defer pl.h.mu.Unlock()
	pl.wake()
}

// wanted reports whether a caller waits for the poller (or it holds one's
// request): a wake-up then leads to a run. The caller holds h.mu.
func (pl *poller) wanted() bool { return pl.busy.Load() || pl.d.hasWaiting(pl.part) }

// watched reports whether the blocker blocks on the poller's keys: those of
// a class that has had callers wait (one only ever fetched without a poll
// timeout has nothing to block for), unless a marker popped for it went back
// because no caller wanted it: it stays out until a caller comes, so the
// marker is not popped here again. Slots that come and go keep their keys
// blocked on, so a slot back from its work costs no extra call. The caller
// holds h.mu.
func (pl *poller) watched() bool { return pl.wanted() || (pl.d.waited.Load() && !pl.shunned) }

// cover makes the blocker block on pl's keys when its call in flight does
// not (pl just became watched), starting it if needed. The caller holds
// h.mu.
func (h *hub) cover(pl *poller) {
	if !pl.watched() || h.p.isClosed() {
		return
	}
	if !h.blocking {
		h.blocking = true
		h.running.Add(2)
		go h.block()
		go h.dueLoop()
		return
	}
	if h.interrupting {
		return
	}
	for _, k := range pl.spec.keys {
		if !h.watching[k] {
			h.interrupting = true
			go h.interrupt()
			return
		}
	}
}

// close stops the refresh timers, puts back the markers it holds and gives
// up the due time its loop claimed, once the blocker and the loops have
// stopped (so that no marker it puts back is popped here again). The
// clients must still be open.
func (h *hub) close() {
	h.mu.Lock()
	ran := h.blocking
	for _, pl := range h.pollers {
		if pl.rerun != nil {
			pl.rerun.Stop()
		}
	}
	if h.holdTimer != nil {
		h.holdTimer.Stop()
	}
	held := h.held
	h.held = nil
	h.mu.Unlock()
	if ran {
		h.leaveDue()
	}
	for _, k := range held {
		h.p.rearm(k) // nobody here answers them now
	}
}

// stopBlocker makes the blocker's call in flight return (its control key
// set) and waits, for at most wait, until the pollers and the blocker have
// stopped: they stop once the provider is closed. The clients must still be
// open.
func (h *hub) stopBlocker(wait time.Duration) {
	h.mu.Lock()
	blocking := h.blocking
	h.mu.Unlock()
	if blocking {
		h.interrupt()
	}
	stopped := make(chan struct{})
	go func() {
		h.running.Wait()
		close(stopped)
	}()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-stopped:
	case <-t.C: // a server that does not answer: close under the calls
	}
}

// rouse makes every poller and the due loop run their scripts again
// (WakeFetchers): the next run of each waits for no marker, and a run in
// flight runs again.
func (h *hub) rouse() {
	h.kickDue() // its plan was made on the old clock
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, pl := range h.pollers {
		pl.wake()
	}
}

// interrupt sets the control key, so the call in flight returns and the
// next one covers the keys of every watched poller. Should it fail, those
// keys are blocked on from the next call, maxBlock later at the latest.
func (h *hub) interrupt() {
	ctx, cancel := context.WithTimeout(context.Background(), rearmTimeout)
	defer cancel()
	var a args
	if _, err := h.p.run(ctx, "rearm_wake", scriptRearmWake, *a.str(h.ctl)); err != nil && !h.p.isClosed() {
		h.p.log.Warn("duroxide-redis: could not make a long poll block on a new wake key", "key", h.ctl, "err", err)
	}
}

// block is the blocker's loop, until Close.
func (h *hub) block() {
	defer h.running.Done()
	for !h.p.isClosed() {
		keys := h.prepare()
		args := make([]any, 0, len(keys)+2)
		args = append(args, "BZPOPMIN")
		for _, k := range keys {
			args = append(args, k)
		}
		args = append(args, strconv.FormatFloat(maxBlock.Seconds(), 'f', 3, 64))
		// sent once: a re-sent BZPOPMIN whose first reply was lost would pop
		// a second marker, announced work nobody is told of
		cmd := redis.NewCmd(context.Background(), args...)
		_ = h.p.blocking.Process(context.Background(), sendOnce(cmd))
		res, err := cmd.Result()
		if h.p.isClosed() {
			return
		}
		h.deliver(res, err, len(keys))
	}
}

// prepare returns the keys of the next call: the watched pollers', then the
// due loop's and the control key.
func (h *hub) prepare() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.watching = make(map[string]bool, len(h.watching))
	keys := make([]string, 0, len(h.watching)+1)
	for _, pl := range h.pollers {
		if !pl.watched() {
			continue
		}
		for _, k := range pl.spec.keys {
			if !h.watching[k] {
				h.watching[k] = true
				keys = append(keys, k)
			}
		}
	}
	h.interrupting = false
	h.ring()
	return append(keys, h.p.keys.DueWake(), h.ctl)
}

// deliver acts on what a call returned: a popped marker wakes a poller on
// its key; a failure wakes every poller, whose callers see it in the
// script's reply.
func (h *hub) deliver(res any, err error, keys int) {
	switch {
	case err == nil:
		key := poppedKey(res)
		if key == "" || key == h.ctl {
			return
		}
		if key == h.p.keys.DueWake() {
			h.kickDue()
			return
		}
		if !h.wakeOn(key) {
			h.p.rearm(key)
		}
	case errors.Is(err, redis.Nil):
	default:
		// a killed connection, failover or restart: the pollers and the
		// due loop find out with their next script; the pause keeps a dead server from being
		// hammered
		h.rouse()
		if errors.Is(err, redis.ErrPoolTimeout) {
			h.warnBlocked(keys)
		}
		time.Sleep(retryPause)
	}
}

// wakeOn hands the marker popped from key to a poller on it that takes a
// waiting caller's request at once, taking turns: the marker then leads to
// a run. Taking the request here, not when the poller's loop gets to it,
// keeps another partition's hub from handing its marker to a poller of the
// same class for the same caller (one of the two runs would not happen, and
// the work its marker announced would wait for the next refresh). Else a
// busy poller on key gets it: its run in flight may have been sent before
// the work was there, so it stays dirty and runs again for its caller's
// next fetch, which comes soon. With none, the pollers on key become dirty
// and the marker is held (hold). false when they all left the blocked set
// already (a call in flight popped a marker put back): the caller puts it
// back again.
func (h *hub) wakeOn(key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(h.pollers)
	for i := range n {
		pl := h.pollers[(h.next+i)%n]
		if pl.busy.Load() || !slices.Contains(pl.spec.keys, key) || !pl.d.hasWaiting(pl.part) {
			continue
		}
		pl.wake()
		if pl.d.want(pl) { // else another partition's poller took it meanwhile
			h.next = (h.next + i + 1) % n
			return true
		}
	}
	for _, pl := range h.pollers {
		if pl.busy.Load() && slices.Contains(pl.spec.keys, key) {
			// its run in flight may predate the work: it runs again when
			// its caller, or the next, comes back (answering the marker)
			pl.wake()
			return true
		}
	}
	found := false // a poller on key still blocked on: the marker is held for it
	for _, pl := range h.pollers {
		if slices.Contains(pl.spec.keys, key) {
			pl.wake()
			found = found || !pl.shunned
		}
	}
	if !found || h.p.isClosed() {
		return false
	}
	h.hold(key)
	return true
}

// hold keeps a popped marker no poller wanted for holdMarker: a slot of
// this process back from its work within it runs its class's script, which
// answers it; else it goes back to Redis, for another process. Slots busy
// for a moment (the usual case under load) then cost no put-back. The
// caller holds h.mu.
func (h *hub) hold(key string) {
	if !slices.Contains(h.held, key) {
		h.held = append(h.held, key)
		h.ring()
	}
	if h.holdTimer == nil {
		h.holdTimer = time.AfterFunc(h.holdFor, h.endHold)
	} else if len(h.held) == 1 {
		h.holdTimer.Reset(h.holdFor)
	}
}

// answered drops the held markers that a script of pl, begun now, answers.
// The caller holds h.mu.
func (h *hub) answered(pl *poller) {
	if len(h.held) == 0 {
		return
	}
	h.held = slices.DeleteFunc(h.held, func(k string) bool { return slices.Contains(pl.spec.keys, k) })
	h.ring()
}

// endHold puts back the markers no script answered within their hold; the
// pollers on them leave the blocked set until a caller comes, so they are
// not popped here again.
func (h *hub) endHold() {
	h.mu.Lock()
	keys := h.held
	h.held = nil
	for _, pl := range h.pollers {
		if pl.dirty && !pl.wanted() && slices.ContainsFunc(pl.spec.keys, func(k string) bool { return slices.Contains(keys, k) }) {
			pl.shunned = true
		}
	}
	h.mu.Unlock()
	for _, k := range keys {
		h.p.rearm(k)
	}
	h.ring() // the markers are back in Redis
}

// warnBlocked logs, at most every poolWarnEvery, that the blocker got no
// connection from the blocking pool: its pollers then run their scripts
// only at their refresh, so work waits unannounced.
func (h *hub) warnBlocked(keys int) {
	if h.mayWarn(&h.warned) {
		h.p.log.Warn("duroxide-redis: a long poll got no connection from the blocking pool; its fetchers wait unannounced work out until their next refresh: raise Options.BlockingPoolSize",
			"blocking_pool_size", h.p.blockingPoolSize, "wake_keys", keys)
	}
}

// mayWarn reports whether a warning last logged at *last may be logged
// again (poolWarnEvery has passed), and notes it logged now.
func (h *hub) mayWarn(last *time.Time) bool {
	h.warnMu.Lock()
	defer h.warnMu.Unlock()
	now := time.Now()
	if now.Sub(*last) < poolWarnEvery {
		return false
	}
	*last = now
	return true
}

// isClosed reports whether Close was called.
func (p *partition) isClosed() bool {
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

// rearm puts back a popped marker nobody here will answer (no caller
// waits), so a fetcher elsewhere still gets it. Best effort: a failure only
// delays that fetcher until its next scheduled run.
func (p *partition) rearm(key string) {
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
