package durable_test

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/cancellation_tests.rs. Rust cancels a future by dropping
// it; the Go ports call Future.Cancel where the Rust test drops explicitly and let
// the runtime cancel what is still pending when the orchestration returns where the
// Rust future merely goes out of scope.

// quickCancelOptions make a cancelled activity notice within a second: its lock is
// renewed (and the cancellation discovered) every 500ms.
var quickCancelOptions = durable.Options{
	WorkerLockTimeout:               2 * time.Second,
	WorkerLockRenewalBuffer:         1500 * time.Millisecond,
	ActivityCancellationGracePeriod: 5 * time.Second,
}

// signalOnCancel is an activity that reports on started, then waits for its context
// to be cancelled and reports that on cancelled (or gives up after 30s).
func signalOnCancel(started, cancelled chan<- string) durable.ActivityFunc {
	return func(ctx *durable.ActivityContext, in string) (string, error) {
		started <- in
		select {
		case <-ctx.Done():
			cancelled <- in
			return "cancelled", nil
		case <-time.After(30 * time.Second):
			return "timeout", nil
		}
	}
}

// receive waits up to 10s for a value on ch.
func receive(t *testing.T, ch <-chan string, what string) string {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		return ""
	}
}

// cancelCascadeSample is a parent awaiting a child that waits forever for Go (shared
// with the golden cancel_cascade).
func cancelCascadeSample() *durable.Registry {
	return durable.NewRegistry().
		MustAddOrchestration("Child", waitThenDone("Go", "done")).
		MustAddOrchestration("Parent", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			_, _ = ctx.ScheduleSubOrchestration("Child", "seed").Get()
			return "parent_done", nil
		})
}

// longActivitySample awaits activity LongActivity (act), ignoring its result (shared
// with the golden cancel_pending_activity).
func longActivitySample(act durable.ActivityFunc) *durable.Registry {
	return durable.NewRegistry().
		MustAddActivity("LongActivity", act).
		MustAddOrchestration("LongActivityOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			_, _ = ctx.ScheduleActivity("LongActivity", "input").Get()
			return "done", nil
		})
}

// TestCancelParentDownPropagatesToChild mirrors cancel_parent_down_propagates_to_child.
func TestCancelParentDownPropagatesToChild(t *testing.T) {
	t.Parallel()
	h := newHarness(t, cancelCascadeSample())
	h.start("inst-cancel-1", "Parent", "")
	h.awaitEvent("inst-cancel-1::sub::2", "ExternalSubscribed")
	h.cancel("inst-cancel-1", "by_test")
	h.wantCancelled("inst-cancel-1", "by_test")
	if n := countEvents(h.history("inst-cancel-1"), "OrchestrationCancelRequested"); n != 1 {
		t.Errorf("parent has %d OrchestrationCancelRequested, want 1", n)
	}
	h.wantCancelled("inst-cancel-1::sub::2", "parent canceled")
}

// TestCancelAfterCompletionIsNoop mirrors cancel_after_completion_is_noop.
func TestCancelAfterCompletionIsNoop(t *testing.T) {
	t.Parallel()
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("Quick", func(*durable.OrchestrationContext, string) (string, error) { return "ok", nil }))
	h.start("inst-cancel-noop", "Quick", "")
	h.wantCompleted("inst-cancel-noop", "ok")
	h.cancel("inst-cancel-noop", "late")
	h.awaitIdle()
	hist := h.history("inst-cancel-noop")
	if countEvents(hist, "OrchestrationCancelRequested") != 0 || hist[len(hist)-1].Kind.EventType() != "OrchestrationCompleted" {
		t.Errorf("a cancel after completion changed history: last event %s", hist[len(hist)-1].Kind.EventType())
	}
}

