package durable_test

import (
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// More ports of duroxide's tests/replay_engine/nondeterminism.rs and
// history_corruption.rs, on durable.RunTurn (replayTurn).

// twoSteps runs first, then second, each awaited.
func twoSteps(first, second func(ctx *durable.OrchestrationContext) (string, error)) durable.OrchestrationFunc {
	return func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		a, err := first(ctx)
		if err != nil {
			return "", err
		}
		b, err := second(ctx)
		return a + "," + b, err
	}
}

func actStep(name, input string) func(ctx *durable.OrchestrationContext) (string, error) {
	return func(ctx *durable.OrchestrationContext) (string, error) {
		return ctx.ScheduleActivity(name, input).Get()
	}
}

func timerStep(d time.Duration) func(ctx *durable.OrchestrationContext) (string, error) {
	return func(ctx *durable.OrchestrationContext) (string, error) {
		_, err := ctx.Timer(d).Get()
		return "t", err
	}
}

func subStep(name, input string) func(ctx *durable.OrchestrationContext) (string, error) {
	return func(ctx *durable.OrchestrationContext) (string, error) {
		return ctx.ScheduleSubOrchestration(name, input).Get()
	}
}

// TestReplayNondeterminismMore mirrors the rest of replay_engine/nondeterminism.rs:
// a history the code cannot have written (an event no action matches, a
// completion of the wrong kind, a second completion of a closed schedule)
// fails the instance with a nondeterminism error naming the problem.
func TestReplayNondeterminismMore(t *testing.T) {
	t.Parallel()
	started := startedEv("Orch", "")
	act := func(id uint64, name, input string) duroxide.Event {
		return ev(id, 0, duroxide.ActivityScheduledEvent{Name: name, Input: input})
	}
	done := func(id, src uint64, r string) duroxide.Event {
		return ev(id, src, duroxide.ActivityCompletedEvent{Result: r})
	}
	timer := func(id uint64, at uint64) duroxide.Event { return ev(id, 0, duroxide.TimerCreatedEvent{FireAtMs: at}) }
	fired := func(id, src, at uint64) duroxide.Event { return ev(id, src, duroxide.TimerFiredEvent{FireAtMs: at}) }
	sub := func(id uint64) duroxide.Event {
		return ev(id, 0, duroxide.SubOrchestrationScheduledEvent{Name: "Child", Instance: "child-inst", Input: "input"})
	}
	subDone := func(id, src uint64, r string) duroxide.Event {
		return ev(id, src, duroxide.SubOrchestrationCompletedEvent{Result: r})
	}
	cases := []struct {
		name    string
		fn      durable.OrchestrationFunc
		history []duroxide.Event
		message string // the nondeterminism message must contain it
	}{
		{"orchestration_chained_no_matching_action", activityOf("Task", "input"),
			[]duroxide.Event{started, act(2, "Task", "input"), ev(3, 0, duroxide.OrchestrationChainedEvent{Name: "ChildOrch", Instance: "child-inst", Input: "input"})},
			"OrchestrationChained"},
		{"activity_completed_for_timer_in_history", timerOrchestration("t", time.Minute),
			[]duroxide.Event{started, timer(2, 1000), done(3, 2, "wrong")}, "completion kind mismatch"},
		{"timer_completion_for_closed_schedule", twoSteps(timerStep(time.Second), timerStep(2*time.Second)),
			[]duroxide.Event{started, timer(2, 1000), fired(3, 2, 1000), timer(4, 2000), fired(5, 2, 1000)}, "completion without open schedule"},
		{"sub_orch_completion_for_closed_schedule", twoSteps(subStep("Child", "input"), actStep("Task", "work")),
			[]duroxide.Event{started, sub(2), subDone(3, 2, "first"), act(4, "Task", "work"), subDone(5, 2, "second")}, "completion without open schedule"},
		{"activity_completion_for_closed_schedule", twoSteps(actStep("Task", "input"), actStep("A", "work")),
			[]duroxide.Event{started, act(2, "Task", "input"), done(3, 2, "first"), act(4, "A", "work"), done(5, 2, "second")}, "completion without open schedule"},
		{"activity_failed_for_closed_schedule", twoSteps(actStep("Task", "input"), actStep("A", "work")),
			[]duroxide.Event{started, act(2, "Task", "input"), done(3, 2, "first"), act(4, "A", "work"),
				ev(5, 2, duroxide.ActivityFailedEvent{Details: duroxide.ApplicationFailure("duplicate error")})}, "completion without open schedule"},
		{"sub_orch_failed_for_closed_schedule", twoSteps(subStep("Child", "input"), actStep("Task", "work")),
			[]duroxide.Event{started, sub(2), subDone(3, 2, "first"), act(4, "Task", "work"),
				ev(5, 2, duroxide.SubOrchestrationFailedEvent{Details: duroxide.ApplicationFailure("duplicate error")})}, "completion without open schedule"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := turnOutcome(t, replayTurn(t, c.fn, append([]duroxide.Event(nil), c.history...)))
			if !strings.HasPrefix(got, "nondeterminism:") || !strings.Contains(got, c.message) {
				t.Fatalf("outcome %q, want a nondeterminism failure containing %q", got, c.message)
			}
		})
	}
}

