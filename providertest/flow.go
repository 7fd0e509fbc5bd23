package providertest

import (
	"math"
	"slices"
	"testing"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The FlowLimits section: duroxide.FlowController, for a provider that has it.
// A limit holds per activity name across every fetcher; on a partitioned
// provider each partition enforces a share of it, so the cases use a
// concurrency of 1 (every share is at least 1) and keep the items they
// limit on one instance (one partition).

func init() { register("FlowLimits", runFlow) }

var flCases = []envCase{
	{"LimitedItemAtCapacityDoesNotBlockOthers", flNoHeadOfLineBlocking},
	{"AckReturnsTheLease", flAckReturnsLease},
	{"AbandonReturnsTheLease", flAbandonReturnsLease},
	{"ExpiredLockReturnsTheLease", flExpiryReturnsLease},
	{"DeleteLimitReleasesWaitingItems", flDeleteReleases},
	{"LimitKeyLimitsEachKeyApart", flKeys},
	{"InvalidLimitsAreRejected", flInvalid},
	{"LimitsListsWhatWasSet", flList},
}

func runFlow(t *testing.T, h Harness) {
	if _, ok := h.New(t).(duroxide.FlowController); !ok {
		t.Skip("the provider is not a duroxide.FlowController")
	}
	runCases(t, h, flCases)
}

// flLimit sets a limit or fails the test.
func (e *env) flLimit(l duroxide.Limit) {
	e.t.Helper()
	if err := e.p.(duroxide.FlowController).SetLimit(e.ctx, l); err != nil {
		e.t.Fatalf("SetLimit(%+v): %v", l, err)
	}
}

// flAct is activity id of instance "fl-a" named name.
func flAct(name string, id uint64) duroxide.ActivityExecute {
	a := activity("fl-a", id)
	a.Name = name
	return a
}

// flHoldTheLease sets a limit of 1 on "Lim", enqueues two of its items and
// fetches one, which holds the lease: the other is not handed out.
func (e *env) flHoldTheLease() *duroxide.LockedWorkItem {
	e.t.Helper()
	e.flLimit(duroxide.Limit{Name: "Lim", Concurrency: 1})
	e.enqueueWork(flAct("Lim", 1))
	e.enqueueWork(flAct("Lim", 2))
	w := e.flFetchName("Lim")
	e.noWork(duroxide.AnyTag())
	return w
}

// flFetchName fetches an item that must be of activity name.
func (e *env) flFetchName(name string) *duroxide.LockedWorkItem {
	e.t.Helper()
	w := e.mustFetchWork(longLock, duroxide.AnyTag())
	if got := w.Item.(duroxide.ActivityExecute).Name; got != name {
		e.t.Fatalf("fetched an item of %q, want %q", got, name)
	}
	return w
}

// flNoHeadOfLineBlocking: with the limited name at capacity, its next item,
// older than an unlimited one, is skipped and the unlimited one fetched.
func flNoHeadOfLineBlocking(e *env) {
	e.flLimit(duroxide.Limit{Name: "Lim", Concurrency: 1})
	e.enqueueWork(flAct("Lim", 1))
	e.enqueueWork(flAct("Lim", 2))
	e.enqueueWork(flAct("Free", 3))
	e.flFetchName("Lim")
	e.flFetchName("Free")
	e.noWork(duroxide.AnyTag())
}

func flAckReturnsLease(e *env) {
	w := e.flHoldTheLease()
	e.ackWork(w.LockToken, nil)
	e.flFetchName("Lim")
}

func flAbandonReturnsLease(e *env) {
	w := e.flHoldTheLease()
	e.abandonWork(w.LockToken, 0, false)
	e.flFetchName("Lim")
	e.noWork(duroxide.AnyTag())
}

// flExpiryReturnsLease: a holder that never acks (a killed worker) holds
// its lease until its lock expires, not longer.
func flExpiryReturnsLease(e *env) {
	e.flLimit(duroxide.Limit{Name: "Lim", Concurrency: 1})
	e.enqueueWork(flAct("Lim", 1))
	e.enqueueWork(flAct("Lim", 2))
	if w := e.fetchWork(shortLock, nil, duroxide.AnyTag()); w == nil {
		e.t.Fatal("no item fetched")
	}
	e.noWork(duroxide.AnyTag())
	e.wait(afterShort)
	// both are eligible again: the expired one and the one it held back
	a := e.flFetchName("Lim")
	e.noWork(duroxide.AnyTag())
	e.ackWork(a.LockToken, nil)
	e.flFetchName("Lim")
}

func flDeleteReleases(e *env) {
	e.flHoldTheLease()
	had, err := e.p.(duroxide.FlowController).DeleteLimit(e.ctx, duroxide.ActivityName, "Lim")
	if err != nil || !had {
		e.t.Fatalf("DeleteLimit = %v, %v; want true, nil", had, err)
	}
	e.flFetchName("Lim")
}

func flInvalid(e *env) {
	fl := e.p.(duroxide.FlowController)
	for _, c := range []struct {
		l    duroxide.Limit
		word string
	}{
		{duroxide.Limit{Concurrency: 1}, "name"},
		{duroxide.Limit{Name: "Lim", Concurrency: -1}, "Lim"},
		{duroxide.Limit{Name: "Lim", RatePerSecond: -1, Burst: 1}, "Lim"},
		{duroxide.Limit{Name: "Lim", RatePerSecond: math.NaN(), Burst: 1}, "Lim"},
		{duroxide.Limit{Name: "Lim", RatePerSecond: 5}, "burst"},
		{duroxide.Limit{Name: "Lim"}, "Lim"},
		{duroxide.Limit{Kind: duroxide.OrchestrationName, Name: "Orch", Concurrency: 1, RatePerSecond: 5, Burst: 1}, "Orch"},
		{duroxide.Limit{Kind: duroxide.OrchestrationName, Name: "Orch"}, "Orch"},
		{duroxide.Limit{Kind: duroxide.NameKind(9), Name: "Lim", Concurrency: 1}, "kind"},
	} {
		wantPermanent(e.t, fl.SetLimit(e.ctx, c.l), duroxide.ErrInvalidInput, "set_limit", c.word)
	}
	_, err := fl.DeleteLimit(e.ctx, duroxide.ActivityName, "")
	wantPermanent(e.t, err, duroxide.ErrInvalidInput, "delete_limit", "name")
}

func flList(e *env) {
	fl := e.p.(duroxide.FlowController)
	e.flLimit(duroxide.Limit{Name: "B", Concurrency: 1})
	e.flLimit(duroxide.Limit{Name: "A", RatePerSecond: 10, Burst: 5})
	ls, err := fl.Limits(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(ls) != 2 || ls[0].Name != "A" || ls[1].Name != "B" || ls[0].RatePerSecond < 9.99 || ls[0].RatePerSecond > 10.01 || ls[1].Concurrency < 1 {
		e.t.Fatalf("Limits = %+v, want A (rate 10) then B (concurrency >= 1)", ls)
	}
	if had, err := fl.DeleteLimit(e.ctx, duroxide.ActivityName, "B"); err != nil || !had {
		e.t.Fatalf("DeleteLimit(B) = %v, %v", had, err)
	}
	if had, err := fl.DeleteLimit(e.ctx, duroxide.ActivityName, "B"); err != nil || had {
		e.t.Fatalf("DeleteLimit(B) again = %v, %v; want false, nil", had, err)
	}
	// an orchestration limit of the same name is another limit, listed
	// after the activities'
	e.flLimit(duroxide.Limit{Kind: duroxide.OrchestrationName, Name: "A", Concurrency: 1})
	ls, err = fl.Limits(e.ctx)
	if err != nil || len(ls) != 2 || ls[0].Kind != duroxide.ActivityName || ls[1].Kind != duroxide.OrchestrationName || ls[1].Name != "A" || ls[1].Concurrency < 1 {
		e.t.Fatalf("Limits = %+v, %v; want activity A, then orchestration A", ls, err)
	}
	if had, err := fl.DeleteLimit(e.ctx, duroxide.OrchestrationName, "A"); err != nil || !had {
		e.t.Fatalf("DeleteLimit(orchestration A) = %v, %v", had, err)
	}
	if ls, err = fl.Limits(e.ctx); err != nil || len(ls) != 1 || ls[0].Kind != duroxide.ActivityName {
		e.t.Fatalf("Limits = %+v, %v; want activity A alone", ls, err)
	}
}

// flKeys: with limit keys the limit holds per key: the second item of key
// a waits while a's first runs, b's runs, and so does an item without key.
func flKeys(e *env) {
	e.flLimit(duroxide.Limit{Name: "Lim", Concurrency: 1})
	keyed := func(id uint64, key string) duroxide.ActivityExecute {
		a := flAct("Lim", id)
		if key != "" {
			a.LimitKey = &key
		}
		return a
	}
	e.enqueueWork(keyed(1, "a"))
	e.enqueueWork(keyed(2, "a"))
	e.enqueueWork(keyed(3, "b"))
	e.enqueueWork(keyed(4, ""))
	var got []uint64
	for range 3 {
		got = append(got, e.mustFetchWork(longLock, duroxide.AnyTag()).Item.(duroxide.ActivityExecute).ID)
	}
	if !slices.Equal(got, []uint64{1, 3, 4}) {
		e.t.Fatalf("fetched activities %v, want 1 (key a), 3 (key b), 4 (no key)", got)
	}
	e.noWork(duroxide.AnyTag())
}
