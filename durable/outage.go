package durable

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// outageLogEvery spaces the "still unavailable" lines of an outage.
const outageLogEvery = 30 * time.Second

// outage turns a storage outage into a few log lines instead of one per
// failed fetch of every dispatcher slot (a line every few seconds per slot,
// tens a second for a busy runtime): a Warn when fetches start failing, a
// Warn every outageLogEvery while they go on, and an Info when one succeeds
// again, with how long it lasted and how many fetches failed.
type outage struct {
	failing atomic.Bool // fast path of over: read on every successful fetch
	mu      sync.Mutex
	since   time.Time // first failure
	logged  time.Time // last line
	fails   int
}

// failed records a fetch that failed with a retryable error.
func (o *outage) failed(log *slog.Logger, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	o.fails++
	if !o.failing.Load() {
		o.failing.Store(true)
		o.since, o.logged, o.fails = now, now, 1
		log.Warn("durable: storage unavailable; fetches are retried with backoff", "error", err)
		return
	}
	if now.Sub(o.logged) >= outageLogEvery {
		o.logged = now
		log.Warn("durable: storage still unavailable", "for", now.Sub(o.since).Round(time.Second), "failed_fetches", o.fails, "error", err)
	}
}

// over records a fetch that succeeded: the end of an outage, if one ran.
func (o *outage) over(log *slog.Logger) {
	if !o.failing.Load() {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.failing.Load() {
		o.failing.Store(false)
		log.Info("durable: storage reachable again", "after", time.Since(o.since).Round(time.Millisecond), "failed_fetches", o.fails)
	}
}
