package durabletest

import (
	"slices"
	"time"
)

// Now is the environment's clock: real time plus every Advance so far. The
// runtime (timer fire times, UTCNow) and Redis (TIME, which the provider
// uses for visibility and locks) both follow it.
func (e *Env) Now() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return time.Now().Add(e.offset)
}

// Advance moves the clock forward by d: timers due by then fire, delayed
// messages become visible and locks held longer than that expire. It wakes
// the fetchers of every runtime of the Env (they share its Provider) so they
// look again at once, and so do their schedulers; a provider of your own on the Env's server sees the
// jump at its next refresh, within 10 s.
//
// Only a Clocked backend (miniredis) has a clock to move: on a real server
// Advance fails the test, since sleeping d instead would make hour-long
// timers hour-long tests. Tests that advance time run on miniredis only.
func (e *Env) Advance(d time.Duration) {
	if !e.Backend.Clocked {
		e.t.Helper()
		e.t.Fatalf("durabletest: Advance(%v) on backend %s: only miniredis's clock can be moved; run this test on miniredis (Start without WithBackend)", d, e.Backend.Name)
	}
	e.mu.Lock()
	e.offset += d
	e.setClock()
	e.mu.Unlock()
	// Nothing announced what the jump made due, so every fetcher looks
	// again (a marker through Redis would miss a fetcher whose registration
	// a script at the new time just purged as stale).
	e.Provider.WakeFetchers()
	e.mu.Lock()
	runtimes := slices.Clone(e.runtimes)
	e.mu.Unlock()
	for _, rt := range runtimes {
		rt.WakeScheduler()
	}
}

// syncClock sets Redis's clock to Now. miniredis's clock stands still once
// set, so tickClock keeps it moving with real time.
func (e *Env) syncClock() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.setClock()
}

// setClock sets Redis's clock to real time plus the offset. The caller
// holds e.mu, so a tick that read the offset before an Advance cannot set
// the clock back after it: a fetch in that moment would see the jump undone
// and sleep past what it made due.
func (e *Env) setClock() { e.Redis.SetTime(time.Now().Add(e.offset)) }

// tickClock keeps miniredis's clock at Now until the Env closes.
func (e *Env) tickClock() {
	defer close(e.done)
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
			e.syncClock()
		}
	}
}
