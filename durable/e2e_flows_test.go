package durable_test

import (
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

func read(t *testing.T, env *durabletest.Env, instance string) []duroxide.Event {
	t.Helper()
	h, err := env.Provider.Read(t.Context(), instance)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func mustComplete(t *testing.T, st durable.OrchestrationStatus, output string) {
	t.Helper()
	if st.Status != durable.StatusCompleted {
		t.Fatalf("status %v: %s", st.Status, st.FailureMessage())
	}
	if st.Output != output {
		t.Fatalf("output %q, want %q", st.Output, output)
	}
}

func TestE2EFanOutFanIn(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2EFanOutFanIn)
}

func testE2EFanOutFanIn(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry()
	reg.MustAddActivity("Square", durable.Activity(func(_ *durable.ActivityContext, n int) (int, error) { return n * n, nil }))
	reg.MustAddOrchestration("Sum", durable.Orchestration(func(ctx *durable.OrchestrationContext, n int) (int, error) {
		var fs []durable.Future[int]
		var aw []durable.Awaitable
		for i := 1; i <= n; i++ {
			f := durable.ScheduleActivity[int](ctx, "Square", i)
			fs, aw = append(fs, f), append(aw, f)
		}
		ctx.Join(aw...)
		sum := 0
		for _, f := range fs {
			v, err := f.Get()
			if err != nil {
				return 0, err
			}
			sum += v
		}
		return sum, nil
	}))
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend), durabletest.WithOptions(durable.Options{LongPollTimeout: 100 * time.Millisecond, WorkerConcurrency: 4}))
	mustComplete(t, env.StartAndWait(t, "fan", "Sum", "5"), "55")
	h := read(t, env, "fan")
	// Five schedules with ids 2..6 in code order, then five completions.
	for i := 1; i <= 5; i++ {
		s, ok := h[i].Kind.(duroxide.ActivityScheduledEvent)
		if !ok || s.Input != strconv.Itoa(i) || h[i].EventID != uint64(i+1) {
			t.Fatalf("event %d: %+v", i, h[i])
		}
	}
	if got := h[len(h)-1].Kind.EventType(); got != "OrchestrationCompleted" || len(h) != 12 {
		t.Fatalf("history of %d events ending in %s", len(h), got)
	}
}

func TestE2EExternalEvent(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2EExternalEvent)
}

func testE2EExternalEvent(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Approve", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.WaitForEvent("Approval").Get()
	})
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend))
	if err := env.Client.StartOrchestration(t.Context(), "appr", "Approve", ""); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, env, "appr", 2)
	if err := env.Client.RaiseEvent(t.Context(), "appr", "Approval", "yes"); err != nil {
		t.Fatal(err)
	}
	mustComplete(t, env.Wait(t, "appr"), "yes")
	assertKinds(t, read(t, env, "appr"), []string{"OrchestrationStarted", "ExternalSubscribed", "ExternalEvent", "OrchestrationCompleted"})
}

func TestE2ESubOrchestration(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2ESubOrchestration)
}

func testE2ESubOrchestration(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Child", func(_ *durable.OrchestrationContext, in string) (string, error) { return "child:" + in, nil })
	reg.MustAddOrchestration("Parent", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		a, err := ctx.ScheduleSubOrchestration("Child", in).Get()
		if err != nil {
			return "", err
		}
		b, err := ctx.ScheduleSubOrchestration("Child", "x", durable.WithInstanceID("explicit-child")).Get()
		return a + "," + b, err
	})
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend))
	mustComplete(t, env.StartAndWait(t, "par", "Parent", "p"), "child:p,child:x")
	h := read(t, env, "par")
	if s := h[1].Kind.(duroxide.SubOrchestrationScheduledEvent); s.Instance != "sub::2" {
		t.Fatalf("auto child id %q, want sub::2", s.Instance)
	}
	mustComplete(t, env.Wait(t, "par::sub::2"), "child:p")
	child := read(t, env, "par::sub::2")
	start := child[0].Kind.(duroxide.OrchestrationStartedEvent)
	if start.ParentInstance == nil || *start.ParentInstance != "par" || start.ParentID == nil || *start.ParentID != 2 {
		t.Fatalf("child start %+v", start)
	}
	mustComplete(t, env.Wait(t, "explicit-child"), "child:x")
}

