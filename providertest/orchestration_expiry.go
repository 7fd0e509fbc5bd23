package providertest

import (
	"sync/atomic"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Lock expiration, release and renewal (provider_validation::lock_expiration;
// duroxide docs/provider-implementation-guide.md renew_orchestration_item_lock
// and checklist "Expired locks can be acquired by other dispatchers"; duroxide
// src/providers/sqlite.rs; duroxide.Provider docs).

// orcExpirationCases lists the lock expiration cases.
func orcExpirationCases() []envCase {
	return []envCase{
		{"LockExpiresAfterTimeout", orcLockExpires},
		{"AbandonReleasesLockImmediately", orcAbandonReleases},
		{"LockRenewalOnAck", orcAckReleases},
		{"ConcurrentLockAttemptsRespectExpiration", orcConcurrentExpiry},
		{"ExpiredLockAbandonableUntilReclaimed", orcExpiredAbandon},
		{"RenewExtendsValidLock", orcRenewExtends},
		{"RenewShortensValidLock", orcRenewShortens},
		{"RenewExpiredLockIsPermanent", orcRenewExpired},
	}
}

// orcLockExpires proves a lock holds until its timeout and then the instance is
// fetchable again, redelivering the same messages plus those that arrived
// meanwhile, with another attempt counted
// (provider_validation::lock_expiration::test_lock_expires_after_timeout;
// duroxide.Provider docs).
func orcLockExpires(e *env) {
	e.enqueue(orcRaise("A", "1"), 0)
	item := e.mustFetch(orcHold)
	e.enqueue(orcRaise("A", "2"), 0)
	e.noFetch(nil)
	e.wait(orcAfterHold)
	again := e.fetchInstance("A")
	e.wantMessages(again, orcRaise("A", "1"), orcRaise("A", "2"))
	if again.AttemptCount != 2 || again.LockToken == item.LockToken {
		e.t.Fatalf("refetch after expiry: attempt %d token reused %v; want attempt 2 and a new token",
			again.AttemptCount, again.LockToken == item.LockToken)
	}
}

// orcAbandonReleases proves an abandon without delay makes the instance
// fetchable at once with the same messages
// (provider_validation::lock_expiration::test_abandon_releases_lock_immediately).
func orcAbandonReleases(e *env) {
	item := e.orcLock("A", startItem("A", "Orch"), orcRaise("A", "1"))
	e.abandon(item.LockToken, 0, false)
	again := e.fetchInstance("A")
	e.wantMessages(again, startItem("A", "Orch"), orcRaise("A", "1"))
	e.ack(again.LockToken, orcCommit("A", 1, 1))
	e.orcWantHistory("A", 0, 1)
}

// orcAckReleases proves a successful ack releases the lock at once: a message
// the ack sends to its own instance and one that arrived during the lock are
// fetchable right after it
// (provider_validation::lock_expiration::test_lock_renewal_on_ack).
func orcAckReleases(e *env) {
	e.start("A", nil)
	item := e.orcLock("A", orcRaise("A", "1"))
	e.enqueue(orcRaise("A", "late"), 0)
	c := orcCommit("A", 1, 2)
	c.OrchestratorItems = []duroxide.WorkItem{orcRaise("A", "self")}
	e.ack(item.LockToken, c)
	e.wantMessages(e.fetchInstance("A"), orcRaise("A", "late"), orcRaise("A", "self"))
}

// orcConcurrentExpiry proves concurrent fetchers all fail while a lock holds
// and exactly one of them gets the instance once it expired
// (provider_validation::lock_expiration::test_concurrent_lock_attempts_respect_expiration).
func orcConcurrentExpiry(e *env) {
	const n = 8
	e.enqueue(orcRaise("A", "1"), 0)
	old := e.mustFetch(orcHold)
	begin := time.Now()
	var early atomic.Int32
	together(n, func(int) {
		if e.orcTryFetch(longLock) != nil {
			early.Add(1)
		}
	})
	if early.Load() != 0 {
		e.t.Fatalf("%d fetches got the instance %v into a %v lock", early.Load(), time.Since(begin), orcHold)
	}
	e.wait(orcAfterHold)
	var won atomic.Pointer[duroxide.OrchestrationItem]
	var wins atomic.Int32
	together(n, func(int) {
		if item := e.orcTryFetch(longLock); item != nil {
			wins.Add(1)
			won.Store(item)
		}
	})
	if wins.Load() != 1 {
		e.t.Fatalf("%d fetches got the expired instance, want exactly 1", wins.Load())
	}
	if w := won.Load(); w.AttemptCount != 2 {
		e.t.Fatalf("attempt %d after expiry, want 2", w.AttemptCount)
	}
	err := e.p.AckOrchestrationItem(e.ctx, old.LockToken, orcCommit("A", 1, 1))
	wantPermanent(e.t, err, duroxide.ErrLockLost, "ack_orchestration_item", "lock_token")
	e.ack(won.Load().LockToken, orcCommit("A", 1, 1))
}

// orcExpiredAbandon proves an expired lock may still be abandoned while no
// other fetch took the instance, and that once another fetch reclaimed it the
// old token is unknown to abandon, ack and renew (duroxide.Provider docs).
func orcExpiredAbandon(e *env) {
	e.enqueue(orcRaise("A", "1"), 0)
	first := e.mustFetch(shortLock)
	e.wait(afterShort)
	e.abandon(first.LockToken, 0, false)
	second := e.fetchInstance("A")
	e.abandon(second.LockToken, 0, false)
	stale := e.mustFetch(shortLock)
	e.wait(afterShort)
	current := e.fetchInstance("A")
	if current.AttemptCount != 4 {
		e.t.Fatalf("attempt %d after four fetches, want 4", current.AttemptCount)
	}
	for _, tok := range []string{stale.LockToken, first.LockToken} {
		wantPermanent(e.t, e.p.AbandonOrchestrationItem(e.ctx, tok, 0, false), duroxide.ErrLockLost, "abandon_orchestration_item", "lock_token")
		wantPermanent(e.t, e.p.AckOrchestrationItem(e.ctx, tok, orcCommit("A", 1, 1)), duroxide.ErrLockLost, "ack_orchestration_item", "lock_token")
		wantPermanent(e.t, e.p.RenewOrchestrationItemLock(e.ctx, tok, longLock), duroxide.ErrLockLost, "renew_orchestration_item_lock", "lock_token")
	}
	e.ack(current.LockToken, orcCommit("A", 1, 1))
	e.orcWantHistory("A", 0, 1)
}

// orcRenewExtends proves renewing a valid lock makes it outlive its original
// expiry: the instance stays locked past it and the ack still succeeds
// (duroxide docs/provider-implementation-guide.md
// renew_orchestration_item_lock; duroxide.Provider docs renew).
func orcRenewExtends(e *env) {
	e.enqueue(orcRaise("A", "1"), 0)
	item := e.mustFetch(orcHold)
	if err := e.p.RenewOrchestrationItemLock(e.ctx, item.LockToken, longLock); err != nil {
		e.t.Fatalf("renew of a valid lock: %v", err)
	}
	e.wait(orcAfterHold)
	e.noFetch(nil)
	e.ack(item.LockToken, orcCommit("A", 1, 1))
	e.orcWantHistory("A", 0, 1)
	e.noFetch(nil)
}

// orcRenewShortens proves a renewal to less than the lock has left takes
// effect: the lock expires at the renewed time, not at the one the fetch set
// (the earliest expiry a provider knew of is now later than the real one).
func orcRenewShortens(e *env) {
	e.enqueue(orcRaise("A", "1"), 0)
	item := e.mustFetch(longLock)
	if err := e.p.RenewOrchestrationItemLock(e.ctx, item.LockToken, shortLock); err != nil {
		e.t.Fatalf("renew of a valid lock to %v: %v", shortLock, err)
	}
	e.noFetch(nil)
	e.wait(afterShort)
	again := e.fetchInstance("A")
	e.wantMessages(again, orcRaise("A", "1"))
	e.orcWantAttempt(again, 2)
	err := e.p.AckOrchestrationItem(e.ctx, item.LockToken, orcCommit("A", 1, 1))
	wantPermanent(e.t, err, duroxide.ErrLockLost, "ack_orchestration_item", "lock_token")
}

// orcRenewExpired proves an expired lock cannot be renewed (permanent
// lock_token error, not silent success), nor acked, and its messages are
// offered again (duroxide docs/provider-implementation-guide.md checklist "Lock
// renewal failure returns error"; duroxide.Provider docs invalid input).
func orcRenewExpired(e *env) {
	e.enqueue(orcRaise("A", "1"), 0)
	item := e.mustFetch(shortLock)
	e.wait(afterShort)
	err := e.p.RenewOrchestrationItemLock(e.ctx, item.LockToken, longLock)
	wantPermanent(e.t, err, duroxide.ErrLockLost, "renew_orchestration_item_lock", "lock_token")
	err = e.p.AckOrchestrationItem(e.ctx, item.LockToken, orcCommit("A", 1, 1))
	wantPermanent(e.t, err, duroxide.ErrLockLost, "ack_orchestration_item", "lock_token")
	again := e.fetchInstance("A")
	e.wantMessages(again, orcRaise("A", "1"))
	e.orcWantHistory("A", 0)
}
