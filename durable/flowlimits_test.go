package durable_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// fanOut registers "Fan", which runs n activities named name at once.
func fanOut(reg *durable.Registry, name string, n int) {
	reg.MustAddOrchestration("Fan", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		fs := make([]durable.Awaitable, n)
		for i := range fs {
			fs[i] = ctx.ScheduleActivity(name, strconv.Itoa(i))
		}
		ctx.Join(fs...)
		return "done", nil
	})
}

// TestConcurrencyLimitHoldsAcrossRuntimes runs 12 activities on three
// runtimes of one namespace (three processes), 8 worker slots each, under a
// limit of 3: a ledger of the activities running never counts more than 3,
// and all complete. The activities finish one at a time, each only when 3
// run and every other item is accounted for, started or waiting in the
// queue (none fetched on its way to start), so a missing limit shows as a
// fourth start.
func TestConcurrencyLimitHoldsAcrossRuntimes(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testConcurrencyLimitHoldsAcrossRuntimes)
}

func testConcurrencyLimitHoldsAcrossRuntimes(t *testing.T, b durabletest.Backend) {
	const n, limit = 12, 3
	// over partitions a limit holds as per-partition shares
	// (docs/flow-control.md) and one instance's activities are all in its
	// partition: there its share, the limit set / P, is what binds
	setLimit := limit
	if b.Partitions > 1 {
		setLimit = limit * b.Partitions
	}
	ledger := newLimitLedger(n)
	reg := durable.NewRegistry()
	reg.MustAddActivity("Work", func(ctx *durable.ActivityContext, in string) (string, error) {
		return in, ledger.hold(ctx)
	})
	fanOut(reg, "Work", n)
	opts := durable.Options{WorkerConcurrency: 8, LongPollTimeout: 100 * time.Millisecond}
	e := durabletest.Start(t, reg, durabletest.WithOptions(opts), durabletest.WithBackend(b))
	ctx := context.Background()
	if err := e.Client.SetLimit(ctx, duroxide.Limit{Name: "Work", Concurrency: setLimit}); err != nil {
		t.Fatal(err)
	}
	e.NewRuntime(t, reg, opts)
	e.NewRuntime(t, reg, opts)
	if err := e.Client.StartOrchestration(ctx, "fan", "Fan", ""); err != nil {
		t.Fatal(err)
	}
	ledger.releaseUnderLimit(t, n, limit, e.Provider, nil)
	if st := e.Wait(t, "fan"); st.Status != durable.StatusCompleted {
		t.Fatalf("fan: %v %v", st.Status, st.Failure)
	}
	ledger.checkPeak(t, limit)
}

// limitLedger counts the activities of a limited name that run at once, in
// every runtime of the process, and holds each until the test releases it.
type limitLedger struct {
	running, peak, started atomic.Int64
	release                chan struct{}
}

// newLimitLedger is a ledger for n activities.
func newLimitLedger(n int) *limitLedger { return &limitLedger{release: make(chan struct{}, n)} }

