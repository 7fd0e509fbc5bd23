package durable_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of the remaining engine tests of duroxide's tests/replay_engine/
// (cancellation, completion_messages, composition, edge_cases,
// event_allocation, fresh_execution, is_replaying, sequential_progress,
// sub_orchestration). The Rust tests read the engine's pending_actions and
// history_delta; here a RunTurn commit's WorkerItems and OrchestratorItems
// are the actions and its HistoryDelta the delta.

// engineTurn runs one turn of fn (runEngineTurn), with activities C, A1 and
// A2 registered, and returns the whole outcome.
func engineTurn(t *testing.T, fn durable.OrchestrationFunc, history []duroxide.Event, msgs ...duroxide.WorkItem) durable.TurnOutcome {
	t.Helper()
	reg := replayReg(fn).MustAddActivity("C", constActivity("c")).MustAddActivity("A1", constActivity("a1")).
		MustAddActivity("A2", constActivity("a2"))
	return runEngineTurn(t, reg, history, msgs...)
}

// activityActions lists the ids of the activities a turn sends to workers.
func activityActions(out durable.TurnOutcome) []uint64 {
	var ids []uint64
	for _, w := range out.Commit.WorkerItems {
		if a, ok := w.(duroxide.ActivityExecute); ok {
			ids = append(ids, a.ID)
		}
	}
	return ids
}

