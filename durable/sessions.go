package durable

import (
	"sync"
	"time"
)

// sessionTracker counts the distinct sessions this runtime is running
// activities for, so workers stop claiming new sessions at the cap, and
// wakes the workers parked at the cap when a session ends.
type sessionTracker struct {
	mu     sync.Mutex
	active map[string]int
	freed  chan struct{} // closed (then replaced) when a session ends
}

func newSessionTracker() *sessionTracker {
	return &sessionTracker{active: map[string]int{}, freed: make(chan struct{})}
}

// admit counts one more activity of session id unless that would make the
// distinct sessions exceed max; a session already running is always admitted.
func (s *sessionTracker) admit(id string, max int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active[id] == 0 && len(s.active) >= max {
		return false
	}
	s.active[id]++
	return true
}

func (s *sessionTracker) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active[id]--; s.active[id] > 0 {
		return
	}
	delete(s.active, id)
	close(s.freed)
	s.freed = make(chan struct{})
}

// room reports whether a new session fits under max; when it does not, freed
// is closed once a session ends. Both come from one look, so a session
// ending right after the check still wakes the caller.
func (s *sessionTracker) room(max int) (ok bool, freed <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.active) < max, s.freed
}

// releaser returns a remove of one activity of session id that takes
// effect once however often it is called, so a worker can release the
// session before its ack and again, harmlessly, when the item is done.
func (s *sessionTracker) releaser(id string) func() {
	var once sync.Once
	return func() { once.Do(func() { s.remove(id) }) }
}

// sessionManager renews this runtime's session leases and sweeps orphaned
// sessions until the runtime stops.
func (r *Runtime) sessionManager() {
	renew := time.NewTicker(renewalInterval(r.opts.SessionLockTimeout, r.opts.SessionLockRenewalBuffer))
	defer renew.Stop()
	cleanup := time.NewTicker(r.opts.SessionCleanupInterval)
	defer cleanup.Stop()
	owners := r.sessionOwners()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-renew.C:
			if _, err := r.p.RenewSessionLock(r.ctx, owners, r.opts.SessionLockTimeout, r.opts.SessionIdleTimeout); err != nil && r.ctx.Err() == nil {
				r.opts.Logger.Warn("durable: session renewal failed", "error", err)
			}
		case <-cleanup.C:
			if _, err := r.p.CleanupOrphanedSessions(r.ctx, r.opts.SessionIdleTimeout); err != nil && r.ctx.Err() == nil {
				r.opts.Logger.Warn("durable: session cleanup failed", "error", err)
			}
		}
	}
}
