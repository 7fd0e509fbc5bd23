package durable_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

func TestE2EKeyValueAndCustomStatus(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2EKeyValueAndCustomStatus)
}

func testE2EKeyValueAndCustomStatus(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Writer", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetValue("a", "1")
		ctx.SetValue("b", "2")
		ctx.ClearValue("b")
		ctx.SetCustomStatus("halfway")
		if _, err := ctx.WaitForEvent("go").Get(); err != nil {
			return "", err
		}
		v, _ := ctx.Value("a")
		return v, nil
	})
	reg.MustAddOrchestration("Reader", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		v, err := ctx.ValueFromInstance("writer", "a").Get()
		if err != nil || v == nil {
			return "", err
		}
		missing, err := ctx.ValueFromInstance("writer", "b").Get()
		if err != nil || missing != nil {
			return "", errors.New("b should be unset")
		}
		return *v, nil
	})
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend))
	ctx := t.Context()
	if err := env.Client.StartOrchestration(ctx, "writer", "Writer", ""); err != nil {
		t.Fatal(err)
	}
	st, err := env.Client.WaitForStatusChange(ctx, "writer", 0, 10*time.Second)
	if err != nil || st.CustomStatus == nil || *st.CustomStatus != "halfway" || st.Status != durable.StatusRunning {
		t.Fatalf("status %+v err %v", st, err)
	}
	if v, ok, err := env.Client.KVValue(ctx, "writer", "a"); err != nil || !ok || v != "1" {
		t.Fatalf("kv a = %q %v %v", v, ok, err)
	}
	mustComplete(t, env.StartAndWait(t, "reader", "Reader", ""), "1")
	if err := env.Client.RaiseEvent(ctx, "writer", "go", ""); err != nil {
		t.Fatal(err)
	}
	mustComplete(t, env.Wait(t, "writer"), "1")
}

func TestE2ESystemCalls(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2ESystemCalls)
}

func testE2ESystemCalls(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Sys", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		id, err := ctx.NewGUID().Get()
		if err != nil {
			return "", err
		}
		now, err := ctx.UTCNow().Get()
		if err != nil {
			return "", err
		}
		if now.Before(time.Now().Add(-time.Hour)) { //durablelint:ignore a test of the recorded clock against the real one, not replayed
			return "", errors.New("clock far off")
		}
		return id, nil
	})
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend))
	st := env.StartAndWait(t, "sys", "Sys", "")
	if st.Status != durable.StatusCompleted || len(st.Output) != 36 {
		t.Fatalf("status %v output %q %s", st.Status, st.Output, st.FailureMessage())
	}
	h := read(t, env, "sys")
	if a := h[1].Kind.(duroxide.ActivityScheduledEvent); a.Name != "__duroxide_syscall:new_guid" {
		t.Fatalf("first syscall %q", a.Name)
	}
	if a := h[3].Kind.(duroxide.ActivityScheduledEvent); a.Name != "__duroxide_syscall:utc_now_ms" {
		t.Fatalf("second syscall %q", a.Name)
	}
}

func TestE2ECancelCascadesToChildrenAndActivities(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2ECancelCascadesToChildrenAndActivities)
}

func testE2ECancelCascadesToChildrenAndActivities(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry()
	// The activity must be running before the cancel: an activity item still
	// queued when its orchestration is cancelled is dropped unrun, and then
	// there is no context to cancel (the cause of an earlier flaky failure on
	// the slower Cluster backend).
	started, sawCancel := make(chan struct{}), make(chan struct{})
	var once sync.Once
	reg.MustAddActivity("Block", func(ctx *durable.ActivityContext, _ string) (string, error) {
		once.Do(func() { close(started) })
		<-ctx.Done()
		close(sawCancel)
		return "", ctx.Err()
	})
	reg.MustAddOrchestration("Child", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.WaitForEvent("never").Get()
	})
	reg.MustAddOrchestration("Parent", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		child := ctx.ScheduleSubOrchestration("Child", "")
		act := ctx.ScheduleActivity("Block", "")
		ctx.Join(child, act)
		return "", nil
	})
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend), durabletest.WithOptions(durable.Options{
		LongPollTimeout: 100 * time.Millisecond, WorkerLockTimeout: 2 * time.Second,
	}))
	ctx := t.Context()
	if err := env.Client.StartOrchestration(ctx, "p", "Parent", ""); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, env, "p::sub::2", 2)
	select {
	case <-started:
	case <-time.After(durabletest.DefaultWaitTimeout):
		t.Fatal("the activity never started")
	}
	if err := env.Client.CancelInstance(ctx, "p", "user says stop"); err != nil {
		t.Fatal(err)
	}
	st := env.Wait(t, "p")
	if st.Status != durable.StatusFailed || st.FailureMessage() != "canceled: user says stop" {
		t.Fatalf("parent %v %q", st.Status, st.FailureMessage())
	}
	child := env.Wait(t, "p::sub::2")
	if child.Status != durable.StatusFailed || child.FailureMessage() != "canceled: parent canceled" {
		t.Fatalf("child %v %q", child.Status, child.FailureMessage())
	}
	select {
	case <-sawCancel:
	case <-time.After(durabletest.DefaultWaitTimeout):
		t.Fatal("the running activity never saw its context cancelled")
	}
}

