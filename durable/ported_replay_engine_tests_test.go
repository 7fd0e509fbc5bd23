package durable_test

import (
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/replay_engine/*.rs. The Rust tests hand the engine a
// baseline history and completion messages directly; here the history is seeded into
// the provider (harness.seed), the messages are enqueued, and a runtime replays them,
// so each test also covers the dispatcher around the engine. Test names are
// Test<RustFile><RustTest>.

// replayReg registers orchestration fn as "Orch" with activities that answer at once.
func replayReg(fn durable.OrchestrationFunc) *durable.Registry {
	return durable.NewRegistry().
		MustAddActivity("A", constActivity("a")).MustAddActivity("B", constActivity("b")).
		MustAddActivity("Task", constActivity("task")).MustAddActivity("Second", constActivity("second")).
		MustAddActivity("Next", constActivity("next")).MustAddActivity("First", constActivity("first")).
		MustAddOrchestration("Orch", fn).
		MustAddOrchestration("Child", func(*durable.OrchestrationContext, string) (string, error) { return "child", nil })
}

// replaySeeded seeds history for "inst", enqueues msgs and starts a runtime for fn.
func replaySeeded(t *testing.T, fn durable.OrchestrationFunc, history []duroxide.Event, msgs ...duroxide.WorkItem) *harness {
	t.Helper()
	reg := replayReg(fn)
	h := newHarness(t, reg)
	h.seed("inst", history...)
	for _, m := range msgs {
		h.enqueue(m)
	}
	h.restart(reg, durable.Options{})
	return h
}

func activityOf(name, input string) durable.OrchestrationFunc {
	return func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.ScheduleActivity(name, input).Get()
	}
}

func actDone(id uint64, result string) duroxide.WorkItem {
	return duroxide.ActivityCompleted{Instance: "inst", ExecutionID: 1, ID: id, Result: result}
}

// --- event_allocation.rs ---

// TestEventAllocationSequentialAllocation mirrors sequential_allocation: three
// un-awaited schedules take 2, 3, 4, and every event of the turn is contiguous.
func TestEventAllocationSequentialAllocation(t *testing.T) {
	t.Parallel()
	reg := replayReg(func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.ScheduleActivity("A", "a")
		ctx.ScheduleActivity("B", "b")
		ctx.ScheduleActivity("Task", "c")
		return "done", nil
	})
	h := newHarness(t, reg)
	h.start("inst", "Orch", "")
	h.wantCompleted("inst", "done")
	hist := h.history("inst")
	if ids := eventIDs(hist, "ActivityScheduled"); !reflect.DeepEqual(ids, []uint64{2, 3, 4}) {
		t.Errorf("ActivityScheduled ids %v, want [2 3 4]", ids)
	}
	for i, e := range hist {
		if e.EventID != uint64(i+1) {
			t.Fatalf("event #%d has id %d: ids are not contiguous from 1", i+1, e.EventID)
		}
	}
	if n := countEvents(hist, "ActivityCancelRequested"); n != 3 {
		t.Errorf("%d ActivityCancelRequested, want one per un-awaited schedule", n)
	}
}

// TestEventAllocationAllocationAfterReplay mirrors allocation_after_replay.
func TestEventAllocationAllocationAfterReplay(t *testing.T) {
	t.Parallel()
	h := replaySeeded(t, func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		r1, err := ctx.ScheduleActivity("First", "input").Get()
		if err != nil {
			return "", err
		}
		r2, err := ctx.ScheduleActivity("Second", "input2").Get()
		return r1 + "," + r2, err
	}, []duroxide.Event{startedEv("Orch", ""), ev(2, 0, duroxide.ActivityScheduledEvent{Name: "First", Input: "input"})},
		actDone(2, "result"))
	h.wantCompleted("inst", "result,second")
	second := h.history("inst")[3]
	if k, ok := second.Kind.(duroxide.ActivityScheduledEvent); !ok || k.Name != "Second" || second.EventID != 4 {
		t.Errorf("event #4 is %+v id %d, want ActivityScheduled Second with id 4 (max+1)", second.Kind, second.EventID)
	}
}

// TestEventAllocationAllocationWithGaps mirrors allocation_with_gaps: ids continue from
// the highest one, not from the event count.
func TestEventAllocationAllocationWithGaps(t *testing.T) {
	t.Parallel()
	h := replaySeeded(t, func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		r1, err := ctx.ScheduleActivity("Task", "input").Get()
		if err != nil {
			return "", err
		}
		r2, err := ctx.ScheduleActivity("Next", "next").Get()
		return r1 + "," + r2, err
	}, []duroxide.Event{startedEv("Orch", ""), ev(5, 0, duroxide.ActivityScheduledEvent{Name: "Task", Input: "input"})},
		actDone(5, "result"))
	h.wantCompleted("inst", "result,next")
	hist := h.history("inst")
	if hist[2].EventID != 6 || hist[3].EventID != 7 {
		t.Errorf("completion id %d, next schedule id %d; want 6 and 7", hist[2].EventID, hist[3].EventID)
	}
}

// --- nondeterminism.rs ---

// TestNondeterminismScheduleMismatches mirrors schedule_mismatch_activity_vs_timer,
// _timer_vs_activity, _wrong_activity_name, _wrong_input and _wrong_external_name:
// the replayed code emits something other than the recorded schedule.
func TestNondeterminismScheduleMismatches(t *testing.T) {
	t.Parallel()
	actA := ev(2, 0, duroxide.ActivityScheduledEvent{Name: "A", Input: "x"})
	cases := []struct {
		name     string
		recorded duroxide.Event
		code     durable.OrchestrationFunc
	}{
		{"schedule_mismatch_activity_vs_timer", actA, timerOrchestration("t", time.Hour)},
		{"schedule_mismatch_timer_vs_activity", ev(2, 0, duroxide.TimerCreatedEvent{FireAtMs: 1}), activityOf("A", "x")},
		{"schedule_mismatch_wrong_activity_name", actA, activityOf("B", "x")},
		{"schedule_mismatch_wrong_input", actA, activityOf("A", "y")},
		{"schedule_mismatch_wrong_external_name", ev(2, 0, duroxide.ExternalSubscribedEvent{Name: "EventX"}), waitThenDone("EventY", "done")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := replaySeeded(t, c.code, []duroxide.Event{startedEv("Orch", ""), c.recorded},
				duroxide.ExternalRaised{Instance: "inst", Name: "poke", Data: ""})
			h.wantNondeterminism("inst")
		})
	}
}

// TestNondeterminismHistoryScheduleNoEmittedAction mirrors history_schedule_no_emitted_action:
// a recorded schedule the code no longer awaits is legitimate.
func TestNondeterminismHistoryScheduleNoEmittedAction(t *testing.T) {
	t.Parallel()
	h := replaySeeded(t, func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.ScheduleActivity("A", "x")
		_, err := ctx.WaitForEvent("go").Get()
		return "done", err
	}, []duroxide.Event{startedEv("Orch", ""), ev(2, 0, duroxide.ActivityScheduledEvent{Name: "A", Input: "x"}), ev(3, 0, duroxide.ExternalSubscribedEvent{Name: "go"})},
		duroxide.ExternalRaised{Instance: "inst", Name: "go", Data: ""})
	h.wantCompleted("inst", "done")
}

// TestNondeterminismCompletionKindMismatches mirrors completion_without_schedule,
// completion_kind_mismatch, timer_completion_for_activity_schedule,
// sub_orch_completion_for_activity_schedule, sub_orch_completion_for_timer_schedule
// and timer_completion_for_sub_orch_schedule.
func TestNondeterminismCompletionKindMismatches(t *testing.T) {
	t.Parallel()
	activity := ev(2, 0, duroxide.ActivityScheduledEvent{Name: "A", Input: "x"})
	timer := ev(2, 0, duroxide.TimerCreatedEvent{FireAtMs: uint64(time.Now().Add(time.Hour).UnixMilli())})
	child := ev(2, 0, duroxide.SubOrchestrationScheduledEvent{Name: "Child", Instance: "sub::2", Input: ""})
	subDone := duroxide.SubOrchCompleted{ParentInstance: "inst", ParentExecutionID: 1, ParentID: 2, Result: "r"}
	fired := duroxide.TimerFired{Instance: "inst", ExecutionID: 1, ID: 2, FireAtMs: 1}
	subCode := func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.ScheduleSubOrchestration("Child", "").Get()
	}
	cases := []struct {
		name     string
		recorded duroxide.Event
		code     durable.OrchestrationFunc
		msg      duroxide.WorkItem
		mention  string
	}{
		{"completion_without_schedule", activity, activityOf("A", "x"), actDone(999, "r"), "999"},
		{"completion_kind_mismatch", timer, timerOrchestration("t", time.Hour), actDone(2, "r"), "timer"},
		{"timer_completion_for_activity_schedule", activity, activityOf("A", "x"), fired, "activity"},
		{"sub_orch_completion_for_activity_schedule", activity, activityOf("A", "x"), subDone, "activity"},
		{"sub_orch_completion_for_timer_schedule", timer, timerOrchestration("t", time.Hour), subDone, "timer"},
		{"timer_completion_for_sub_orch_schedule", child, subCode, fired, "suborchestration"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := replaySeeded(t, c.code, []duroxide.Event{startedEv("Orch", ""), c.recorded}, c.msg)
			h.wantNondeterminism("inst", c.mention)
		})
	}
}

// TestNondeterminismOrchestrationChainedNameMismatch mirrors
// orchestration_chained_name_mismatch.
func TestNondeterminismOrchestrationChainedNameMismatch(t *testing.T) {
	t.Parallel()
	h := replaySeeded(t, func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.StartOrchestration("detached", "ChildB", "")
		_, err := ctx.WaitForEvent("go").Get()
		return "done", err
	}, []duroxide.Event{startedEv("Orch", ""), ev(2, 0, duroxide.OrchestrationChainedEvent{Name: "ChildA", Instance: "detached", Input: ""})},
		duroxide.ExternalRaised{Instance: "inst", Name: "go", Data: ""})
	h.wantNondeterminism("inst")
}

// --- completion_messages.rs ---

// TestCompletionMessagesDuplicateCompletionFiltered mirrors duplicate_completion_filtered
// and duplicate_in_same_batch: a completion already in history, or twice in one batch,
// is recorded once.
func TestCompletionMessagesDuplicateCompletionFiltered(t *testing.T) {
	t.Parallel()
	h := replaySeeded(t, func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		r, err := ctx.ScheduleActivity("A", "x").Get()
		if err != nil {
			return "", err
		}
		_, err = ctx.WaitForEvent("go").Get()
		return r, err
	}, []duroxide.Event{startedEv("Orch", ""), ev(2, 0, duroxide.ActivityScheduledEvent{Name: "A", Input: "x"}), ev(3, 2, duroxide.ActivityCompletedEvent{Result: "first"}),
		ev(4, 0, duroxide.ExternalSubscribedEvent{Name: "go"})},
		actDone(2, "again"), actDone(2, "and again"), duroxide.ExternalRaised{Instance: "inst", Name: "go", Data: ""})
	h.wantCompleted("inst", "first")
	if n := countEvents(h.history("inst"), "ActivityCompleted"); n != 1 {
		t.Errorf("%d ActivityCompleted, want the recorded one only", n)
	}
}

// TestCompletionMessagesWrongExecutionFiltered mirrors wrong_execution_filtered.
func TestCompletionMessagesWrongExecutionFiltered(t *testing.T) {
	t.Parallel()
	h := replaySeeded(t, waitThenDone("go", "done"),
		[]duroxide.Event{startedEv("Orch", ""), ev(2, 0, duroxide.ExternalSubscribedEvent{Name: "go"})},
		duroxide.ActivityCompleted{Instance: "inst", ExecutionID: 7, ID: 2, Result: "other"}, duroxide.ExternalRaised{Instance: "inst", Name: "go", Data: ""})
	h.wantCompleted("inst", "done")
	if n := countEvents(h.history("inst"), "ActivityCompleted"); n != 0 {
		t.Error("a completion for another execution was recorded")
	}
}

// TestCompletionMessagesExternalWithoutSubscription mirrors external_without_subscription
// and duplicate_external_events_in_batch_are_kept: every arrival is recorded, none
// is delivered without a subscription.
func TestCompletionMessagesExternalWithoutSubscription(t *testing.T) {
	t.Parallel()
	h := replaySeeded(t, timerOrchestration("t", time.Hour),
		[]duroxide.Event{startedEv("Orch", ""), ev(2, 0, duroxide.TimerCreatedEvent{FireAtMs: uint64(time.Now().Add(time.Hour).UnixMilli())})},
		duroxide.ExternalRaised{Instance: "inst", Name: "nobody", Data: "d"}, duroxide.ExternalRaised{Instance: "inst", Name: "nobody", Data: "d"})
	hist := h.awaitEvents("inst", 1, 4)
	if n := countEvents(hist, "ExternalEvent"); n != 2 {
		t.Errorf("%d ExternalEvent, want both identical arrivals", n)
	}
	if ids := eventIDs(hist, "ExternalEvent"); !reflect.DeepEqual(ids, []uint64{3, 4}) {
		t.Errorf("ExternalEvent ids %v, want [3 4]", ids)
	}
}

// TestCompletionMessagesMultipleCompletionsBatch mirrors multiple_completions_batch:
// completions of one batch are recorded in message order.
func TestCompletionMessagesMultipleCompletionsBatch(t *testing.T) {
	t.Parallel()
	h := replaySeeded(t, func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		a, b := ctx.ScheduleActivity("A", "1"), ctx.ScheduleActivity("B", "2")
		ctx.Join(a, b)
		return joinOutputs(",", a, b)
	}, []duroxide.Event{startedEv("Orch", ""), ev(2, 0, duroxide.ActivityScheduledEvent{Name: "A", Input: "1"}), ev(3, 0, duroxide.ActivityScheduledEvent{Name: "B", Input: "2"})},
		actDone(3, "rb"), actDone(2, "ra"))
	h.wantCompleted("inst", "ra,rb")
	hist := h.history("inst")
	if *hist[3].SourceEventID != 3 || *hist[4].SourceEventID != 2 {
		t.Errorf("completion sources %d, %d; want 3 then 2 (message order)", *hist[3].SourceEventID, *hist[4].SourceEventID)
	}
}

// --- partial_completion.rs ---

// TestPartialCompletionNoCompletion mirrors activity_scheduled_no_completion,
// timer_created_no_fire, external_subscribed_no_event and
// sub_orch_scheduled_no_completion: replaying an open schedule adds nothing.
func TestPartialCompletionNoCompletion(t *testing.T) {
	t.Parallel()
	far := uint64(time.Now().Add(time.Hour).UnixMilli())
	cases := []struct {
		name     string
		recorded duroxide.Event
		code     durable.OrchestrationFunc
	}{
		{"activity_scheduled_no_completion", ev(2, 0, duroxide.ActivityScheduledEvent{Name: "A", Input: "x"}), activityOf("A", "x")},
		{"timer_created_no_fire", ev(2, 0, duroxide.TimerCreatedEvent{FireAtMs: far}), timerOrchestration("t", time.Hour)},
		{"external_subscribed_no_event", ev(2, 0, duroxide.ExternalSubscribedEvent{Name: "E"}), waitThenDone("E", "e")},
		{"sub_orch_scheduled_no_completion", ev(2, 0, duroxide.SubOrchestrationScheduledEvent{Name: "Child", Instance: "sub::2", Input: ""}),
			func(ctx *durable.OrchestrationContext, _ string) (string, error) {
				return ctx.ScheduleSubOrchestration("Child", "").Get()
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// The poke is an event nobody waits for: it is recorded (id 3) and the turn
			// must add nothing else.
			h := replaySeeded(t, c.code, []duroxide.Event{startedEv("Orch", ""), c.recorded},
				duroxide.ExternalRaised{Instance: "inst", Name: "poke", Data: ""})
			hist := h.awaitEvents("inst", 1, 3)
			h.awaitIdle()
			hist = h.history("inst")
			if len(hist) != 3 || hist[2].Kind.EventType() != "ExternalEvent" {
				t.Errorf("history after the replay has %d events (last %s), want only the recorded poke added", len(hist), hist[len(hist)-1].Kind.EventType())
			}
		})
	}
}

// --- cancellation.rs ---

// TestCancellationCancelWithPendingActivity mirrors cancel_with_pending_activity and
// cancel_precedence_over_completion: a cancel wins over a completion in the same batch.
func TestCancellationCancelWithPendingActivity(t *testing.T) {
	t.Parallel()
	h := replaySeeded(t, activityOf("A", "x"),
		[]duroxide.Event{startedEv("Orch", ""), ev(2, 0, duroxide.ActivityScheduledEvent{Name: "A", Input: "x"})},
		duroxide.CancelInstance{Instance: "inst", Reason: "stop"}, actDone(2, "late"))
	h.wantCancelled("inst", "stop")
}

// --- unobserved_futures.rs ---

// TestUnobservedFuturesReplayToleratesCompletionAfterCancelRequest mirrors
// replay_tolerates_completion_after_cancel_request.
func TestUnobservedFuturesReplayToleratesCompletionAfterCancelRequest(t *testing.T) {
	t.Parallel()
	far := uint64(time.Now().Add(-time.Second).UnixMilli())
	h := replaySeeded(t, func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		act := ctx.ScheduleActivity("Task", "input")
		if ctx.Select(act, ctx.Timer(time.Second)) == 1 {
			_, err := ctx.WaitForEvent("go").Get()
			return "timer_won", err
		}
		return act.Get()
	}, []duroxide.Event{startedEv("Orch", ""),
		ev(2, 0, duroxide.ActivityScheduledEvent{Name: "Task", Input: "input"}),
		ev(3, 0, duroxide.TimerCreatedEvent{FireAtMs: far}),
		ev(4, 3, duroxide.TimerFiredEvent{FireAtMs: far}),
		ev(5, 2, duroxide.ActivityCancelRequestedEvent{Reason: "dropped_future"}),
		ev(6, 0, duroxide.ExternalSubscribedEvent{Name: "go"}),
	}, actDone(2, "late_result"), duroxide.ExternalRaised{Instance: "inst", Name: "go", Data: ""})
	h.wantCompleted("inst", "timer_won")
	if n := countEvents(h.history("inst"), "ActivityCancelRequested"); n != 1 {
		t.Errorf("%d ActivityCancelRequested, want the recorded one only", n)
	}
}

// TestUnobservedFuturesReplayFailsWhenCancellationDecisionsDiffer mirrors
// replay_fails_when_cancellation_decisions_differ: history says the activity was
// dropped, the replayed code awaits it.
func TestUnobservedFuturesReplayFailsWhenCancellationDecisionsDiffer(t *testing.T) {
	t.Parallel()
	h := replaySeeded(t, activityOf("Task", "input"), []duroxide.Event{startedEv("Orch", ""),
		ev(2, 0, duroxide.ActivityScheduledEvent{Name: "Task", Input: "input"}),
		ev(3, 2, duroxide.ActivityCancelRequestedEvent{Reason: "dropped_future"}),
	}, actDone(2, "done"))
	h.wantNondeterminism("inst")
}

// The cases below use durable.RunTurn: one dispatcher turn on a given history and
// batch, with no provider, as duroxide's tests call the engine directly.

// replayTurn runs fn over history (instance "inst", execution 1) with msgs as the batch,
// or with a harmless poke (an event nobody waits for) when msgs is empty.
func replayTurn(t *testing.T, fn durable.OrchestrationFunc, history []duroxide.Event, msgs ...duroxide.WorkItem) []duroxide.Event {
	t.Helper()
	for i := range history {
		history[i].InstanceID, history[i].ExecutionID, history[i].DuroxideVersion = "inst", 1, duroxide.CurrentDuroxideVersion
	}
	if len(msgs) == 0 {
		msgs = []duroxide.WorkItem{duroxide.ExternalRaised{Instance: "inst", Name: "poke", Data: ""}}
	}
	item := duroxide.OrchestrationItem{Instance: "inst", OrchestrationName: "Orch", ExecutionID: 1, Version: "1.0.0",
		History: history, Messages: msgs, AttemptCount: 1, LockToken: "runturn"}
	out, err := durable.RunTurn(replayReg(fn), item, durable.Options{})
	if err != nil {
		t.Fatalf("RunTurn: %v", err)
	}
	if out.Abandoned {
		t.Fatalf("RunTurn abandoned the item (delay %v)", out.AbandonDelay)
	}
	return out.Commit.HistoryDelta
}

// turnOutcome summarizes a turn's delta: "completed:<output>", "nondeterminism:<msg>",
// "failed:<msg>" or "running" when it added no terminal event.
func turnOutcome(t *testing.T, delta []duroxide.Event) string {
	for _, e := range delta {
		switch k := e.Kind.(type) {
		case duroxide.OrchestrationCompletedEvent:
			return "completed:" + k.Output
		case duroxide.OrchestrationFailedEvent:
			if c := k.Details.Configuration; c != nil && c.Kind == duroxide.ConfigErrorNondeterminism {
				msg := ""
				if c.Message != nil {
					msg = *c.Message
				}
				return "nondeterminism:" + msg
			}
			return "failed:" + toJSON(t, k)
		}
	}
	return "running"
}

// TestHistoryCorruption mirrors tests/replay_engine/history_corruption.rs, one subtest
// per Rust test (those about prep_completions alone are covered by the
// completion-message ports above).
func TestHistoryCorruption(t *testing.T) {
	t.Parallel()
	started := func(id uint64) duroxide.Event {
		e := startedEv("Orch", "")
		e.EventID = id
		return e
	}
	act := func(id uint64, name, input string) duroxide.Event {
		return ev(id, 0, duroxide.ActivityScheduledEvent{Name: name, Input: input})
	}
	done := func(id, src uint64, result string) duroxide.Event {
		return ev(id, src, duroxide.ActivityCompletedEvent{Result: result})
	}
	timer := func(id uint64) duroxide.Event { return ev(id, 0, duroxide.TimerCreatedEvent{FireAtMs: 1000}) }
	immediate := func(*durable.OrchestrationContext, string) (string, error) { return "new result", nil }
	long := strings.Repeat("n", 10_000)
	cases := []struct {
		name    string
		history []duroxide.Event
		code    durable.OrchestrationFunc
		msgs    []duroxide.WorkItem
		want    string // prefix of turnOutcome
	}{
		{"started_not_first", []duroxide.Event{act(1, "Task", "input"), started(2)}, immediate, nil, "nondeterminism:"},
		{"event_id_gap", []duroxide.Event{started(1), act(100, "Task", "input"), done(200, 100, "result")}, activityOf("Task", "input"), nil, "completed:result"},
		{"non_monotonic_event_ids", []duroxide.Event{started(1), act(5, "Task", "input"), done(3, 5, "result")}, activityOf("Task", "input"), nil, "completed:result"},
		{"completion_source_not_found", []duroxide.Event{started(1), act(2, "Task", "input")}, activityOf("Task", "input"), []duroxide.WorkItem{actDone(99, "r")}, "nondeterminism:"},
		{"terminal_completed", []duroxide.Event{started(1), ev(2, 0, duroxide.OrchestrationCompletedEvent{Output: "done"})}, immediate, nil, "running"},
		{"terminal_failed", []duroxide.Event{started(1), ev(2, 0, duroxide.OrchestrationFailedEvent{Details: duroxide.ApplicationFailure("error")})}, immediate, nil, "running"},
		{"terminal_continued_as_new", []duroxide.Event{started(1), ev(2, 0, duroxide.OrchestrationContinuedAsNewEvent{Input: "next"})}, immediate, nil, "running"},
		{"events_after_terminal", []duroxide.Event{started(1), ev(2, 0, duroxide.OrchestrationCompletedEvent{Output: "done"}), act(3, "Task", "input")}, immediate, nil, "running"},
		{"cancel_after_completed", []duroxide.Event{started(1), ev(2, 0, duroxide.OrchestrationCompletedEvent{Output: "done"})}, immediate,
			[]duroxide.WorkItem{duroxide.CancelInstance{Instance: "inst", Reason: "late"}}, "running"},
		{"empty_activity_name", []duroxide.Event{started(1), act(2, "", "input"), done(3, 2, "result")}, activityOf("", "input"), nil, "completed:result"},
		{"unicode_in_names", []duroxide.Event{started(1), act(2, "Grüß Gott 🎉", "日本語入力"), done(3, 2, "emoji result 👍")}, activityOf("Grüß Gott 🎉", "日本語入力"), nil, "completed:emoji result 👍"},
		{"very_long_strings", []duroxide.Event{started(1), act(2, long, long), done(3, 2, long)}, activityOf(long, long), nil, "completed:" + long},
		{"special_characters", []duroxide.Event{started(1), act(2, "Name\nWith\tSpecial", "Input\r\nCRLF"), done(3, 2, "Result\x00WithNull")},
			activityOf("Name\nWith\tSpecial", "Input\r\nCRLF"), nil, "completed:Result\x00WithNull"},
		{"timer_fired_before_created", []duroxide.Event{started(1), ev(2, 3, duroxide.TimerFiredEvent{FireAtMs: 1000}), timer(3)}, timerOrchestration("t", time.Minute), nil, "nondeterminism:"},
		{"activity_completed_before_scheduled", []duroxide.Event{started(1), done(2, 3, "result"), act(3, "Task", "input")}, activityOf("Task", "input"), nil, "nondeterminism:"},
		{"orphan_completion_no_schedule", []duroxide.Event{started(1)}, immediate, []duroxide.WorkItem{actDone(99, "orphan")}, "nondeterminism:"},
		{"orphan_timer_fired", []duroxide.Event{started(1)}, immediate, []duroxide.WorkItem{duroxide.TimerFired{Instance: "inst", ExecutionID: 1, ID: 99, FireAtMs: 1000}}, "nondeterminism:"},
		{"orphan_external_event", []duroxide.Event{started(1)}, immediate, []duroxide.WorkItem{duroxide.ExternalRaised{Instance: "inst", Name: "UnknownEvent", Data: "data"}}, "completed:new result"},
		{"orphan_sub_orch_completed", []duroxide.Event{started(1)}, immediate, []duroxide.WorkItem{duroxide.SubOrchCompleted{ParentInstance: "inst", ParentExecutionID: 1, ParentID: 99, Result: "r"}}, "nondeterminism:"},
		{"duplicate_activity_schedule_in_history", []duroxide.Event{started(1), act(2, "A", "input"), act(3, "A", "input")}, activityOf("A", "input"), nil, "nondeterminism:"},
		{"duplicate_timer_schedule_in_history", []duroxide.Event{started(1), timer(2), timer(3)}, timerOrchestration("t", time.Minute), nil, "nondeterminism:"},
		{"duplicate_external_subscription_in_history", []duroxide.Event{started(1), ev(2, 0, duroxide.ExternalSubscribedEvent{Name: "E"}), ev(3, 0, duroxide.ExternalSubscribedEvent{Name: "E"})}, waitThenDone("E", "e"), nil, "nondeterminism:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			delta := replayTurn(t, c.code, c.history, c.msgs...)
			got := turnOutcome(t, delta)
			if !strings.HasPrefix(got, c.want) || (strings.HasPrefix(c.want, "completed:") && got != c.want) {
				t.Errorf("outcome %.200q, want %.200q (delta: %s)", got, c.want, kinds(delta))
			}
		})
	}
}

// kinds lists the wire types of events, for failure messages.
func kinds(evs []duroxide.Event) string {
	var out []string
	for _, e := range evs {
		out = append(out, fmt.Sprintf("%d:%s", e.EventID, e.Kind.EventType()))
	}
	return strings.Join(out, " ")
}

// failureOf is the details of the turn's OrchestrationFailed event, nil if none.
func failureOf(delta []duroxide.Event) *duroxide.ErrorDetails {
	for _, e := range delta {
		if k, ok := e.Kind.(duroxide.OrchestrationFailedEvent); ok {
			return &k.Details
		}
	}
	return nil
}

// TestFailureHandling mirrors tests/replay_engine/failure_handling.rs. The code
// handles the failure it gets, so only a failure that aborts the turn (duroxide's
// system errors: Infrastructure, Configuration, Poison) can fail the instance.
func TestFailureHandling(t *testing.T) {
	t.Parallel()
	handles := func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if _, err := ctx.ScheduleActivity("Task", "input").Get(); err != nil {
			return "handled: " + err.Error(), nil
		}
		return "ok", nil
	}
	propagates := activityOf("Task", "input")
	childHandles := func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if _, err := ctx.ScheduleSubOrchestration("Child", "input").Get(); err != nil {
			return "handled: " + err.Error(), nil
		}
		return "ok", nil
	}
	activity := []duroxide.Event{startedEv("Orch", ""), ev(2, 0, duroxide.ActivityScheduledEvent{Name: "Task", Input: "input"})}
	child := []duroxide.Event{startedEv("Orch", ""), ev(2, 0, duroxide.SubOrchestrationScheduledEvent{Name: "Child", Instance: "sub::2", Input: "input"})}
	infra := duroxide.ErrorDetails{Infrastructure: &duroxide.InfrastructureError{Operation: "child", Message: "database connection lost"}}
	notRegistered := "activity not registered"
	config := duroxide.ErrorDetails{Configuration: &duroxide.ConfigurationError{Kind: duroxide.ConfigErrorNondeterminism, Message: &notRegistered}}
	failAct := func(d duroxide.ErrorDetails) duroxide.WorkItem {
		return duroxide.ActivityFailed{Instance: "inst", ExecutionID: 1, ID: 2, Details: d}
	}
	failChild := func(d duroxide.ErrorDetails) duroxide.WorkItem {
		return duroxide.SubOrchFailed{ParentInstance: "inst", ParentExecutionID: 1, ParentID: 2, Details: d}
	}
	cases := []struct {
		name    string
		history []duroxide.Event
		code    durable.OrchestrationFunc
		msg     duroxide.WorkItem
		check   func(*duroxide.ErrorDetails, string) bool
	}{
		{"application_error_propagates", activity, propagates, failAct(duroxide.ApplicationFailure("business rule violated")),
			func(d *duroxide.ErrorDetails, _ string) bool {
				return d != nil && d.Application != nil && d.Application.Message == "business rule violated"
			}},
		{"application_error_is_handled", activity, handles, failAct(duroxide.ApplicationFailure("business rule violated")),
			func(d *duroxide.ErrorDetails, out string) bool {
				return d == nil && out == "completed:handled: business rule violated"
			}},
		{"infrastructure_error_aborts", activity, handles, failAct(infra),
			func(d *duroxide.ErrorDetails, _ string) bool { return d != nil && d.Infrastructure != nil }},
		{"configuration_error_aborts", activity, handles, failAct(config),
			func(d *duroxide.ErrorDetails, _ string) bool { return d != nil && d.Configuration != nil }},
		{"sub_orch_infra_error_aborts_parent", child, childHandles, failChild(infra),
			func(d *duroxide.ErrorDetails, _ string) bool { return d != nil && d.Infrastructure != nil }},
		{"sub_orch_app_error_propagates", child, childHandles, failChild(duroxide.ApplicationFailure("child business error")),
			func(d *duroxide.ErrorDetails, out string) bool {
				return d == nil && out == "completed:handled: child business error"
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			delta := replayTurn(t, c.code, c.history, c.msg)
			if d, out := failureOf(delta), turnOutcome(t, delta); !c.check(d, out) {
				t.Errorf("outcome %q, failure %+v (delta %s)", out, d, kinds(delta))
			}
		})
	}
}

// TestPanicHandling mirrors tests/replay_engine/panic_handling.rs: a panicking
// orchestration fails with Application{Panicked} carrying the panic's message.
func TestPanicHandling(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		history []duroxide.Event
		code    durable.OrchestrationFunc
		want    string
	}{
		{"panic_string", []duroxide.Event{startedEv("Orch", "")},
			func(*durable.OrchestrationContext, string) (string, error) { panic("oops something went wrong") }, "oops something went wrong"},
		{"panic_other", []duroxide.Event{startedEv("Orch", "")},
			func(*durable.OrchestrationContext, string) (string, error) { panic(42) }, "42"},
		{"panic_during_await", []duroxide.Event{startedEv("Orch", ""), ev(2, 0, duroxide.ActivityScheduledEvent{Name: "Task", Input: "input"}), ev(3, 2, duroxide.ActivityCompletedEvent{Result: "r"})},
			func(ctx *durable.OrchestrationContext, _ string) (string, error) {
				_, _ = ctx.ScheduleActivity("Task", "input").Get()
				panic("panic after activity")
			}, "panic after activity"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			delta := replayTurn(t, c.code, c.history)
			d := failureOf(delta)
			if d == nil || d.Application == nil || d.Application.Kind.Variant != duroxide.AppErrorPanicked || !strings.Contains(d.Application.Message, c.want) {
				t.Errorf("failure %+v (delta %s), want Application{Panicked} mentioning %q", d, kinds(delta), c.want)
			}
		})
	}
}

// TestSubOrchestration mirrors tests/replay_engine/sub_orchestration.rs.
func TestSubOrchestration(t *testing.T) {
	t.Parallel()
	t.Run("auto_instance_id", func(t *testing.T) {
		delta := replayTurn(t, func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			a, b := ctx.ScheduleSubOrchestration("Child", "1"), ctx.ScheduleSubOrchestration("Child", "2")
			ctx.Join(a, b)
			return "", nil
		}, []duroxide.Event{startedEv("Orch", "")})
		var got []string
		for _, e := range delta {
			if k, ok := e.Kind.(duroxide.SubOrchestrationScheduledEvent); ok {
				got = append(got, fmt.Sprintf("%d:%s", e.EventID, k.Instance))
			}
		}
		// The poke takes id 2 (completions first), so the children are 3 and 4.
		if strings.Join(got, ",") != "3:sub::3,4:sub::4" {
			t.Errorf("children %v, want each named sub::<its own event id> (3:sub::3,4:sub::4)", got)
		}
	})
	t.Run("replay_uses_history_instance", func(t *testing.T) {
		delta := replayTurn(t, func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleSubOrchestration("Child", "in").Get()
		}, []duroxide.Event{startedEv("Orch", ""), ev(2, 0, duroxide.SubOrchestrationScheduledEvent{Name: "Child", Instance: "sub::2", Input: "in"})},
			duroxide.SubOrchCompleted{ParentInstance: "inst", ParentExecutionID: 1, ParentID: 2, Result: "child-out"})
		if got := turnOutcome(t, delta); got != "completed:child-out" {
			t.Errorf("outcome %q, want completed:child-out", got)
		}
	})
	t.Run("explicit_instance_preserved", func(t *testing.T) {
		delta := replayTurn(t, func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleSubOrchestration("Child", "in", durable.WithInstanceID("my-child")).Get()
		}, []duroxide.Event{startedEv("Orch", "")})
		if !hasEvent(delta, func(k duroxide.EventKind) bool {
			s, ok := k.(duroxide.SubOrchestrationScheduledEvent)
			return ok && s.Instance == "my-child"
		}) {
			t.Errorf("delta %s has no SubOrchestrationScheduled for my-child", kinds(delta))
		}
	})
}

// TestFreshExecution mirrors tests/replay_engine/fresh_execution.rs: the first turn
// of an instance (history empty, the start in the batch).
func TestFreshExecution(t *testing.T) {
	t.Parallel()
	start := duroxide.StartOrchestration{Instance: "inst", Orchestration: "Orch", Input: "in", ExecutionID: 1}
	scheduleKinds := func(delta []duroxide.Event) string {
		var out []string
		for _, e := range delta[1:] {
			out = append(out, e.Kind.EventType())
		}
		return strings.Join(out, ",")
	}
	cases := []struct {
		name string
		code durable.OrchestrationFunc
		want string // event types after OrchestrationStarted
	}{
		{"immediate_return_ok", func(*durable.OrchestrationContext, string) (string, error) { return "ok", nil }, "OrchestrationCompleted"},
		{"immediate_return_err", func(*durable.OrchestrationContext, string) (string, error) { return "", fmt.Errorf("bad") }, "OrchestrationFailed"},
		{"schedule_activity_pending", activityOf("A", "x"), "ActivityScheduled"},
		{"schedule_timer_pending", timerOrchestration("t", time.Hour), "TimerCreated"},
		{"schedule_external_pending", waitThenDone("E", "e"), "ExternalSubscribed"},
		{"schedule_sub_orch_pending", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleSubOrchestration("Child", "").Get()
		}, "SubOrchestrationScheduled"},
		{"continue_as_new", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.ContinueAsNew("next")
			return "", nil
		}, "OrchestrationContinuedAsNew"},
		{"sub_orch_then_continue_as_new", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.ScheduleSubOrchestration("Child", "")
			ctx.ContinueAsNew("next")
			return "", nil
		}, "SubOrchestrationScheduled,OrchestrationContinuedAsNew"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			delta := replayTurn(t, c.code, nil, start)
			started, ok := delta[0].Kind.(duroxide.OrchestrationStartedEvent)
			if !ok || delta[0].EventID != 1 || started.Input != "in" || started.Version != "1.0.0" {
				t.Fatalf("first event %+v (id %d), want OrchestrationStarted{Orch, 1.0.0, in} with id 1", delta[0].Kind, delta[0].EventID)
			}
			if got := scheduleKinds(delta); got != c.want {
				t.Errorf("events after the start: %s, want %s", got, c.want)
			}
		})
	}
}

// TestReplayWithCompletions mirrors tests/replay_engine/replay_with_completions.rs:
// each kind of completion already in history resolves its future on replay.
func TestReplayWithCompletions(t *testing.T) {
	t.Parallel()
	subCode := func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.ScheduleSubOrchestration("Child", "").Get()
	}
	cases := []struct {
		name      string
		scheduled duroxide.EventKind
		completed duroxide.EventKind
		code      durable.OrchestrationFunc
		want      string
	}{
		{"activity_completed_in_history", duroxide.ActivityScheduledEvent{Name: "A", Input: "x"}, duroxide.ActivityCompletedEvent{Result: "r"}, activityOf("A", "x"), "completed:r"},
		{"activity_failed_in_history", duroxide.ActivityScheduledEvent{Name: "A", Input: "x"}, duroxide.ActivityFailedEvent{Details: duroxide.ApplicationFailure("boom")},
			func(ctx *durable.OrchestrationContext, _ string) (string, error) {
				_, err := ctx.ScheduleActivity("A", "x").Get()
				return "err:" + err.Error(), nil
			}, "completed:err:boom"},
		{"timer_fired_in_history", duroxide.TimerCreatedEvent{FireAtMs: 1}, duroxide.TimerFiredEvent{FireAtMs: 1}, timerOrchestration("fired", time.Hour), "completed:fired"},
		{"external_received_in_history", duroxide.ExternalSubscribedEvent{Name: "E"}, duroxide.ExternalEventEvent{Name: "E", Data: "d"},
			func(ctx *durable.OrchestrationContext, _ string) (string, error) { return ctx.WaitForEvent("E").Get() }, "completed:d"},
		{"sub_orch_completed_in_history", duroxide.SubOrchestrationScheduledEvent{Name: "Child", Instance: "sub::2", Input: ""}, duroxide.SubOrchestrationCompletedEvent{Result: "c"}, subCode, "completed:c"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			src := uint64(2)
			if _, external := c.completed.(duroxide.ExternalEventEvent); external {
				src = 0
			}
			delta := replayTurn(t, c.code, []duroxide.Event{startedEv("Orch", ""), ev(2, 0, c.scheduled), ev(3, src, c.completed)})
			if got := turnOutcome(t, delta); got != c.want {
				t.Errorf("outcome %q, want %q (delta %s)", got, c.want, kinds(delta))
			}
		})
	}
}

// TestSequentialProgress mirrors tests/replay_engine/sequential_progress.rs.
func TestSequentialProgress(t *testing.T) {
	t.Parallel()
	twoSame := func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		r1, err := ctx.ScheduleActivity("A", "x").Get()
		if err != nil {
			return "", err
		}
		r2, err := ctx.ScheduleActivity("A", "x").Get()
		return r1 + "," + r2, err
	}
	a := func(id uint64) duroxide.Event {
		return ev(id, 0, duroxide.ActivityScheduledEvent{Name: "A", Input: "x"})
	}
	t.Run("two_activities_first_done", func(t *testing.T) {
		delta := replayTurn(t, twoSame, []duroxide.Event{startedEv("Orch", ""), a(2)}, actDone(2, "r1"))
		if got := kinds(delta); got != "3:ActivityCompleted 4:ActivityScheduled" {
			t.Errorf("delta %s, want the completion then the second schedule", got)
		}
	})
	t.Run("identical_activities_both_done_routes_correctly", func(t *testing.T) {
		delta := replayTurn(t, twoSame, []duroxide.Event{startedEv("Orch", ""), a(2), ev(3, 2, duroxide.ActivityCompletedEvent{Result: "r1"}), a(4)}, actDone(4, "r2"))
		if got := turnOutcome(t, delta); got != "completed:r1,r2" {
			t.Errorf("outcome %q, want each result routed to its own schedule", got)
		}
	})
	t.Run("activity_then_timer", func(t *testing.T) {
		delta := replayTurn(t, func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			if _, err := ctx.ScheduleActivity("A", "x").Get(); err != nil {
				return "", err
			}
			_, err := ctx.Timer(time.Hour).Get()
			return "done", err
		}, []duroxide.Event{startedEv("Orch", ""), a(2)}, actDone(2, "r"))
		if got := kinds(delta); got != "3:ActivityCompleted 4:TimerCreated" {
			t.Errorf("delta %s", got)
		}
	})
	t.Run("many_sequential_activities", func(t *testing.T) {
		history := []duroxide.Event{startedEv("Orch", "")}
		for i := 0; i < 10; i++ {
			history = append(history, a(uint64(2+2*i)), ev(uint64(3+2*i), uint64(2+2*i), duroxide.ActivityCompletedEvent{Result: fmt.Sprint(i)}))
		}
		delta := replayTurn(t, func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			out := ""
			for i := 0; i < 10; i++ {
				r, err := ctx.ScheduleActivity("A", "x").Get()
				if err != nil {
					return "", err
				}
				out += r
			}
			return out, nil
		}, history)
		if got := turnOutcome(t, delta); got != "completed:0123456789" {
			t.Errorf("outcome %q", got)
		}
	})
}

// TestIsReplaying mirrors tests/replay_engine/is_replaying.rs: IsReplaying is true
// while the code runs over persisted history and false from the first new event on.
func TestIsReplaying(t *testing.T) {
	t.Parallel()
	code := func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		before := ctx.IsReplaying()
		if _, err := ctx.ScheduleActivity("A", "x").Get(); err != nil {
			return "", err
		}
		return fmt.Sprint(before, ",", ctx.IsReplaying()), nil
	}
	t.Run("fresh_execution_not_replaying", func(t *testing.T) {
		delta := replayTurn(t, func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return fmt.Sprint(ctx.IsReplaying()), nil
		}, nil, duroxide.StartOrchestration{Instance: "inst", Orchestration: "Orch", ExecutionID: 1})
		if got := turnOutcome(t, delta); got != "completed:false" {
			t.Errorf("outcome %q, want completed:false", got)
		}
	})
	t.Run("transitions_after_history", func(t *testing.T) {
		delta := replayTurn(t, code, []duroxide.Event{startedEv("Orch", ""), ev(2, 0, duroxide.ActivityScheduledEvent{Name: "A", Input: "x"})}, actDone(2, "r"))
		if got := turnOutcome(t, delta); got != "completed:true,false" {
			t.Errorf("outcome %q, want replaying before the new completion and not after", got)
		}
	})
}

// TestReplayEngineKV mirrors tests/replay_engine/kv.rs: KV events replay against the
// code's calls, state is rebuilt from history, and changed keys or values are
// nondeterminism (timestamps are not compared).
func TestReplayEngineKV(t *testing.T) {
	t.Parallel()
	set := func(id uint64, k, v string, at uint64) duroxide.Event {
		return ev(id, 0, duroxide.KeyValueSetEvent{Key: k, Value: v, LastUpdatedAtMs: at})
	}
	setThenWait := func(k, v string) durable.OrchestrationFunc {
		return func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue(k, v)
			if _, err := ctx.WaitForEvent("go").Get(); err != nil {
				return "", err
			}
			got, _ := ctx.Value(k)
			return got, nil
		}
	}
	sub := ev(3, 0, duroxide.ExternalSubscribedEvent{Name: "go"})
	goEvent := duroxide.ExternalRaised{Instance: "inst", Name: "go", Data: ""}
	cases := []struct {
		name    string
		history []duroxide.Event
		code    durable.OrchestrationFunc
		want    string
	}{
		{"replay_set_value_reconstructs_state", []duroxide.Event{startedEv("Orch", ""), set(2, "counter", "1", 5), sub}, setThenWait("counter", "1"), "completed:1"},
		{"replay_set_value_mismatch_nondeterminism", []duroxide.Event{startedEv("Orch", ""), set(2, "counter", "1", 5), sub}, setThenWait("counter", "2"), "nondeterminism:"},
		{"kv_set_key_mismatch_nondeterminism", []duroxide.Event{startedEv("Orch", ""), set(2, "counter", "1", 5), sub}, setThenWait("other", "1"), "nondeterminism:"},
		{"kv_set_timestamp_mismatch_ok", []duroxide.Event{startedEv("Orch", ""), set(2, "counter", "1", 1), sub}, setThenWait("counter", "1"), "completed:1"},
		{"replay_clear_value_mismatch_nondeterminism", []duroxide.Event{startedEv("Orch", ""), ev(2, 0, duroxide.KeyValueClearedEvent{Key: "a"}), sub},
			func(ctx *durable.OrchestrationContext, _ string) (string, error) {
				ctx.ClearValue("b")
				_, err := ctx.WaitForEvent("go").Get()
				return "cleared", err
			}, "nondeterminism:"},
		{"replay_clear_all_values_matches_action", []duroxide.Event{startedEv("Orch", ""), ev(2, 0, duroxide.KeyValuesClearedEvent{}), sub},
			func(ctx *durable.OrchestrationContext, _ string) (string, error) {
				ctx.ClearAllValues()
				_, err := ctx.WaitForEvent("go").Get()
				return "cleared", err
			}, "completed:cleared"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			delta := replayTurn(t, c.code, c.history, goEvent)
			if got := turnOutcome(t, delta); !strings.HasPrefix(got, c.want) || (strings.HasPrefix(c.want, "completed:") && got != c.want) {
				t.Errorf("outcome %q, want %q (delta %s)", got, c.want, kinds(delta))
			}
		})
	}
	t.Run("action_to_event_kv_variants", func(t *testing.T) {
		delta := replayTurn(t, func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("X", "Y")
			ctx.ClearValue("Z")
			ctx.ClearAllValues()
			ctx.SetValue("A", "1")
			return fmt.Sprint(len(ctx.Values())), nil
		}, nil, duroxide.StartOrchestration{Instance: "inst", Orchestration: "Orch", ExecutionID: 1})
		if got := kinds(delta); got != "1:OrchestrationStarted 2:KeyValueSet 3:KeyValueCleared 4:KeyValuesCleared 5:KeyValueSet 6:OrchestrationCompleted" {
			t.Errorf("delta %s", got)
		}
		for _, e := range delta[1:5] {
			if e.SourceEventID != nil {
				t.Errorf("KV event %d has source %d, want none", e.EventID, *e.SourceEventID)
			}
		}
	})
}

// TestEdgeCases mirrors tests/replay_engine/edge_cases.rs.
func TestEdgeCases(t *testing.T) {
	t.Parallel()
	wait := func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.WaitForEvent("Event").Get()
	}
	sub := ev(2, 0, duroxide.ExternalSubscribedEvent{Name: "Event"})
	t.Run("handler_invoked_once_during_replay", func(t *testing.T) {
		var calls atomic.Int32
		delta := replayTurn(t, func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			calls.Add(1)
			return ctx.ScheduleActivity("Task", "input").Get()
		}, []duroxide.Event{startedEv("Orch", ""), ev(2, 0, duroxide.ActivityScheduledEvent{Name: "Task", Input: "input"}), ev(3, 2, duroxide.ActivityCompletedEvent{Result: "result"})})
		if got := turnOutcome(t, delta); got != "completed:result" || calls.Load() != 1 {
			t.Errorf("outcome %q after %d invocations, want completed:result after 1", got, calls.Load())
		}
	})
	t.Run("empty_external_event_data", func(t *testing.T) {
		delta := replayTurn(t, wait, []duroxide.Event{startedEv("Orch", ""), sub, ev(3, 0, duroxide.ExternalEventEvent{Name: "Event", Data: ""})})
		if got := turnOutcome(t, delta); got != "completed:" {
			t.Errorf("outcome %q, want completed with empty output", got)
		}
	})
	t.Run("multiple_external_events_same_name", func(t *testing.T) {
		delta := replayTurn(t, wait, []duroxide.Event{startedEv("Orch", ""), sub,
			ev(3, 0, duroxide.ExternalEventEvent{Name: "Event", Data: "first-data"}), ev(4, 0, duroxide.ExternalEventEvent{Name: "Event", Data: "second-data"})})
		if got := turnOutcome(t, delta); got != "completed:first-data" {
			t.Errorf("outcome %q, want the first arrival", got)
		}
	})
	t.Run("zero_delay_timer", func(t *testing.T) {
		delta := replayTurn(t, timerOrchestration("t", 0), nil, duroxide.StartOrchestration{Instance: "inst", Orchestration: "Orch", ExecutionID: 1})
		if got := kinds(delta); got != "1:OrchestrationStarted 2:TimerCreated" {
			t.Errorf("delta %s, want a timer even for a zero delay", got)
		}
	})
}

// TestComposition mirrors tests/replay_engine/composition.rs (select and join over
// histories).
func TestComposition(t *testing.T) {
	t.Parallel()
	act := ev(2, 0, duroxide.ActivityScheduledEvent{Name: "A", Input: "x"})
	timer := ev(3, 0, duroxide.TimerCreatedEvent{FireAtMs: 1})
	race := func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		a := ctx.ScheduleActivity("A", "x")
		if ctx.Select(a, ctx.Timer(time.Hour)) == 1 {
			return "timer", nil
		}
		return a.Get()
	}
	join := func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		a, b := ctx.ScheduleActivity("A", "x"), ctx.ScheduleActivity("B", "y")
		ctx.Join(a, b)
		ra, errA := a.Get()
		rb, errB := b.Get()
		return fmt.Sprint(ra, "|", rb, "|", errA != nil, errB != nil), nil
	}
	actB := ev(3, 0, duroxide.ActivityScheduledEvent{Name: "B", Input: "y"})
	cases := []struct {
		name    string
		code    durable.OrchestrationFunc
		history []duroxide.Event
		msgs    []duroxide.WorkItem
		want    string
	}{
		{"select2_activity_wins", race, []duroxide.Event{startedEv("Orch", ""), act, timer}, []duroxide.WorkItem{actDone(2, "act")}, "completed:act"},
		{"select2_timer_wins", race, []duroxide.Event{startedEv("Orch", ""), act, timer}, []duroxide.WorkItem{duroxide.TimerFired{Instance: "inst", ExecutionID: 1, ID: 3, FireAtMs: 1}}, "completed:timer"},
		{"select2_both_pending", race, []duroxide.Event{startedEv("Orch", ""), act, timer}, nil, "running"},
		{"join_all_complete", join, []duroxide.Event{startedEv("Orch", ""), act, actB}, []duroxide.WorkItem{actDone(3, "b"), actDone(2, "a")}, "completed:a|b|false false"},
		{"join_partial_complete", join, []duroxide.Event{startedEv("Orch", ""), act, actB}, []duroxide.WorkItem{actDone(2, "a")}, "running"},
		{"join_one_fails", join, []duroxide.Event{startedEv("Orch", ""), act, actB},
			[]duroxide.WorkItem{actDone(2, "a"), duroxide.ActivityFailed{Instance: "inst", ExecutionID: 1, ID: 3, Details: duroxide.ApplicationFailure("no")}}, "completed:a||false true"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			delta := replayTurn(t, c.code, c.history, c.msgs...)
			if got := turnOutcome(t, delta); got != c.want {
				t.Errorf("outcome %q, want %q (delta %s)", got, c.want, kinds(delta))
			}
		})
	}
}
