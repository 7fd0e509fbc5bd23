package engine

import (
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// coroutine runs orchestration code on its own goroutine, but only while the
// engine waits for it: control passes back and forth over channels, each
// side waiting for the other's word before it runs again, so exactly one of
// the two runs at a time and no locking is needed on the context state.
// Blocking on an unresolved future yields to the engine; the engine resumes
// the code only once that future can resolve, which is what polling a Rust
// future does.
//
// No wait can hang the turn: the engine stops waiting for code that does not
// yield within TurnDeadlockTimeout (it is blocked outside its context), and
// code that waits while its turn ends (a deferred Get) ends instead. The
// channels hold one word each, so a send never waits: a goroutine that
// yields after the engine stopped listening moves on to its next wait,
// where the turn's end finds it.
type coroutine struct {
	resume  chan bool     // engine -> code: true = run on, false = exit
	yielded chan struct{} // code -> engine: blocked; closed: finished or exited
	turn    *turnGuard    // shared by the turn's coroutines
	waitFor func() bool   // what the blocked code waits for
	// parked is set while the goroutine waits for resume (or is about to):
	// a turn given up wakes exactly those goroutines.
	parked  atomic.Bool
	started bool
	exited  bool

	finished bool // the function returned (or panicked)
	output   string
	err      error
	panicMsg *string
}

// turnGuard is what the coroutines of one turn (the orchestration and its
// Go blocks) share to end together without hanging anything.
type turnGuard struct {
	instance string
	timeout  time.Duration // how long the engine waits for code; 0: for ever
	logger   *slog.Logger

	// stopping is set once the turn ends: a wait in code running then (a
	// deferred Get) ends its goroutine instead of waiting.
	stopping atomic.Bool
	// gone closes when the engine gives the goroutines up because one is
	// blocked outside its context; a goroutine waiting for another's yield
	// then ends.
	gone     chan struct{}
	goneOnce sync.Once
	// running is the coroutine whose code runs, nil while the engine does:
	// a poll made while it is nil waits on the engine's behalf, under the
	// watchdog. Only whoever runs reads or writes it.
	running *coroutine

	// The watchdog: the engine counts its waits for code (waits is odd
	// while one lasts, on waitedOn), and one timer per turn checks the
	// count every quarter of the timeout. A count that stays the same odd
	// number for a whole timeout is a wait that has lasted that long: the
	// check ends that wait itself, by moving the count on first (so exactly
	// one of it and the engine ends each wait) and waking the engine with a
	// yield of its own. A timer, a select or a clock reading per wait would
	// cost more than the handoff. With no wait in progress the timer
	// disarms; the next wait arms it.
	waits    atomic.Uint64
	waitedOn atomic.Pointer[coroutine]
	armed    atomic.Bool
	watchMu  sync.Mutex // serializes arming, checks and the turn's end
	watch    *time.Timer
	seen     uint64 // the count the last checks saw
	same     int    // how many checks in a row saw it
	ended    bool   // the turn is over: never arm again

	mu      sync.Mutex
	members []*coroutine // every coroutine of the turn, for stop and giveUp
}

// newCoroutine is the coroutine of an orchestration's turn on instance; the
// engine waits at most timeout (0: for ever) for its code to yield.
func newCoroutine(instance string, timeout time.Duration, logger *slog.Logger) *coroutine {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	g := &turnGuard{instance: instance, timeout: timeout, logger: logger, gone: make(chan struct{})}
	return g.newMember()
}

// child is the coroutine of a Go block of the same turn.
func (c *coroutine) child() *coroutine { return c.turn.newMember() }

func (g *turnGuard) newMember() *coroutine {
	return &coroutine{resume: make(chan bool, 1), yielded: make(chan struct{}, 1), turn: g}
}

// start launches fn; it runs only when the engine first polls. A Go block
// started by a defer while the turn ends never runs: nothing would end it.
func (c *coroutine) start(fn func() (string, error)) {
	c.started = true
	if !c.turn.join(c) {
		c.exited = true
		return
	}
	go func() {
		defer close(c.yielded)
		if !c.wake() {
			return
		}
		defer func() {
			if r := recover(); r != nil {
				msg := PanicMessage(r)
				c.panicMsg = &msg
				c.finished = true
			}
		}()
		out, err := fn()
		c.output, c.err, c.finished = out, err, true
	}()
}

// poll runs the code until it blocks again, if what it waits for is ready.
// It reports whether the code has finished. Once the turn is ending it runs
// nothing.
func (c *coroutine) poll() bool {
	g := c.turn
	if c.finished || c.exited || g.stopping.Load() {
		return c.finished
	}
	if c.waitFor != nil && !c.waitFor() {
		return false
	}
	c.waitFor = nil
	caller := g.running
	g.running = c
	c.tell(true)
	if caller == nil {
		g.awaitForEngine(c)
	} else {
		c.awaitForCode()
	}
	g.running = caller
	return c.finished
}

// awaitForCode waits, on the goroutine of a coroutine that polled c, until
// c's code yields; if the engine gives the turn up meanwhile, the poller's
// goroutine ends too.
func (c *coroutine) awaitForCode() {
	select {
	case _, ok := <-c.yielded:
		if !ok {
			c.exited = true
		}
	case <-c.turn.gone:
		runtime.Goexit()
	}
}

// awaitForEngine waits, on the engine's goroutine, until c's code yields.
// Code that does not yield within the timeout is blocked outside its
// context: the engine gives the turn up and panics with a *Deadlock,
// which the dispatcher turns into an abandon.
func (g *turnGuard) awaitForEngine(c *coroutine) {
	open, alarmed := g.next(c)
	if alarmed {
		panic(&Deadlock{Instance: g.instance, Timeout: g.timeout, Stacks: g.giveUp()})
	}
	if !open {
		c.exited = true
	}
}

// next waits, on the engine's goroutine, for c's next yield (open) or its
// end (!open), at most about the timeout (alarmed: the watchdog ended the
// wait; what it received says nothing then).
func (g *turnGuard) next(c *coroutine) (open, alarmed bool) {
	if g.timeout <= 0 {
		_, open = <-c.yielded
		return open, false
	}
	g.waitedOn.Store(c)
	n := g.waits.Add(1)
	if !g.armed.Load() {
		g.arm()
	}
	_, open = <-c.yielded
	return open, !g.waits.CompareAndSwap(n, n+1)
}

// watchdogChecks is how many checks of the watchdog a timeout spans: a
// wait is caught between one and 1+1/watchdogChecks timeouts after it began.
const watchdogChecks = 4

func (g *turnGuard) checkPeriod() time.Duration {
	return max(g.timeout/watchdogChecks, time.Nanosecond)
}

// arm starts the watchdog's checks, unless they run or the turn is over.
func (g *turnGuard) arm() {
	g.watchMu.Lock()
	defer g.watchMu.Unlock()
	if g.armed.Load() || g.ended {
		return
	}
	g.armed.Store(true)
	if g.watch == nil {
		g.watch = time.AfterFunc(g.checkPeriod(), g.check)
	} else {
		g.watch.Reset(g.checkPeriod())
	}
}

// check, on the watchdog's timer, ends the engine's current wait once a
// timeout's worth of checks have seen it, else checks again; with no wait
// in progress it disarms. armed is cleared before waits is read again, and
// next adds to waits before it reads armed, so a wait that begins meanwhile
// is seen by one of the two.
func (g *turnGuard) check() {
	g.watchMu.Lock()
	defer g.watchMu.Unlock()
	if g.ended {
		g.armed.Store(false)
		return
	}
	n := g.waits.Load()
	if n%2 == 0 {
		g.armed.Store(false)
		if n = g.waits.Load(); n%2 == 0 {
			return
		}
		g.armed.Store(true)
	}
	if n == g.seen {
		g.same++
	} else {
		g.seen, g.same = n, 1
	}
	if g.same > watchdogChecks && g.waits.CompareAndSwap(n, n+1) {
		g.armed.Store(false)
		wakeEngine(g.waitedOn.Load().yielded)
		return
	}
	g.watch.Reset(g.checkPeriod())
}

// wakeEngine puts a yield of the watchdog's own in the channel the engine
// waits on. The slot may hold the code's own yield already (the engine wakes
// on that), or the code may have closed it as it ended (on that too).
func wakeEngine(yielded chan struct{}) {
	defer func() { _ = recover() }() // send on the closed channel
	select {
	case yielded <- struct{}{}:
	default:
	}
}

// endWatch stops the watchdog for good.
func (g *turnGuard) endWatch() {
	g.watchMu.Lock()
	defer g.watchMu.Unlock()
	g.ended = true
	g.armed.Store(false)
	if g.watch != nil {
		g.watch.Stop()
	}
}

// tell gives c's goroutine the word to run on (true) or to exit (false).
// It never waits: the goroutine took the last word before it yielded, and
// a word is left unread only in a turn given up, where a goroutine that
// still polls then sees gone.
func (c *coroutine) tell(run bool) {
	select {
	case c.resume <- run:
	default:
	}
}

// wake waits, on the code's goroutine, for the engine's word: true to run
// on, false when the turn is ending (stop's false, or the engine giving the
// goroutines up). Nothing runs once the turn is stopping, so wake does not
// wait then. parked and stopping are atomics each set before the other is
// read, so when the turn is given up either giveUp sees parked and sends
// false, or wake sees stopping: a goroutine cannot wait unseen.
func (c *coroutine) wake() bool {
	c.parked.Store(true)
	if c.turn.stopping.Load() {
		return false
	}
	ok := <-c.resume
	c.parked.Store(false)
	return ok
}

// block is called on the code's goroutine: it returns once ready() holds,
// yielding to the engine in between. When the turn ends first, the goroutine
// exits here (runtime.Goexit runs the code's defers but cannot be recovered);
// a wait in one of those defers, while the turn is ending, exits again at
// once, so the teardown never waits for anything.
func (c *coroutine) block(ready func() bool) {
	for !ready() {
		if c.turn.stopping.Load() {
			runtime.Goexit()
		}
		c.waitFor = ready
		select {
		case c.yielded <- struct{}{}:
		default: // a turn given up took no earlier yield: none is awaited
		}
		if !c.wake() {
			runtime.Goexit()
		}
	}
}

// stop ends the turn's coroutines that are still blocked (the
// orchestration's and its Go blocks', in the order they started) and waits
// until their goroutines are gone, so a turn that ends blocked leaks
// nothing. The wait is bounded: a defer that blocks outside the context is
// logged and left behind. Stopping any coroutine of the turn stops them all.
func (c *coroutine) stop() {
	g := c.turn
	g.stopping.Store(true)
	defer g.endWatch()
	g.mu.Lock()
	members := append([]*coroutine(nil), g.members...)
	g.mu.Unlock()
	for _, m := range members {
		if g.givenUp() {
			// The goroutines end on their own (a stuck one if it ever
			// unblocks), and one may still run: touch nothing of theirs.
			return
		}
		m.end()
	}
}

// end stops one coroutine of a stopping turn.
func (c *coroutine) end() {
	g := c.turn
	if !c.started || c.exited {
		return
	}
	c.exited = true
	if !c.finished {
		c.tell(false)
	}
	if !g.awaitExit(c) {
		g.logger.Error("durable: orchestration code blocked outside its context while its turn ended; leaving its goroutine behind",
			"instance", g.instance, "timeout", g.timeout, "blocked_at", g.giveUp())
	}
}

// awaitExit waits for c's goroutine to end, at most the timeout.
func (g *turnGuard) awaitExit(c *coroutine) bool {
	for {
		open, alarmed := g.next(c)
		if alarmed {
			return false
		}
		if !open {
			return true
		}
	}
}

// join records c as one of the turn's coroutines, unless the turn is
// ending.
func (g *turnGuard) join(c *coroutine) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopping.Load() {
		return false
	}
	g.members = append(g.members, c)
	return true
}

