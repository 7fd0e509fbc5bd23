package durabletest

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// Now is the environment's clock: real time plus every Advance so far. The
// runtime (timer fire times, UtcNow) and Redis (TIME, which the provider
// uses for visibility and locks) both follow it.
func (e *Env) Now() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return time.Now().Add(e.offset)
}

// Advance moves the clock forward by d: timers due by then fire, delayed
// messages become visible and locks held longer than that expire. It wakes
// the runtime's blocked fetchers so they look again at once.
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
	e.mu.Unlock()
	e.syncClock()
	e.wakeFetchers()
}

// syncClock sets Redis's clock to Now. miniredis's clock stands still once
// set, so tickClock keeps it moving with real time.
func (e *Env) syncClock() { e.Redis.SetTime(e.Now()) }

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

// wakeFetchers sets the wake-up marker of every key a fetcher registered to
// be woken on, through the server so blocked BZPOPMINs return: each
// fetcher then runs its fetch script against the new time. It follows the
// provider's wake-key layout because the provider has no public call that
// wakes every fetcher; one such call would replace this.
func (e *Env) wakeFetchers() {
	ctx := context.Background()
	for i := range e.Provider.Partitions() {
		keys, err := e.rdb.ZRange(ctx, e.Provider.Partition(i).Keys().WakeDue(), 0, -1).Result()
		if err != nil {
			return
		}
		for _, k := range keys {
			e.rdb.ZAdd(ctx, k, redis.Z{Score: 0, Member: "w"})
		}
	}
}