func TestE2EVersions(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2EVersions)
}

func testE2EVersions(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry()
	reg.MustAddOrchestrationVersion("V", "1.0.0", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if _, err := ctx.WaitForEvent("go").Get(); err != nil {
			return "", err
		}
		return "v1:" + ctx.OrchestrationVersion(), nil
	})
	reg.MustAddOrchestrationVersion("V", "2.0.0", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return "v2", nil
	})
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend))
	mustComplete(t, env.StartAndWait(t, "latest", "V", ""), "v2")
	ctx := t.Context()
	if err := env.Client.StartOrchestration(ctx, "pinned", "V", "", durable.WithVersion("1.0.0")); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, env, "pinned", 2)
	if err := env.Client.RaiseEvent(ctx, "pinned", "go", ""); err != nil {
		t.Fatal(err)
	}
	mustComplete(t, env.Wait(t, "pinned"), "v1:1.0.0")
	info, err := env.Client.Admin().GetInstanceInfo(ctx, "pinned")
	if err != nil || info.OrchestrationVersion != "1.0.0" {
		t.Fatalf("info %+v %v", info, err)
	}
}

func TestE2EIdempotentStartAndDetached(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2EIdempotentStartAndDetached)
}

func testE2EIdempotentStartAndDetached(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry()
	var runs atomic.Int32
	reg.MustAddActivity("Count", func(*durable.ActivityContext, string) (string, error) {
		runs.Add(1)
		return "", nil
	})
	reg.MustAddOrchestration("Once", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		if _, err := ctx.ScheduleActivity("Count", "").Get(); err != nil {
			return "", err
		}
		ctx.StartOrchestration("spawned-"+in, "Once", "x")
		return in, nil
	})
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend))
	ctx := t.Context()
	for i := range 3 {
		err := env.Client.StartOrchestration(ctx, "once", "Once", "a")
		if i > 0 && errors.Is(err, durable.ErrAlreadyExists) {
			err = env.Client.StartOrchestration(ctx, "once", "Once", "a", durable.UseExisting())
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	mustComplete(t, env.Wait(t, "once"), "a")
	mustComplete(t, env.Wait(t, "spawned-a"), "x")
	mustComplete(t, env.Wait(t, "spawned-x"), "x")
	if err := env.Client.StartOrchestration(ctx, "once", "Once", "a", durable.UseExisting()); err != nil {
		t.Fatal(err)
	}
	// sleep: shows that nothing happens: the start was refused before any
	// enqueue, so no signal comes; a wrongly enqueued restart gets time to run
	time.Sleep(200 * time.Millisecond)
	if n := len(read(t, env, "once")); n != 5 {
		t.Fatalf("restarted a completed instance: %d events", n)
	}
}

func TestE2EQueueCarriesAcrossContinueAsNew(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2EQueueCarriesAcrossContinueAsNew)
}

func testE2EQueueCarriesAcrossContinueAsNew(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Drain", durable.Orchestration(func(ctx *durable.OrchestrationContext, seen []string) ([]string, error) {
		msg, err := ctx.Dequeue("inbox").Get()
		if err != nil {
			return nil, err
		}
		seen = append(seen, msg)
		if len(seen) < 3 {
			durable.ContinueAsNew(ctx, seen)
		}
		return seen, nil
	}))
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend))
	ctx := t.Context()
	// Messages for an instance that has not started are dropped by the
	// provider, so start first; then all three arrive, and the ones the first
	// execution does not take are carried into the next executions.
	if err := env.Client.StartOrchestration(ctx, "drain", "Drain", "[]"); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, env, "drain", 2)
	for _, m := range []string{"m1", "m2", "m3"} {
		if err := env.Client.EnqueueEvent(ctx, "drain", "inbox", m); err != nil {
			t.Fatal(err)
		}
	}
	mustComplete(t, env.Wait(t, "drain"), `["m1","m2","m3"]`)
}