// giveUp, on the engine's goroutine, stops waiting for the turn's
// goroutines: those parked for the engine's word get false, those waiting
// for another's yield see gone, and every later wait of theirs ends at
// once. It returns the stacks of the turn's goroutines that are blocked
// elsewhere (the reason it gives up).
func (g *turnGuard) giveUp() string {
	g.stopping.Store(true)
	g.endWatch()
	stacks := turnStacks() // before the waiting goroutines leave their waits
	g.goneOnce.Do(func() { close(g.gone) })
	g.mu.Lock()
	members := append([]*coroutine(nil), g.members...)
	g.mu.Unlock()
	for _, m := range members {
		if m.parked.Load() {
			m.tell(false)
		}
	}
	return stacks
}

func (g *turnGuard) givenUp() bool {
	select {
	case <-g.gone:
		return true
	default:
		return false
	}
}

// Deadlock is the panic with which the engine leaves a turn whose code
// did not yield within TurnDeadlockTimeout; the dispatcher recovers it and
// abandons the turn.
type Deadlock struct {
	Instance string
	Timeout  time.Duration
	Stacks   string // where the turn's goroutines are
}

func (d *Deadlock) Error() string {
	return fmt.Sprintf("durable: orchestration code of %s did not yield within %v", d.Instance, d.Timeout)
}

// PanicMessage renders a recovered panic value as duroxide records it.
func PanicMessage(r any) string {
	switch v := r.(type) {
	case string:
		return v
	case error:
		return v.Error()
	default:
		return fmt.Sprint(v)
	}
}
