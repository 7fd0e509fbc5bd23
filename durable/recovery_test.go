package durable_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The recovery tests run one workload twice over: a runtime that dies with
// work in flight (its turns or activities stuck in hooks, holding their
// locks), then a fresh runtime that must finish every instance exactly once.

// recoveryHooks are what differs between the runtime that dies and the one
// that recovers. Every hook may be nil.
type recoveryHooks struct {
	// ran counts one execution of the Step activity with this input.
	ran func(input string)
	// holdActivity blocks a Step activity after it ran (mid-activity: its
	// side effect happened, its result is not acked).
	holdActivity func(ctx *durable.ActivityContext, input string)
	// holdTurn blocks the turn that has every fan-out result (mid-turn: the
	// completions are fetched and locked, nothing is committed).
	holdTurn func(instance string)
}

// recoveryRegistry registers Step (upper-cases its input) and Recover: a
// fan-out of three Steps, then one more Step after the join.
func recoveryRegistry(h recoveryHooks) *durable.Registry {
	reg := durable.NewRegistry()
	reg.MustAddActivity("Step", func(ctx *durable.ActivityContext, in string) (string, error) {
		if h.ran != nil {
			h.ran(in)
		}
		if h.holdActivity != nil {
			h.holdActivity(ctx, in)
		}
		return strings.ToUpper(in), nil
	})
	reg.MustAddOrchestration("Recover", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		var fs []durable.Future[string]
		var aw []durable.Awaitable
		for i := range recoveryFanOut {
			f := ctx.ScheduleActivity("Step", fmt.Sprintf("%s/%d", in, i))
			fs, aw = append(fs, f), append(aw, f)
		}
		ctx.Join(aw...)
		if h.holdTurn != nil && !ctx.IsReplaying() {
			h.holdTurn(ctx.InstanceID())
		}
		parts := make([]string, len(fs))
		for i, f := range fs {
			v, err := f.Get()
			if err != nil {
				return "", err
			}
			parts[i] = v
		}
		last, err := ctx.ScheduleActivity("Step", in+"/last").Get()
		return strings.Join(parts, "+") + "|" + last, err
	})
	return reg
}

// recoveryFanOut is the number of parallel Steps per instance.
const recoveryFanOut = 3

// recoveryInstances names n instances; each one's input is its name.
func recoveryInstances(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("rec-%02d", i)
	}
	return ids
}

// recoveryOutput is what Recover returns for input in.
func recoveryOutput(in string) string {
	var parts []string
	for i := range recoveryFanOut {
		parts = append(parts, strings.ToUpper(fmt.Sprintf("%s/%d", in, i)))
	}
	return strings.Join(parts, "+") + "|" + strings.ToUpper(in+"/last")
}

// recoveryActivityInputs are the Step inputs instance in runs.
func recoveryActivityInputs(in string) []string {
	var out []string
	for i := range recoveryFanOut {
		out = append(out, fmt.Sprintf("%s/%d", in, i))
	}
	return append(out, in+"/last")
}

// startRecoveryInstances starts every instance of ids.
func startRecoveryInstances(t *testing.T, c *durable.Client, ids []string) {
	t.Helper()
	for _, id := range ids {
		if err := c.StartOrchestration(t.Context(), id, "Recover", id); err != nil {
			t.Fatal(err)
		}
	}
}

// checkRecovered waits for every instance and checks it completed once with
// the right output and a well-formed history, and that every activity ran
// at least once (runs gives an input's execution count).
func checkRecovered(t *testing.T, c *durable.Client, ids []string, runs func(input string) int) {
	t.Helper()
	for _, id := range ids {
		st, err := c.WaitForOrchestration(t.Context(), id, 60*time.Second)
		if err != nil {
			t.Fatalf("%s did not finish after recovery: %v", id, err)
		}
		if st.Status != durable.StatusCompleted || st.Output != recoveryOutput(id) {
			t.Errorf("%s: status %v output %q (want %q) %s", id, st.Status, st.Output, recoveryOutput(id), st.FailureMessage())
		}
		checkRecoveredHistory(t, c, id)
		for _, in := range recoveryActivityInputs(id) {
			if n := runs(in); n < 1 {
				t.Errorf("activity %s ran %d times", in, n)
			}
		}
	}
}