// TestReplayEngineRest ports the remaining replay_engine tests, one subtest each.
func TestReplayEngineRest(t *testing.T) {
	t.Parallel()
	started := startedEv("Orch", "")
	act := func(id uint64, name, input string) duroxide.Event {
		return ev(id, 0, duroxide.ActivityScheduledEvent{Name: name, Input: input})
	}
	done := func(id, src uint64, r string) duroxide.Event {
		return ev(id, src, duroxide.ActivityCompletedEvent{Result: r})
	}
	cancelReq := func(id uint64, reason string) duroxide.Event {
		return ev(id, 0, duroxide.OrchestrationCancelRequestedEvent{Reason: reason})
	}
	cancelMsg := func(reason string) duroxide.WorkItem {
		return duroxide.CancelInstance{Instance: "inst", Reason: reason}
	}
	immediate := func(*durable.OrchestrationContext, string) (string, error) { return "success", nil }
	wantOutcome := func(want string) func(t *testing.T, out durable.TurnOutcome) {
		return func(t *testing.T, out durable.TurnOutcome) {
			t.Helper()
			if got := turnOutcome(t, out.Commit.HistoryDelta); got != want {
				t.Errorf("outcome %q, want %q (delta %v)", got, want, kindsOf(out.Commit.HistoryDelta))
			}
		}
	}
	wantCancelled := func(reason string) func(t *testing.T, out durable.TurnOutcome) {
		return func(t *testing.T, out durable.TurnOutcome) {
			t.Helper()
			for _, e := range out.Commit.HistoryDelta {
				if f, ok := e.Kind.(duroxide.OrchestrationFailedEvent); ok {
					if a := f.Details.Application; a != nil && a.Kind.Variant == duroxide.AppErrorCancelled && a.Kind.Reason == reason {
						return
					}
					t.Fatalf("failed with %+v, want cancelled %q", f.Details, reason)
				}
			}
			t.Fatalf("no failure in %v, want cancelled %q", kindsOf(out.Commit.HistoryDelta), reason)
		}
	}
	// appended checks the delta holds exactly one event of the completion's
	// type, answering src.
	appended := func(eventType string, src uint64) func(t *testing.T, out durable.TurnOutcome) {
		return func(t *testing.T, out durable.TurnOutcome) {
			t.Helper()
			var got []duroxide.Event
			for _, e := range out.Commit.HistoryDelta {
				if e.Kind.EventType() == eventType {
					got = append(got, e)
				}
			}
			if len(got) != 1 || (src != 0 && (got[0].SourceEventID == nil || *got[0].SourceEventID != src)) {
				t.Fatalf("%s events %+v, want one answering %d", eventType, got, src)
			}
		}
	}
	var handlerRuns atomic.Int32
	cases := []struct {
		name    string
		fn      durable.OrchestrationFunc
		history []duroxide.Event
		msgs    []duroxide.WorkItem
		check   func(t *testing.T, out durable.TurnOutcome)
	}{
		{"cancel_via_message", immediate, []duroxide.Event{started, act(2, "Task", "input")}, []duroxide.WorkItem{cancelMsg("user requested")}, wantCancelled("user requested")},
		{"cancel_in_history", immediate, []duroxide.Event{started, cancelReq(2, "admin cancelled")}, nil, wantCancelled("admin cancelled")},
		{"cancel_duplicate_filtered", immediate, []duroxide.Event{started, cancelReq(2, "first cancel")}, []duroxide.WorkItem{cancelMsg("second cancel")},
			func(t *testing.T, out durable.TurnOutcome) {
				if n := countEvents(out.Commit.HistoryDelta, "OrchestrationCancelRequested"); n != 0 {
					t.Errorf("%d new OrchestrationCancelRequested, want the duplicate filtered", n)
				}
				wantCancelled("first cancel")(t, out)
			}},
		{"activity_completed_message", activityOf("Task", "input"), []duroxide.Event{started, act(2, "Task", "input")}, []duroxide.WorkItem{actDone(2, "result")},
			func(t *testing.T, out durable.TurnOutcome) {
				appended("ActivityCompleted", 2)(t, out)
				wantOutcome("completed:result")(t, out)
			}},
		{"timer_fired_message", timerOrchestration("t", time.Minute), []duroxide.Event{started, ev(2, 0, duroxide.TimerCreatedEvent{FireAtMs: 1000})},
			[]duroxide.WorkItem{duroxide.TimerFired{Instance: "inst", ExecutionID: 1, ID: 2, FireAtMs: 1000}}, appended("TimerFired", 2)},
		{"external_raised_message", waitThenDone("MyEvent", "got"), []duroxide.Event{started, ev(2, 0, duroxide.ExternalSubscribedEvent{Name: "MyEvent"})},
			[]duroxide.WorkItem{duroxide.ExternalRaised{Instance: "inst", Name: "MyEvent", Data: "event-data"}},
			func(t *testing.T, out durable.TurnOutcome) {
				for _, e := range out.Commit.HistoryDelta {
					if x, ok := e.Kind.(duroxide.ExternalEventEvent); ok && x.Name == "MyEvent" && x.Data == "event-data" {
						return
					}
				}
				t.Fatalf("no ExternalEvent MyEvent=event-data in %v", kindsOf(out.Commit.HistoryDelta))
			}},
		{"sub_orch_completed_message", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleSubOrchestration("Child", "input").Get()
		}, []duroxide.Event{started, ev(2, 0, duroxide.SubOrchestrationScheduledEvent{Name: "Child", Instance: "sub::2", Input: "input"})},
			[]duroxide.WorkItem{duroxide.SubOrchCompleted{ParentInstance: "inst", ParentExecutionID: 1, ParentID: 2, Result: "child-result"}},
			func(t *testing.T, out durable.TurnOutcome) {
				appended("SubOrchestrationCompleted", 2)(t, out)
				wantOutcome("completed:child-result")(t, out)
			}},
		{"duplicate_external_event_in_history_is_kept", waitThenDone("Evt", "got"),
			[]duroxide.Event{started, ev(2, 0, duroxide.ExternalSubscribedEvent{Name: "Evt"}), ev(3, 0, duroxide.ExternalEventEvent{Name: "Evt", Data: "same-data"})},
			[]duroxide.WorkItem{duroxide.ExternalRaised{Instance: "inst", Name: "Evt", Data: "same-data"}},
			func(t *testing.T, out durable.TurnOutcome) {
				appended("ExternalEvent", 0)(t, out) // kept, though an equal event is in history
				wantOutcome("completed:got")(t, out)
			}},
		{"join_fresh_schedule", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return joined(ctx, ctx.ScheduleActivity("A", "a"), ctx.ScheduleActivity("B", "b"), ctx.ScheduleActivity("C", "c"))
		}, []duroxide.Event{started}, nil, func(t *testing.T, out durable.TurnOutcome) {
			if ids := activityActions(out); len(ids) != 3 {
				t.Fatalf("activities sent %v, want 3", ids)
			}
			wantOutcome("running")(t, out)
		}},
		{"empty_activity_input", activityOf("Task", ""), []duroxide.Event{started, act(2, "Task", ""), done(3, 2, "result")}, nil, wantOutcome("completed:result")},
		{"large_result_string", activityOf("Task", "input"), []duroxide.Event{started, act(2, "Task", "input"), done(3, 2, strings.Repeat("x", 1_000_000))}, nil,
			wantOutcome("completed:" + strings.Repeat("x", 1_000_000))},
		{"handler_invoked_once", func(*durable.OrchestrationContext, string) (string, error) {
			handlerRuns.Add(1)
			return "done", nil
		}, []duroxide.Event{started}, nil, func(t *testing.T, out durable.TurnOutcome) {
			wantOutcome("completed:done")(t, out)
			if n := handlerRuns.Load(); n != 1 {
				t.Errorf("handler ran %d times, want 1", n)
			}
		}},
		{"made_progress_after_completion", activityOf("Task", "input"), []duroxide.Event{started, act(2, "Task", "input")}, []duroxide.WorkItem{actDone(2, "result")},
			appended("ActivityCompleted", 2)},
		{"final_history_combines_baseline_and_delta", activityOf("Task", "input"), []duroxide.Event{started}, nil, func(t *testing.T, out durable.TurnOutcome) {
			if got := kindsOf(out.Commit.HistoryDelta); strings.Join(got, ",") != "OrchestrationStarted,ActivityScheduled" {
				t.Fatalf("first turn's history %v, want OrchestrationStarted, ActivityScheduled", got)
			}
		}},
		{"pending_actions_have_correct_event_id", activityOf("Task", "input"), []duroxide.Event{started}, nil, func(t *testing.T, out durable.TurnOutcome) {
			if ids := activityActions(out); len(ids) != 1 || ids[0] != 2 {
				t.Fatalf("activities sent %v, want the one of event 2", ids)
			}
		}},
		{"multiple_schedules_no_await", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.ScheduleActivity("A", "a")
			ctx.ScheduleActivity("B", "b")
			ctx.ScheduleActivity("C", "c")
			return "done", nil
		}, []duroxide.Event{started}, nil, func(t *testing.T, out durable.TurnOutcome) {
			wantOutcome("completed:done")(t, out)
			// duroxide's engine holds 3 pending actions; this dispatcher
			// records the 3 and their cancellation but sends no work item
			// for an activity dropped in the turn that scheduled it.
			d := out.Commit.HistoryDelta
			if countEvents(d, "ActivityScheduled") != 3 || countEvents(d, "ActivityCancelRequested") != 3 || len(out.Commit.CancelledActivities) != 3 {
				t.Fatalf("delta %v, cancelled %v; want 3 scheduled and 3 cancelled", kindsOf(d), out.Commit.CancelledActivities)
			}
		}},
		{"two_activities_both_done", twoSteps(actStep("A1", "input1"), actStep("A2", "input2")),
			[]duroxide.Event{started, act(2, "A1", "input1"), done(3, 2, "result1"), act(4, "A2", "input2"), done(5, 4, "result2")}, nil,
			wantOutcome("completed:result1,result2")},
		{"timer_then_activity", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			if _, err := ctx.Timer(time.Minute).Get(); err != nil {
				return "", err
			}
			return ctx.ScheduleActivity("Task", "input").Get()
		}, []duroxide.Event{started, ev(2, 0, duroxide.TimerCreatedEvent{FireAtMs: 1000}), ev(3, 2, duroxide.TimerFiredEvent{FireAtMs: 1000})}, nil,
			func(t *testing.T, out durable.TurnOutcome) {
				if ids := activityActions(out); len(ids) != 1 {
					t.Fatalf("activities sent %v, want Task", ids)
				}
				wantOutcome("running")(t, out)
			}},
		{"multiple_sub_orchs_unique_ids", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.ScheduleSubOrchestration("Child", "input1").Cancel()
			ctx.ScheduleSubOrchestration("Child", "input2").Cancel()
			return "done", nil
		}, []duroxide.Event{started}, nil, func(t *testing.T, out durable.TurnOutcome) {
			// Read from the recorded schedules: children dropped in the turn
			// that scheduled them are never started.
			var ids []string
			for _, e := range out.Commit.HistoryDelta {
				if s, ok := e.Kind.(duroxide.SubOrchestrationScheduledEvent); ok {
					ids = append(ids, "inst::"+s.Instance)
				}
			}
			if len(ids) != 2 || ids[0] == ids[1] || !strings.HasPrefix(ids[0], "inst::sub::") || !strings.HasPrefix(ids[1], "inst::sub::") {
				t.Fatalf("children started %v, want two distinct auto ids", ids)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.check(t, engineTurn(t, c.fn, append([]duroxide.Event(nil), c.history...), c.msgs...))
		})
	}
}