func TestE2EContinueAsNew(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2EContinueAsNew)
}

func testE2EContinueAsNew(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Counter", durable.Orchestration(func(ctx *durable.OrchestrationContext, n int) (int, error) {
		if n < 3 {
			durable.ContinueAsNew(ctx, n+1)
		}
		return n * 10, nil
	}))
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend))
	mustComplete(t, env.StartAndWait(t, "cnt", "Counter", "0"), "30")
	execs, err := env.Client.Admin().ListExecutions(t.Context(), "cnt")
	if err != nil {
		t.Fatal(err)
	}
	if len(execs) != 4 {
		t.Fatalf("executions %v, want 4", execs)
	}
	first, err := env.Client.Admin().ReadHistoryWithExecutionID(t.Context(), "cnt", 1)
	if err != nil {
		t.Fatal(err)
	}
	assertKinds(t, first, []string{"OrchestrationStarted", "OrchestrationContinuedAsNew"})
}

func TestE2ESelectTimerWins(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	release := make(chan struct{})
	reg.MustAddActivity("Slow", func(ctx *durable.ActivityContext, _ string) (string, error) {
		select {
		case <-release:
			return "done", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	reg.MustAddOrchestration("Race", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		act := ctx.ScheduleActivity("Slow", "")
		timer := ctx.Timer(time.Minute)
		if ctx.Select(act, timer) == 1 {
			return "timeout", nil
		}
		return act.Get()
	})
	env := durabletest.Start(t, reg)
	defer close(release)
	if err := env.Client.StartOrchestration(t.Context(), "race", "Race", ""); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, env, "race", 3)
	env.Advance(2 * time.Minute)
	mustComplete(t, env.Wait(t, "race"), "timeout")
	h := read(t, env, "race")
	assertKinds(t, h, []string{"OrchestrationStarted", "ActivityScheduled", "TimerCreated", "TimerFired", "ActivityCancelRequested", "OrchestrationCompleted"})
	c := h[4].Kind.(duroxide.ActivityCancelRequestedEvent)
	if c.Reason != "dropped_future" || *h[4].SourceEventID != 2 {
		t.Fatalf("cancel event %+v", h[4])
	}
}

func TestE2ERetry(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2ERetry)
}

func testE2ERetry(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry()
	var calls atomic.Int32
	reg.MustAddActivity("Flaky", func(_ *durable.ActivityContext, _ string) (string, error) {
		if calls.Add(1) < 3 {
			return "", errors.New("transient")
		}
		return "ok", nil
	})
	reg.MustAddOrchestration("Retry", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.ScheduleActivityWithRetry("Flaky", "", durable.RetryPolicy{MaxAttempts: 5, Backoff: durable.Backoff{Kind: durable.BackoffNone}}).Get()
	})
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend))
	mustComplete(t, env.StartAndWait(t, "retry", "Retry", ""), "ok")
	assertKinds(t, read(t, env, "retry"), []string{"OrchestrationStarted",
		"ActivityScheduled", "ActivityFailed", "ActivityScheduled", "ActivityFailed",
		"ActivityScheduled", "ActivityCompleted", "OrchestrationCompleted"})
}

func TestE2EFailureAndPanic(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2EFailureAndPanic)
}

func testE2EFailureAndPanic(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry()
	reg.MustAddActivity("Boom", func(_ *durable.ActivityContext, _ string) (string, error) { return "", errors.New("kaboom") })
	reg.MustAddOrchestration("Fails", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		_, err := ctx.ScheduleActivity("Boom", "").Get()
		var te *durable.TaskError
		if !errors.As(err, &te) {
			return "", fmt.Errorf("unexpected %T", err)
		}
		return "", fmt.Errorf("wrapped: %w", err)
	})
	reg.MustAddOrchestration("Panics", func(_ *durable.OrchestrationContext, _ string) (string, error) { panic("oh no") })
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend))
	st := env.StartAndWait(t, "fails", "Fails", "")
	if st.Status != durable.StatusFailed || st.FailureMessage() != "wrapped: kaboom" {
		t.Fatalf("status %v %q", st.Status, st.FailureMessage())
	}
	st = env.StartAndWait(t, "panics", "Panics", "")
	if st.Status != durable.StatusFailed || st.Failure.Application == nil || st.Failure.Application.Kind.Variant != duroxide.AppErrorPanicked {
		t.Fatalf("status %v %+v", st.Status, st.Failure)
	}
	if st.FailureMessage() != "orchestration panicked: oh no" {
		t.Fatalf("message %q", st.FailureMessage())
	}
}