// TestCancelChildDirectlySignalsParent mirrors cancel_child_directly_signals_parent.
func TestCancelChildDirectlySignalsParent(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("ChildD", waitThenDone("never", "unreachable")).
		MustAddOrchestration("ParentD", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			v, err := ctx.ScheduleSubOrchestration("ChildD", "x").Get()
			if err != nil {
				return "child_err:" + err.Error(), nil
			}
			return "ok:" + v, nil
		})
	h := newHarness(t, reg)
	h.start("inst-chdirect", "ParentD", "")
	h.awaitEvent("inst-chdirect::sub::2", "ExternalSubscribed")
	h.cancel("inst-chdirect::sub::2", "by_test_child")
	st := h.wait("inst-chdirect")
	if !strings.HasPrefix(st.Output, "child_err:canceled: by_test_child") {
		t.Fatalf("parent output %q (failure %q), want child_err:canceled: by_test_child", st.Output, st.FailureMessage())
	}
	if !hasEventWithSource(h.history("inst-chdirect"), 2, func(k duroxide.EventKind) bool {
		f, ok := k.(duroxide.SubOrchestrationFailedEvent)
		return ok && f.Details.Application != nil && f.Details.Application.Kind.Variant == duroxide.AppErrorCancelled &&
			f.Details.Application.Kind.Reason == "by_test_child"
	}) {
		t.Error("parent history has no SubOrchestrationFailed{Cancelled by_test_child} for event 2")
	}
}

// TestCancelContinueAsNewSecondExec mirrors cancel_continue_as_new_second_exec.
func TestCancelContinueAsNewSecondExec(t *testing.T) {
	t.Parallel()
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("CanCancel", waitAfterContinue))
	h.start("inst-can-can", "CanCancel", "start")
	h.awaitEvents("inst-can-can", 2, 2)
	h.cancel("inst-can-can", "by_test_can")
	h.wantCancelled("inst-can-can", "by_test_can")
	if n := countEvents(h.execHistory("inst-can-can", 2), "OrchestrationCancelRequested"); n != 1 {
		t.Errorf("execution 2 has %d OrchestrationCancelRequested, want 1", n)
	}
}

// TestOrchestrationCompletesBeforeActivityFinishes mirrors
// orchestration_completes_before_activity_finishes: the dropped activity's late
// result does not change the completed instance.
func TestOrchestrationCompletesBeforeActivityFinishes(t *testing.T) {
	t.Parallel()
	testTerminalBeforeActivity(t, "done", nil)
}

// TestOrchestrationFailsBeforeActivityFinishes mirrors
// orchestration_fails_before_activity_finishes.
func TestOrchestrationFailsBeforeActivityFinishes(t *testing.T) {
	t.Parallel()
	testTerminalBeforeActivity(t, "", fmt.Errorf("boom"))
}

// testTerminalBeforeActivity ends an orchestration while its dropped activity is
// held; whether the activity then runs to the end or is withdrawn by the cancel, its
// result must not reach the terminal history.
func testTerminalBeforeActivity(t *testing.T, out string, fail error) {
	release := make(chan struct{})
	reg := durable.NewRegistry().
		MustAddActivity("slow", func(*durable.ActivityContext, string) (string, error) {
			<-release
			return "ok", nil
		}).
		MustAddOrchestration("QuickDone", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.ScheduleActivity("slow", "").Cancel()
			return out, fail
		})
	h := newHarness(t, reg)
	h.start("inst-orch-done-first", "QuickDone", "")
	st := h.wait("inst-orch-done-first")
	close(release)
	h.awaitIdle()
	hist := h.history("inst-orch-done-first")
	last := hist[len(hist)-1].Kind
	if fail == nil {
		if c, ok := last.(duroxide.OrchestrationCompletedEvent); !ok || c.Output != out || st.Output != out {
			t.Errorf("last event %+v, status %+v; want Completed %q", last, st, out)
		}
		return
	}
	if f, ok := last.(duroxide.OrchestrationFailedEvent); !ok || f.Details.Application == nil ||
		f.Details.Application.Kind.Variant != duroxide.AppErrorOrchestrationFailed || f.Details.Application.Message != fail.Error() {
		t.Errorf("last event %+v; want OrchestrationFailed{OrchestrationFailed %q}", last, fail)
	}
}

