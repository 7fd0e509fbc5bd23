package durabletest_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// sleepFor is an orchestration that waits on one durable timer of d.
func sleepFor(d time.Duration) durable.OrchestrationFunc {
	return func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if _, err := ctx.Timer(d).Get(); err != nil {
			return "", err
		}
		return "woke", nil
	}
}

// approvalOrDeadline waits for "Approved" raced against a day-long timer.
func approvalOrDeadline(ctx *durable.OrchestrationContext, _ string) (string, error) {
	approved := ctx.WaitForEvent("Approved")
	if ctx.Select(approved, ctx.Timer(24*time.Hour)) == 1 {
		return "deadline", nil
	}
	return approved.Get()
}

func TestDurabletestSkipFiresDayLongTimerWithoutAdvance(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("Sleepy", sleepFor(24*time.Hour))
	env := durabletest.Start(t, reg)
	before := env.Now()
	st := env.StartAndWait(t, "sleepy", "Sleepy", "")
	if st.Status != durable.StatusCompleted || st.Output != "woke" {
		t.Fatalf("status %v output %q %s", st.Status, st.Output, st.FailureMessage())
	}
	if moved := env.Now().Sub(before); moved < 24*time.Hour {
		t.Fatalf("the clock moved %v, less than the timer's 24h", moved)
	}
}

func TestDurabletestSkipChainsTimersAndActivities(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	reg.MustAddActivity("Add", durable.Activity(func(_ *durable.ActivityContext, n int) (int, error) { return n + 1, nil }))
	reg.MustAddOrchestration("Steps", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		n := 0
		for range 3 {
			if _, err := ctx.Timer(time.Hour).Get(); err != nil {
				return "", err
			}
			out, err := ctx.ScheduleActivity("Add", strconv.Itoa(n)).Get()
			if err != nil {
				return "", err
			}
			if n, err = strconv.Atoi(out); err != nil {
				return "", err
			}
		}
		return strings.Repeat("x", n), nil
	})
	env := durabletest.Start(t, reg)
	if st := env.StartAndWait(t, "steps", "Steps", ""); st.Status != durable.StatusCompleted || st.Output != "xxx" {
		t.Fatalf("status %v output %q %s", st.Status, st.Output, st.FailureMessage())
	}
}

func TestDurabletestWaitForEventSubscriptionThenRaise(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	var released atomic.Bool
	started, release := make(chan struct{}), make(chan struct{})
	reg.MustAddActivity("Prepare", func(*durable.ActivityContext, string) (string, error) {
		close(started)
		<-release
		return "", nil
	})
	reg.MustAddOrchestration("Approval", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		if _, err := ctx.ScheduleActivity("Prepare", "").Get(); err != nil {
			return "", err
		}
		return approvalOrDeadline(ctx, in)
	})
	env := durabletest.Start(t, reg)
	if err := env.Client.StartOrchestration(t.Context(), "a-1", "Approval", ""); err != nil {
		t.Fatal(err)
	}
	go func() {
		<-started
		released.Store(true)
		close(release)
	}()
	// The subscription comes only after the activity, which runs only once
	// released: returning before that would be returning too early.
	env.WaitForEventSubscription(t, "a-1", "Approved")
	if !released.Load() {
		t.Fatal("WaitForEventSubscription returned before the orchestration could subscribe")
	}
	h, err := env.Provider.Read(t.Context(), "a-1")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(h, func(ev duroxide.Event) bool {
		k, ok := ev.Kind.(duroxide.ExternalSubscribedEvent)
		return ok && k.Name == "Approved"
	}) {
		t.Fatalf("no committed subscription in history: %d events", len(h))
	}
	if err := env.Client.RaiseEvent(t.Context(), "a-1", "Approved", "yes"); err != nil {
		t.Fatal(err)
	}
	// Time skipping is on: the event, queued before the wait, wins over
	// the deadline only because it was delivered.
	if st := env.Wait(t, "a-1"); st.Status != durable.StatusCompleted || st.Output != "yes" {
		t.Fatalf("status %v output %q %s", st.Status, st.Output, st.FailureMessage())
	}
}

func TestDurabletestSkipNoEventMeansDeadline(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("Approval", approvalOrDeadline)
	env := durabletest.Start(t, reg)
	if st := env.StartAndWait(t, "a-2", "Approval", ""); st.Status != durable.StatusCompleted || st.Output != "deadline" {
		t.Fatalf("status %v output %q %s", st.Status, st.Output, st.FailureMessage())
	}
}

