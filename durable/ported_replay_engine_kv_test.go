package durable_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/replay_engine/kv.rs: the KV store rebuilt on
// replay from the recorded KeyValue* events over the snapshot of previous
// executions (OrchestrationItem.KVSnapshot, duroxide's with_kv_snapshot),
// and a replayed KV call that differs from its event is nondeterministic.

// kvTurn replays history (with a poke as the batch, unless msgs are given)
// over snapshot and returns the outcome and the delta.
func kvTurn(t *testing.T, fn durable.OrchestrationFunc, history []duroxide.Event, snapshot map[string]duroxide.KVEntry) (string, []duroxide.Event) {
	t.Helper()
	for i := range history {
		history[i].InstanceID, history[i].ExecutionID, history[i].DuroxideVersion = "inst", 1, duroxide.CurrentDuroxideVersion
	}
	item := duroxide.OrchestrationItem{Instance: "inst", OrchestrationName: "Orch", ExecutionID: 1, Version: "1.0.0",
		History: history, Messages: []duroxide.WorkItem{duroxide.ExternalRaised{Instance: "inst", Name: "poke", Data: ""}},
		KVSnapshot: snapshot, AttemptCount: 1, LockToken: "runturn"}
	reg := replayReg(fn).MustAddActivity("Noop", constActivity("ok")).MustAddActivity("Work", constActivity("result")).
		MustAddActivity("DoWork", constActivity("work-result"))
	out, err := durable.RunTurn(reg, item, durable.Options{})
	if err != nil || out.Abandoned {
		t.Fatalf("RunTurn: %v (abandoned %v)", err, out.Abandoned)
	}
	return turnOutcome(t, out.Commit.HistoryDelta), out.Commit.HistoryDelta
}

// kvGet is ctx.Value with def for a missing key.
func kvGet(ctx *durable.OrchestrationContext, key, def string) string {
	if v, ok := ctx.Value(key); ok {
		return v
	}
	return def
}