// TestCancelParentWithMultipleChildren mirrors cancel_parent_with_multiple_children.
func TestCancelParentWithMultipleChildren(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("MultiChild", waitThenDone("Go", "done")).
		MustAddOrchestration("MultiParent", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			var fs []durable.Awaitable
			for i := 0; i < 5; i++ {
				fs = append(fs, ctx.ScheduleSubOrchestration("MultiChild", fmt.Sprintf("input-%d", i)))
			}
			ctx.Join(fs...)
			return "parent_done", nil
		})
	h := newHarness(t, reg)
	h.start("inst-cancel-multi", "MultiParent", "")
	for i := 2; i <= 6; i++ {
		h.awaitEvent(fmt.Sprintf("inst-cancel-multi::sub::%d", i), "ExternalSubscribed")
	}
	h.cancel("inst-cancel-multi", "multi_test")
	h.wantCancelled("inst-cancel-multi", "multi_test")
	children := 0
	instances, err := h.client.Admin().ListInstances(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, inst := range instances {
		if strings.HasPrefix(inst, "inst-cancel-multi::") {
			children++
			h.wantCancelled(inst, "parent canceled")
		}
	}
	if children != 5 {
		t.Errorf("%d child instances, want 5", children)
	}
}

// TestActivityReceivesCancellationSignal mirrors activity_receives_cancellation_signal:
// cancelling the instance cancels the context of its running activity.
func TestActivityReceivesCancellationSignal(t *testing.T) {
	t.Parallel()
	started, cancelled := make(chan string, 1), make(chan string, 1)
	h := newHarnessWith(t, longActivitySample(signalOnCancel(started, cancelled)), quickCancelOptions)
	h.start("inst-activity-cancel", "LongActivityOrch", "")
	receive(t, started, "the activity to start")
	h.cancel("inst-activity-cancel", "test_cancellation")
	receive(t, cancelled, "the activity's context to be cancelled")
	h.wantCancelled("inst-activity-cancel", "test_cancellation")
}

// TestSelect2LoserActivityReceivesCancellationSignal mirrors
// select2_loser_activity_receives_cancellation_signal.
func TestSelect2LoserActivityReceivesCancellationSignal(t *testing.T) {
	t.Parallel()
	started, cancelled := make(chan string, 1), make(chan string, 1)
	reg := durable.NewRegistry().
		MustAddActivity("SlowActivity", signalOnCancel(started, cancelled)).
		MustAddOrchestration("Select2Loser", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			act := ctx.ScheduleActivity("SlowActivity", "input")
			if ctx.Select(act, ctx.Timer(300*msec)) == 1 {
				return "timeout", nil
			}
			return act.Get()
		})
	h := newHarnessWith(t, reg, quickCancelOptions)
	h.start("inst-select2-loser", "Select2Loser", "")
	receive(t, started, "the activity to start")
	h.wantCompleted("inst-select2-loser", "timeout")
	receive(t, cancelled, "the losing activity's context to be cancelled")
	cr := h.awaitEvent("inst-select2-loser", "ActivityCancelRequested")
	if cr.SourceEventID == nil || *cr.SourceEventID != 2 {
		t.Errorf("ActivityCancelRequested source %v, want the activity's event 2", cr.SourceEventID)
	}
}

// TestCancelNonexistentInstanceIsNoop mirrors cancel_nonexistent_instance_is_noop.
// Our client refuses the cancel with ErrNotFound (duroxide's returns Ok); the
// message duroxide's client sends, straight to the provider, changes nothing.
func TestCancelNonexistentInstanceIsNoop(t *testing.T) {
	t.Parallel()
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("Dummy", func(*durable.OrchestrationContext, string) (string, error) { return "ok", nil }))
	if err := h.client.CancelInstance(h.ctx, "does-not-exist", "test"); !errors.Is(err, durable.ErrNotFound) {
		t.Fatalf("cancel of an unknown instance = %v, want ErrNotFound", err)
	}
	h.enqueue(duroxide.CancelInstance{Instance: "does-not-exist", Reason: "test"})
	h.awaitIdle()
	if st, err := h.client.Status(h.ctx, "does-not-exist"); err != nil || st.Status != durable.StatusNotFound {
		t.Errorf("status %v (%v), want NotFound: a cancel must not create the instance", st.Status, err)
	}
}

