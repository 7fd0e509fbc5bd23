package durable_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// More ports of duroxide's tests/scenarios/version_replay_bug.rs (issue 49:
// a turn whose batch holds only completions must take the orchestration's
// name, version and input from the stored history). duroxide's unit tests
// read its WorkItemReader/HistoryManager; here one RunTurn over such a
// batch shows what the code was run with.

// TestCompletionOnlyTurnUsesStoredExecution mirrors the unit_* tests of
// version_replay_bug.rs, one subtest each.
func TestCompletionOnlyTurnUsesStoredExecution(t *testing.T) {
	t.Parallel()
	type seen struct{ name, version, input string }
	cases := []struct {
		name      string
		execution uint64
		version   string
		input     string
	}{
		{"unit_workitem_reader_completion_only_must_preserve_version", 1, "1.0.2", "orig-input"},
		{"unit_workitem_reader_nth_execution_must_preserve_version", 2, "2.0.0", "can-input"},
		{"unit_workitem_reader_completion_only_tuple_field_analysis", 1, "1.0.2", "tuple-input"},
		{"unit_input_comes_from_extract_context_not_workitem_reader", 2, "1.0.3", "CAN-INPUT"},
		{"unit_nth_execution_history_starts_with_orchestration_started", 3, "1.0.2", "third"},
		{"unit_completion_only_replay_uses_nth_execution_input", 2, "2.0.0", "CAN-INPUT-FOR-EXECUTION-2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var got []seen
			reg := durable.NewRegistry().MustAddActivity("SomeActivity", constActivity("activity-result"))
			for _, v := range []string{"1.0.2", "1.0.3", "2.0.0"} {
				reg.MustAddOrchestrationVersion("test-orch", v, func(ctx *durable.OrchestrationContext, in string) (string, error) {
					mu.Lock()
					got = append(got, seen{ctx.OrchestrationName(), ctx.OrchestrationVersion(), in})
					mu.Unlock()
					return ctx.ScheduleActivity("SomeActivity", "activity-input").Get()
				})
			}
			history := []duroxide.Event{
				{EventID: 1, Kind: duroxide.OrchestrationStartedEvent{Name: "test-orch", Version: c.version, Input: c.input}},
				{EventID: 2, Kind: duroxide.ActivityScheduledEvent{Name: "SomeActivity", Input: "activity-input"}},
			}
			for i := range history {
				history[i].InstanceID, history[i].ExecutionID, history[i].DuroxideVersion = "test-inst", c.execution, duroxide.CurrentDuroxideVersion
			}
			item := duroxide.OrchestrationItem{Instance: "test-inst", OrchestrationName: "test-orch", ExecutionID: c.execution, Version: c.version,
				History: history, AttemptCount: 1, LockToken: "runturn",
				Messages: []duroxide.WorkItem{duroxide.ActivityCompleted{Instance: "test-inst", ExecutionID: c.execution, ID: 2, Result: "activity-result"}}}
			out, err := durable.RunTurn(reg, item, durable.Options{})
			if err != nil || out.Abandoned {
				t.Fatalf("RunTurn: %v (abandoned %v)", err, out.Abandoned)
			}
			if o := turnOutcome(t, out.Commit.HistoryDelta); o != "completed:activity-result" {
				t.Fatalf("outcome %q, want completed:activity-result", o)
			}
			want := seen{"test-orch", c.version, c.input}
			if len(got) != 1 || got[0] != want {
				t.Fatalf("the code ran as %+v, want once as %+v (from the stored OrchestrationStarted, not the latest version)", got, want)
			}
		})
	}
}

// TestCanInputPreservedDuringCompletionOnlyReplay mirrors
// e2e_can_input_preserved_during_completion_only_replay: execution 2
// (continued at 2.0.0) gets the continue-as-new input on every replay,
// never execution 1's.
func TestCanInputPreservedDuringCompletionOnlyReplay(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var v1, v2 []string
	record := func(list *[]string, in string) {
		mu.Lock()
		defer mu.Unlock()
		*list = append(*list, in)
	}
	reg := durable.NewRegistry().
		MustAddActivity("Echo", func(_ *durable.ActivityContext, in string) (string, error) { return in, nil }).
		MustAddOrchestrationVersion("InputTest", "1.0.0", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			record(&v1, in)
			ctx.ContinueAsNew("INPUT-FOR-V2-FROM-CAN", durable.WithVersion("2.0.0"))
			return "", nil
		}).
		MustAddOrchestrationVersion("InputTest", "2.0.0", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			record(&v2, in)
			r, err := ctx.ScheduleActivity("Echo", in).Get()
			return "v2-got-input:" + r, err
		})
	// No instance cache, so the completion's turn replays execution 2 from
	// its stored history: the case of issue 49.
	env := durabletest.Start(t, reg, durabletest.WithOptions(durable.Options{LongPollTimeout: 100 * time.Millisecond, InstanceCacheEntries: -1}))
	mustComplete(t, env.StartAndWait(t, "input-test", "InputTest", "ORIGINAL-INPUT-FOR-V1", durable.WithVersion("1.0.0")), "v2-got-input:INPUT-FOR-V2-FROM-CAN")
	mu.Lock()
	defer mu.Unlock()
	if len(v1) == 0 || v1[0] != "ORIGINAL-INPUT-FOR-V1" {
		t.Errorf("v1 inputs %v", v1)
	}
	if len(v2) < 2 || strings.Join(v2, "") != strings.Repeat("INPUT-FOR-V2-FROM-CAN", len(v2)) {
		t.Errorf("v2 inputs %v, want the continue-as-new input on the first run and on the replay", v2)
	}
}
