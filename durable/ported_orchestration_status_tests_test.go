package durable_test

import (
	"errors"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/orchestration_status_tests.rs. Where duroxide
// sleeps to let an instance reach Running, these wait for the activity to
// start (a channel), which can only happen once the start was processed.

// gatedActivity signals started when it begins and returns "quick" once
// release is closed (or fails when its context ends).
func gatedActivity(started chan<- struct{}, release <-chan struct{}) durable.ActivityFunc {
	return func(ctx *durable.ActivityContext, _ string) (string, error) {
		started <- struct{}{}
		select {
		case <-release:
			return "quick", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// activityOrch returns what activity name returns for the orchestration's input.
func activityOrch(name string) durable.OrchestrationFunc {
	return func(ctx *durable.OrchestrationContext, in string) (string, error) {
		return ctx.ScheduleActivity(name, in).Get()
	}
}

func status(t *testing.T, env *durabletest.Env, instance string) durable.OrchestrationStatus {
	t.Helper()
	st, err := env.Client.Status(t.Context(), instance)
	if err != nil {
		t.Fatalf("status of %s: %v", instance, err)
	}
	return st
}

// TestStatusNotFound mirrors test_status_not_found.
func TestStatusNotFound(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, durable.NewRegistry())
	if st := status(t, env, "nonexistent-instance"); st.Status != durable.StatusNotFound {
		t.Fatalf("status %v, want NotFound", st.Status)
	}
}

// TestStatusRunning mirrors test_status_running.
func TestStatusRunning(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}, 1), make(chan struct{})
	reg := durable.NewRegistry().
		MustAddActivity("BlockForever", gatedActivity(started, release)).
		MustAddOrchestration("RunningOrch", activityOrch("BlockForever"))
	env := durabletest.Start(t, reg)
	defer close(release)
	if err := env.Client.StartOrchestration(t.Context(), "test-running", "RunningOrch", ""); err != nil {
		t.Fatal(err)
	}
	<-started
	if st := status(t, env, "test-running"); st.Status != durable.StatusRunning {
		t.Fatalf("status %v, want Running", st.Status)
	}
}

// TestStatusCompleted mirrors test_status_completed: the output is the same
// from the wait and from a later status read.
func TestStatusCompleted(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("ReturnValue", func(_ *durable.ActivityContext, in string) (string, error) { return "result: " + in, nil }).
		MustAddOrchestration("CompletedOrch", activityOrch("ReturnValue"))
	env := durabletest.Start(t, reg)
	mustComplete(t, env.StartAndWait(t, "test-completed", "CompletedOrch", "test-input"), "result: test-input")
	mustComplete(t, status(t, env, "test-completed"), "result: test-input")
}

// TestStatusFailed mirrors test_status_failed.
func TestStatusFailed(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("FailActivity", func(*durable.ActivityContext, string) (string, error) { return "", errors.New("intentional failure") }).
		MustAddOrchestration("FailedOrch", activityOrch("FailActivity"))
	env := durabletest.Start(t, reg)
	wantAppFailure(t, env.StartAndWait(t, "test-failed", "FailedOrch", ""), duroxide.AppErrorOrchestrationFailed, "intentional failure")
	wantAppFailure(t, status(t, env, "test-failed"), duroxide.AppErrorOrchestrationFailed, "intentional failure")
}

// TestStatusAfterContinueAsNew mirrors test_status_after_continue_as_new: the
// status is the last execution's, whose start holds the last input.
func TestStatusAfterContinueAsNew(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("ContinueAsNewOrch", durable.Orchestration(func(ctx *durable.OrchestrationContext, n int) (string, error) {
		if n < 2 {
			durable.ContinueAsNew(ctx, n+1)
			return "", nil
		}
		return "done: 2", nil
	}))
	env := durabletest.Start(t, reg)
	st := env.StartAndWait(t, "test-continue", "ContinueAsNewOrch", "0")
	mustComplete(t, st, `"done: 2"`)
	mustComplete(t, status(t, env, "test-continue"), `"done: 2"`)
	hist := read(t, env, "test-continue")
	s, ok := hist[0].Kind.(duroxide.OrchestrationStartedEvent)
	if !ok || s.Input != "2" {
		t.Fatalf("current execution starts with %#v, want OrchestrationStarted with input 2", hist[0].Kind)
	}
}

// TestStatusCancelled mirrors test_status_cancelled: a cancelled instance is
// Failed with an Application Cancelled error carrying the reason.
func TestStatusCancelled(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}, 1), make(chan struct{})
	reg := durable.NewRegistry().
		MustAddActivity("LongTask", gatedActivity(started, release)).
		MustAddOrchestration("CancellableOrch", activityOrch("LongTask"))
	env := durabletest.Start(t, reg)
	defer close(release)
	if err := env.Client.StartOrchestration(t.Context(), "test-cancelled", "CancellableOrch", ""); err != nil {
		t.Fatal(err)
	}
	<-started
	if err := env.Client.CancelInstance(t.Context(), "test-cancelled", "test requested cancellation"); err != nil {
		t.Fatal(err)
	}
	st := env.Wait(t, "test-cancelled")
	if st.Status != durable.StatusFailed || st.Failure.Application == nil ||
		st.Failure.Application.Kind.Variant != duroxide.AppErrorCancelled || st.Failure.Application.Kind.Reason != "test requested cancellation" {
		t.Fatalf("status %v failure %+v, want Cancelled with the reason", st.Status, st.Failure)
	}
}

// TestStatusLifecycleTransitions mirrors test_status_lifecycle_transitions:
// NotFound, then Running, then Completed.
func TestStatusLifecycleTransitions(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}, 1), make(chan struct{})
	reg := durable.NewRegistry().
		MustAddActivity("QuickTask", gatedActivity(started, release)).
		MustAddOrchestration("LifecycleOrch", activityOrch("QuickTask"))
	env := durabletest.Start(t, reg)
	if st := status(t, env, "test-lifecycle"); st.Status != durable.StatusNotFound {
		t.Fatalf("before start: %v, want NotFound", st.Status)
	}
	if err := env.Client.StartOrchestration(t.Context(), "test-lifecycle", "LifecycleOrch", ""); err != nil {
		t.Fatal(err)
	}
	<-started
	if st := status(t, env, "test-lifecycle"); st.Status != durable.StatusRunning {
		t.Fatalf("with the activity running: %v, want Running", st.Status)
	}
	close(release)
	mustComplete(t, env.Wait(t, "test-lifecycle"), "quick")
	mustComplete(t, status(t, env, "test-lifecycle"), "quick")
}

// TestStatusIndependence mirrors test_status_independence: two instances'
// outcomes do not leak into each other's status.
func TestStatusIndependence(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("SuccessTask", func(*durable.ActivityContext, string) (string, error) { return "success", nil }).
		MustAddActivity("FailTask", func(*durable.ActivityContext, string) (string, error) { return "", errors.New("failed") }).
		MustAddOrchestration("SuccessOrch", activityOrch("SuccessTask")).
		MustAddOrchestration("FailOrch", activityOrch("FailTask"))
	env := durabletest.Start(t, reg)
	for _, s := range [][2]string{{"inst-success", "SuccessOrch"}, {"inst-fail", "FailOrch"}} {
		if err := env.Client.StartOrchestration(t.Context(), s[0], s[1], ""); err != nil {
			t.Fatal(err)
		}
	}
	mustComplete(t, env.Wait(t, "inst-success"), "success")
	wantAppFailure(t, env.Wait(t, "inst-fail"), duroxide.AppErrorOrchestrationFailed, "failed")
}