// TestMultipleCancelCallsAreIdempotent mirrors multiple_cancel_calls_are_idempotent.
func TestMultipleCancelCallsAreIdempotent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("Waiter", waitThenDone("Go", "done")))
	h.start("inst-multi-cancel", "Waiter", "")
	h.awaitEvent("inst-multi-cancel", "ExternalSubscribed")
	for i := 0; i < 5; i++ {
		h.cancel("inst-multi-cancel", fmt.Sprintf("cancel-%d", i))
	}
	h.wantCancelled("inst-multi-cancel", "cancel-0")
	h.awaitIdle()
	hist := h.history("inst-multi-cancel")
	if n := countEvents(hist, "OrchestrationCancelRequested"); n != 1 {
		t.Errorf("%d OrchestrationCancelRequested, want exactly 1", n)
	}
	if e := h.awaitEvent("inst-multi-cancel", "OrchestrationCancelRequested"); e.Kind != (duroxide.OrchestrationCancelRequestedEvent{Reason: "cancel-0"}) {
		t.Errorf("cancel event %+v, want the first reason", e.Kind)
	}
}

// TestCancelBeforeOrchestrationStarts mirrors cancel_before_orchestration_starts: the
// start and the cancel arrive in one batch; the instance is cancelled, not completed.
func TestCancelBeforeOrchestrationStarts(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("Early", func(*durable.OrchestrationContext, string) (string, error) { return "done", nil })
	h := newHarness(t, reg)
	h.shutdown()
	version := "1.0.0"
	h.enqueue(duroxide.StartOrchestration{Instance: "inst-early-cancel", Orchestration: "Early", Version: &version, Input: "input", ExecutionID: 1})
	h.enqueue(duroxide.CancelInstance{Instance: "inst-early-cancel", Reason: "early_cancel"})
	h.restart(reg, durable.Options{})
	h.wantCancelled("inst-early-cancel", "early_cancel")
	if n := countEvents(h.history("inst-early-cancel"), "OrchestrationCompleted"); n != 0 {
		t.Error("the instance completed although the cancel came with its start")
	}
}

// TestExplicitDropActivityTriggersCancellation mirrors
// explicit_drop_activity_triggers_cancellation.
func TestExplicitDropActivityTriggersCancellation(t *testing.T) {
	t.Parallel()
	started, cancelled := make(chan string, 1), make(chan string, 1)
	reg := durable.NewRegistry().
		MustAddActivity("LongTask", signalOnCancel(started, cancelled)).
		MustAddOrchestration("DropOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.ScheduleActivity("LongTask", "input").Cancel()
			_, err := ctx.Timer(500 * msec).Get()
			return "done", err
		})
	h := newHarnessWith(t, reg, quickCancelOptions)
	h.start("inst-explicit-drop", "DropOrch", "")
	h.wantCompleted("inst-explicit-drop", "done")
	if n := countEvents(h.history("inst-explicit-drop"), "ActivityCancelRequested"); n != 1 {
		t.Errorf("%d ActivityCancelRequested, want 1", n)
	}
}

// TestActivityOutOfScopeTriggersCancellation mirrors
// activity_out_of_scope_triggers_cancellation: an activity never waited on is
// cancelled when the orchestration returns.
func TestActivityOutOfScopeTriggersCancellation(t *testing.T) {
	t.Parallel()
	started, cancelled := make(chan string, 1), make(chan string, 1)
	reg := durable.NewRegistry().
		MustAddActivity("LongTask", signalOnCancel(started, cancelled)).
		MustAddOrchestration("ScopeOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			_ = ctx.ScheduleActivity("LongTask", "input")
			return "done", nil
		})
	h := newHarnessWith(t, reg, quickCancelOptions)
	h.start("inst-scope", "ScopeOrch", "")
	h.wantCompleted("inst-scope", "done")
	cr := h.awaitEvent("inst-scope", "ActivityCancelRequested")
	if cr.SourceEventID == nil || *cr.SourceEventID != 2 {
		t.Errorf("ActivityCancelRequested source %v, want 2", cr.SourceEventID)
	}
}