// hold is an activity's body: it runs until released (nil) or cancelled.
func (l *limitLedger) hold(ctx context.Context) error {
	c := l.running.Add(1)
	for p := l.peak.Load(); c > p && !l.peak.CompareAndSwap(p, c); p = l.peak.Load() {
	}
	l.started.Add(1)
	defer l.running.Add(-1)
	select {
	case <-l.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// releaseUnderLimit releases the n activities one at a time, each only when
// limit of them run (or all that are left) and every other one is accounted
// for, started or waiting in q's worker queue (none fetched on its way to
// start), so a missing limit shows as one more start. first, if not nil,
// runs when the first limit run.
func (l *limitLedger) releaseUnderLimit(t *testing.T, n, limit int, q duroxide.ProviderAdmin, first func()) {
	t.Helper()
	for released := 0; released < n; released++ {
		durabletest.Eventually(t, "the limit's worth running, the rest waiting", func() (bool, error) {
			s := int(l.started.Load())
			if s-released < limit && s < n {
				return false, nil
			}
			d, err := q.GetQueueDepths(context.Background())
			return d.WorkerQueue+s == n, err
		})
		if released == 0 && first != nil {
			first()
		}
		l.checkPeak(t, limit)
		l.release <- struct{}{}
	}
}

// checkPeak fails the test if more than limit activities ever ran at once.
func (l *limitLedger) checkPeak(t *testing.T, limit int) {
	t.Helper()
	if p := l.peak.Load(); p > int64(limit) {
		t.Fatalf("%d activities ran at once under a limit of %d", p, limit)
	}
}

// TestConcurrencyLimitLeaseOfADeadWorkerReturnsAtLockExpiry: a worker that
// fetched the one item limit 1 allows and died (never acks nor abandons:
// its lock is not renewed) holds the lease until its lock expires, then the
// next item of the name runs.
func TestConcurrencyLimitLeaseOfADeadWorkerReturnsAtLockExpiry(t *testing.T) {
	t.Parallel()
	const lock = time.Minute
	ran := make(chan time.Time, 1)
	reg := durable.NewRegistry()
	var e *durabletest.Env
	reg.MustAddActivity("Work", func(ctx *durable.ActivityContext, in string) (string, error) {
		ran <- e.Now()
		return in, nil
	})
	fanOut(reg, "Work", 1)
	e = durabletest.Start(t, reg)
	ctx := context.Background()
	if err := e.Client.SetLimit(ctx, duroxide.Limit{Name: "Work", Concurrency: 1}); err != nil {
		t.Fatal(err)
	}
	// the dead worker's item: on a tag no runtime serves, fetched, never acked
	dead := "dead"
	if err := e.Provider.EnqueueForWorker(ctx, duroxide.ActivityExecute{Instance: "ghost", ExecutionID: 1, ID: 1, Name: "Work", Input: "x", Tag: &dead}); err != nil {
		t.Fatal(err)
	}
	w, err := e.Provider.FetchWorkItem(ctx, lock, 0, nil, duroxide.TagsOnly(dead))
	if err != nil || w == nil {
		t.Fatalf("dead worker's fetch: %v, %v", w, err)
	}
	expiry := e.Now().Add(lock)
	if err := e.Client.StartOrchestration(ctx, "fan", "Fan", ""); err != nil {
		t.Fatal(err)
	}
	durabletest.Eventually(t, "the activity queued", func() (bool, error) {
		d, err := e.Provider.GetQueueDepths(ctx)
		return d.WorkerQueue > 0, err
	})
	e.Advance(lock + time.Second)
	if st := e.Wait(t, "fan"); st.Status != durable.StatusCompleted {
		t.Fatalf("fan: %v %v", st.Status, st.Failure)
	}
	if at := <-ran; at.Before(expiry) {
		t.Fatalf("the activity ran at %v, before the dead worker's lock expired at %v", at, expiry)
	}
}

// TestLimitKeyLimitsPerKey: under limit 1, activities scheduled with
// different limit keys run at once, while a second one with the same key
// waits in the queue until the first finishes.
func TestLimitKeyLimitsPerKey(t *testing.T) {
	t.Parallel()
	var started atomic.Int64
	release := make(chan struct{}, 3)
	reg := durable.NewRegistry()
	reg.MustAddActivity("Work", func(ctx *durable.ActivityContext, in string) (string, error) {
		started.Add(1)
		select {
		case <-release:
			return in, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	reg.MustAddOrchestration("Keyed", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.Join(
			ctx.ScheduleActivity("Work", "a1", durable.WithLimitKey("customer-a")),
			ctx.ScheduleActivity("Work", "b1", durable.WithLimitKey("customer-b")),
			ctx.ScheduleActivity("Work", "a2", durable.WithLimitKey("customer-a")),
		)
		return "done", nil
	})
	e := durabletest.Start(t, reg, durabletest.WithOptions(durable.Options{WorkerConcurrency: 4, LongPollTimeout: 100 * time.Millisecond}))
	ctx := context.Background()
	if err := e.Client.SetLimit(ctx, duroxide.Limit{Name: "Work", Concurrency: 1}); err != nil {
		t.Fatal(err)
	}
	if err := e.Client.StartOrchestration(ctx, "keyed", "Keyed", ""); err != nil {
		t.Fatal(err)
	}
	durabletest.Eventually(t, "a1 and b1 running, a2 waiting", func() (bool, error) {
		d, err := e.Provider.GetQueueDepths(ctx)
		return started.Load() == 2 && d.WorkerQueue == 1, err
	})
	for range 3 {
		release <- struct{}{}
	}
	if st := e.Wait(t, "keyed"); st.Status != durable.StatusCompleted {
		t.Fatalf("keyed: %v %v", st.Status, st.Failure)
	}
	if n := started.Load(); n != 3 {
		t.Fatalf("%d activities started, want 3", n)
	}
}
