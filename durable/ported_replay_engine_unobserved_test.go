package durable_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/replay_engine/unobserved_futures.rs: what a turn
// cancels when futures are dropped (a select's losers, a Cancel, or futures
// left pending when the orchestration returns). duroxide reads the engine's
// cancelled_activity_ids / cancelled_sub_orchestration_ids side channel; here
// it is the commit's CancelledActivities and the CancelInstance items sent to
// children, with the *CancelRequested events of the history delta. Rust's
// drop(fut) is fut.Cancel().

// runEngineTurn runs one turn of instance "inst" (orchestration "Orch",
// version 1.0.0) with reg: history (its events given the instance's ids)
// and msgs, or duroxide's fresh engine when history is the started event
// alone and msgs are none (the turn that starts the execution), or a poke
// event when only msgs are none. The turn must not be abandoned.
func runEngineTurn(t *testing.T, reg *durable.Registry, history []duroxide.Event, msgs ...duroxide.WorkItem) durable.TurnOutcome {
	t.Helper()
	for i := range history {
		history[i].InstanceID, history[i].ExecutionID, history[i].DuroxideVersion = "inst", 1, duroxide.CurrentDuroxideVersion
	}
	switch {
	case len(msgs) == 0 && len(history) == 1:
		version := "1.0.0"
		history, msgs = nil, []duroxide.WorkItem{duroxide.StartOrchestration{Instance: "inst", Orchestration: "Orch", Version: &version, ExecutionID: 1}}
	case len(msgs) == 0:
		msgs = []duroxide.WorkItem{duroxide.ExternalRaised{Instance: "inst", Name: "poke", Data: ""}}
	}
	item := duroxide.OrchestrationItem{Instance: "inst", OrchestrationName: "Orch", ExecutionID: 1, Version: "1.0.0",
		History: history, Messages: msgs, AttemptCount: 1, LockToken: "runturn"}
	out, err := durable.RunTurn(reg, item, durable.Options{})
	if err != nil || out.Abandoned {
		t.Fatalf("RunTurn: %v (abandoned %v)", err, out.Abandoned)
	}
	return out
}

// unobservedTurn is what one turn cancelled.
type unobservedTurn struct {
	outcome            string
	activities         []uint64 // CancelledActivities' ids
	children           []string // instances sent a CancelInstance
	activityCancels    []uint64 // sources of ActivityCancelRequested (reason dropped_future) in the delta
	subOrchCancels     []uint64 // sources of SubOrchestrationCancelRequested (dropped_future) in the delta
	scheduledActivites []string // ActivityScheduled names in the delta
}

func runUnobserved(t *testing.T, fn durable.OrchestrationFunc, history []duroxide.Event, msgs ...duroxide.WorkItem) unobservedTurn {
	t.Helper()
	out := runEngineTurn(t, replayReg(fn), history, msgs...)
	r := unobservedTurn{outcome: turnOutcome(t, out.Commit.HistoryDelta)}
	for _, a := range out.Commit.CancelledActivities {
		r.activities = append(r.activities, a.ActivityID)
	}
	for _, it := range out.Commit.OrchestratorItems {
		if c, ok := it.(duroxide.CancelInstance); ok {
			r.children = append(r.children, c.Instance)
		}
	}
	for _, e := range out.Commit.HistoryDelta {
		switch k := e.Kind.(type) {
		case duroxide.ActivityCancelRequestedEvent:
			if k.Reason == "dropped_future" && e.SourceEventID != nil {
				r.activityCancels = append(r.activityCancels, *e.SourceEventID)
			}
		case duroxide.SubOrchestrationCancelRequestedEvent:
			if k.Reason == "dropped_future" && e.SourceEventID != nil {
				r.subOrchCancels = append(r.subOrchCancels, *e.SourceEventID)
			}
		case duroxide.ActivityScheduledEvent:
			r.scheduledActivites = append(r.scheduledActivites, k.Name)
		}
	}
	return r
}

// The handlers of the Rust file.
func select2TimerWins(name, input string, d time.Duration) durable.OrchestrationFunc {
	return func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		act := ctx.ScheduleActivity(name, input)
		if ctx.Select(act, ctx.Timer(d)) == 0 {
			r, err := act.Get()
			return "activity_won:" + r, err
		}
		return "timer_won", nil
	}
}