// checkRecoveredHistory checks one instance's only execution: ids strictly
// increasing from 1, started first and completed once and last, and every
// activity scheduled and completed exactly once.
func checkRecoveredHistory(t *testing.T, c *durable.Client, id string) {
	t.Helper()
	ctx := context.Background()
	execs, err := c.Admin().ListExecutions(ctx, id)
	if err != nil || len(execs) != 1 {
		t.Errorf("%s: executions %v (%v), want one", id, execs, err)
		return
	}
	hist, err := c.Admin().ReadHistoryWithExecutionID(ctx, id, execs[0])
	if err != nil {
		t.Errorf("%s: history: %v", id, err)
		return
	}
	if problems := historyProblems(hist); len(problems) > 0 {
		t.Errorf("%s: history is malformed: %s", id, strings.Join(problems, "; "))
	}
}

// historyProblems lists what is wrong with a recovered Recover history.
func historyProblems(hist []duroxide.Event) []string {
	return executionProblems(hist, recoveryFanOut+1)
}

// executionProblems lists what is wrong with the history of an execution
// that must have completed exactly once: ids strictly increasing,
// OrchestrationStarted #1 first, OrchestrationCompleted once and last,
// activities activities each scheduled and completed exactly once, and no
// other kinds of event than those and the allowed ones.
func executionProblems(hist []duroxide.Event, activities int, allowed ...string) []string {
	var out []string
	scheduled := map[uint64]bool{}
	completed := map[uint64]int{}
	terminal := 0
	for i, ev := range hist {
		if i > 0 && ev.EventID <= hist[i-1].EventID {
			out = append(out, fmt.Sprintf("event id %d after %d", ev.EventID, hist[i-1].EventID))
		}
		switch ev.Kind.(type) {
		case duroxide.ActivityScheduledEvent:
			scheduled[ev.EventID] = true
		case duroxide.ActivityCompletedEvent:
			if ev.SourceEventID == nil || !scheduled[*ev.SourceEventID] {
				out = append(out, fmt.Sprintf("completion %d of nothing scheduled", ev.EventID))
			} else {
				completed[*ev.SourceEventID]++
			}
		case duroxide.OrchestrationCompletedEvent:
			terminal++
		default:
			if name := ev.Kind.EventType(); name != "OrchestrationStarted" && !slices.Contains(allowed, name) {
				out = append(out, "unexpected "+name)
			}
		}
	}
	if len(hist) == 0 || hist[0].Kind.EventType() != "OrchestrationStarted" || hist[0].EventID != 1 {
		out = append(out, "does not begin with OrchestrationStarted #1")
	}
	if terminal != 1 || hist[len(hist)-1].Kind.EventType() != "OrchestrationCompleted" {
		out = append(out, fmt.Sprintf("%d completions, last event not OrchestrationCompleted", terminal))
	}
	if len(scheduled) != activities {
		out = append(out, fmt.Sprintf("%d activities scheduled, want %d", len(scheduled), activities))
	}
	for id := range scheduled {
		if completed[id] != 1 {
			out = append(out, fmt.Sprintf("activity #%d completed %d times", id, completed[id]))
		}
	}
	return out
}

func TestRecoveryHistoryCheckCatchesDuplicates(t *testing.T) {
	t.Parallel()
	src := func(id uint64) *uint64 { return &id }
	ev := func(id uint64, source *uint64, kind duroxide.EventKind) duroxide.Event {
		return duroxide.Event{EventID: id, SourceEventID: source, Kind: kind}
	}
	good := []duroxide.Event{ev(1, nil, duroxide.OrchestrationStartedEvent{})}
	for i := range uint64(recoveryFanOut + 1) {
		good = append(good, ev(2+i, nil, duroxide.ActivityScheduledEvent{Name: "Step"}))
	}
	for i := range uint64(recoveryFanOut + 1) {
		good = append(good, ev(uint64(len(good))+1, src(2+i), duroxide.ActivityCompletedEvent{}))
	}
	good = append(good, ev(uint64(len(good))+1, nil, duroxide.OrchestrationCompletedEvent{}))
	if p := historyProblems(good); len(p) != 0 {
		t.Fatalf("a well-formed history has problems: %v", p)
	}
	dup := append(append([]duroxide.Event{}, good[:len(good)-1]...),
		ev(uint64(len(good)), src(2), duroxide.ActivityCompletedEvent{}),
		ev(uint64(len(good))+1, nil, duroxide.OrchestrationCompletedEvent{}),
		ev(uint64(len(good))+1, nil, duroxide.OrchestrationCompletedEvent{}))
	if p := historyProblems(dup); len(p) != 3 {
		t.Fatalf("duplicate completion, duplicate terminal event and a repeated id: problems %q", p)
	}
}
