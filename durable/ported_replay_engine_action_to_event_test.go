package durable_test

import (
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/replay_engine/action_to_event.rs: each
// scheduling call records its event in the turn's history delta, and a
// replay whose call differs from the recorded event (session, tag) is
// nondeterministic. One RunTurn per case, as runUnobserved does.

// turnDelta runs one turn of fn (runEngineTurn) and returns its outcome and
// delta.
func turnDelta(t *testing.T, fn durable.OrchestrationFunc, history []duroxide.Event, msgs ...duroxide.WorkItem) (string, []duroxide.Event) {
	t.Helper()
	out := runEngineTurn(t, replayReg(fn), history, msgs...)
	return turnOutcome(t, out.Commit.HistoryDelta), out.Commit.HistoryDelta
}

// eventsOf returns the kinds of delta of the given type.
func eventsOf[K duroxide.EventKind](delta []duroxide.Event) []K {
	var out []K
	for _, e := range delta {
		if k, ok := e.Kind.(K); ok {
			out = append(out, k)
		}
	}
	return out
}

// TestActionToEvent ports the tests of replay_engine/action_to_event.rs, one
// subtest each.
func TestActionToEvent(t *testing.T) {
	t.Parallel()
	started := startedEv("Orch", "")
	scheduled := func(name string, session, tag *string) duroxide.Event {
		return ev(2, 0, duroxide.ActivityScheduledEvent{Name: name, Input: "data", SessionID: session, Tag: tag})
	}
	activity := func(name, input string, opts ...durable.ActivityOption) durable.OrchestrationFunc {
		return func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleActivity(name, input, opts...).Get()
		}
	}
	oneActivity := func(t *testing.T, delta []duroxide.Event) duroxide.ActivityScheduledEvent {
		t.Helper()
		as := eventsOf[duroxide.ActivityScheduledEvent](delta)
		if len(as) != 1 {
			t.Fatalf("%d ActivityScheduled in the delta %v, want 1", len(as), kindsOf(delta))
		}
		return as[0]
	}
	cases := []struct {
		name    string
		fn      durable.OrchestrationFunc
		history []duroxide.Event
		outcome string // exact, or a prefix ending in ":"
		check   func(t *testing.T, delta []duroxide.Event)
	}{
		{"schedule_activity_creates_activity_scheduled_event", activity("MyActivity", "my-input"), []duroxide.Event{started}, "running",
			func(t *testing.T, d []duroxide.Event) {
				if a := oneActivity(t, d); a.Name != "MyActivity" || a.Input != "my-input" {
					t.Errorf("%+v", a)
				}
			}},
		{"schedule_activity_on_session_creates_activity_scheduled_event_with_session_id",
			activity("MyActivity", "my-input", durable.WithSession("sess-1")), []duroxide.Event{started}, "running",
			func(t *testing.T, d []duroxide.Event) {
				if a := oneActivity(t, d); a.Name != "MyActivity" || a.SessionID == nil || *a.SessionID != "sess-1" {
					t.Errorf("%+v", a)
				}
			}},
		{"schedule_activity_on_session_session_id_mismatch_causes_nondeterminism",
			activity("MyActivity", "data", durable.WithSession("sess-1")), []duroxide.Event{started, scheduled("MyActivity", nil, nil)}, "nondeterminism:", nil},
		{"schedule_timer_creates_timer_created_event", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			_, err := ctx.Timer(10 * time.Second).Get()
			return "", err
		}, []duroxide.Event{started}, "running", func(t *testing.T, d []duroxide.Event) {
			if ts := eventsOf[duroxide.TimerCreatedEvent](d); len(ts) != 1 || ts[0].FireAtMs == 0 {
				t.Errorf("timers %+v", ts)
			}
		}},
		{"schedule_wait_creates_external_subscribed_event", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.WaitForEvent("MyEvent").Get()
		}, []duroxide.Event{started}, "running", func(t *testing.T, d []duroxide.Event) {
			if ws := eventsOf[duroxide.ExternalSubscribedEvent](d); len(ws) != 1 || ws[0].Name != "MyEvent" {
				t.Errorf("subscriptions %+v", ws)
			}
		}},
		{"schedule_sub_orchestration_creates_sub_orchestration_scheduled_event", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.ScheduleSubOrchestration("Child", "child-input").Cancel()
			return "scheduled", nil
		}, []duroxide.Event{started}, "completed:scheduled", func(t *testing.T, d []duroxide.Event) {
			if ss := eventsOf[duroxide.SubOrchestrationScheduledEvent](d); len(ss) != 1 || ss[0].Name != "Child" || ss[0].Input != "child-input" {
				t.Errorf("sub-orchestrations %+v", ss)
			}
		}},
		{"schedule_orchestration_creates_orchestration_chained_event", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.StartOrchestration("child-instance", "DetachedChild", "child-input")
			return "scheduled", nil
		}, []duroxide.Event{started}, "completed:scheduled", func(t *testing.T, d []duroxide.Event) {
			cs := eventsOf[duroxide.OrchestrationChainedEvent](d)
			if len(cs) != 1 || cs[0] != (duroxide.OrchestrationChainedEvent{Name: "DetachedChild", Instance: "child-instance", Input: "child-input"}) {
				t.Errorf("chained %+v", cs)
			}
		}},
		{"multiple_action_types_create_corresponding_events", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.ScheduleActivity("Task1", "input1")
			ctx.ScheduleActivity("Task2", "input2")
			return "done", nil
		}, []duroxide.Event{started}, "completed:done", func(t *testing.T, d []duroxide.Event) {
			if as := eventsOf[duroxide.ActivityScheduledEvent](d); len(as) != 2 || as[0].Name != "Task1" || as[1].Name != "Task2" {
				t.Errorf("activities %+v", as)
			}
		}},
		{"with_tag_sets_tag_on_emitted_event", activity("GpuWork", "data", durable.WithTag("gpu")), []duroxide.Event{started}, "running",
			func(t *testing.T, d []duroxide.Event) {
				if a := oneActivity(t, d); a.Name != "GpuWork" || a.Tag == nil || *a.Tag != "gpu" {
					t.Errorf("%+v", a)
				}
			}},
		{"no_with_tag_leaves_none", activity("PlainWork", "data"), []duroxide.Event{started}, "running",
			func(t *testing.T, d []duroxide.Event) {
				if a := oneActivity(t, d); a.Tag != nil {
					t.Errorf("tag %q, want none", *a.Tag)
				}
			}},
		{"tag_mismatch_on_replay_causes_nondeterminism", activity("GpuWork", "data", durable.WithTag("gpu")),
			[]duroxide.Event{started, scheduled("GpuWork", nil, nil)}, "nondeterminism:", nil},
		{"tag_value_change_on_replay_causes_nondeterminism", activity("Render", "data", durable.WithTag("cpu")),
			[]duroxide.Event{started, scheduled("Render", nil, strp("gpu"))}, "nondeterminism:", nil},
		{"tag_removal_on_replay_causes_nondeterminism", activity("Render", "data"),
			[]duroxide.Event{started, scheduled("Render", nil, strp("gpu"))}, "nondeterminism:", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			outcome, delta := turnDelta(t, c.fn, append([]duroxide.Event(nil), c.history...))
			if outcome != c.outcome && !(strings.HasSuffix(c.outcome, ":") && strings.HasPrefix(outcome, c.outcome)) {
				t.Fatalf("outcome %q, want %q", outcome, c.outcome)
			}
			if c.check != nil {
				c.check(t, delta)
			}
		})
	}
}

// TestDetachedOrchestrationThenActivityReplaysCorrectly mirrors
// detached_orchestration_then_activity_replays_correctly: the first turn's
// delta, replayed with the activity's completion, completes.
func TestDetachedOrchestrationThenActivityReplaysCorrectly(t *testing.T) {
	t.Parallel()
	fn := func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.StartOrchestration("detached-1", "DetachedChild", "detached-input")
		return ctx.ScheduleActivity("A", "activity-input").Get()
	}
	outcome, delta := turnDelta(t, fn, []duroxide.Event{startedEv("Orch", "")})
	if outcome != "running" {
		t.Fatalf("first turn %q, want running", outcome)
	}
	var actID uint64
	for _, e := range delta {
		if _, ok := e.Kind.(duroxide.ActivityScheduledEvent); ok {
			actID = e.EventID
		}
	}
	if actID == 0 || len(eventsOf[duroxide.OrchestrationChainedEvent](delta)) != 1 {
		t.Fatalf("first turn's delta %v lacks the chained start or the activity", kindsOf(delta))
	}
	outcome, _ = turnDelta(t, fn, delta, actDone(actID, "activity-result"))
	if outcome != "completed:activity-result" {
		t.Fatalf("replay %q, want completed:activity-result", outcome)
	}
}