// TestSelect2LoserSubOrchestrationCancelled mirrors
// select2_loser_sub_orchestration_cancelled: the losing child is cancelled.
func TestSelect2LoserSubOrchestrationCancelled(t *testing.T) {
	t.Parallel()
	h := testSelectLoserChild(t, "inst-sel-sub", "inst-sel-sub::sub::2")
	cr := h.awaitEvent("inst-sel-sub", "SubOrchestrationCancelRequested")
	if cr.SourceEventID == nil || *cr.SourceEventID != 2 {
		t.Errorf("SubOrchestrationCancelRequested source %v, want 2", cr.SourceEventID)
	}
}

// TestSelect2LoserSubOrchestrationExplicitIDCancelled mirrors
// select2_loser_sub_orchestration_explicit_id_cancelled.
func TestSelect2LoserSubOrchestrationExplicitIDCancelled(t *testing.T) {
	t.Parallel()
	testSelectLoserChild(t, "inst-sel-sub-explicit", "my-explicit-child", durable.WithInstanceID("my-explicit-child"))
}

// testSelectLoserChild races a child that never finishes against a timer and checks
// the child instance is cancelled as a dropped future.
func testSelectLoserChild(t *testing.T, parent, child string, opts ...durable.OrchestrationOption) *harness {
	t.Helper()
	reg := durable.NewRegistry().
		MustAddOrchestration("SlowChild", waitThenDone("never", "child_done")).
		MustAddOrchestration("SelectParent", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			c := ctx.ScheduleSubOrchestration("SlowChild", "x", opts...)
			if ctx.Select(c, ctx.Timer(200*msec)) == 1 {
				return "timeout", nil
			}
			return c.Get()
		})
	h := newHarness(t, reg)
	h.start(parent, "SelectParent", "")
	h.wantCompleted(parent, "timeout")
	h.wantCancelled(child, "parent dropped sub-orchestration future")
	return h
}

// TestTwoSameNameWaits mirrors the tests of two joined waits for one event name,
// raised twice: positional_matching_fifo_without_cancellation (the waits take the
// arrivals in order) and duplicate_external_events_not_deduplicated (two identical
// events feed both waits).
func TestTwoSameNameWaits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		raised [2]string
		want   string
	}{
		{"positional_matching_fifo_without_cancellation", [2]string{"first", "second"}, "first,second"},
		{"duplicate_external_events_not_deduplicated", [2]string{"same", "same"}, "same,same"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			reg := durable.NewRegistry().
				MustAddOrchestration("TwoWaits", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
					a, b := ctx.WaitForEvent("E"), ctx.WaitForEvent("E")
					ctx.Join(a, b)
					return joinOutputs(",", a, b)
				})
			h := newHarness(t, reg)
			h.start("inst", "TwoWaits", "")
			h.awaitEvents("inst", 1, 3)
			h.raise("inst", "E", c.raised[0])
			h.raise("inst", "E", c.raised[1])
			h.wantCompleted("inst", c.want)
		})
	}
}

// TestCancelledSubscriptionDoesNotStealFutureEvent mirrors
// cancelled_subscription_does_not_steal_future_event: a wait that lost a select and
// was cancelled does not consume the next event of its name.
func TestCancelledSubscriptionDoesNotStealFutureEvent(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("NoSteal", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			first := ctx.WaitForEvent("E")
			if ctx.Select(first, ctx.Timer(50*msec)) == 0 {
				return "unexpected early event", nil
			}
			return ctx.WaitForEvent("E").Get()
		})
	h := newHarness(t, reg)
	h.start("inst-nosteal", "NoSteal", "")
	// 1 started, 2 first wait, 3-4 timer, 5 first wait cancelled, 6 second wait
	h.awaitEvents("inst-nosteal", 1, 6)
	h.raise("inst-nosteal", "E", "for-second")
	h.wantCompleted("inst-nosteal", "for-second")
}

