package durable_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/continue_as_new_tests.rs.

// counterUntil continues as new with n+1 until n reaches limit.
func counterUntil(limit int) durable.OrchestrationFunc {
	return func(ctx *durable.OrchestrationContext, input string) (string, error) {
		var n int
		fmt.Sscan(input, &n)
		if n < limit {
			ctx.ContinueAsNew(fmt.Sprint(n + 1))
		}
		return fmt.Sprintf("done:%d", n), nil
	}
}

// startedInput is the input of an execution's OrchestrationStarted.
func startedInput(t *testing.T, hist []duroxide.Event) string {
	t.Helper()
	k, ok := hist[0].Kind.(duroxide.OrchestrationStartedEvent)
	if !ok {
		t.Fatalf("first event is %s, want OrchestrationStarted", hist[0].Kind.EventType())
	}
	return k.Input
}

// TestContinueAsNewMultiexec mirrors continue_as_new_multiexec.
func TestContinueAsNewMultiexec(t *testing.T) {
	t.Parallel()
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("Counter", counterUntil(2)))
	h.start("inst-can-1", "Counter", "0")
	h.wantCompleted("inst-can-1", "done:2")
	h.wantExecutions("inst-can-1", 1, 2, 3)
	if latest := h.execHistory("inst-can-1", 3); !reflect.DeepEqual(h.history("inst-can-1"), latest) {
		t.Error("the instance's current history is not its latest execution's")
	}
	for exec, want := range map[uint64][2]string{1: {"0", "1"}, 2: {"1", "2"}} {
		hist := h.execHistory("inst-can-1", exec)
		last, ok := hist[len(hist)-1].Kind.(duroxide.OrchestrationContinuedAsNewEvent)
		if startedInput(t, hist) != want[0] || !ok || last.Input != want[1] {
			t.Errorf("execution %d: started with %q, ends with %s; want started %q, ContinuedAsNew %q",
				exec, startedInput(t, hist), hist[len(hist)-1].Kind.EventType(), want[0], want[1])
		}
		if countEvents(hist, "OrchestrationCompleted") != 0 {
			t.Errorf("execution %d also completed", exec)
		}
	}
	if in := startedInput(t, h.execHistory("inst-can-1", 3)); in != "2" {
		t.Errorf("execution 3 started with %q, want 2", in)
	}
}

// waitAfterContinue continues once ("start" -> "wait"), then returns the next Go event.
func waitAfterContinue(ctx *durable.OrchestrationContext, input string) (string, error) {
	switch input {
	case "start":
		ctx.ContinueAsNew("wait")
	case "wait":
		return ctx.WaitForEvent("Go").Get()
	}
	return input, nil
}

// TestContinueAsNewEventRoutesToLatest mirrors continue_as_new_event_routes_to_latest.
func TestContinueAsNewEventRoutesToLatest(t *testing.T) {
	t.Parallel()
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("EvtCAN", waitAfterContinue))
	h.start("inst-can-evt", "EvtCAN", "start")
	h.awaitEvents("inst-can-evt", 2, 2)
	h.raise("inst-can-evt", "Go", "ok")
	h.wantCompleted("inst-can-evt", "ok")
	if n := countEvents(h.execHistory("inst-can-evt", 1), "ExternalEvent"); n != 0 {
		t.Errorf("execution 1 received %d events; they belong to the latest execution", n)
	}
	if n := countEvents(h.execHistory("inst-can-evt", 2), "ExternalEvent"); n != 1 {
		t.Errorf("execution 2 has %d ExternalEvent, want 1", n)
	}
}

// TestContinueAsNewEventDropThenProcess mirrors continue_as_new_event_drop_then_process:
// an event raised before the new execution subscribes is recorded but not delivered;
// the one raised after the subscription is. Where the Rust test relies on a 50ms
// sleep, this one parks the new execution: the first runtime continues as new into a
// version it does not have, so the next execution can only start, with the early
// event in its first batch, once a runtime that has it is up.
func TestContinueAsNewEventDropThenProcess(t *testing.T) {
	t.Parallel()
	const inst = "inst-can-evt-drop"
	parkedOpts := durable.Options{UnregisteredBackoffBase: 10 * msec, UnregisteredBackoffMax: 20 * msec, MaxAttempts: 1000}
	regA := durable.NewRegistry().
		MustAddOrchestration("EvtDropThenProcess", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			ctx.ContinueAsNew("wait", durable.WithVersion("2.0.0"))
			return "", nil
		})
	regB := durable.NewRegistry().
		MustAddOrchestration("EvtDropThenProcess", waitAfterContinue).
		MustAddOrchestrationVersion("EvtDropThenProcess", "2.0.0", waitAfterContinue)
	h := newHarnessWith(t, regA, parkedOpts)
	h.start(inst, "EvtDropThenProcess", "start")
	h.awaitEvents(inst, 1, 2)
	h.shutdown()
	// The parked start of execution 2 is invisible for at most one backoff after its
	// last abandon; once it is visible again, it and the early event form one batch.
	h.awaitDue()
	h.raise(inst, "Go", "early")
	h.restart(regB, durable.Options{})
	h.awaitEvents(inst, 2, 3)
	h.raise(inst, "Go", "late")
	h.wantCompleted(inst, "late")
	if n := countEvents(h.execHistory(inst, 1), "ExternalEvent"); n != 0 {
		t.Errorf("execution 1 recorded %d events", n)
	}
	hist := h.execHistory(inst, 2)
	if n := countEvents(hist, "ExternalEvent"); n != 2 {
		t.Errorf("execution 2 has %d ExternalEvent, want early (kept for audit) and late", n)
	}
	wantEventOrder(t, hist, "ExternalEvent:Go", "ExternalSubscribed:Go")
}