// TestHistoryCorruptionMore mirrors the rest of replay_engine/history_corruption.rs.
func TestHistoryCorruptionMore(t *testing.T) {
	t.Parallel()
	immediate := func(*durable.OrchestrationContext, string) (string, error) { return "done", nil }
	act := ev(2, 0, duroxide.ActivityScheduledEvent{Name: "Task", Input: "input"})
	stale := duroxide.ActivityCompleted{Instance: "inst", ExecutionID: 999, ID: 2, Result: "result"}
	cases := []struct {
		name    string
		fn      durable.OrchestrationFunc
		history []duroxide.Event
		msgs    []duroxide.WorkItem
		want    func(t *testing.T, outcome string, delta []duroxide.Event)
	}{
		// duroxide's engine fails on an empty history; here the dispatcher
		// never hands one to the engine: a batch for an instance with no
		// history and no start is acknowledged with nothing written.
		{"empty_history", immediate, nil, nil, func(t *testing.T, outcome string, delta []duroxide.Event) {
			if outcome != "running" || len(delta) != 0 {
				t.Errorf("outcome %q, delta %v; want the batch dropped with nothing written", outcome, kindsOf(delta))
			}
		}},
		{"event_id_zero", immediate, []duroxide.Event{ev(0, 0, duroxide.OrchestrationStartedEvent{Name: "Orch", Version: "1.0.0"})}, nil,
			func(t *testing.T, outcome string, _ []duroxide.Event) {
				if outcome != "completed:done" {
					t.Errorf("outcome %q, want completed:done", outcome)
				}
			}},
		{"completion_source_wrong_type", timerOrchestration("t", time.Minute),
			[]duroxide.Event{startedEv("Orch", ""), ev(2, 0, duroxide.TimerCreatedEvent{FireAtMs: 1000})}, []duroxide.WorkItem{actDone(2, "result")},
			func(t *testing.T, outcome string, _ []duroxide.Event) {
				if !strings.HasPrefix(outcome, "nondeterminism:") {
					t.Errorf("outcome %q, want nondeterminism", outcome)
				}
			}},
		{"multiple_completions_same_source_in_history", activityOf("Task", "input"),
			[]duroxide.Event{startedEv("Orch", ""), act, ev(3, 2, duroxide.ActivityCompletedEvent{Result: "first-result"})},
			[]duroxide.WorkItem{actDone(2, "second-result")}, func(t *testing.T, outcome string, delta []duroxide.Event) {
				if n := countEvents(delta, "ActivityCompleted"); n != 0 || outcome != "completed:first-result" {
					t.Errorf("outcome %q with %d ActivityCompleted appended; want the duplicate dropped and the first result used", outcome, n)
				}
			}},
		{"completion_for_different_execution", activityOf("Task", "input"), []duroxide.Event{startedEv("Orch", ""), act},
			[]duroxide.WorkItem{stale}, noCompletionAppended},
		{"completion_wrong_execution", activityOf("Task", "input"), []duroxide.Event{startedEv("Orch", ""), act},
			[]duroxide.WorkItem{stale}, noCompletionAppended},
		{"multiple_terminal_events", immediate, []duroxide.Event{startedEv("Orch", ""),
			ev(2, 0, duroxide.OrchestrationCompletedEvent{Output: "first"}),
			ev(3, 0, duroxide.OrchestrationFailedEvent{Details: duroxide.ApplicationFailure("second")})}, nil,
			func(t *testing.T, outcome string, delta []duroxide.Event) {
				if outcome != "running" {
					t.Errorf("outcome %q, want no new terminal event (running)", outcome)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			delta := replayTurn(t, c.fn, append([]duroxide.Event(nil), c.history...), c.msgs...)
			c.want(t, turnOutcome(t, delta), delta)
		})
	}
}

// noCompletionAppended checks a turn dropped the completion message: no
// ActivityCompleted in its delta and no failure.
func noCompletionAppended(t *testing.T, outcome string, delta []duroxide.Event) {
	t.Helper()
	if n := countEvents(delta, "ActivityCompleted"); n != 0 || outcome != "running" {
		t.Errorf("outcome %q with %d ActivityCompleted appended (%v); want the message dropped", outcome, n, kindsOf(delta))
	}
}