// TestActivitySkippedWhenOrchestrationTerminalAtFetch mirrors
// activity_skipped_when_orchestration_terminal_at_fetch: an activity whose instance was
// cancelled before any worker took it never runs. The first runtime fetches no
// activities (its workers only take a tag nobody uses).
func TestActivitySkippedWhenOrchestrationTerminalAtFetch(t *testing.T) {
	t.Parallel()
	var ran atomic.Bool
	reg := durable.NewRegistry().
		MustAddActivity("Work", func(*durable.ActivityContext, string) (string, error) {
			ran.Store(true)
			return "ran", nil
		}).
		MustAddOrchestration("Orch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleActivity("Work", "").Get()
		})
	h := newHarnessWith(t, reg, durable.Options{WorkerTagFilter: duroxide.TagsOnly("nobody")})
	h.start("inst-skip", "Orch", "")
	h.awaitEvent("inst-skip", "ActivityScheduled")
	h.cancel("inst-skip", "stop")
	h.wantCancelled("inst-skip", "stop")
	h.restart(reg, durable.Options{})
	h.awaitIdle()
	if ran.Load() {
		t.Error("the activity of a cancelled instance ran")
	}
	if n := countEvents(h.history("inst-skip"), "ActivityCompleted"); n != 0 {
		t.Errorf("%d ActivityCompleted recorded for the skipped activity", n)
	}
}

// TestActivityResultDroppedWhenOrchestrationCancelled mirrors
// activity_result_dropped_when_orchestration_cancelled (and
// activity_aborted_after_cancellation_grace): an activity that ignores its
// cancellation and finishes anyway does not get its result into the cancelled history.
func TestActivityResultDroppedWhenOrchestrationCancelled(t *testing.T) {
	t.Parallel()
	started := make(chan string, 1)
	release := make(chan struct{})
	finished := make(chan string, 1)
	reg := longActivitySample(func(ctx *durable.ActivityContext, in string) (string, error) {
		started <- in
		<-release
		finished <- in
		return "late", nil
	})
	opts := quickCancelOptions
	opts.ActivityCancellationGracePeriod = 5 * time.Second
	h := newHarnessWith(t, reg, opts)
	h.start("inst-dropped-result", "LongActivityOrch", "")
	receive(t, started, "the activity to start")
	h.cancel("inst-dropped-result", "cancel_now")
	h.wantCancelled("inst-dropped-result", "cancel_now")
	close(release)
	receive(t, finished, "the activity to finish")
	h.awaitIdle()
	if n := countEvents(h.history("inst-dropped-result"), "ActivityCompleted"); n != 0 {
		t.Errorf("the late result of a cancelled instance's activity reached history (%d ActivityCompleted)", n)
	}
}

// TestExplicitDropSubOrchestrationCancelled mirrors
// explicit_drop_sub_orchestration_cancelled and sub_orchestration_out_of_scope_cancelled
// (Go has no scope end, so both drop the child with Cancel, then wait on a timer): the
// child is started and cancelled in the same ack.
func TestExplicitDropSubOrchestrationCancelled(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("SlowChild", waitThenDone("never", "child_done")).
		MustAddOrchestration("Parent", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.ScheduleSubOrchestration("SlowChild", "x").Cancel()
			_, err := ctx.Timer(50 * msec).Get()
			return "parent_completed_without_await", err
		})
	h := newHarness(t, reg)
	h.start("inst-drop-child", "Parent", "")
	h.wantCompleted("inst-drop-child", "parent_completed_without_await")
	h.wantCancelled("inst-drop-child::sub::2", "parent dropped sub-orchestration future")
	if n := countEvents(h.history("inst-drop-child"), "SubOrchestrationCancelRequested"); n != 1 {
		t.Errorf("%d SubOrchestrationCancelRequested, want 1", n)
	}
}