// TestEventDropThenRetryAfterSubscribe mirrors event_drop_then_retry_after_subscribe:
// an event raised before any subscription stays in history but is not delivered.
func TestEventDropThenRetryAfterSubscribe(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("EvtDropRetry", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			if _, err := ctx.Timer(100 * msec).Get(); err != nil {
				return "", err
			}
			wait, timeout := ctx.WaitForEvent("Data"), ctx.Timer(300*msec)
			if ctx.Select(wait, timeout) == 0 {
				return wait.Get()
			}
			return "early-event-dropped", nil
		})
	h := newHarness(t, reg)
	h.start("inst-drop-retry", "EvtDropRetry", "x")
	h.awaitEvent("inst-drop-retry", "TimerCreated")
	// With the runtime stopped the first timer cannot lead to the subscription before
	// the event is recorded, however late the raise comes.
	h.shutdown()
	h.raise("inst-drop-retry", "Data", "early")
	h.restart(reg, durable.Options{})
	h.wantCompleted("inst-drop-retry", "early-event-dropped")
	if n := countEvents(h.history("inst-drop-retry"), "ExternalEvent"); n != 1 {
		t.Errorf("%d ExternalEvent in history, want the early one kept for audit", n)
	}
}

// TestOldExecutionCompletionsAreIgnored mirrors old_execution_completions_are_ignored
// (and future_execution_completions_are_ignored for execution 999): a completion for
// another execution never reaches history. The instance is then released by an event
// enqueued after it, so the test needs no sleep.
func TestOldExecutionCompletionsAreIgnored(t *testing.T) {
	t.Parallel()
	for _, exec := range []uint64{0, 999} {
		t.Run(fmt.Sprint("execution_", exec), func(t *testing.T) {
			t.Parallel()
			reg := durable.NewRegistry().
				MustAddOrchestration("ExecutionIdTest", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
					_, err := ctx.WaitForEvent("continue_signal").Get()
					return "orchestration_complete", err
				})
			h := newHarness(t, reg)
			h.start("inst-exec-test", "ExecutionIdTest", "")
			h.awaitEvent("inst-exec-test", "ExternalSubscribed")
			h.enqueue(duroxide.ActivityCompleted{Instance: "inst-exec-test", ExecutionID: exec, ID: 2, Result: "stray_result"})
			h.raise("inst-exec-test", "continue_signal", "go")
			h.wantCompleted("inst-exec-test", "orchestration_complete")
			if n := countEvents(h.history("inst-exec-test"), "ActivityCompleted"); n != 0 {
				t.Errorf("a completion for execution %d reached history", exec)
			}
		})
	}
}

// TestContinueAsNewWithoutAwait mirrors continue_as_new_without_await.
func TestContinueAsNewWithoutAwait(t *testing.T) {
	t.Parallel()
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("CANNoAwait", counterUntil(2)))
	h.start("inst-can-no-await", "CANNoAwait", "0")
	h.wantCompleted("inst-can-no-await", "done:2")
	h.wantExecutions("inst-can-no-await", 1, 2, 3)
}

// TestContinueAsNewCarryForwardCappedAt20 checks duroxide's carry-forward limit
// (runtime/limits.rs MAX_CARRY_FORWARD_EVENTS, applied in runtime/execution.rs; its
// unit test max_carry_forward_constant_is_20): of 25 undequeued messages the first 20,
// in order, reach the next execution.
func TestContinueAsNewCarryForwardCappedAt20(t *testing.T) {
	t.Parallel()
	const inst = "inst-carry-cap"
	reg := durable.NewRegistry().
		MustAddOrchestration("CarryCap", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			if input == "0" {
				if _, err := ctx.WaitForEvent("go").Get(); err != nil {
					return "", err
				}
				ctx.ContinueAsNew("1")
			}
			_, err := ctx.WaitForEvent("stop").Get()
			return "stopped", err
		})
	h := newHarness(t, reg)
	h.start(inst, "CarryCap", "0")
	h.awaitEvents(inst, 1, 2)
	h.shutdown()
	for i := 0; i < 25; i++ {
		h.enqueueEvent(inst, "inbox", fmt.Sprint("m", i))
	}
	h.raise(inst, "go", "")
	h.restart(reg, durable.Options{})
	h.awaitEvents(inst, 2, 2)
	started, ok := h.execHistory(inst, 2)[0].Kind.(duroxide.OrchestrationStartedEvent)
	if !ok || started.CarryForwardEvents == nil || len(*started.CarryForwardEvents) != 20 {
		t.Fatalf("execution 2 starts with %+v, want 20 carried messages", started)
	}
	for i, pair := range *started.CarryForwardEvents {
		if pair != [2]string{"inbox", fmt.Sprint("m", i)} {
			t.Errorf("carried message %d is %v, want [inbox m%d]", i, pair, i)
		}
	}
}
