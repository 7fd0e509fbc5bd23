package durable

import (
	"sync"
	"time"
)

// sessionTracker counts the distinct sessions this runtime is running
// activities for, so workers stop claiming new sessions at the cap.
type sessionTracker struct {
	mu     sync.Mutex
	active map[string]int
}

func newSessionTracker() *sessionTracker { return &sessionTracker{active: map[string]int{}} }

func (s *sessionTracker) add(id string) {
	s.mu.Lock()
	s.active[id]++
	s.mu.Unlock()
}

func (s *sessionTracker) remove(id string) {
	s.mu.Lock()
	if s.active[id]--; s.active[id] <= 0 {
		delete(s.active, id)
	}
	s.mu.Unlock()
}

func (s *sessionTracker) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.active)
}

// sessionManager renews this runtime's session leases and sweeps orphaned
// sessions until the runtime stops.
func (r *Runtime) sessionManager() {
	renew := time.NewTicker(renewalInterval(r.opts.SessionLockTimeout, r.opts.SessionLockRenewalBuffer))
	defer renew.Stop()
	cleanup := time.NewTicker(r.opts.SessionCleanupInterval)
	defer cleanup.Stop()
	owners := []string{r.sessionOwner()}
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