// TestReplayEngineKVMore mirrors the tests of replay_engine/kv.rs not ported
// before, one subtest each.
func TestReplayEngineKVMore(t *testing.T) {
	t.Parallel()
	started := startedEv("Orch", "")
	set := func(id uint64, k, v string) duroxide.Event {
		return ev(id, 0, duroxide.KeyValueSetEvent{Key: k, Value: v, LastUpdatedAtMs: 100})
	}
	cleared := func(id uint64, k string) duroxide.Event { return ev(id, 0, duroxide.KeyValueClearedEvent{Key: k}) }
	allCleared := func(id uint64) duroxide.Event { return ev(id, 0, duroxide.KeyValuesClearedEvent{}) }
	act := func(id uint64, name, input string) duroxide.Event {
		return ev(id, 0, duroxide.ActivityScheduledEvent{Name: name, Input: input})
	}
	done := func(id, src uint64, r string) duroxide.Event {
		return ev(id, src, duroxide.ActivityCompletedEvent{Result: r})
	}
	snap := func(kv ...string) map[string]duroxide.KVEntry {
		m := map[string]duroxide.KVEntry{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = duroxide.KVEntry{Value: kv[i+1], LastUpdatedAtMs: 10}
		}
		return m
	}
	setKV := func(k, v string) durable.OrchestrationFunc {
		return func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue(k, v)
			return "done", nil
		}
	}
	setThenGet := func(k, v string) durable.OrchestrationFunc {
		return func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue(k, v)
			return kvGet(ctx, k, ""), nil
		}
	}
	setThenActivity := func(k, v, name, input string) durable.OrchestrationFunc {
		return func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue(k, v)
			return ctx.ScheduleActivity(name, input).Get()
		}
	}
	read := func(k string) durable.OrchestrationFunc {
		return func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return kvGet(ctx, k, "missing"), nil
		}
	}
	incr := func(ctx *durable.OrchestrationContext) int {
		n, _ := strconv.Atoi(kvGet(ctx, "counter", "0"))
		ctx.SetValue("counter", strconv.Itoa(n+1))
		return n + 1
	}
	allOps := func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetValue("X", "Y")
		ctx.ClearValue("Z")
		ctx.ClearAllValues()
		ctx.SetValue("A", "1")
		return kvGet(ctx, "A", ""), nil
	}
	cases := []struct {
		name     string
		fn       durable.OrchestrationFunc
		history  []duroxide.Event
		snapshot map[string]duroxide.KVEntry
		outcome  string // exact, or a prefix ending in ":"
	}{
		{"replay_multiple_sets_last_wins", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("A", "1")
			ctx.SetValue("A", "2")
			return kvGet(ctx, "A", ""), nil
		}, []duroxide.Event{started, set(2, "A", "1"), set(3, "A", "2")}, nil, "completed:2"},
		{"replay_clear_then_set", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("A", "1")
			ctx.ClearAllValues()
			ctx.SetValue("B", "2")
			return "A=" + kvGet(ctx, "A", "none") + ",B=" + kvGet(ctx, "B", "none"), nil
		}, []duroxide.Event{started, set(2, "A", "1"), allCleared(3), set(4, "B", "2")}, nil, "completed:A=none,B=2"},
		{"replay_clear_single_key", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("A", "1")
			ctx.SetValue("B", "2")
			ctx.ClearValue("A")
			return "A=" + kvGet(ctx, "A", "none") + ",B=" + kvGet(ctx, "B", "none"), nil
		}, []duroxide.Event{started, set(2, "A", "1"), set(3, "B", "2"), cleared(4, "A")}, nil, "completed:A=none,B=2"},
		{"replay_set_value_matches_action", setKV("A", "1"), []duroxide.Event{started, set(2, "A", "1")}, nil, "completed:done"},
		{"replay_clear_value_matches_action", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.ClearValue("A")
			return "cleared", nil
		}, []duroxide.Event{started, cleared(2, "A")}, nil, "completed:cleared"},
		{"replay_kv_interleaved_with_activities", setThenActivity("progress", "started", "DoWork", "work-input"),
			[]duroxide.Event{started, set(2, "progress", "started"), act(3, "DoWork", "work-input"), done(4, 3, "work-result")}, nil, "completed:work-result"},
		{"replay_kv_no_token_binding", setKV("k", "v"), []duroxide.Event{started, set(2, "k", "v")}, nil, "completed:done"},
		{"kv_state_seeded_from_snapshot", read("X"), []duroxide.Event{started}, snap("X", "from_prev_exec"), "completed:from_prev_exec"},
		{"kv_state_snapshot_overridden_by_code", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("X", "new")
			return kvGet(ctx, "X", "missing"), nil
		}, []duroxide.Event{started}, snap("X", "old"), "completed:new"},
		{"kv_get_value_same_turn", setThenGet("mykey", "myval"), []duroxide.Event{started}, nil, "completed:myval"},
		{"kv_get_value_previous_turn", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("progress", "step_1")
			if _, err := ctx.ScheduleActivity("Work", "input").Get(); err != nil {
				return "", err
			}
			return kvGet(ctx, "progress", "missing"), nil
		}, []duroxide.Event{started, set(2, "progress", "step_1"), act(3, "Work", "input"), done(4, 3, "result")}, nil, "completed:step_1"},
		{"kv_get_value_previous_execution", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return "status=" + kvGet(ctx, "status", "missing") + ",config=" + kvGet(ctx, "config", "missing") +
				",absent=" + kvGet(ctx, "nonexistent", "missing"), nil
		}, []duroxide.Event{started}, snap("status", "from_exec_1", "config", "old_config"), "completed:status=from_exec_1,config=old_config,absent=missing"},
		{"kv_set_value_mismatch_nondeterminism", setThenActivity("A", "new", "Task", "input"),
			[]duroxide.Event{started, set(2, "A", "old"), act(3, "Task", "input"), done(4, 3, "result")}, nil, "nondeterminism:"},
		{"kv_clear_key_mismatch_nondeterminism", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.ClearValue("A")
			return ctx.ScheduleActivity("Task", "input").Get()
		}, []duroxide.Event{started, cleared(2, "B"), act(3, "Task", "input"), done(4, 3, "result")}, nil, "nondeterminism:"},
		{"kv_read_modify_write_across_turns_replay", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("counter", "1")
			for range 2 {
				if _, err := ctx.ScheduleActivity("Noop", "").Get(); err != nil {
					return "", err
				}
			}
			return strconv.Itoa(incr(ctx)), nil
		}, []duroxide.Event{started, set(2, "counter", "1"), act(3, "Noop", ""), done(4, 3, "ok"), act(5, "Noop", ""), done(6, 5, "ok")},
			snap("counter", "1"), "completed:2"},
		{"kv_read_modify_write_every_turn_snapshot_poisons_replay", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			for range 4 {
				incr(ctx)
				if _, err := ctx.ScheduleActivity("Noop", "").Get(); err != nil {
					return "", err
				}
			}
			return kvGet(ctx, "counter", "0"), nil
		}, []duroxide.Event{started, set(2, "counter", "1"), act(3, "Noop", ""), done(4, 3, "ok"), set(5, "counter", "2"),
			act(6, "Noop", ""), done(7, 6, "ok"), set(8, "counter", "3"), act(9, "Noop", ""), done(10, 9, "ok")}, nil, "running"},
		{"kv_read_modify_write_with_can_snapshot", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			incr(ctx)
			if _, err := ctx.ScheduleActivity("Noop", "").Get(); err != nil {
				return "", err
			}
			return strconv.Itoa(incr(ctx)), nil
		}, []duroxide.Event{started, set(2, "counter", "6"), act(3, "Noop", ""), done(4, 3, "ok")}, snap("counter", "5"), "completed:7"},
		{"kv_clear_all_then_set_replay", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.ClearAllValues()
			ctx.SetValue("x", "new")
			if _, err := ctx.ScheduleActivity("Noop", "").Get(); err != nil {
				return "", err
			}
			return "x=" + kvGet(ctx, "x", "missing") + ",old=" + kvGet(ctx, "old", "gone"), nil
		}, []duroxide.Event{started, allCleared(2), set(3, "x", "new"), act(4, "Noop", ""), done(5, 4, "ok")}, snap("old", "stale"), "completed:x=new,old=gone"},
		{"kv_clear_single_snapshot_key_then_rmw", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.ClearValue("session")
			incr(ctx)
			if _, err := ctx.ScheduleActivity("Noop", "").Get(); err != nil {
				return "", err
			}
			return "session=" + kvGet(ctx, "session", "gone") + ",counter=" + kvGet(ctx, "counter", "missing"), nil
		}, []duroxide.Event{started, cleared(2, "session"), set(3, "counter", "4"), act(4, "Noop", ""), done(5, 4, "ok")},
			snap("session", "abc", "counter", "3"), "completed:session=gone,counter=4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			outcome, _ := kvTurn(t, c.fn, append([]duroxide.Event(nil), c.history...), c.snapshot)
			if outcome != c.outcome && !(strings.HasSuffix(c.outcome, ":") && strings.HasPrefix(outcome, c.outcome)) {
				t.Fatalf("outcome %q, want %q", outcome, c.outcome)
			}
		})
	}
	t.Run("new_kv_events_after_replay", func(t *testing.T) {
		t.Parallel()
		outcome, delta := kvTurn(t, allOps, []duroxide.Event{started}, nil)
		var kinds []string
		for _, e := range delta {
			switch k := e.Kind.(type) {
			case duroxide.KeyValueSetEvent:
				kinds = append(kinds, "set "+k.Key+"="+k.Value)
			case duroxide.KeyValueClearedEvent:
				kinds = append(kinds, "clear "+k.Key)
			case duroxide.KeyValuesClearedEvent:
				kinds = append(kinds, "clear all")
			default:
				continue
			}
			if e.SourceEventID != nil {
				t.Errorf("KV event %d has a source event", e.EventID)
			}
		}
		if outcome != "completed:1" || strings.Join(kinds, ", ") != "set X=Y, clear Z, clear all, set A=1" {
			t.Fatalf("outcome %q, KV events %v", outcome, kinds)
		}
	})
}