func TestE2EPoisonActivity(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2EPoisonActivity)
}

func testE2EPoisonActivity(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("CallsMissing", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.ScheduleActivity("NotRegistered", "").Get()
	})
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend), durabletest.WithOptions(durable.Options{
		LongPollTimeout: 100 * time.Millisecond, MaxAttempts: 2,
		UnregisteredBackoffBase: time.Millisecond, UnregisteredBackoffMax: time.Millisecond,
	}))
	st := env.StartAndWait(t, "poison", "CallsMissing", "")
	if st.Status != durable.StatusFailed || !strings.Contains(st.FailureMessage(), "poison: activity NotRegistered#2 exceeded 3 attempts (max 2)") {
		t.Fatalf("status %v %q", st.Status, st.FailureMessage())
	}
	if st.Failure.Poison == nil || st.Failure.Poison.MessageType.Activity == nil {
		t.Fatalf("a system failure of an activity fails the orchestration with it, got %+v", st.Failure)
	}
}

func TestE2ESessionAffinity(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2ESessionAffinity)
}

func testE2ESessionAffinity(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry()
	reg.MustAddActivity("Where", func(ctx *durable.ActivityContext, _ string) (string, error) {
		s, _ := ctx.SessionID()
		if !strings.HasSuffix(ctx.WorkerID(), "-node-a") {
			return "", errors.New("worker id " + ctx.WorkerID() + " does not name the node")
		}
		// Any worker of the owning runtime may serve the session.
		return s + "@node-a", nil
	})
	reg.MustAddOrchestration("Sess", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		a, err := ctx.ScheduleActivity("Where", "", durable.WithSession("s1")).Get()
		if err != nil {
			return "", err
		}
		b, err := ctx.ScheduleActivity("Where", "", durable.WithSession("s1")).Get()
		if a != b {
			return "", errors.New("session moved: " + a + " then " + b)
		}
		return a, err
	})
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend), durabletest.WithOptions(durable.Options{LongPollTimeout: 100 * time.Millisecond, WorkerNodeID: "node-a"}))
	st := env.StartAndWait(t, "sess", "Sess", "")
	mustComplete(t, st, "s1@node-a")
	h := read(t, env, "sess")
	if a := h[1].Kind.(duroxide.ActivityScheduledEvent); a.SessionID == nil || *a.SessionID != "s1" {
		t.Fatalf("scheduled %+v", a)
	}
}

func TestE2EShutdownIsPrompt(t *testing.T) { durabletest.Each(t, testE2EShutdownIsPrompt) }

func testE2EShutdownIsPrompt(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Noop", func(*durable.OrchestrationContext, string) (string, error) { return "", nil })
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend))
	mustComplete(t, env.StartAndWait(t, "noop", "Noop", ""), "")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := env.Runtime.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("shutdown of an idle runtime took %v", d)
	}
}

func TestE2EShutdownDeadlineHandsActivityBack(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2EShutdownDeadlineHandsActivityBack)
}

func testE2EShutdownDeadlineHandsActivityBack(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry()
	started := make(chan struct{}, 1)
	reg.MustAddActivity("Stuck", func(ctx *durable.ActivityContext, _ string) (string, error) {
		started <- struct{}{}
		<-ctx.Done()
		return "", ctx.Err()
	})
	reg.MustAddOrchestration("UsesStuck", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.ScheduleActivity("Stuck", "").Get()
	})
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend))
	if err := env.Client.StartOrchestration(t.Context(), "stuck", "UsesStuck", ""); err != nil {
		t.Fatal(err)
	}
	<-started
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if err := env.Runtime.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("shutdown returned %v, want the deadline", err)
	}
	// The activity was abandoned, not failed: it is queued for the next run.
	depths, err := env.Client.Admin().GetQueueDepths(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if depths.WorkerQueue != 1 {
		t.Fatalf("worker queue depth %d, want the abandoned activity", depths.WorkerQueue)
	}
	if n := len(read(t, env, "stuck")); n != 2 {
		t.Fatalf("history has %d events; the activity must not have completed or failed", n)
	}
}

func TestE2ENondeterminismFailsTheInstance(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2ENondeterminismFailsTheInstance)
}