// TestIsReplayingInTurns mirrors replay_is_replaying and fresh_start_with_zero_persisted:
// IsReplaying is true while the code re-reads stored history and false in a
// fresh turn.
func TestIsReplayingInTurns(t *testing.T) {
	t.Parallel()
	var atStart, afterActivity atomic.Value
	fn := func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		atStart.Store(ctx.IsReplaying())
		r, err := ctx.ScheduleActivity("Task", "input").Get()
		afterActivity.Store(ctx.IsReplaying())
		return r, err
	}
	t.Run("replay_is_replaying", func(t *testing.T) {
		out := engineTurn(t, fn, []duroxide.Event{startedEv("Orch", ""), ev(2, 0, duroxide.ActivityScheduledEvent{Name: "Task", Input: "input"}),
			ev(3, 2, duroxide.ActivityCompletedEvent{Result: "result"})})
		if got := turnOutcome(t, out.Commit.HistoryDelta); got != "completed:result" || atStart.Load() != true || afterActivity.Load() != false {
			t.Fatalf("outcome %q, replaying at start %v, after the stored completion %v; want true then false", got, atStart.Load(), afterActivity.Load())
		}
	})
	t.Run("fresh_start_with_zero_persisted", func(t *testing.T) {
		engineTurn(t, fn, []duroxide.Event{startedEv("Orch", "")})
		if atStart.Load() != false {
			t.Fatalf("replaying at the start of a fresh execution: %v", atStart.Load())
		}
	})
}

