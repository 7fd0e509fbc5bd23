package providertest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Instance locking (provider_validation::instance_locking; duroxide
// docs/provider-implementation-guide.md checklist "Orchestrator Queue" and
// "Concurrency"; duroxide src/providers/sqlite.rs): one holder per instance,
// unique tokens, tagged batches, and no duplicate processing under concurrency.

// orcLockingCases lists the instance locking cases.
func orcLockingCases() []envCase {
	return []envCase{
		{"ExclusiveInstanceLock", orcExclusiveLock},
		{"LockTokenUniqueness", orcTokenUniqueness},
		{"InvalidLockTokenRejection", orcInvalidTokenRejection},
		{"ConcurrentInstanceFetching", orcConcurrentFetching},
		{"LockAcquisitionIsAtomic", orcAtomicAcquisition},
		{"CompletionsArrivingDuringLockBlocked", orcCompletionsBlocked},
		{"CrossInstanceLockIsolation", orcCrossInstance},
		{"MessageTaggingDuringLock", orcMessageTagging},
		{"AckOnlyAffectsLockedMessages", orcAckOnlyLocked},
		{"MultiThreadedLockContention", orcMTContention},
		{"MultiThreadedNoDuplicateProcessing", orcMTNoDuplicates},
		{"MultiThreadedLockExpirationRecovery", orcMTExpiryRecovery},
	}
}

// orcName names the i-th instance of a multi-instance test.
func orcName(i int) string { return fmt.Sprintf("I%02d", i) }

// orcExclusiveLock proves a fetched instance is invisible to further fetches,
// even when new messages arrive for it, until its lock is released
// (provider_validation::instance_locking::test_exclusive_instance_lock;
// duroxide docs/provider-implementation-guide.md "acquires instance-level
// lock").
func orcExclusiveLock(e *env) {
	item := e.orcLock("A", startItem("A", "Orch"))
	for range 3 {
		e.noFetch(nil)
	}
	e.enqueue(orcRaise("A", "x"), 0)
	e.noFetch(nil)
	e.abandon(item.LockToken, 0, false)
	e.wantMessages(e.fetchInstance("A"), startItem("A", "Orch"), orcRaise("A", "x"))
}

// orcTokenUniqueness proves every fetch yields a new, non-empty token: across
// instances and across fetches of the same instance
// (provider_validation::instance_locking::test_lock_token_uniqueness).
func orcTokenUniqueness(e *env) {
	seen := map[string]bool{}
	see := func(item *duroxide.OrchestrationItem) {
		if item.LockToken == "" || seen[item.LockToken] {
			e.t.Fatalf("lock token %q is empty or was already issued", item.LockToken)
		}
		seen[item.LockToken] = true
	}
	for i := range 6 {
		e.enqueue(orcRaise(orcName(i), "x"), 0)
		see(e.fetchInstance(orcName(i)))
	}
	e.enqueue(orcRaise("A", "x"), 0)
	for range 4 {
		item := e.fetchInstance("A")
		see(item)
		e.abandon(item.LockToken, 0, false)
	}
}

// orcInvalidTokenRejection proves ack, abandon and renew with tokens that were
// never issued are permanent lock_token errors and leave the real lock
// untouched
// (provider_validation::instance_locking::test_invalid_lock_token_rejection).
func orcInvalidTokenRejection(e *env) {
	item := e.orcLock("A", orcRaise("A", "1"))
	for _, tok := range []string{"bogus", "00000000-0000-0000-0000-000000000000", item.LockToken + "x"} {
		err := e.p.AckOrchestrationItem(e.ctx, tok, orcCommit("A", 1, 1))
		wantPermanent(e.t, err, duroxide.ErrLockLost, "ack_orchestration_item", "lock_token")
		err = e.p.AbandonOrchestrationItem(e.ctx, tok, 0, false)
		wantPermanent(e.t, err, duroxide.ErrLockLost, "abandon_orchestration_item", "lock_token")
		err = e.p.RenewOrchestrationItemLock(e.ctx, tok, longLock)
		wantPermanent(e.t, err, duroxide.ErrLockLost, "renew_orchestration_item_lock", "lock_token")
	}
	e.noFetch(nil)
	e.orcWantHistory("A", 0)
	e.ack(item.LockToken, orcCommit("A", 1, 1))
	e.orcWantHistory("A", 0, 1)
}

// orcConcurrentFetching proves concurrent fetchers never get the same instance:
// together with the fetches that follow, each instance is handed out exactly
// once
// (provider_validation::instance_locking::test_concurrent_instance_fetching). A
// fetcher that loses a race may get nothing (duroxide src/providers/sqlite.rs).
func orcConcurrentFetching(e *env) {
	const n = 10
	for i := range n {
		e.enqueue(orcRaise(orcName(i), "x"), 0)
	}
	got := make([]*duroxide.OrchestrationItem, n)
	together(n, func(i int) { got[i] = e.orcTryFetch(longLock) })
	count := map[string]int{}
	for _, item := range got {
		if item != nil {
			count[item.Instance]++
		}
	}
	for item := e.fetch(longLock, nil); item != nil; item = e.fetch(longLock, nil) {
		count[item.Instance]++
	}
	for i := range n {
		if count[orcName(i)] != 1 {
			e.t.Fatalf("instance %s handed out %d times, want 1 (all: %v)", orcName(i), count[orcName(i)], count)
		}
	}
}

// orcAtomicAcquisition proves that of many simultaneous fetches of the only
// instance with work exactly one gets it (duroxide
// docs/provider-implementation-guide.md "Lock acquisition is atomic (no
// check-then-set)").
func orcAtomicAcquisition(e *env) {
	const n = 16
	e.enqueue(startItem("A", "Orch"), 0)
	var wins atomic.Int32
	together(n, func(int) {
		if e.orcTryFetch(longLock) != nil {
			wins.Add(1)
		}
	})
	if wins.Load() != 1 {
		e.t.Fatalf("%d of %d concurrent fetches got the instance, want exactly 1", wins.Load(), n)
	}
}

// orcCompletionsBlocked proves completions arriving while an instance is locked
// are queued but not fetchable, and all come in the next batch, in order, after
// the ack
// (provider_validation::instance_locking::test_completions_arriving_during_lock_blocked;
// duroxide src/providers/sqlite.rs).
func orcCompletionsBlocked(e *env) {
	e.start("A", nil)
	item := e.orcLock("A", orcRaise("A", "1"))
	late := []duroxide.WorkItem{completed("A", 2), completed("A", 3), completed("A", 4)}
	for _, m := range late {
		e.enqueue(m, 0)
		e.noFetch(nil)
	}
	e.ack(item.LockToken, orcCommit("A", 1, 2, 3, 4))
	e.wantMessages(e.fetchInstance("A"), late...)
}

// orcCrossInstance proves a lock on one instance neither blocks another
// instance nor is affected by the other's ack
// (provider_validation::instance_locking::test_cross_instance_lock_isolation;
// duroxide docs/provider-implementation-guide.md "Instance locks don't block
// other instances").
func orcCrossInstance(e *env) {
	a := e.orcLock("A", orcRaise("A", "1"))
	b := e.orcLock("B", orcRaise("B", "1"))
	e.ack(b.LockToken, orcCommit("B", 1, 1))
	e.enqueue(orcRaise("A", "2"), 0)
	e.noFetch(nil) // A is still locked
	e.orcLock("B", orcRaise("B", "2"))
	e.ack(a.LockToken, orcCommit("A", 1, 1))
	e.wantMessages(e.fetchInstance("A"), orcRaise("A", "2"))
	e.orcWantHistory("A", 0, 1)
	e.orcWantHistory("B", 0, 1)
}

// orcMessageTagging proves the ack deletes only the messages fetched with its
// token: messages arriving during the lock are kept and delivered in the next
// turn
// (provider_validation::instance_locking::test_message_tagging_during_lock;
// duroxide docs/provider-implementation-guide.md "tags all visible messages";
// duroxide.Provider docs message tagging).
func orcMessageTagging(e *env) {
	e.start("A", nil)
	item := e.orcLock("A", orcRaise("A", "1"), orcRaise("A", "2"))
	e.enqueue(orcRaise("A", "3"), 0)
	e.enqueue(completed("A", 2), 0)
	e.ack(item.LockToken, orcCommit("A", 1, 2))
	next := e.fetchInstance("A")
	e.wantMessages(next, orcRaise("A", "3"), completed("A", 2))
	e.ack(next.LockToken, orcCommit("A", 1, 3))
	e.noFetch(nil)
}

// orcAckOnlyLocked proves an ack touches neither other instances' messages nor
// its own instance's messages that were not visible at fetch time
// (provider_validation::instance_locking::test_ack_only_affects_locked_messages).
func orcAckOnlyLocked(e *env) {
	e.enqueue(orcRaise("A", "now"), 0)
	e.enqueue(orcRaise("A", "later"), orcHold)
	e.enqueue(orcRaise("B", "b"), 0)
	a := e.fetchInstance("A")
	e.wantMessages(a, orcRaise("A", "now"))
	e.ack(a.LockToken, orcCommit("A", 1, 1))
	b := e.fetchInstance("B")
	e.wantMessages(b, orcRaise("B", "b"))
	e.ack(b.LockToken, orcCommit("B", 1, 1))
	item, _ := e.waitFetch(orcHold+2*time.Second, "delayed message of A")
	if item.Instance != "A" {
		e.t.Fatalf("fetched %q, want A", item.Instance)
	}
	e.wantMessages(item, orcRaise("A", "later"))
}

// orcMTContention proves, with more dispatchers than instances, that no two
// goroutines ever hold the same instance and every turn is processed once: each
// turn sends the instance its next message, and the final histories hold every
// turn exactly once
// (provider_validation::instance_locking::test_multi_threaded_lock_contention).
func orcMTContention(e *env) {
	const instances, turns, workers = 3, 6, 8
	for i := range instances {
		e.enqueue(orcRaise(orcName(i), "1"), 0)
	}
	var mu sync.Mutex
	held := map[string]bool{}
	var done atomic.Int32
	deadline := time.Now().Add(20 * time.Second)
	together(workers, func(int) {
		for done.Load() < instances*turns && time.Now().Before(deadline) {
			item := e.orcTryFetch(longLock)
			if item == nil {
				time.Sleep(2 * time.Millisecond) // sleep: a dispatcher's idle pause between fetches that found nothing
				continue
			}
			mu.Lock()
			if held[item.Instance] {
				e.t.Errorf("instance %s fetched while another goroutine holds it", item.Instance)
			}
			held[item.Instance] = true
			mu.Unlock()
			time.Sleep(3 * time.Millisecond) // sleep: holds the instance as a turn's work would, so a second holder has time to show
			c := orcContentionTurn(e, item, turns)
			mu.Lock()
			held[item.Instance] = false
			mu.Unlock()
			if err := e.p.AckOrchestrationItem(e.ctx, item.LockToken, c); err != nil {
				e.t.Errorf("ack of %s: %v", item.Instance, err)
				return
			}
			done.Add(1)
		}
	})
	if done.Load() != instances*turns {
		e.t.Fatalf("%d turns acked, want %d", done.Load(), instances*turns)
	}
	for i := range instances {
		e.orcWantHistory(orcName(i), 0, 1, 2, 3, 4, 5, 6)
	}
	e.noFetch(nil)
}

// orcContentionTurn checks that a contention turn's batch is exactly the
// message the previous turn sent and returns its commit: the next event and,
// until the last turn, the next message.
func orcContentionTurn(e *env, item *duroxide.OrchestrationItem, turns int) duroxide.OrchestrationCommit {
	next := uint64(len(item.History)) + 1
	want := itemsJSON(e.t, []duroxide.WorkItem{orcRaise(item.Instance, fmt.Sprint(next))})
	if got := itemsJSON(e.t, item.Messages); fmt.Sprint(got) != fmt.Sprint(want) {
		e.t.Errorf("turn %d of %s got messages %v, want %v", next, item.Instance, got, want)
	}
	c := orcCommit(item.Instance, 1, next)
	if next < uint64(turns) {
		c.OrchestratorItems = []duroxide.WorkItem{orcRaise(item.Instance, fmt.Sprint(next+1))}
	}
	return c
}

// orcMTNoDuplicates proves many goroutines draining many instances process each
// instance exactly once
// (provider_validation::instance_locking::test_multi_threaded_no_duplicate_processing).
func orcMTNoDuplicates(e *env) {
	const instances, workers = 20, 8
	for i := range instances {
		e.enqueue(startItem(orcName(i), "Orch"), 0)
	}
	var mu sync.Mutex
	count := map[string]int{}
	var done atomic.Int32
	deadline := time.Now().Add(20 * time.Second)
	together(workers, func(int) {
		for done.Load() < instances && time.Now().Before(deadline) {
			item := e.orcTryFetch(longLock)
			if item == nil {
				time.Sleep(2 * time.Millisecond) // sleep: a dispatcher's idle pause between fetches that found nothing
				continue
			}
			mu.Lock()
			count[item.Instance]++
			mu.Unlock()
			c := orcCommit(item.Instance, 1, 1)
			c.Metadata.OrchestrationName = "Orch"
			if err := e.p.AckOrchestrationItem(e.ctx, item.LockToken, c); err != nil {
				e.t.Errorf("ack of %s: %v", item.Instance, err)
			}
			done.Add(1)
		}
	})
	for i := range instances {
		if count[orcName(i)] != 1 {
			e.t.Fatalf("instance %s processed %d times, want 1", orcName(i), count[orcName(i)])
		}
		e.orcWantHistory(orcName(i), 0, 1)
	}
	e.noFetch(nil)
}

// orcMTExpiryRecovery proves that after a dispatcher "crashes" holding several
// instances, concurrent dispatchers recover each instance exactly once, only
// after its lock expired, with the same messages and a second attempt, while
// the crashed holder's tokens are dead
// (provider_validation::instance_locking::test_multi_threaded_lock_expiration_recovery).
func orcMTExpiryRecovery(e *env) {
	const instances, workers = 5, 4
	for i := range instances {
		e.enqueue(orcRaise(orcName(i), "x"), 0)
	}
	crashed := map[string]string{}
	begin := time.Now()
	for range instances {
		item := e.mustFetch(orcHold)
		crashed[item.Instance] = item.LockToken
	}
	recovered := orcRecoverAll(e, workers, instances)
	for inst, it := range recovered {
		if it.at.Before(begin.Add(orcHold - orcClockSlack)) {
			e.t.Fatalf("%s recovered %v after the crash, before its %v lock expired", inst, it.at.Sub(begin), orcHold)
		}
		if it.item.AttemptCount != 2 {
			e.t.Fatalf("%s recovered with attempt %d, want 2", inst, it.item.AttemptCount)
		}
		e.wantMessages(it.item, orcRaise(inst, "x"))
		err := e.p.AckOrchestrationItem(e.ctx, crashed[inst], orcCommit(inst, 1, 1))
		wantPermanent(e.t, err, duroxide.ErrLockLost, "ack_orchestration_item", "lock_token")
		e.ack(it.item.LockToken, orcCommit(inst, 1, 1))
		e.orcWantHistory(inst, 0, 1)
	}
}

// orcRecovered is an item recovered by a dispatcher and when it returned.
type orcRecovered struct {
	item *duroxide.OrchestrationItem
	at   time.Time
}

// orcRecoverAll runs workers goroutines fetching until n instances are
// recovered (or a deadline passes); an instance recovered twice fails the
// test.
func orcRecoverAll(e *env, workers, n int) map[string]orcRecovered {
	var mu sync.Mutex
	got := map[string]orcRecovered{}
	deadline := time.Now().Add(orcHold + 5*time.Second)
	together(workers, func(int) {
		for time.Now().Before(deadline) {
			mu.Lock()
			finished := len(got) == n
			mu.Unlock()
			if finished {
				return
			}
			item := e.orcTryFetch(longLock)
			if item == nil {
				time.Sleep(10 * time.Millisecond) // sleep: the poll interval of a wait for the held locks to expire on the provider's clock
				continue
			}
			mu.Lock()
			if _, dup := got[item.Instance]; dup {
				e.t.Errorf("instance %s recovered twice", item.Instance)
			}
			got[item.Instance] = orcRecovered{item: item, at: time.Now()}
			mu.Unlock()
		}
	})
	if len(got) != n {
		e.t.Fatalf("recovered %d instances, want %d", len(got), n)
	}
	return got
}