func TestDurabletestWaitForTimerThenAdvance(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("Sleepy", sleepFor(24*time.Hour))
	env := durabletest.Start(t, reg, durabletest.WithTimeSkipping(false))
	before := env.Now()
	if err := env.Client.StartOrchestration(t.Context(), "s-1", "Sleepy", ""); err != nil {
		t.Fatal(err)
	}
	at := env.WaitForTimer(t, "s-1")
	if d := at.Sub(before); d < 24*time.Hour || d > 24*time.Hour+time.Minute {
		t.Fatalf("timer fires %v after the start, want about 24h", d)
	}
	if moved := env.Now().Sub(before); moved >= time.Hour {
		t.Fatalf("the clock moved %v without a skipping wait or Advance", moved)
	}
	if st, err := env.Client.Status(t.Context(), "s-1"); err != nil || st.Status != durable.StatusRunning {
		t.Fatalf("status %v, %v: want Running before the timer fires", st.Status, err)
	}
	env.Advance(at.Sub(env.Now()) + time.Millisecond)
	if st := env.Wait(t, "s-1"); st.Status != durable.StatusCompleted || st.Output != "woke" {
		t.Fatalf("status %v output %q %s", st.Status, st.Output, st.FailureMessage())
	}
}

// chargeRegistry is shared by the parallel Envs of the mock test: the
// mock of one must not reach the other.
func chargeRegistry(real *atomic.Int64) *durable.Registry {
	reg := durable.NewRegistry()
	reg.MustAddActivity("Charge", durable.Activity(func(_ *durable.ActivityContext, amount int) (string, error) {
		real.Add(1)
		return "real", nil
	}))
	reg.MustAddOrchestration("Pay", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		a, err := ctx.ScheduleActivity("Charge", "5").Get()
		if err != nil {
			return "", err
		}
		b, err := ctx.ScheduleActivity("Charge", "7").Get()
		return a + "," + b, err
	})
	return reg
}

func TestDurabletestMockActivity(t *testing.T) {
	t.Parallel()
	var real atomic.Int64
	reg := chargeRegistry(&real)
	t.Run("mocked", func(t *testing.T) {
		t.Parallel()
		env := durabletest.Start(t, reg)
		charge := env.MockActivity("Charge", durable.Activity(func(_ *durable.ActivityContext, amount int) (string, error) {
			if amount > 6 {
				return "", errors.New("declined")
			}
			return "mock", nil
		}))
		st := env.StartAndWait(t, "pay", "Pay", "")
		if st.Status != durable.StatusFailed || !strings.Contains(st.FailureMessage(), "declined") {
			t.Fatalf("status %v output %q %s: want the mock's decline", st.Status, st.Output, st.FailureMessage())
		}
		if charge.Calls() != 2 || !slices.Equal(charge.Inputs(), []string{"5", "7"}) {
			t.Fatalf("mock saw %d calls with %q, want 2 with [5 7]", charge.Calls(), charge.Inputs())
		}
	})
	t.Run("real", func(t *testing.T) {
		t.Parallel()
		env := durabletest.Start(t, reg)
		if st := env.StartAndWait(t, "pay", "Pay", ""); st.Status != durable.StatusCompleted || st.Output != `"real","real"` {
			t.Fatalf("status %v output %q %s: want the registered activity", st.Status, st.Output, st.FailureMessage())
		}
	})
	t.Cleanup(func() {
		if n := real.Load(); n != 2 {
			t.Errorf("the registered activity ran %d times, want 2 (the unmocked Env only)", n)
		}
	})
}

func TestDurabletestMockRegistryReplace(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddActivity("A", func(*durable.ActivityContext, string) (string, error) { return "a", nil })
	err := reg.Clone().ReplaceActivity("B", func(*durable.ActivityContext, string) (string, error) { return "", nil })
	if !errors.Is(err, duroxide.ErrNotFound) {
		t.Fatalf("replacing an unregistered activity: %v, want ErrNotFound", err)
	}
	if err := reg.ReplaceActivity("A", nil); !errors.Is(err, duroxide.ErrInvalidInput) {
		t.Fatalf("replacing with nil: %v, want ErrInvalidInput", err)
	}
}