func testE2ENondeterminismFailsTheInstance(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry()
	var changed atomic.Bool
	reg.MustAddOrchestration("Fickle", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		name := "First"
		if changed.Load() {
			name = "Second" // a deployment changed the code under a running instance
		}
		ctx.ScheduleActivity(name, "")
		return ctx.WaitForEvent("go").Get()
	})
	reg.MustAddActivity("First", func(*durable.ActivityContext, string) (string, error) { return "", nil })
	// the changed code must be replayed: a cached instance would resume
	// where it waits, running the old code's state
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend), durabletest.WithOptions(durable.Options{InstanceCacheEntries: -1}))
	ctx := t.Context()
	if err := env.Client.StartOrchestration(ctx, "fickle", "Fickle", ""); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, env, "fickle", 3)
	changed.Store(true)
	// A deployment replaces the runtime, and its successor replays the
	// history with the new code (the runtime that ran the first turn keeps
	// the code it started cached, so it would not notice).
	shutdown(t, env.Runtime)
	env.NewRuntime(t, reg, durable.Options{LongPollTimeout: 100 * time.Millisecond})
	if err := env.Client.RaiseEvent(ctx, "fickle", "go", ""); err != nil {
		t.Fatal(err)
	}
	st := env.Wait(t, "fickle")
	if st.Status != durable.StatusFailed || st.Failure.Configuration == nil ||
		!strings.HasPrefix(st.FailureMessage(), "nondeterministic: schedule mismatch") {
		t.Fatalf("status %v %q", st.Status, st.FailureMessage())
	}
}

func TestE2EUnregisteredOrchestrationIsPoisoned(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2EUnregisteredOrchestrationIsPoisoned)
}

func testE2EUnregisteredOrchestrationIsPoisoned(t *testing.T, backend durabletest.Backend) {
	env := durabletest.Start(t, durable.NewRegistry(), durabletest.WithBackend(backend), durabletest.WithOptions(durable.Options{
		LongPollTimeout: 100 * time.Millisecond, MaxAttempts: 2,
		UnregisteredBackoffBase: time.Millisecond, UnregisteredBackoffMax: time.Millisecond,
	}))
	st := env.StartAndWait(t, "ghost", "Ghost", "in")
	if st.Status != durable.StatusFailed || st.Failure.Poison == nil || st.Failure.Poison.MessageType.Orchestration == nil {
		t.Fatalf("status %v %+v", st.Status, st.Failure)
	}
	// duroxide's message, then the cause, which duroxide only logs
	const cause = "orchestration Ghost (version any) is not registered in the runtimes that fetched it"
	if want := "poison: orchestration ghost exceeded 3 attempts (max 2); cause: " + cause; st.FailureMessage() != want || st.FailureCause != cause {
		t.Fatalf("message %q (cause %q), want %q", st.FailureMessage(), st.FailureCause, want)
	}
	if info, err := env.Client.Admin().GetInstanceInfo(t.Context(), "ghost"); err != nil || info.Output == nil || *info.Output != st.FailureMessage() {
		t.Fatalf("the record's output %v (%v), want the message with its cause", info.Output, err)
	}
	// the history is duroxide's: the start as fetched, and the poison
	// failure whose details carry no cause (they are duroxide's type)
	h := read(t, env, "ghost")
	assertKinds(t, h, []string{"OrchestrationStarted", "OrchestrationFailed"})
	if s := h[0].Kind.(duroxide.OrchestrationStartedEvent); s.Name != "Ghost" || s.Input != "in" {
		t.Fatalf("recorded start %+v", s)
	}
	if d := h[1].Kind.(duroxide.OrchestrationFailedEvent).Details; d.Poison == nil || strings.Contains(fmt.Sprintf("%+v", d), "registered") {
		t.Fatalf("recorded failure %+v: want duroxide's poison details alone", d)
	}
	if st.Pending != nil {
		t.Errorf("a failed instance keeps a pending note: %+v", st.Pending)
	}
}

