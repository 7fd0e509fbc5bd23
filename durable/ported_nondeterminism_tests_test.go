package durable_test

import (
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/nondeterminism_tests.rs. execution_id_filtering_prevents_
// cross_execution_completions is an empty placeholder in duroxide and has no port;
// old/future execution filtering is covered by TestOldExecutionCompletionsAreIgnored.

// waitThenDone waits for external event name and completes with out.
func waitThenDone(name, out string) durable.OrchestrationFunc {
	return func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		_, err := ctx.WaitForEvent(name).Get()
		return out, err
	}
}

// TestCodeSwapTriggersNondeterminism mirrors code_swap_triggers_nondeterminism: the
// code that replays the history schedules a different activity than the one recorded.
func TestCodeSwapTriggersNondeterminism(t *testing.T) {
	t.Parallel()
	var h *harness
	activity := func(name string) durable.OrchestrationFunc {
		return func(ctx *durable.OrchestrationContext, input string) (string, error) {
			return ctx.ScheduleActivity(name, input).Get()
		}
	}
	acts := func() *durable.Registry {
		return durable.NewRegistry().
			MustAddActivity("A1", func(ctx *durable.ActivityContext, in string) (string, error) { return h.blockUntilCancelled(ctx, in) }).
			MustAddActivity("B1", func(_ *durable.ActivityContext, in string) (string, error) { return "B1:{" + in + "}", nil })
	}
	h = newHarness(t, acts().MustAddOrchestration("SwapTest", activity("A1")))
	h.start("inst-swap", "SwapTest", "foo")
	scheduled := h.awaitEvent("inst-swap", "ActivityScheduled")
	h.restart(acts().MustAddOrchestration("SwapTest", activity("B1")), durable.Options{})
	// A valid completion for the recorded schedule wakes the instance for a replay.
	h.enqueue(duroxide.ActivityCompleted{Instance: "inst-swap", ExecutionID: 1, ID: scheduled.EventID, Result: "poke"})
	h.wantNondeterminism("inst-swap")
}

// TestCompletionKindMismatchTriggersNondeterminism mirrors
// completion_kind_mismatch_triggers_nondeterminism: an activity completion for the id
// of a timer.
func TestCompletionKindMismatchTriggersNondeterminism(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("KindMismatchTest", timerOrchestration("timer_completed", time.Minute))
	h := newHarness(t, reg)
	h.start("inst-mismatch", "KindMismatchTest", "")
	timer := h.awaitEvent("inst-mismatch", "TimerCreated")
	h.enqueue(duroxide.ActivityCompleted{Instance: "inst-mismatch", ExecutionID: 1, ID: timer.EventID, Result: "wrong_kind_result"})
	h.wantNondeterminism("inst-mismatch", "kind mismatch", "timer", "activity")
}

// TestUnexpectedCompletionIDTriggersNondeterminism mirrors
// unexpected_completion_id_triggers_nondeterminism.
func TestUnexpectedCompletionIDTriggersNondeterminism(t *testing.T) {
	t.Parallel()
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("UnexpectedIdTest", waitThenDone("test_event", "external_completed")))
	h.start("inst-unexpected", "UnexpectedIdTest", "")
	h.awaitEvent("inst-unexpected", "ExternalSubscribed")
	h.enqueue(duroxide.ActivityCompleted{Instance: "inst-unexpected", ExecutionID: 1, ID: 999, Result: "unexpected_result"})
	h.wantNondeterminism("inst-unexpected", "no matching schedule", "999")
}

// TestUnexpectedTimerCompletionTriggersNondeterminism mirrors
// unexpected_timer_completion_triggers_nondeterminism.
func TestUnexpectedTimerCompletionTriggersNondeterminism(t *testing.T) {
	t.Parallel()
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("TimerTest", waitThenDone("test", "done")))
	h.start("inst-timer", "TimerTest", "")
	h.awaitEvent("inst-timer", "ExternalSubscribed")
	h.enqueue(duroxide.TimerFired{Instance: "inst-timer", ExecutionID: 1, ID: 123, FireAtMs: 0})
	h.wantNondeterminism("inst-timer", "timer", "123")
}

// continueAsNewInflightSample schedules MyActivity (act) without awaiting it, waits
// for proceed_signal and continues as new (shared with the golden
// continue_as_new_inflight_activity).
func continueAsNewInflightSample(act durable.ActivityFunc) *durable.Registry {
	return durable.NewRegistry().
		MustAddActivity("MyActivity", act).
		MustAddOrchestration("CanNondeterminism", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			if input == "0" {
				_ = ctx.ScheduleActivity("MyActivity", "test_input")
				if _, err := ctx.WaitForEvent("proceed_signal").Get(); err != nil {
					return "", err
				}
				ctx.ContinueAsNew("1")
			}
			return "final:iteration_" + input, nil
		})
}

// TestContinueAsNewWithUnconsumedCompletionTriggersNondeterminism mirrors
// continue_as_new_with_unconsumed_completion_triggers_nondeterminism: a completion
// naming event 1 (the OrchestrationStarted, not a schedule) arrives with the signal.
func TestContinueAsNewWithUnconsumedCompletionTriggersNondeterminism(t *testing.T) {
	t.Parallel()
	var h *harness
	h = newHarness(t, continueAsNewInflightSample(blocking(&h)))
	h.start("inst-can-nondet", "CanNondeterminism", "0")
	h.awaitEvent("inst-can-nondet", "ExternalSubscribed")
	h.enqueue(duroxide.ActivityCompleted{Instance: "inst-can-nondet", ExecutionID: 1, ID: 1, Result: "activity_completed"})
	h.raise("inst-can-nondet", "proceed_signal", "go")
	h.wantNondeterminism("inst-can-nondet")
}

// TestExecutionIDFilteringWithoutContinueAsNewTriggersNondeterminism mirrors
// execution_id_filtering_without_continue_as_new_triggers_nondeterminism: despite its
// name, the completion for execution 999 is dropped and the instance completes.
func TestExecutionIDFilteringWithoutContinueAsNewTriggersNondeterminism(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("TestActivity", constActivity("activity result")).
		MustAddOrchestration("ExecIdNoCanTest", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleActivity("TestActivity", "input").Get()
		})
	h := newHarness(t, reg)
	h.start("inst-exec-id-no-can", "ExecIdNoCanTest", "")
	h.enqueue(duroxide.ActivityCompleted{Instance: "inst-exec-id-no-can", ExecutionID: 999, ID: 2, Result: "different execution result"})
	h.wantCompleted("inst-exec-id-no-can", "activity result")
}

// TestDuplicateExternalEventsAreHandledGracefully mirrors
// duplicate_external_events_are_handled_gracefully: the first of two identical events
// is delivered, the second is kept in history, and nothing fails.
func TestDuplicateExternalEventsAreHandledGracefully(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("DuplicateExternalTest", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.WaitForEvent("test_signal").Get()
		})
	h := newHarness(t, reg)
	h.start("inst-duplicate-external", "DuplicateExternalTest", "")
	h.awaitEvent("inst-duplicate-external", "ExternalSubscribed")
	h.raise("inst-duplicate-external", "test_signal", "first")
	h.raise("inst-duplicate-external", "test_signal", "first")
	h.wantCompleted("inst-duplicate-external", "first")
}