// WaitForEventSubscription skips time like Wait: the orchestration sleeps an
// hour before it subscribes, and the wait returns at once instead of failing
// after DefaultWaitTimeout. Skipping stops once the subscription is there,
// so the day-long deadline raced against the event does not fire before
// the test raises it.
func TestDurabletestWaitForEventSubscriptionSkipsTime(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("LateApproval", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		if _, err := ctx.Timer(time.Hour).Get(); err != nil {
			return "", err
		}
		return approvalOrDeadline(ctx, in)
	})
	env := durabletest.Start(t, reg)
	before := env.Now()
	if err := env.Client.StartOrchestration(t.Context(), "late", "LateApproval", ""); err != nil {
		t.Fatal(err)
	}
	env.WaitForEventSubscription(t, "late", "Approved")
	if moved := env.Now().Sub(before); moved < time.Hour || moved >= 24*time.Hour {
		t.Fatalf("the clock moved %v, want past the 1h sleep and short of the 24h deadline", moved)
	}
	if err := env.Client.RaiseEvent(t.Context(), "late", "Approved", "yes"); err != nil {
		t.Fatal(err)
	}
	if st := env.Wait(t, "late"); st.Status != durable.StatusCompleted || st.Output != "yes" {
		t.Fatalf("status %v output %q %s", st.Status, st.Output, st.FailureMessage())
	}
}

// WaitForTimer skips time like Wait, up to the timer it waits for: the
// parent's timer comes only after a child's hour-long sleep, which is
// skipped; the parent's own day-long timer is then returned, not skipped.
func TestDurabletestWaitForTimerSkipsTimeUntilTheTimer(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("Sleepy", sleepFor(time.Hour))
	reg.MustAddOrchestration("Parent", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if _, err := ctx.ScheduleSubOrchestration("Sleepy", "").Get(); err != nil {
			return "", err
		}
		return sleepFor(24*time.Hour)(ctx, "")
	})
	env := durabletest.Start(t, reg)
	before := env.Now()
	if err := env.Client.StartOrchestration(t.Context(), "p", "Parent", ""); err != nil {
		t.Fatal(err)
	}
	at := env.WaitForTimer(t, "p")
	if d := at.Sub(before); d < 25*time.Hour || d > 25*time.Hour+time.Minute {
		t.Fatalf("the parent's timer fires %v after the start, want about 1h + 24h", d)
	}
	if st, err := env.Client.Status(t.Context(), "p"); err != nil || st.Status != durable.StatusRunning {
		t.Fatalf("status %v, %v: want Running, its timer not skipped", st.Status, err)
	}
	if st := env.Wait(t, "p"); st.Status != durable.StatusCompleted || st.Output != "woke" {
		t.Fatalf("status %v output %q %s", st.Status, st.Output, st.FailureMessage())
	}
}

// TestDurabletestOptionsClockIsTheRuntimes: a Clock in WithOptions is what
// the orchestration reads, and the timer it creates fires by it, while the
// Env's own clock keeps real time for Redis.
func TestDurabletestOptionsClockIsTheRuntimes(t *testing.T) {
	t.Parallel()
	frozen := time.UnixMilli(1_000_000_000_000)
	reg := durable.NewRegistry().MustAddOrchestration("Now", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if _, err := ctx.Timer(time.Minute).Get(); err != nil {
			return "", err
		}
		now, err := ctx.UTCNow().Get()
		return strconv.FormatInt(now.UnixMilli(), 10), err
	})
	env := durabletest.Start(t, reg, durabletest.WithOptions(durable.Options{Clock: func() time.Time { return frozen }}))
	st := env.StartAndWait(t, "now", "Now", "")
	if want := strconv.FormatInt(frozen.UnixMilli(), 10); st.Status != durable.StatusCompleted || st.Output != want {
		t.Fatalf("status %v output %q %s, want the frozen %s", st.Status, st.Output, st.FailureMessage(), want)
	}
	if env.Now().Before(frozen.AddDate(1, 0, 0)) {
		t.Fatalf("the Env's clock %v follows the runtime's frozen one", env.Now())
	}
}

// TestDurabletestRestartRunsNewCodeOnTheSameStorage: an instance waiting
// when the runtime restarts finishes on the new runtime's registry.
func TestDurabletestRestartRunsNewCodeOnTheSameStorage(t *testing.T) {
	t.Parallel()
	version := func(v string) *durable.Registry {
		return durable.NewRegistry().MustAddOrchestration("Wait", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			_, err := ctx.WaitForEvent("go").Get()
			return v, err
		})
	}
	env := durabletest.Start(t, version("old"))
	if err := env.Client.StartOrchestration(t.Context(), "w", "Wait", ""); err != nil {
		t.Fatal(err)
	}
	env.WaitForEventSubscription(t, "w", "go")
	old := env.Runtime
	env.Restart(t, version("new"), durable.Options{})
	if env.Runtime == old {
		t.Fatal("Restart kept the old runtime")
	}
	if err := env.Client.RaiseEvent(t.Context(), "w", "go", ""); err != nil {
		t.Fatal(err)
	}
	if st := env.Wait(t, "w"); st.Status != durable.StatusCompleted || st.Output != "new" {
		t.Fatalf("status %v output %q %s, want the new code's output", st.Status, st.Output, st.FailureMessage())
	}
}
