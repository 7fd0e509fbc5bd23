package redisprovider

import (
	"context"
	"time"
)

// cleanupBatch bounds the sessions one cleanup script call examines.
const cleanupBatch = 500

// RenewSessionLock extends to now + extendFor every session of ownerIDs that
// is still locked and had activity within idleTimeout, in one script; returns
// how many. Expired or idle sessions are left to expire.
func (p *partition) RenewSessionLock(ctx context.Context, ownerIDs []string, extendFor, idleTimeout time.Duration) (int, error) {
	const op = "renew_session_lock"
	if err := checkDurations(op, extendFor, idleTimeout); err != nil {
		return 0, err
	}
	if len(ownerIDs) == 0 {
		return 0, nil
	}
	owners := make([]string, 0, len(ownerIDs))
	seen := make(map[string]bool, len(ownerIDs))
	for _, o := range ownerIDs {
		if !seen[o] { // each session counts once, however often its owner is listed
			seen[o] = true
			owners = append(owners, o)
		}
	}
	var a args
	a.ms(extendFor).ms(idleTimeout).int(len(owners))
	for _, o := range owners {
		a.str(o)
	}
	res, err := p.run(ctx, op, scriptRenewSessionLock, a)
	if err != nil {
		return 0, err
	}
	n, _ := res.(int64)
	return int(n), nil
}

// Reply of lua/cleanup_orphaned_sessions.lua.
const (
	cleanupRemoved = iota
	cleanupMore
)

// CleanupOrphanedSessions removes sessions whose lock expired and that have
// no item left; returns how many. idleTimeout is not used: an expired lock
// already means no owner keeps the session alive.
func (p *partition) CleanupOrphanedSessions(ctx context.Context, idleTimeout time.Duration) (int, error) {
	const op = "cleanup_orphaned_sessions"
	total := 0
	for {
		var a args
		a.int(cleanupBatch)
		res, err := p.run(ctx, op, scriptCleanupOrphanedSessions, a)
		if err != nil {
			return total, err
		}
		r := newReply(op, res)
		total += int(r.int(cleanupRemoved))
		if r.err != nil || r.int(cleanupMore) == 0 {
			return total, r.err
		}
	}
}
