package providertest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Session routing (duroxide docs/provider-implementation-guide.md
// "SessionFetchConfig", renew_session_lock, cleanup_orphaned_sessions and the
// checklist's "Session Routing"; duroxide src/providers/mod.rs fetch_work_item
// / renew_session_lock / cleanup_orphaned_sessions; duroxide.Provider docs
// "Sessions"). Sessions only route items: an activity's own lock is separate
// from its session's lock, so every case states which of the two it lets
// expire.

func init() { register("Sessions", runSessions) }

const (
	// sessInstance is the instance every session item of this file belongs to.
	sessInstance = "sess-inst"
	// sessIdle is the idle timeout of the last-activity cases: a session
	// touched just before the check is well within it, one left alone for
	// sessIdleWait is past it.
	sessIdle     = time.Second
	sessIdleWait = sessIdle + 150*time.Millisecond
	// sessMidLock is a session lock that must survive the few calls before a
	// renewal (over a second of slack) yet expire within one test.
	sessMidLock = 1200 * time.Millisecond
	// sessRacers is the number of owners racing for one session.
	sessRacers = 8
)

// runSessions runs every session-routing case on a fresh provider.
func runSessions(t *testing.T, h Harness) {
	runCases(t, h, []envCase{
		{"NilConfigSkipsSessionItems", sessNilConfigSkipsSessionItems},
		{"ClaimUnownedSession", sessClaimUnownedSession},
		{"AffinitySameOwner", sessAffinitySameOwner},
		{"OtherOwnerBlockedWhileLocked", sessOtherOwnerBlocked},
		{"DifferentSessionsDifferentOwners", sessDifferentSessionsDifferentOwners},
		{"MixedSessionAndPlainItems", sessMixedSessionAndPlainItems},
		{"FIFOWithinSession", sessFIFOWithinSession},
		{"TagFilterAppliesToSessionItems", sessTagFilterApplies},
		{"TagFilterPerItemWithinSession", sessTagFilterPerItem},
		{"TakeoverAfterSessionLockExpiry", sessTakeoverAfterExpiry},
		{"OriginalOwnerReclaimsAfterExpiry", sessOriginalOwnerReclaims},
		{"BothLocksExpiredRedeliveredToNewOwner", sessBothLocksExpired},
		{"ActivityLockExpiredRedeliveredToOwnerOnly", sessActivityLockExpired},
		{"AckAfterSessionLockExpirySucceeds", sessAckAfterSessionExpiry},
		{"AckRefreshesSessionActivity", sessAckRefreshesActivity},
		{"RenewWorkItemLockRefreshesSessionActivity", sessRenewWorkRefreshesActivity},
		{"RenewSessionLockAllOwnersInOneCall", sessRenewAllOwners},
		{"RenewSessionLockKeepsOwnershipPastExpiry", sessRenewKeepsOwnership},
		{"RenewSessionLockSkipsIdleSessions", sessRenewSkipsIdle},
		{"RenewSessionLockSkipsExpiredSessions", sessRenewSkipsExpired},
		{"RenewSessionLockUnknownOwners", sessRenewUnknownOwners},
		{"RenewSessionLockDuplicateOwnerCountsOnce", sessRenewDuplicateOwner},
		{"RenewSessionLockAfterTakeover", sessRenewAfterTakeover},
		{"RenewSessionLockNegativeDurations", sessRenewNegative},
		{"CleanupRemovesExpiredSessionsWithoutItems", sessCleanupRemovesOrphans},
		{"CleanupKeepsSessionsWithPendingItems", sessCleanupKeepsPending},
		{"CleanupKeepsLockedSessions", sessCleanupKeepsLocked},
		{"CleanupThenNewItemRecreatesSession", sessCleanupThenRecreate},
		{"AbandonedSessionItemReturnsToOwner", sessAbandonReturnsToOwner},
		{"AbandonIgnoreAttemptSessionItem", sessAbandonIgnoreAttempt},
		{"AbandonedSessionItemAfterExpiryClaimable", sessAbandonAfterExpiry},
		{"ConcurrentClaimOneOwnerWins", sessConcurrentClaim},
		{"EmptyOwnerIDRejected", sessEmptyOwnerRejected},
		{"NegativeSessionLockTimeoutRejected", sessNegativeLockRejected},
	})
}

// ---- helpers -------------------------------------------------------------------

// sessItem is the ActivityExecute with id of session sid ("" = no session)
// and tag (nil = default queue).
func sessItem(sid string, id uint64, tag *string) duroxide.ActivityExecute {
	a := activity(sessInstance, id)
	if sid != "" {
		a.SessionID = ptr(sid)
	}
	a.Tag = tag
	return a
}

// sessCfg is the session config of owner with the given session lock.
func sessCfg(owner string, lock time.Duration) *duroxide.SessionFetchConfig {
	return &duroxide.SessionFetchConfig{OwnerID: owner, LockTimeout: lock}
}

// sessEnqueue enqueues untagged items of session sid ("" = none), one per id.
func (e *env) sessEnqueue(sid string, ids ...uint64) {
	e.t.Helper()
	for _, id := range ids {
		e.enqueueWork(sessItem(sid, id, nil))
	}
}

// sessWant asserts that w is item id of session sid ("" = none) fetched for
// the attempts-th time, and returns it.
func (e *env) sessWant(w *duroxide.LockedWorkItem, sid string, id uint64, attempts uint32) *duroxide.LockedWorkItem {
	e.t.Helper()
	if w == nil {
		e.t.Fatalf("FetchWorkItem returned nothing, want item %d of session %q", id, sid)
	}
	act, ok := w.Item.(duroxide.ActivityExecute)
	if !ok {
		e.t.Fatalf("FetchWorkItem returned %T, want ActivityExecute", w.Item)
	}
	got := ""
	if act.SessionID != nil {
		got = *act.SessionID
	}
	if act.ID != id || got != sid || act.Instance != sessInstance {
		e.t.Fatalf("FetchWorkItem returned item %d of session %q (instance %q), want item %d of session %q",
			act.ID, got, act.Instance, id, sid)
	}
	if w.AttemptCount != attempts {
		e.t.Fatalf("item %d: AttemptCount = %d, want %d", id, w.AttemptCount, attempts)
	}
	if w.LockToken == "" {
		e.t.Fatalf("item %d: empty lock token", id)
	}
	return w
}

// sessTake fetches as owner (session lock sessLock, item lock longLock,
// default tags) and asserts it gets item id of session sid on a first attempt.
func (e *env) sessTake(owner string, sessLock time.Duration, sid string, id uint64) *duroxide.LockedWorkItem {
	e.t.Helper()
	return e.sessWant(e.fetchWork(longLock, sessCfg(owner, sessLock), duroxide.DefaultOnly()), sid, id, 1)
}

// sessNothing asserts that owner ("" = no session config) can fetch nothing,
// whatever the tag.
func (e *env) sessNothing(owner string) {
	e.t.Helper()
	var cfg *duroxide.SessionFetchConfig
	if owner != "" {
		cfg = sessCfg(owner, longLock)
	}
	if w := e.fetchWork(longLock, cfg, duroxide.AnyTag()); w != nil {
		e.t.Fatalf("owner %q fetched %+v, want nothing", owner, w.Item)
	}
}

// sessRenew calls RenewSessionLock and asserts how many sessions it renewed.
func (e *env) sessRenew(want int, extendFor, idle time.Duration, owners ...string) {
	e.t.Helper()
	n, err := e.p.RenewSessionLock(e.ctx, owners, extendFor, idle)
	if err != nil {
		e.t.Fatalf("RenewSessionLock(%q): %v", owners, err)
	}
	if n != want {
		e.t.Fatalf("RenewSessionLock(%q, %v, idle %v) renewed %d sessions, want %d", owners, extendFor, idle, n, want)
	}
}

// sessCleanup calls CleanupOrphanedSessions and asserts how many it removed.
func (e *env) sessCleanup(want int, idle time.Duration) {
	e.t.Helper()
	n, err := e.p.CleanupOrphanedSessions(e.ctx, idle)
	if err != nil {
		e.t.Fatalf("CleanupOrphanedSessions: %v", err)
	}
	if n != want {
		e.t.Fatalf("CleanupOrphanedSessions removed %d sessions, want %d", n, want)
	}
}

// sessShortClaim makes owner claim session sid with a shortLock session lock
// by fetching its item id (held with longLock), and returns the locked item.
func (e *env) sessShortClaim(owner, sid string, id uint64) *duroxide.LockedWorkItem {
	e.t.Helper()
	e.sessEnqueue(sid, id)
	return e.sessTake(owner, shortLock, sid, id)
}

// ---- routing -------------------------------------------------------------------

// sessNilConfigSkipsSessionItems proves that a fetch without session config
// returns only items without session and leaves session items untouched
// (duroxide docs/provider-implementation-guide.md checklist "session=None
// returns only non-session items"; duroxide src/providers/mod.rs).
func sessNilConfigSkipsSessionItems(e *env) {
	e.sessEnqueue("s1", 1)
	e.sessEnqueue("", 2)
	e.sessEnqueue("s2", 3)
	e.sessWant(e.fetchWork(longLock, nil, duroxide.DefaultOnly()), "", 2, 1)
	e.sessNothing("")
	// the skipped items were neither locked nor counted, nor their sessions claimed
	e.sessTake("A", longLock, "s1", 1)
	e.sessTake("B", longLock, "s2", 3)
}

// sessClaimUnownedSession proves that fetching the first item of a session
// nobody owns claims it for the owner: recorded with a valid lock and fresh
// activity (RenewSessionLock renews it) and closed to other owners (duroxide
// src/providers/mod.rs "atomically create or update the session record").
func sessClaimUnownedSession(e *env) {
	e.sessEnqueue("s1", 1, 2)
	e.sessTake("A", longLock, "s1", 1)
	e.sessRenew(1, longLock, longLock, "A")
	e.sessNothing("B")
	e.sessTake("A", longLock, "s1", 2)
}

// sessAffinitySameOwner proves session affinity: once A owns a session, its
// next items go to any caller using owner id A (whatever its lock timeout),
// while A's first item is still locked (duroxide src/providers/mod.rs
// SessionFetchConfig.owner_id "all worker slots sharing this value are treated
// as a single owner").
func sessAffinitySameOwner(e *env) {
	e.sessEnqueue("s1", 1, 2, 3)
	e.sessTake("A", longLock, "s1", 1)
	e.sessTake("A", longLock, "s1", 2)
	// another slot of owner A, with its own config value
	e.sessWant(e.fetchWork(longLock, &duroxide.SessionFetchConfig{OwnerID: "A", LockTimeout: 2 * longLock},
		duroxide.AnyTag()), "s1", 3, 1)
	e.sessNothing("A")
}

// sessOtherOwnerBlocked proves that while A's session lock is valid owner B
// never gets that session's items, yet still gets items without session and
// items of other sessions (duroxide docs/provider-implementation-guide.md
// checklist "routed to owning worker only").
func sessOtherOwnerBlocked(e *env) {
	e.sessEnqueue("s1", 1, 2)
	e.sessEnqueue("s2", 3)
	e.sessEnqueue("", 4)
	e.sessTake("A", longLock, "s1", 1)
	e.sessTake("B", longLock, "s2", 3)
	e.sessTake("B", longLock, "", 4)
	e.sessNothing("B")
	e.sessTake("A", longLock, "s1", 2)
}

// sessDifferentSessionsDifferentOwners proves that two sessions claimed by
// two owners each keep going to their own owner.
func sessDifferentSessionsDifferentOwners(e *env) {
	e.sessEnqueue("s1", 1)
	e.sessEnqueue("s2", 2)
	e.sessEnqueue("s1", 3)
	e.sessEnqueue("s2", 4)
	e.sessTake("A", longLock, "s1", 1)
	e.sessTake("B", longLock, "s2", 2)
	e.sessTake("A", longLock, "s1", 3)
	e.sessNothing("A")
	e.sessTake("B", longLock, "s2", 4)
	e.sessNothing("B")
}

// sessMixedSessionAndPlainItems proves that a session-aware fetch returns both
// session and non-session items (in enqueue order, duroxide.Provider docs
// "Order") while a fetch without config takes only the non-session ones
// (duroxide docs/provider-implementation-guide.md checklist "session=Some
// returns session + non-session items").
func sessMixedSessionAndPlainItems(e *env) {
	e.sessEnqueue("s1", 1)
	e.sessEnqueue("", 2)
	e.sessEnqueue("s2", 3)
	e.sessEnqueue("", 4)
	e.sessWant(e.fetchWork(longLock, nil, duroxide.DefaultOnly()), "", 2, 1)
	e.sessTake("A", longLock, "s1", 1)
	e.sessTake("A", longLock, "s2", 3)
	e.sessTake("A", longLock, "", 4)
	e.sessNothing("")
	e.sessNothing("A")
}

// sessFIFOWithinSession proves that the items of one session come in enqueue
// order, interleaved with other sessions' and plain items (duroxide.Provider
// docs "Order": items within a worker queue come in enqueue order).
func sessFIFOWithinSession(e *env) {
	e.sessEnqueue("s1", 1)
	e.sessEnqueue("s2", 2)
	e.sessEnqueue("s1", 3)
	e.sessEnqueue("", 4)
	e.sessEnqueue("s1", 5, 6)
	e.sessEnqueue("s2", 7)
	got := map[string][]uint64{}
	for {
		w := e.fetchWork(longLock, sessCfg("A", longLock), duroxide.DefaultOnly())
		if w == nil {
			break
		}
		act, _ := w.Item.(duroxide.ActivityExecute)
		sid := ""
		if act.SessionID != nil {
			sid = *act.SessionID
		}
		got[sid] = append(got[sid], act.ID)
	}
	want := map[string][]uint64{"s1": {1, 3, 5, 6}, "s2": {2, 7}, "": {4}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		e.t.Fatalf("items per session in fetch order = %v, want %v", got, want)
	}
}

// sessTagFilterApplies proves that tag filters apply to session items as to
// others: a tagged session item reaches only fetchers whose filter matches,
// never a fetch without session config, and after the claim only its owner
// (duroxide src/providers/mod.rs fetch_work_item "Tag Filtering" and "Session
// Routing").
func sessTagFilterApplies(e *env) {
	gpu := ptr("gpu")
	e.enqueueWork(sessItem("s1", 1, gpu))
	e.sessNothing("")
	if w := e.fetchWork(longLock, sessCfg("A", longLock), duroxide.DefaultOnly()); w != nil {
		e.t.Fatalf("DefaultOnly fetched tagged item %+v", w.Item)
	}
	e.sessWant(e.fetchWork(longLock, sessCfg("A", longLock), duroxide.TagsOnly("gpu")), "s1", 1, 1)
	e.enqueueWork(sessItem("s1", 2, gpu))
	if w := e.fetchWork(longLock, sessCfg("B", longLock), duroxide.TagsOnly("gpu")); w != nil {
		e.t.Fatalf("owner B fetched %+v of A's session", w.Item)
	}
	e.sessWant(e.fetchWork(longLock, sessCfg("A", longLock), duroxide.DefaultAndTags("gpu")), "s1", 2, 1)
}

// sessTagFilterPerItem proves that eligibility is decided per item: the owner's
// fetch whose filter excludes the first (tagged) item of its session still gets
// the session's next, untagged, item (duroxide src/providers/mod.rs
// fetch_work_item: owned-session items are eligible and DefaultOnly takes items
// with no tag; FIFO within the session holds among the items a fetcher may
// take).
func sessTagFilterPerItem(e *env) {
	e.enqueueWork(sessItem("s1", 1, ptr("gpu")))
	e.enqueueWork(sessItem("s1", 2, nil))
	e.sessTake("A", longLock, "s1", 2)
	e.sessWant(e.fetchWork(longLock, sessCfg("A", longLock), duroxide.TagsOnly("gpu")), "s1", 1, 1)
}

// ---- expiry --------------------------------------------------------------------

// sessTakeoverAfterExpiry proves that once A's session lock expires another
// owner claims the session, and from then on A is the one kept out (duroxide
// src/providers/mod.rs "Claimable-session items: ... no active session").
func sessTakeoverAfterExpiry(e *env) {
	e.ackWork(e.sessShortClaim("A", "s1", 1).LockToken, nil)
	e.sessEnqueue("s1", 2)
	e.sessNothing("B")
	e.wait(afterShort)
	e.sessTake("B", longLock, "s1", 2)
	e.sessEnqueue("s1", 3)
	e.sessNothing("A")
	e.sessTake("B", longLock, "s1", 3)
}

// sessOriginalOwnerReclaims proves that the owner whose session lock expired
// may claim it again, which locks other owners out anew.
func sessOriginalOwnerReclaims(e *env) {
	e.ackWork(e.sessShortClaim("A", "s1", 1).LockToken, nil)
	e.sessEnqueue("s1", 2)
	e.wait(afterShort)
	e.sessTake("A", longLock, "s1", 2)
	e.sessEnqueue("s1", 3)
	e.sessNothing("B")
	e.sessTake("A", longLock, "s1", 3)
}

// sessBothLocksExpired proves that when both the activity lock and the
// session lock of a fetched item expire, the item is redelivered to a new
// owner (another attempt counted) and the old token is dead.
func sessBothLocksExpired(e *env) {
	e.sessEnqueue("s1", 1)
	old := e.sessWant(e.fetchWork(shortLock, sessCfg("A", shortLock), duroxide.DefaultOnly()), "s1", 1, 1)
	e.wait(afterShort)
	e.sessWant(e.fetchWork(longLock, sessCfg("B", longLock), duroxide.DefaultOnly()), "s1", 1, 2)
	wantPermanent(e.t, e.p.AckWorkItem(e.ctx, old.LockToken, nil), duroxide.ErrLockLost, "ack_work_item", "lock_token")
	e.sessEnqueue("s1", 2)
	e.sessNothing("A")
	e.sessTake("B", longLock, "s1", 2)
}

// sessActivityLockExpired proves that an item whose activity lock expired
// while its session lock holds is redelivered to the session's owner only
// (the two locks are separate; affinity survives the redelivery).
func sessActivityLockExpired(e *env) {
	e.sessEnqueue("s1", 1)
	e.sessWant(e.fetchWork(shortLock, sessCfg("A", longLock), duroxide.DefaultOnly()), "s1", 1, 1)
	e.wait(afterShort)
	e.sessNothing("B")
	e.sessWant(e.fetchWork(longLock, sessCfg("A", longLock), duroxide.DefaultOnly()), "s1", 1, 2)
}

// sessAckAfterSessionExpiry proves that an activity whose session lock
// expired can still be acked while its own lock holds (ownership is routing
// only): the item is gone, its completion reaches the orchestrator queue,
// and the ack does not give the session back to A.
func sessAckAfterSessionExpiry(e *env) {
	w := e.sessShortClaim("A", "s1", 1)
	e.wait(afterShort)
	if err := e.p.AckWorkItem(e.ctx, w.LockToken, completed(sessInstance, 1)); err != nil {
		e.t.Fatalf("AckWorkItem with a valid activity lock and an expired session lock: %v", err)
	}
	wantPermanent(e.t, e.p.RenewWorkItemLock(e.ctx, w.LockToken, longLock), duroxide.ErrLockLost, "renew_work_item_lock", "lock_token")
	item := e.fetchInstance(sessInstance)
	if len(item.Messages) != 1 {
		e.t.Fatalf("orchestrator got %d messages, want the one completion", len(item.Messages))
	}
	if c, ok := item.Messages[0].(duroxide.ActivityCompleted); !ok || c.ID != 1 {
		e.t.Fatalf("orchestrator message = %+v, want ActivityCompleted of id 1", item.Messages[0])
	}
	e.sessEnqueue("s1", 2)
	e.sessTake("B", longLock, "s1", 2)
	e.sessNothing("A")
}

// sessTouchRefreshesActivity is the shared body of the last-activity cases: A
// and C each claim a session, wait past sessIdle, then touch runs on A's item
// only. Only A's session is then active enough to renew (duroxide
// src/providers/mod.rs renew_session_lock "last_activity_at + idle_timeout >
// now").
func sessTouchRefreshesActivity(e *env, touch func(w *duroxide.LockedWorkItem)) {
	e.sessEnqueue("s1", 1)
	e.sessEnqueue("s2", 2)
	a := e.sessTake("A", longLock, "s1", 1)
	e.sessTake("C", longLock, "s2", 2)
	e.wait(sessIdleWait)
	touch(a)
	e.sessRenew(1, longLock, sessIdle, "A")
	e.sessRenew(0, longLock, sessIdle, "C")
	e.sessRenew(1, longLock, sessIdle, "A", "C")
}

// sessAckRefreshesActivity proves that acking a session item records
// activity on its (still locked) session.
func sessAckRefreshesActivity(e *env) {
	sessTouchRefreshesActivity(e, func(w *duroxide.LockedWorkItem) { e.ackWork(w.LockToken, nil) })
}

// sessRenewWorkRefreshesActivity proves that renewing a session item's
// activity lock records activity on its (still locked) session.
func sessRenewWorkRefreshesActivity(e *env) {
	sessTouchRefreshesActivity(e, func(w *duroxide.LockedWorkItem) {
		if err := e.p.RenewWorkItemLock(e.ctx, w.LockToken, longLock); err != nil {
			e.t.Fatalf("RenewWorkItemLock: %v", err)
		}
	})
}

// ---- RenewSessionLock ------------------------------------------------------------

// sessRenewAllOwners proves that one call renews every live session of every
// listed owner and counts them, and leaves other owners' sessions alone
// (duroxide src/providers/mod.rs "Total count of sessions renewed across all
// owners").
func sessRenewAllOwners(e *env) {
	e.sessEnqueue("s1", 1)
	e.sessEnqueue("s2", 2)
	e.sessEnqueue("s3", 3)
	e.sessEnqueue("s4", 4)
	e.sessTake("A", longLock, "s1", 1)
	e.sessTake("A", longLock, "s2", 2)
	e.sessTake("C", longLock, "s3", 3)
	e.sessTake("D", longLock, "s4", 4)
	e.sessRenew(3, longLock, longLock, "A", "C", "nobody")
	e.sessRenew(1, longLock, longLock, "D")
}

// sessRenewKeepsOwnership proves that a renewed session stays with its owner
// past the expiry its claim gave it: B cannot take its items afterwards.
func sessRenewKeepsOwnership(e *env) {
	e.sessEnqueue("s1", 1)
	e.sessTake("A", sessMidLock, "s1", 1)
	claimed := time.Now() // the claim's lock ends before claimed + sessMidLock
	e.sessRenew(1, longLock, longLock, "A")
	e.sessEnqueue("s1", 2)
	e.wait(time.Until(claimed.Add(sessMidLock + 400*time.Millisecond)))
	e.sessNothing("B")
	e.sessTake("A", longLock, "s1", 2)
}

// sessRenewSkipsIdle proves that idle sessions are not renewed (and so expire):
// idleTimeout 0 makes every session idle (duroxide.Provider docs interfaces
// note), and a session without activity for longer than idleTimeout is idle
// too.
func sessRenewSkipsIdle(e *env) {
	e.sessShortClaim("A", "s1", 1)
	e.sessEnqueue("s2", 2)
	e.sessTake("C", longLock, "s2", 2)
	e.sessRenew(0, longLock, 0, "A")
	e.sessRenew(0, longLock, 0, "C")
	e.sessEnqueue("s1", 3)
	e.wait(afterShort)
	e.sessRenew(0, longLock, 100*time.Millisecond, "C")
	e.sessRenew(1, longLock, longLock, "C") // C's session was live all along
	e.sessTake("B", longLock, "s1", 3)      // A's was never extended
}

// sessRenewSkipsExpired proves that a session whose lock already expired is not
// renewed, even when not idle, and stays claimable (duroxide
// src/providers/mod.rs "locked_until > now (still owned)").
func sessRenewSkipsExpired(e *env) {
	e.sessShortClaim("A", "s1", 1)
	e.wait(afterShort)
	e.sessRenew(0, longLock, longLock, "A")
	e.sessEnqueue("s1", 2)
	e.sessTake("B", longLock, "s1", 2)
}

// sessRenewUnknownOwners proves that owners holding no session renew
// nothing, including an empty owner list, without touching others' sessions.
func sessRenewUnknownOwners(e *env) {
	e.sessRenew(0, longLock, longLock)
	e.sessRenew(0, longLock, longLock, "nobody")
	e.sessEnqueue("s1", 1)
	e.sessTake("A", longLock, "s1", 1)
	e.sessRenew(0, longLock, longLock, "B", "nobody")
	e.sessRenew(1, longLock, longLock, "A")
}

// sessRenewDuplicateOwner proves that the count is of sessions: an owner listed
// twice has its session renewed, and counted, once (duroxide
// src/providers/mod.rs SQL "WHERE worker_id IN (owner_ids)").
func sessRenewDuplicateOwner(e *env) {
	e.sessEnqueue("s1", 1)
	e.sessTake("A", longLock, "s1", 1)
	e.sessRenew(1, longLock, longLock, "A", "A")
}

// sessRenewAfterTakeover proves that after a takeover only the new owner's
// renewals count the session; the former owner renews nothing.
func sessRenewAfterTakeover(e *env) {
	e.ackWork(e.sessShortClaim("A", "s1", 1).LockToken, nil)
	e.sessEnqueue("s1", 2)
	e.wait(afterShort)
	e.sessTake("B", longLock, "s1", 2)
	e.sessRenew(0, longLock, longLock, "A")
	e.sessRenew(1, longLock, longLock, "B")
}

// sessRenewNegative proves that negative durations are invalid input
// (duroxide.Provider docs): a permanent renew_session_lock error that leaves
// the session as it was (still owned by A: a negative extension applied would
// have expired it).
func sessRenewNegative(e *env) {
	e.sessEnqueue("s1", 1, 2)
	e.sessTake("A", longLock, "s1", 1)
	_, err := e.p.RenewSessionLock(e.ctx, []string{"A"}, -time.Second, longLock)
	wantPermanent(e.t, err, duroxide.ErrInvalidInput, "renew_session_lock")
	_, err = e.p.RenewSessionLock(e.ctx, []string{"A"}, longLock, -time.Second)
	wantPermanent(e.t, err, duroxide.ErrInvalidInput, "renew_session_lock")
	e.sessNothing("B")
	e.sessRenew(1, longLock, longLock, "A")
	e.sessTake("A", longLock, "s1", 2)
}

// ---- CleanupOrphanedSessions -------------------------------------------------------

// sessCleanupRemovesOrphans proves that cleanup removes every session whose
// lock expired and that has no item left, counts them, and that its idleTimeout
// does not keep them (duroxide.Provider docs "Sessions": the argument is not
// used).
func sessCleanupRemovesOrphans(e *env) {
	e.ackWork(e.sessShortClaim("A", "s1", 1).LockToken, nil)
	e.ackWork(e.sessShortClaim("B", "s2", 2).LockToken, nil)
	e.wait(afterShort)
	e.sessCleanup(2, longLock)
	e.sessCleanup(0, longLock)
}

// sessCleanupKeepsPending proves that an expired session keeps its record
// while it has items, ready or locked, and becomes an orphan once the last
// one is acked.
// Same as duroxide provider_validation::sessions::test_cleanup_keeps_sessions_with_pending_items.
func sessCleanupKeepsPending(e *env) {
	e.ackWork(e.sessShortClaim("A", "s1", 1).LockToken, nil)
	locked := e.sessShortClaim("A", "s2", 3)
	e.sessEnqueue("s1", 2)
	e.wait(afterShort)
	e.sessCleanup(0, 0)
	e.sessTake("B", longLock, "s1", 2)
	e.ackWork(locked.LockToken, nil)
	e.sessCleanup(1, 0)
	e.sessCleanup(0, 0)
	e.sessRenew(1, longLock, longLock, "B")
}

// sessCleanupKeepsLocked proves that a session with a valid lock survives
// cleanup even without items and even with idleTimeout 0.
func sessCleanupKeepsLocked(e *env) {
	e.sessEnqueue("s1", 1)
	e.sessEnqueue("s2", 2)
	e.ackWork(e.sessTake("A", longLock, "s1", 1).LockToken, nil)
	e.ackWork(e.sessTake("A", longLock, "s2", 2).LockToken, nil)
	e.sessCleanup(0, 0)
	e.sessRenew(2, longLock, longLock, "A")
}

// sessCleanupThenRecreate proves that an item arriving for a removed session
// re-creates it on fetch, claimable by anyone, with a fresh owner and lock.
// Same as duroxide provider_validation::sessions::test_cleanup_then_new_item_recreates_session.
func sessCleanupThenRecreate(e *env) {
	e.ackWork(e.sessShortClaim("A", "s1", 1).LockToken, nil)
	e.wait(afterShort)
	e.sessCleanup(1, 0)
	e.sessEnqueue("s1", 2)
	e.sessTake("B", longLock, "s1", 2)
	e.sessEnqueue("s1", 3)
	e.sessNothing("A")
	e.sessRenew(1, longLock, longLock, "B")
	e.sessCleanup(0, 0)
}

// ---- abandon ----------------------------------------------------------------------

// sessAbandonReturnsToOwner proves that an abandoned session item is retried,
// counting another attempt, and while the session lock holds it goes back to
// the owner only.
func sessAbandonReturnsToOwner(e *env) {
	e.sessEnqueue("s1", 1)
	w := e.sessTake("A", longLock, "s1", 1)
	e.abandonWork(w.LockToken, 0, false)
	e.sessNothing("B")
	e.sessWant(e.fetchWork(longLock, sessCfg("A", longLock), duroxide.DefaultOnly()), "s1", 1, 2)
}

// sessAbandonIgnoreAttempt proves that abandoning a session item with
// ignoreAttempt undoes the attempt its fetch counted, and without it the
// count grows.
func sessAbandonIgnoreAttempt(e *env) {
	e.sessEnqueue("s1", 1)
	w := e.sessTake("A", longLock, "s1", 1)
	e.abandonWork(w.LockToken, 0, true)
	w = e.sessTake("A", longLock, "s1", 1)
	e.abandonWork(w.LockToken, 0, false)
	e.sessWant(e.fetchWork(longLock, sessCfg("A", longLock), duroxide.DefaultOnly()), "s1", 1, 2)
}

// sessAbandonAfterExpiry proves that a session item abandoned after its
// session lock expired can be claimed by another owner.
func sessAbandonAfterExpiry(e *env) {
	w := e.sessShortClaim("A", "s1", 1)
	e.wait(afterShort)
	e.abandonWork(w.LockToken, 0, false)
	e.sessWant(e.fetchWork(longLock, sessCfg("B", longLock), duroxide.DefaultOnly()), "s1", 1, 2)
	e.sessNothing("A")
}

// ---- concurrency and invalid input ---------------------------------------------------

// sessConcurrentClaim proves that claiming is atomic with locking: owners
// racing for one unclaimed session's items end with all of them at exactly one
// owner, each item delivered once (duroxide src/providers/mod.rs "atomically
// create or update the session record"; duroxide
// docs/provider-implementation-guide.md checklist "Session upsert on fetch").
func sessConcurrentClaim(e *env) {
	const items = 5
	for id := uint64(1); id <= items; id++ {
		e.sessEnqueue("s1", id)
	}
	got := sessRace(e)
	if len(got) != 1 {
		e.t.Fatalf("items went to %d owners, want exactly 1: %v", len(got), got)
	}
	total, seen := 0, map[uint64]bool{}
	for owner, ids := range got {
		for _, id := range ids {
			if seen[id] {
				e.t.Fatalf("item %d delivered twice to %s", id, owner)
			}
			seen[id] = true
		}
		total += len(ids)
	}
	if total != items {
		e.t.Fatalf("owners got %d items in all, want %d: %v", total, items, got)
	}
	e.sessNothing("latecomer")
}

// sessRace runs sessRacers owners that each fetch until they get nothing,
// starting together, and returns the item ids each owner got.
func sessRace(e *env) map[string][]uint64 {
	var (
		mu   sync.Mutex
		got  = map[string][]uint64{}
		errs []error
	)
	together(sessRacers, func(i int) {
		owner := fmt.Sprintf("racer-%d", i)
		for {
			w, err := e.p.FetchWorkItem(e.ctx, longLock, 0, sessCfg(owner, longLock), duroxide.DefaultOnly())
			mu.Lock()
			if err != nil {
				errs = append(errs, err)
			} else if w != nil {
				act, _ := w.Item.(duroxide.ActivityExecute)
				got[owner] = append(got[owner], act.ID)
			}
			mu.Unlock()
			if err != nil || w == nil {
				return
			}
		}
	})
	if len(errs) > 0 {
		e.t.Fatalf("FetchWorkItem during the race: %v", errs)
	}
	return got
}

// sessRejected asserts that a fetch with cfg is a permanent fetch_work_item
// error that changed nothing: the item is still unlocked, its attempt not
// counted and its session unclaimed (B can claim it).
func sessRejected(e *env, cfg *duroxide.SessionFetchConfig) {
	e.sessEnqueue("s1", 1)
	_, err := e.p.FetchWorkItem(e.ctx, longLock, 0, cfg, duroxide.AnyTag())
	wantPermanent(e.t, err, duroxide.ErrInvalidInput, "fetch_work_item")
	e.sessTake("B", longLock, "s1", 1)
}

// sessEmptyOwnerRejected proves that a session config with an empty owner id is
// invalid input (duroxide.Provider docs "Invalid input").
func sessEmptyOwnerRejected(e *env) {
	sessRejected(e, sessCfg("", longLock))
}

// sessNegativeLockRejected proves that a negative session lock timeout is
// invalid input (duroxide.Provider docs).
func sessNegativeLockRejected(e *env) {
	sessRejected(e, sessCfg("A", -time.Second))
}
