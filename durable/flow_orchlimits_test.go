package durable_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// instLedger records which instances of a limited orchestration run: its
// "Hold" activity notes the instance started and blocks until the test
// finishes it (nil: complete, an error: fail it), so the instances running
// at once are the activities blocked.
type instLedger struct {
	mu      sync.Mutex
	started []string
	running map[string]chan error
	peak    int
}

func newInstLedger() *instLedger { return &instLedger{running: map[string]chan error{}} }

// register adds the activity "Hold" and the orchestration name, which runs
// it once on its instance id and ends as it ends; an input of "again"
// continues as new once first.
func (l *instLedger) register(reg *durable.Registry, name string) {
	reg.MustAddActivity("Hold", func(ctx *durable.ActivityContext, inst string) (string, error) {
		done := make(chan error, 1)
		l.mu.Lock()
		l.started = append(l.started, inst)
		l.running[inst] = done
		l.peak = max(l.peak, len(l.running))
		l.mu.Unlock()
		defer func() {
			l.mu.Lock()
			delete(l.running, inst)
			l.mu.Unlock()
		}()
		select {
		case err := <-done:
			return inst, err
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	l.registerOrch(reg, name)
}

// registerOrch adds orchestration name (see register), for a second name
// sharing the activity.
func (l *instLedger) registerOrch(reg *durable.Registry, name string) {
	reg.MustAddOrchestration(name, func(ctx *durable.OrchestrationContext, in string) (string, error) {
		if in == "again" {
			ctx.ContinueAsNew("")
			return "", nil
		}
		return ctx.ScheduleActivity("Hold", ctx.InstanceID()).Get()
	})
}

// finish ends the running activity of inst with err.
func (l *instLedger) finish(t *testing.T, inst string, err error) {
	t.Helper()
	l.mu.Lock()
	done, ok := l.running[inst]
	l.mu.Unlock()
	if !ok {
		t.Fatalf("%s is not running", inst)
	}
	done <- err
}

// waitStarted waits until n instances started and returns them in order.
func (l *instLedger) waitStarted(t *testing.T, n int) []string {
	t.Helper()
	var got []string
	durabletest.Eventually(t, fmt.Sprintf("%d instances started", n), func() (bool, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		got = append([]string(nil), l.started...)
		return len(got) >= n, nil
	})
	return got
}

// snapshot returns the instances started so far and the peak running.
func (l *instLedger) snapshot() ([]string, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.started...), l.peak
}

// orchLimit sets the limit on running instances of name.
func orchLimit(t *testing.T, e *durabletest.Env, name string, n int) {
	t.Helper()
	if err := e.Client.SetLimit(context.Background(), duroxide.Limit{Kind: duroxide.OrchestrationName, Name: name, Concurrency: n}); err != nil {
		t.Fatal(err)
	}
}

// waitLimited waits until Limits reports running and held instances of
// orchestration name.
func waitLimited(t *testing.T, e *durabletest.Env, name string, running, held int) {
	t.Helper()
	durabletest.Eventually(t, fmt.Sprintf("%s: %d running, %d held", name, running, held), func() (bool, error) {
		ls, err := e.Client.Limits(context.Background())
		for _, l := range ls {
			if l.Kind == duroxide.OrchestrationName && l.Name == name {
				return l.Running == running && l.Held == held, err
			}
		}
		return false, err
	})
}

// TestOrchestrationLimitRunsAtMostNInStartOrder: under a limit of 2 on "O",
// 5 starts are accepted, 2 run and 3 are held (Limits says so, and the
// status of a held one is Pending, naming the limit); each end of a running
// instance lets the oldest held one run, so all 5 run, in start order, never
// more than 2 at once, and all complete.
func TestOrchestrationLimitRunsAtMostNInStartOrder(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testOrchestrationLimitRunsAtMostNInStartOrder)
}

// onePartition skips a backend of several partitions: there each holds a
// share of the limit (TestOrchestrationLimitSharesOverPartitions), and the
// instances of a test fall in partitions by their hashes.
func onePartition(t *testing.T, b durabletest.Backend) {
	if b.Partitions > 1 {
		t.Skip("a namespace of several partitions holds the limit as shares, by partition")
	}
}

func testOrchestrationLimitRunsAtMostNInStartOrder(t *testing.T, b durabletest.Backend) {
	onePartition(t, b)
	l := newInstLedger()
	reg := durable.NewRegistry()
	l.register(reg, "O")
	e := durabletest.Start(t, reg, durabletest.WithOptions(durable.Options{WorkerConcurrency: 8}), durabletest.WithBackend(b))
	ctx := context.Background()
	orchLimit(t, e, "O", 2)
	for i := range 5 {
		if err := e.Client.StartOrchestration(ctx, fmt.Sprintf("o%d", i), "O", ""); err != nil {
			t.Fatal(err)
		}
	}
	l.waitStarted(t, 2)
	waitLimited(t, e, "O", 2, 3)
	st, err := e.Client.Status(ctx, "o4")
	if err != nil || st.Status != durable.StatusPending || st.Pending == nil || !strings.Contains(st.Pending.Reason, "limit on running instances") {
		t.Fatalf("held o4: %+v %v, want Pending by the limit", st, err)
	}
	for k := range 5 {
		started := l.waitStarted(t, min(k+2, 5))
		if k+2 <= 5 {
			if want := fmt.Sprintf("o%d", k+1); k >= 1 && started[k+1] != want {
				t.Fatalf("started %v: #%d is %s, want %s (start order)", started, k+1, started[k+1], want)
			}
		}
		if got, peak := l.snapshot(); len(got) > k+2 || peak > 2 {
			t.Fatalf("started %v with %d at once under a limit of 2", got, peak)
		}
		l.finish(t, started[k], nil)
		if st := e.Wait(t, started[k]); st.Status != durable.StatusCompleted {
			t.Fatalf("%s: %v %v", started[k], st.Status, st.Failure)
		}
	}
	started, peak := l.snapshot()
	if strings.Join(started[2:], ",") != "o2,o3,o4" || peak > 2 {
		t.Fatalf("started %v, peak %d: want o2,o3,o4 released in start order, at most 2 at once", started, peak)
	}
	waitLimited(t, e, "O", 0, 0)
}

// TestOrchestrationLimitReleasesOnEveryEnd: under a limit of 1 the held
// instance runs when the running one fails, is cancelled, or is deleted.
func TestOrchestrationLimitReleasesOnEveryEnd(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testOrchestrationLimitReleasesOnEveryEnd)
}