func subOrchSelectLoser(name, input string, d time.Duration) durable.OrchestrationFunc {
	return func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		sub := ctx.ScheduleSubOrchestration(name, input)
		if ctx.Select(sub, ctx.Timer(d)) == 0 {
			return sub.Get()
		}
		return "timer_won_sub_orch_cancelled", nil
	}
}

func subOrchOf(name, input string) durable.OrchestrationFunc {
	return func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.ScheduleSubOrchestration(name, input).Get()
	}
}

// TestUnobservedFutures mirrors the engine-level tests of unobserved_futures.rs,
// one subtest each.
func TestUnobservedFutures(t *testing.T) {
	t.Parallel()
	const fire = 1000
	started := startedEv("Orch", "")
	act := func(id uint64, name, input string) duroxide.Event {
		return ev(id, 0, duroxide.ActivityScheduledEvent{Name: name, Input: input})
	}
	timer := func(id uint64) duroxide.Event { return ev(id, 0, duroxide.TimerCreatedEvent{FireAtMs: fire}) }
	fired := func(id, src uint64) duroxide.Event { return ev(id, src, duroxide.TimerFiredEvent{FireAtMs: fire}) }
	sub := func(id uint64, input string) duroxide.Event {
		return ev(id, 0, duroxide.SubOrchestrationScheduledEvent{Name: "Child", Instance: "sub::2", Input: input})
	}
	actCancel := func(id, src uint64, reason string) duroxide.Event {
		return ev(id, src, duroxide.ActivityCancelRequestedEvent{Reason: reason})
	}
	subCancel := func(id, src uint64, reason string) duroxide.Event {
		return ev(id, src, duroxide.SubOrchestrationCancelRequestedEvent{Reason: reason})
	}
	timerFired := func(id uint64) duroxide.WorkItem {
		return duroxide.TimerFired{Instance: "inst", ExecutionID: 1, ID: id, FireAtMs: fire}
	}
	const child = "inst::sub::2"
	cases := []struct {
		name    string
		fn      durable.OrchestrationFunc
		history []duroxide.Event
		msgs    []duroxide.WorkItem
		want    unobservedTurn // outcome prefix and the exact cancellation lists
	}{
		{"select2_timer_wins_activity_cancelled", select2TimerWins("LongTask", "input", msec),
			[]duroxide.Event{started, act(2, "LongTask", "input"), timer(3)}, []duroxide.WorkItem{timerFired(3)},
			unobservedTurn{outcome: "completed:timer_won", activities: []uint64{2}, activityCancels: []uint64{2}}},
		{"select2_activity_wins_timer_not_cancelled", select2TimerWins("FastTask", "input", 5*msec),
			[]duroxide.Event{started, act(2, "FastTask", "input"), timer(3)},
			[]duroxide.WorkItem{duroxide.ActivityCompleted{Instance: "inst", ExecutionID: 1, ID: 2, Result: "done"}},
			unobservedTurn{outcome: "completed:activity_won:done"}},
		{"select3_two_activities_cancelled", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			a1, a2 := ctx.ScheduleActivity("Task1", "input1"), ctx.ScheduleActivity("Task2", "input2")
			if i := ctx.Select(a1, a2, ctx.Timer(msec)); i < 2 {
				return []durable.Future[string]{a1, a2}[i].Get()
			}
			return "timer_won", nil
		}, []duroxide.Event{started, act(2, "Task1", "input1"), act(3, "Task2", "input2"), timer(4)}, []duroxide.WorkItem{timerFired(4)},
			unobservedTurn{outcome: "completed:timer_won", activities: []uint64{2, 3}, activityCancels: []uint64{2, 3}}},
		{"completed_future_not_in_cancelled_list", activityOf("Task", "input"),
			[]duroxide.Event{started, act(2, "Task", "input"), ev(3, 2, duroxide.ActivityCompletedEvent{Result: "result"})}, nil,
			unobservedTurn{outcome: "completed:result"}},
		{"explicit_drop_activity_gets_cancelled", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.ScheduleActivity("DroppedTask", "input").Cancel()
			return "completed_after_dropping_activity", nil
		}, []duroxide.Event{started}, nil,
			unobservedTurn{outcome: "completed:completed_after_dropping_activity", activities: []uint64{2}, activityCancels: []uint64{2},
				scheduledActivites: []string{"DroppedTask"}}},
		{"explicit_drop_timer_no_cancel_needed", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.Timer(time.Minute).Cancel()
			return "timer_dropped", nil
		}, []duroxide.Event{started}, nil, unobservedTurn{outcome: "completed:timer_dropped"}},
		{"explicit_drop_external_wait", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.WaitForEvent("MyEvent").Cancel()
			return "wait_dropped", nil
		}, []duroxide.Event{started}, nil, unobservedTurn{outcome: "completed:wait_dropped"}},
		{"multiple_dropped_activities_all_cancelled", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.ScheduleActivity("Task1", "input1")
			ctx.ScheduleActivity("Task2", "input2")
			ctx.Timer(10 * time.Second)
			return "all_dropped", nil // returning drops all three
		}, []duroxide.Event{started}, nil,
			unobservedTurn{outcome: "completed:all_dropped", activities: []uint64{2, 3}, activityCancels: []uint64{2, 3},
				scheduledActivites: []string{"Task1", "Task2"}}},
		{"sub_orch_drop_after_schedule_cancelled", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.ScheduleSubOrchestration("Child", "child_input").Cancel()
			return "sub_orch_dropped", nil
		}, []duroxide.Event{started}, nil,
			unobservedTurn{outcome: "completed:sub_orch_dropped", children: []string{child}, subOrchCancels: []uint64{2}}},
		{"sub_orch_select_loser_child_cancelled", subOrchSelectLoser("Child", "child_input", msec),
			[]duroxide.Event{started, sub(2, "child_input"), timer(3)}, []duroxide.WorkItem{timerFired(3)},
			unobservedTurn{outcome: "completed:timer_won_sub_orch_cancelled", children: []string{child}, subOrchCancels: []uint64{2}}},
		{"replay_select_loser_same_cancellation", select2TimerWins("Task", "input", msec),
			[]duroxide.Event{started, act(2, "Task", "input"), timer(3), fired(4, 3)}, nil,
			unobservedTurn{outcome: "completed:timer_won", activities: []uint64{2}, activityCancels: []uint64{2}}},
		{"completed_sub_orch_not_cancelled", subOrchOf("Child", "input"),
			[]duroxide.Event{started, sub(2, "input"), ev(3, 2, duroxide.SubOrchestrationCompletedEvent{Result: "child_result"})}, nil,
			unobservedTurn{outcome: "completed:child_result"}},
		{"explicit_drop_then_await_captures_cancellation", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.ScheduleActivity("DroppedTask", "input").Cancel()
			if _, err := ctx.Timer(100 * msec).Get(); err != nil {
				return "", err
			}
			return "done_after_drop", nil
		}, []duroxide.Event{started, act(2, "DroppedTask", "input"), timer(3)}, nil,
			unobservedTurn{outcome: "running", activities: []uint64{2}, activityCancels: []uint64{2}}},
		{"cross_turn_activity_cancellation_emits_both_signals", select2TimerWins("Task", "input", msec),
			[]duroxide.Event{started, act(2, "Task", "input"), timer(3)}, []duroxide.WorkItem{timerFired(3)},
			unobservedTurn{outcome: "completed:timer_won", activities: []uint64{2}, activityCancels: []uint64{2}}},
		{"cross_turn_sub_orch_cancellation_emits_both_signals", subOrchSelectLoser("Child", "input", msec),
			[]duroxide.Event{started, sub(2, "input"), timer(3)}, []duroxide.WorkItem{timerFired(3)},
			unobservedTurn{outcome: "completed:timer_won_sub_orch_cancelled", children: []string{child}, subOrchCancels: []uint64{2}}},
		{"replay_does_not_reemit_activity_cancellation_side_channel_when_already_in_history", select2TimerWins("Task", "input", time.Second),
			[]duroxide.Event{started, act(2, "Task", "input"), timer(3), fired(4, 3), actCancel(5, 2, "dropped_future")}, nil,
			unobservedTurn{outcome: "completed:timer_won"}},
		{"replay_does_not_reemit_sub_orch_cancellation_side_channel_when_already_in_history", subOrchSelectLoser("Child", "input", time.Second),
			[]duroxide.Event{started, sub(2, "input"), timer(3), fired(4, 3), subCancel(5, 2, "dropped_future")}, nil,
			unobservedTurn{outcome: "completed:timer_won_sub_orch_cancelled"}},
		{"replay_allows_new_cancellations_in_current_turn_even_when_prior_cancellations_exist", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			act := ctx.ScheduleActivity("Task", "input")
			ctx.Select(act, ctx.Timer(time.Second))
			ctx.ScheduleActivity("Extra", "x").Cancel()
			return "timer_won_plus_extra_drop", nil
		}, []duroxide.Event{started, act(2, "Task", "input"), timer(3), fired(4, 3), actCancel(5, 2, "dropped_future")}, nil,
			// The poke takes event id 6, so Extra is scheduled as 7 (duroxide, with no batch, allocates 6).
			unobservedTurn{outcome: "completed:timer_won_plus_extra_drop", activities: []uint64{7}, activityCancels: []uint64{7},
				scheduledActivites: []string{"Extra"}}},
		{"duplicate_activity_cancel_requested_is_benign", select2TimerWins("Task", "input", time.Second),
			[]duroxide.Event{started, act(2, "Task", "input"), timer(3), fired(4, 3), actCancel(5, 2, "dropped_future"),
				actCancel(6, 2, "orchestration_terminal_failed")}, nil,
			unobservedTurn{outcome: "completed:timer_won"}},
		{"duplicate_sub_orch_cancel_requested_is_benign", subOrchSelectLoser("Child", "input", time.Second),
			[]duroxide.Event{started, sub(2, "input"), timer(3), fired(4, 3), subCancel(5, 2, "dropped_future"),
				subCancel(6, 2, "orchestration_terminal_failed")}, nil,
			unobservedTurn{outcome: "completed:timer_won_sub_orch_cancelled"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := runUnobserved(t, c.fn, slices.Clone(c.history), c.msgs...)
			if got.outcome != c.want.outcome {
				t.Errorf("outcome %q, want %q", got.outcome, c.want.outcome)
			}
			for _, f := range []struct {
				what      string
				got, want any
			}{
				{"cancelled activities", got.activities, c.want.activities},
				{"cancelled children", got.children, c.want.children},
				{"ActivityCancelRequested(dropped_future) sources", got.activityCancels, c.want.activityCancels},
				{"SubOrchestrationCancelRequested(dropped_future) sources", got.subOrchCancels, c.want.subOrchCancels},
				{"scheduled activities", got.scheduledActivites, c.want.scheduledActivites},
			} {
				if !equalLists(f.got, f.want) {
					t.Errorf("%s: %v, want %v", f.what, f.got, f.want)
				}
			}
		})
	}
}