func TestE2EManyInstancesConcurrently(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2EManyInstancesConcurrently)
}

func testE2EManyInstancesConcurrently(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry()
	reg.MustAddActivity("Greet", durable.Activity(greet))
	reg.MustAddOrchestration("Hello", durable.Orchestration(func(ctx *durable.OrchestrationContext, name string) (string, error) {
		a := durable.ScheduleActivity[string](ctx, "Greet", name)
		b := durable.ScheduleActivity[string](ctx, "Greet", name+"!")
		ctx.Join(a, b)
		x, _ := a.Get()
		y, _ := b.Get()
		return x + y, nil
	}))
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend), durabletest.WithOptions(durable.Options{
		LongPollTimeout: 100 * time.Millisecond, OrchestrationConcurrency: 4, WorkerConcurrency: 4,
	}))
	const n = 30
	for i := range n {
		if err := env.Client.StartOrchestrationJSON(t.Context(), fmt.Sprintf("many-%d", i), "Hello", fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		want := fmt.Sprintf(`"Hello, %d!Hello, %d!!"`, i, i)
		mustComplete(t, env.Wait(t, fmt.Sprintf("many-%d", i)), want)
	}
}

func TestE2EGoBlockRacesRetriesAgainstDeadline(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2EGoBlockRacesRetriesAgainstDeadline)
}

func testE2EGoBlockRacesRetriesAgainstDeadline(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry()
	var calls atomic.Int32
	reg.MustAddActivity("Flaky", func(_ *durable.ActivityContext, _ string) (string, error) {
		if calls.Add(1) == 1 {
			return "", errors.New("first try fails")
		}
		return "paid", nil
	})
	reg.MustAddOrchestration("Pay", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		pay := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
			return ctx.ScheduleActivityWithRetry("Flaky", "", durable.RetryPolicy{MaxAttempts: 3}).Get()
		})
		if ctx.Select(pay, ctx.Timer(time.Hour)) == 1 {
			return "too slow", nil
		}
		return pay.Get()
	})
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend))
	mustComplete(t, env.StartAndWait(t, "pay", "Pay", ""), "paid")
	assertKinds(t, read(t, env, "pay"), []string{"OrchestrationStarted", "TimerCreated",
		"ActivityScheduled", "ActivityFailed", "TimerCreated", "TimerFired", // retry backoff of 100ms
		"ActivityScheduled", "ActivityCompleted", "OrchestrationCompleted"})
}

// A retried activity is a future like any other: here it loses a race to an
// event while it waits out an hour's backoff, and the orchestration goes on.
func TestE2ERetriedActivityCanBeRaced(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	reg.MustAddActivity("Down", func(*durable.ActivityContext, string) (string, error) {
		return "", errors.New("service down")
	})
	reg.MustAddOrchestration("Race", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		retry := ctx.ScheduleActivityWithRetry("Down", "", durable.RetryPolicy{MaxAttempts: 5,
			Backoff: durable.Backoff{Kind: durable.BackoffFixed, Base: time.Hour}})
		stop := ctx.WaitForEvent("stop")
		if ctx.Select(retry, stop) == 1 {
			return "stopped", nil
		}
		return retry.Get()
	})
	env := durabletest.Start(t, reg)
	if err := env.Client.StartOrchestration(t.Context(), "race", "Race", ""); err != nil {
		t.Fatal(err)
	}
	env.WaitForTimer(t, "race") // the backoff: the activity failed once
	if err := env.Client.RaiseEvent(t.Context(), "race", "stop", ""); err != nil {
		t.Fatal(err)
	}
	mustComplete(t, env.Wait(t, "race"), "stopped")
}