func testOrchestrationLimitReleasesOnEveryEnd(t *testing.T, b durabletest.Backend) {
	onePartition(t, b)
	for _, end := range []string{"fail", "cancel", "delete"} {
		t.Run(end, func(t *testing.T) {
			t.Parallel()
			l := newInstLedger()
			reg := durable.NewRegistry()
			l.register(reg, "O")
			e := durabletest.Start(t, reg, durabletest.WithOptions(durable.Options{WorkerConcurrency: 8}), durabletest.WithBackend(b))
			ctx := context.Background()
			orchLimit(t, e, "O", 1)
			for _, id := range []string{"a", "b"} {
				if err := e.Client.StartOrchestration(ctx, id, "O", ""); err != nil {
					t.Fatal(err)
				}
			}
			l.waitStarted(t, 1)
			waitLimited(t, e, "O", 1, 1)
			if got, _ := l.snapshot(); len(got) != 1 || got[0] != "a" {
				t.Fatalf("started %v, want a alone", got)
			}
			switch end {
			case "fail":
				l.finish(t, "a", errors.New("boom"))
				if st := e.Wait(t, "a"); st.Status != durable.StatusFailed {
					t.Fatalf("a: %v", st.Status)
				}
			case "cancel":
				if err := e.Client.CancelInstance(ctx, "a", "stop"); err != nil {
					t.Fatal(err)
				}
				if st := e.Wait(t, "a"); st.Status != durable.StatusFailed {
					t.Fatalf("a: %v", st.Status)
				}
			case "delete":
				if _, err := e.Provider.Admin().DeleteInstance(ctx, "a", true); err != nil {
					t.Fatal(err)
				}
			}
			if got := l.waitStarted(t, 2); got[1] != "b" {
				t.Fatalf("started %v, want b second", got)
			}
			l.finish(t, "b", nil)
			if st := e.Wait(t, "b"); st.Status != durable.StatusCompleted {
				t.Fatalf("b: %v %v", st.Status, st.Failure)
			}
			waitLimited(t, e, "O", 0, 0)
		})
	}
}

// TestOrchestrationLimitContinueAsNewKeepsItsSlot: an instance that
// continues as new under a limit of 1 keeps its slot: its next execution
// runs while the other start stays held, which runs once it completes.
func TestOrchestrationLimitContinueAsNewKeepsItsSlot(t *testing.T) {
	t.Parallel()
	l := newInstLedger()
	reg := durable.NewRegistry()
	l.register(reg, "O")
	e := durabletest.Start(t, reg, durabletest.WithOptions(durable.Options{WorkerConcurrency: 8}))
	ctx := context.Background()
	orchLimit(t, e, "O", 1)
	if err := e.Client.StartOrchestration(ctx, "c", "O", "again"); err != nil {
		t.Fatal(err)
	}
	if err := e.Client.StartOrchestration(ctx, "d", "O", ""); err != nil {
		t.Fatal(err)
	}
	// c's second execution runs its activity: d is still held
	l.waitStarted(t, 1)
	waitLimited(t, e, "O", 1, 1)
	if got, _ := l.snapshot(); len(got) != 1 || got[0] != "c" {
		t.Fatalf("started %v, want c (continued as new) alone", got)
	}
	l.finish(t, "c", nil)
	if got := l.waitStarted(t, 2); got[1] != "d" {
		t.Fatalf("started %v, want d second", got)
	}
	l.finish(t, "d", nil)
	for _, id := range []string{"c", "d"} {
		if st := e.Wait(t, id); st.Status != durable.StatusCompleted {
			t.Fatalf("%s: %v %v", id, st.Status, st.Failure)
		}
	}
}