func TestE2ERetryWithTimeoutStopsRetrying(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	reg.MustAddActivity("Hang", func(ctx *durable.ActivityContext, _ string) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	reg.MustAddOrchestration("Impatient", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		_, err := ctx.ScheduleActivityWithRetry("Hang", "", durable.RetryPolicy{MaxAttempts: 3, Timeout: time.Minute}).Get()
		return err.Error(), nil
	})
	env := durabletest.Start(t, reg)
	if err := env.Client.StartOrchestration(t.Context(), "imp", "Impatient", ""); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, env, "imp", 3)
	env.Advance(2 * time.Minute)
	mustComplete(t, env.Wait(t, "imp"), "timeout: activity timed out")
	assertKinds(t, read(t, env, "imp"), []string{"OrchestrationStarted", "ActivityScheduled", "TimerCreated",
		"TimerFired", "ActivityCancelRequested", "OrchestrationCompleted"})
}

func TestE2ETaggedActivityRunsOnMatchingWorker(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2ETaggedActivityRunsOnMatchingWorker)
}

func testE2ETaggedActivityRunsOnMatchingWorker(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry()
	reg.MustAddActivity("Where", func(ctx *durable.ActivityContext, _ string) (string, error) {
		tag, _ := ctx.Tag()
		return tag + "@" + ctx.WorkerID(), nil
	})
	reg.MustAddOrchestration("Tagged", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetCustomStatus("scheduling")
		ctx.ResetCustomStatus()
		ctx.SetValue("k1", "v")
		ctx.ClearAllValues()
		if _, ok := ctx.Value("k1"); ok {
			return "", errors.New("ClearAllValues left k1")
		}
		return ctx.ScheduleActivity("Where", "", durable.WithTag("gpu")).Get()
	})
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend))
	gpu, err := durable.NewRuntime(env.Provider, reg, durable.Options{
		LongPollTimeout: 100 * time.Millisecond, WorkerNodeID: "node-gpu", WorkerTagFilter: duroxide.TagsOnly("gpu"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gpu.Shutdown(context.Background()) })
	st := env.StartAndWait(t, "tagged", "Tagged", "")
	if st.Status != durable.StatusCompleted || !strings.HasPrefix(st.Output, "gpu@work-") || !strings.HasSuffix(st.Output, "-node-gpu") {
		t.Fatalf("status %v output %q %s", st.Status, st.Output, st.FailureMessage())
	}
	if st.CustomStatus != nil {
		t.Fatalf("custom status %q after reset", *st.CustomStatus)
	}
	if all, err := env.Client.KVAllValues(t.Context(), "tagged"); err != nil || len(all) != 0 {
		t.Fatalf("kv %v %v", all, err)
	}
}

func TestE2EDocExampleOnMiniredis(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	reg.MustAddActivity("ChargeCard", durable.Activity(chargeCard))
	reg.MustAddOrchestration("ProcessOrder", durable.Orchestration(processOrder))
	env := durabletest.Start(t, reg)
	ctx := t.Context()
	if err := env.Client.StartOrchestrationJSON(ctx, "order-42", "ProcessOrder", Order{ID: "42", Total: 9.5}); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, env, "order-42", 7) // started, status, charge, timer, result, wait, timer
	if err := env.Client.RaiseEvent(ctx, "order-42", "Shipped", "1Z999"); err != nil {
		t.Fatal(err)
	}
	mustComplete(t, env.Wait(t, "order-42"), `"receipt-42"`)

	// The same order never shipped: the day-long timer decides, in no time.
	if err := env.Client.StartOrchestrationJSON(ctx, "order-43", "ProcessOrder", Order{ID: "43"}); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, env, "order-43", 7)
	env.Advance(25 * time.Hour)
	st := env.Wait(t, "order-43")
	if st.Status != durable.StatusFailed || st.FailureMessage() != "order 43 not shipped in time" {
		t.Fatalf("status %v %q", st.Status, st.FailureMessage())
	}
}

func TestE2ESelectLoserChildIsCancelled(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Forever", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.WaitForEvent("never").Get()
	})
	reg.MustAddOrchestration("Impatient", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		child := ctx.ScheduleSubOrchestration("Forever", "")
		if ctx.Select(child, ctx.Timer(time.Minute)) == 1 {
			return "gave up", nil
		}
		return child.Get()
	})
	env := durabletest.Start(t, reg)
	if err := env.Client.StartOrchestration(t.Context(), "imp", "Impatient", ""); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, env, "imp::sub::2", 2)
	env.Advance(2 * time.Minute)
	mustComplete(t, env.Wait(t, "imp"), "gave up")
	st := env.Wait(t, "imp::sub::2")
	if st.Status != durable.StatusFailed || st.FailureMessage() != "canceled: parent dropped sub-orchestration future" {
		t.Fatalf("child %v %q", st.Status, st.FailureMessage())
	}
}