// TestIdenticalActivitiesRoutesCorrectlyAcrossRestartBoundary mirrors
// identical_activities_routes_correctly_across_restart_boundary: two
// identical activities around a timer, each turn replaying the last.
func TestIdenticalActivitiesRoutesCorrectlyAcrossRestartBoundary(t *testing.T) {
	t.Parallel()
	fn := func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		r1, err := ctx.ScheduleActivity("Task", "same").Get()
		if err != nil {
			return "", err
		}
		if _, err := ctx.Timer(time.Minute).Get(); err != nil {
			return "", err
		}
		r2, err := ctx.ScheduleActivity("Task", "same").Get()
		return r1 + "," + r2, err
	}
	history := []duroxide.Event{}
	step := func(msgs ...duroxide.WorkItem) durable.TurnOutcome {
		t.Helper()
		if len(history) == 0 {
			history = append(history, startedEv("Orch", ""))
		}
		out := engineTurn(t, fn, append([]duroxide.Event(nil), history...), msgs...)
		if len(msgs) == 0 {
			history = nil // the starting turn's delta holds OrchestrationStarted
		}
		history = append(history, out.Commit.HistoryDelta...)
		return out
	}
	out := step()
	first := activityActions(out)
	if len(first) != 1 || len(out.Commit.OrchestratorItems) != 0 {
		t.Fatalf("turn 1: activities %v, orchestrator items %v; want the first Task only", first, out.Commit.OrchestratorItems)
	}
	out = step(actDone(first[0], "R1"))
	var timerID uint64
	for _, e := range out.Commit.HistoryDelta {
		if _, ok := e.Kind.(duroxide.TimerCreatedEvent); ok {
			timerID = e.EventID
		}
	}
	if timerID == 0 || len(activityActions(out)) != 0 {
		t.Fatalf("turn 2: delta %v, activities %v; want the timer and no activity", kindsOf(out.Commit.HistoryDelta), activityActions(out))
	}
	out = step(duroxide.TimerFired{Instance: "inst", ExecutionID: 1, ID: timerID, FireAtMs: 1000})
	second := activityActions(out)
	if len(second) != 1 || second[0] == first[0] {
		t.Fatalf("turn 3: activities %v, want the second Task (not %d again)", second, first[0])
	}
	out = step(actDone(second[0], "R2"))
	if got := turnOutcome(t, out.Commit.HistoryDelta); got != "completed:R1,R2" {
		t.Fatalf("turn 4: %q, want completed:R1,R2", got)
	}
}