// TestOrchestrationLimitHoldsItsNameOnly: a limit of 1 on "O" holds the
// second start of O, not the starts of "P" nor sub-orchestrations of other
// names; a sub-orchestration of O started by a P counts against O's limit.
func TestOrchestrationLimitHoldsItsNameOnly(t *testing.T) {
	t.Parallel()
	l := newInstLedger()
	reg := durable.NewRegistry()
	l.register(reg, "O")
	l.registerOrch(reg, "P")
	reg.MustAddOrchestration("Parent", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.ScheduleSubOrchestration("O", "", durable.WithInstanceID("child")).Get()
	})
	e := durabletest.Start(t, reg, durabletest.WithOptions(durable.Options{WorkerConcurrency: 8}))
	ctx := context.Background()
	orchLimit(t, e, "O", 1)
	for _, s := range [][2]string{{"o1", "O"}, {"p1", "P"}, {"p2", "P"}, {"parent", "Parent"}} {
		if err := e.Client.StartOrchestration(ctx, s[0], s[1], ""); err != nil {
			t.Fatal(err)
		}
	}
	// o1, p1, p2 run at once; the sub-orchestration "child" of O is held
	l.waitStarted(t, 3)
	waitLimited(t, e, "O", 1, 1)
	got, _ := l.snapshot()
	if strings.Contains(strings.Join(got, ","), "child") {
		t.Fatalf("started %v: the child of O ran past the limit", got)
	}
	for _, id := range []string{"p1", "p2", "o1"} {
		l.finish(t, id, nil)
	}
	if got := l.waitStarted(t, 4); got[3] != "child" {
		t.Fatalf("started %v, want the child fourth", got)
	}
	l.finish(t, "child", nil)
	if st := e.Wait(t, "parent"); st.Status != durable.StatusCompleted {
		t.Fatalf("parent: %v %v", st.Status, st.Failure)
	}
}

// TestOrchestrationLimitDeleteReleasesAllHeld: deleting the limit runs
// every held instance at once; the activity limit of the same name was
// not touched (kinds are stored apart).
func TestOrchestrationLimitDeleteReleasesAllHeld(t *testing.T) {
	t.Parallel()
	l := newInstLedger()
	reg := durable.NewRegistry()
	l.register(reg, "O")
	e := durabletest.Start(t, reg, durabletest.WithOptions(durable.Options{WorkerConcurrency: 8}))
	ctx := context.Background()
	orchLimit(t, e, "O", 1)
	if err := e.Client.SetLimit(ctx, duroxide.Limit{Name: "O", Concurrency: 7}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := e.Client.StartOrchestration(ctx, fmt.Sprintf("o%d", i), "O", ""); err != nil {
			t.Fatal(err)
		}
	}
	waitLimited(t, e, "O", 1, 2)
	if had, err := e.Client.DeleteLimit(ctx, duroxide.OrchestrationName, "O"); err != nil || !had {
		t.Fatalf("DeleteLimit = %v, %v", had, err)
	}
	l.waitStarted(t, 3)
	ls, err := e.Client.Limits(ctx)
	if err != nil || len(ls) != 1 || ls[0].Kind != duroxide.ActivityName || ls[0].Concurrency != 7 {
		t.Fatalf("Limits = %+v, %v; want the activity limit O alone", ls, err)
	}
	for i := range 3 {
		l.finish(t, fmt.Sprintf("o%d", i), nil)
	}
	for i := range 3 {
		if st := e.Wait(t, fmt.Sprintf("o%d", i)); st.Status != durable.StatusCompleted {
			t.Fatalf("o%d: %v %v", i, st.Status, st.Failure)
		}
	}
}

// TestOrchestrationLimitRejectsRates: an orchestration limit bounds running
// instances only; a rate, a burst, or no bound is ErrInvalidInput naming
// the call and the name.
func TestOrchestrationLimitRejectsRates(t *testing.T) {
	t.Parallel()
	e := durabletest.Start(t, durable.NewRegistry())
	ctx := context.Background()
	for _, l := range []duroxide.Limit{
		{Kind: duroxide.OrchestrationName, Name: "Batch", Concurrency: 1, RatePerSecond: 2, Burst: 1},
		{Kind: duroxide.OrchestrationName, Name: "Batch", Burst: 1},
		{Kind: duroxide.OrchestrationName, Name: "Batch"},
	} {
		err := e.Client.SetLimit(ctx, l)
		if !errors.Is(err, duroxide.ErrInvalidInput) || !strings.Contains(err.Error(), "set_limit") || !strings.Contains(err.Error(), "Batch") {
			t.Fatalf("SetLimit(%+v) = %v, want ErrInvalidInput naming set_limit and Batch", l, err)
		}
	}
}
