package redisprovider

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// delayedWorkItem enqueues activity id through another process on m and
// puts it back delayed by d: an item that becomes eligible at a due time.
func delayedWorkItem(t *testing.T, m *miniredis.Miniredis, id uint64, d time.Duration) {
	t.Helper()
	ctx := context.Background()
	p, err := openPartition(ctx, Options{URL: "redis://" + m.Addr() + "/0"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	act := duroxide.ActivityExecute{Instance: "i", ExecutionID: 1, ID: id, Name: "a", Input: "x"}
	if err := p.EnqueueForWorker(ctx, act); err != nil {
		t.Fatal(err)
	}
	it, err := p.FetchWorkItem(ctx, time.Minute, 0, nil, duroxide.DefaultOnly())
	if err != nil || it == nil {
		t.Fatalf("fetch: %v, %v", it, err)
	}
	if err := p.AbandonWorkItem(ctx, it.LockToken, d, false); err != nil {
		t.Fatal(err)
	}
}

// An empty fetch never waits for a due time, however soon: it runs again
// at its refresh, and leaves no claim or wake registration behind. The due
// loop runs at the due time instead.
func TestEmptyFetchWaitsForNoDueTime(t *testing.T) {
	t.Parallel()
	m, p := newMiniProvider(t)
	ctx := context.Background()
	_, a, err := workClass("fetch_work_item", time.Minute, time.Minute, time.Second, nil, duroxide.DefaultOnly())
	if err != nil {
		t.Fatal(err)
	}
	delayedWorkItem(t, m, 1, 5*time.Second)
	it, due, err := p.fetchWorkOnce(ctx, "fetch_work_item", a)
	if it != nil || err != nil {
		t.Fatalf("fetch: %v, %v; want nothing", it, err)
	}
	if due != refresh {
		t.Fatalf("empty fetch runs again in %v, want its refresh %v: fetches leave due times to the due loop", due, refresh)
	}
	for _, k := range m.Keys() {
		if f := p.Keys().Family(k); f == "wakedue" || f == "dueclaim" {
			t.Errorf("an empty fetch left %s", k)
		}
	}
}

// The due loop learns of a due time earlier than its next run at once: a
// parked fetcher gets an instance delayed by 300 ms long before the loop's
// refresh (10 s), with a handful of loop runs.
func TestDueLoopWakesForAnEarlierDueTime(t *testing.T) {
	t.Parallel()
	m, p := newMiniProvider(t)
	var loops scriptCounter
	loops.sha = p.scripts[scriptMoveDue].Hash()
	p.rdb.AddHook(&loops)
	ctx := context.Background()
	got := make(chan *duroxide.OrchestrationItem, 1)
	go func() {
		it, err := p.FetchOrchestrationItem(ctx, time.Minute, 30*time.Second, nil)
		if err != nil {
			t.Error(err)
		}
		got <- it
	}()
	waitSleeping(t, p, 1)
	planned := func() int64 {
		v, _ := m.Get(p.Keys().DueNext())
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	waitPollers(t, p, "the due loop's first run", func() bool { return planned() > 0 })
	first := planned()
	start := time.Now()
	if err := p.EnqueueForOrchestrator(ctx, startItem("late"), 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if next := planned(); next >= first {
		t.Fatalf("duenext %d after a due time 300 ms ahead, want it moved before %d", next, first)
	}
	select {
	case it := <-got:
		if it == nil {
			t.Fatal("the parked fetch ended with nothing")
		}
		if waited := time.Since(start); waited >= refresh {
			t.Fatalf("the delayed item came after %v: the loop slept to its refresh", waited)
		}
	case <-time.After(2 * refresh):
		t.Fatal("the delayed item never reached the parked fetch")
	}
	if n := loops.n.Load(); n > 4 {
		t.Errorf("%d due loop runs for one due time, want at most 4 (start, wake-up, due time, one early timer)", n)
	}
}

// Of two processes' due loops one claims a due time; when it closes first,
// the other runs at that time instead of at its refresh.
func TestClosingDueLoopHandsOverItsClaim(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	ctx := context.Background()
	var got [2]chan *duroxide.OrchestrationItem
	var procs [2]*partition
	for i := range procs {
		p, err := openPartition(ctx, Options{URL: "redis://" + m.Addr() + "/0"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		procs[i], got[i] = p, make(chan *duroxide.OrchestrationItem, 1)
		go func() {
			it, _ := p.FetchOrchestrationItem(ctx, time.Minute, 30*time.Second, nil)
			got[i] <- it
		}()
		waitSleeping(t, p, 1)
	}
	due := time.Now().Add(time.Second)
	if err := procs[0].EnqueueForOrchestrator(ctx, startItem("late"), time.Second); err != nil {
		t.Fatal(err)
	}
	owner := func() string {
		v, _ := m.Get(procs[0].Keys().DueOwner())
		return v
	}
	for _, p := range procs {
		p.WakeFetchers() // both loops learn the due time; one claims it
	}
	for _, p := range procs {
		waitPollers(t, p, "a claim of the due time", func() bool { return owner() == procs[0].hub.id || owner() == procs[1].hub.id })
	}
	claimant, other := 0, 1
	if owner() == procs[other].hub.id {
		claimant, other = other, claimant
	}
	procs[claimant].Close()
	select {
	case it := <-got[other]:
		if it == nil {
			t.Fatal("the other process's fetch ended with nothing")
		}
		if late := time.Since(due); late >= refresh/2 {
			t.Fatalf("the item came %v after its due time: the claim was not handed over", late)
		}
	case <-time.After(2 * refresh):
		t.Fatal("the delayed item never came")
	}
}

// A due time claimed by a loop whose process died (kill -9: no Close hands
// the claim over) is run by the backup loop a second after it, not at the
// others' refresh: the loop here learns of the time while a dead loop holds
// its claim, and its fetch still gets the delayed item within the grace.
func TestDueLoopBacksUpADeadClaimant(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	ctx := context.Background()
	p, err := openPartition(ctx, Options{URL: "redis://" + m.Addr() + "/0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	got := make(chan *duroxide.OrchestrationItem, 1)
	go func() {
		it, _ := p.FetchOrchestrationItem(ctx, time.Minute, 30*time.Second, nil)
		got <- it
	}()
	waitSleeping(t, p, 1)
	due := time.Now().Add(time.Second)
	if err := p.EnqueueForOrchestrator(ctx, startItem("late"), time.Second); err != nil {
		t.Fatal(err)
	}
	owner := func() string {
		v, _ := m.Get(p.Keys().DueOwner())
		return v
	}
	waitPollers(t, p, "the loop's claim of the due time", func() bool { return owner() == p.hub.id })
	// the claim passes to a loop that dies without giving it up; this
	// loop plans again while that claim holds
	if err := m.Set(p.Keys().DueOwner(), "a-loop-killed-with-its-process"); err != nil {
		t.Fatal(err)
	}
	p.WakeFetchers()
	select {
	case it := <-got:
		if it == nil {
			t.Fatal("the fetch ended with nothing")
		}
		if late := time.Since(due); late >= refresh/2 {
			t.Fatalf("the item came %v after its due time: nobody backed up the dead loop's claim", late)
		}
	case <-time.After(2 * refresh):
		t.Fatal("the delayed item never came")
	}
	if b, _ := m.Get(p.Keys().DueBackup()); b != "" && b != p.hub.id {
		t.Fatalf("backup %q, want this loop or none", b)
	}
}