// TestSubOrchestrationPendingAtReturnNeverStarts checks the duroxide rule behind the
// ports above (runtime/execution.rs: a terminal turn honours only detached starts): a
// child scheduled in the turn the parent returns is recorded and cancel-requested but
// never started.
func TestSubOrchestrationPendingAtReturnNeverStarts(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("SlowChild", waitThenDone("never", "child_done")).
		MustAddOrchestration("Parent", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.ScheduleSubOrchestration("SlowChild", "x")
			return "returned", nil
		})
	h := newHarness(t, reg)
	h.start("inst-child-at-return", "Parent", "")
	h.wantCompleted("inst-child-at-return", "returned")
	h.awaitIdle()
	if st, err := h.client.Status(h.ctx, "inst-child-at-return::sub::2"); err != nil || st.Status != durable.StatusNotFound {
		t.Errorf("child status %v (%v), want NotFound", st.Status, err)
	}
	if got := kinds(h.history("inst-child-at-return")); got != "1:OrchestrationStarted 2:SubOrchestrationScheduled 3:SubOrchestrationCancelRequested 4:OrchestrationCompleted" {
		t.Errorf("parent history %s", got)
	}
}

// TestPositionalArrivalBeforeSubOutstanding mirrors positional_arrival_before_sub_outstanding:
// an event that arrived before its subscription is not delivered, the wait loses to
// its timeout and is cancelled as a dropped future. The event is raised while the
// runtime is stopped, so it is recorded before the subscription however slow the raise.
func TestPositionalArrivalBeforeSubOutstanding(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("TestOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if _, err := ctx.Timer(100 * msec).Get(); err != nil {
			return "", err
		}
		if ctx.Select(ctx.WaitForEvent("MyEvent"), ctx.Timer(300*msec)) == 0 {
			return "event-received", nil
		}
		return "timeout", nil
	})
	h := newHarness(t, reg)
	h.start("inst-pos-arr", "TestOrch", "")
	h.awaitEvent("inst-pos-arr", "TimerCreated")
	h.shutdown()
	h.raise("inst-pos-arr", "MyEvent", "data")
	h.restart(reg, durable.Options{})
	h.wantCompleted("inst-pos-arr", "timeout")
	if !hasEvent(h.history("inst-pos-arr"), func(k duroxide.EventKind) bool {
		return k == duroxide.ExternalSubscribedCancelledEvent{Reason: "dropped_future"}
	}) {
		t.Error("no ExternalSubscribedCancelled(dropped_future) for the losing wait")
	}
}

// TestUserCancelInstanceAndDroppedFutureBothEnqueueCancelInstanceForChild mirrors
// user_cancel_instance_and_dropped_future_both_enqueue_cancelinstance_for_child: a
// child dropped by its parent, whose parent is then cancelled, ends cancelled once.
func TestUserCancelInstanceAndDroppedFutureBothEnqueueCancelInstanceForChild(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("SlowChild", waitThenDone("never", "child_done")).
		MustAddOrchestration("Parent", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.ScheduleSubOrchestration("SlowChild", "x").Cancel()
			_, err := ctx.WaitForEvent("never").Get()
			return "parent_done", err
		})
	h := newHarness(t, reg)
	h.start("inst-both-cancel", "Parent", "")
	h.awaitEvent("inst-both-cancel", "SubOrchestrationCancelRequested")
	h.cancel("inst-both-cancel", "user")
	h.wantCancelled("inst-both-cancel", "user")
	h.wantCancelled("inst-both-cancel::sub::2", "parent dropped sub-orchestration future")
	if n := countEvents(h.history("inst-both-cancel::sub::2"), "OrchestrationCancelRequested"); n != 1 {
		t.Errorf("child has %d OrchestrationCancelRequested, want 1", n)
	}
}