// equalLists compares two []uint64 or []string, nil equal to empty.
func equalLists(a, b any) bool {
	switch x := a.(type) {
	case []uint64:
		y := b.([]uint64)
		return len(x) == 0 && len(y) == 0 || slices.Equal(x, y)
	case []string:
		y := b.([]string)
		return len(x) == 0 && len(y) == 0 || slices.Equal(x, y)
	}
	return false
}

// TestUnobservedFuturesReplayFailsIfPersistedDroppedFutureCancelIsNoLongerEmittedByCode
// mirrors replay_fails_if_persisted_dropped_future_cancel_is_no_longer_emitted_by_code.
func TestUnobservedFuturesReplayFailsIfPersistedDroppedFutureCancelIsNoLongerEmittedByCode(t *testing.T) {
	t.Parallel()
	got := runUnobserved(t, func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		act := ctx.ScheduleActivity("Task", "input")
		ctx.Timer(time.Second)
		r, err := act.Get()
		return "activity_awaited:" + r, err
	}, []duroxide.Event{startedEv("Orch", ""),
		ev(2, 0, duroxide.ActivityScheduledEvent{Name: "Task", Input: "input"}),
		ev(3, 0, duroxide.TimerCreatedEvent{FireAtMs: 1000}),
		ev(4, 3, duroxide.TimerFiredEvent{FireAtMs: 1000}),
		ev(5, 2, duroxide.ActivityCancelRequestedEvent{Reason: "dropped_future"})})
	if !strings.HasPrefix(got.outcome, "nondeterminism:") || !strings.Contains(got.outcome, "cancellation mismatch (activities)") {
		t.Fatalf("outcome %q, want a nondeterminism failure naming the activity cancellation mismatch", got.outcome)
	}
}
