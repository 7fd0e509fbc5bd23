package durable_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// recordedInstanceHistory is every execution of one recorded instance,
// oldest first, as one history.
func recordedInstanceHistory(t *testing.T, rec recording, instance string) []duroxide.Event {
	t.Helper()
	var execs []uint64
	for e := range rec.Instances[instance] {
		n, err := strconv.ParseUint(e, 10, 64)
		if err != nil {
			t.Fatalf("execution id %q: %v", e, err)
		}
		execs = append(execs, n)
	}
	slices.Sort(execs)
	var out []duroxide.Event
	for _, e := range execs {
		out = append(out, decodeRecorded(t, rec.Instances[instance][strconv.FormatUint(e, 10)])...)
	}
	return out
}

// recordedRegistry is the code of the recorded scenarios; a replay runs no
// activity, so the rig needs no harness.
func recordedRegistry() *durable.Registry {
	return (&recordedRig{gates: map[string]chan struct{}{}, flaky: map[string]int{}}).registry()
}

// TestReplayRecordedHistories replays every instance (children included,
// every execution) that duroxide's own runtime recorded against the Go code
// of its scenario: each must replay clean.
func TestReplayRecordedHistories(t *testing.T) {
	t.Parallel()
	for _, sc := range recordedScenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			rec := loadRecording(t, sc.name)
			for instance := range rec.Instances {
				if err := durable.ReplayHistory(recordedRegistry(), recordedInstanceHistory(t, rec, instance)); err != nil {
					t.Errorf("%s: %v", instance, err)
				}
			}
		})
	}
}

// replayErr replays history against reg and requires a *ReplayError.
func replayErr(t *testing.T, reg *durable.Registry, history []duroxide.Event) *durable.ReplayError {
	t.Helper()
	err := durable.ReplayHistory(reg, history)
	var re *durable.ReplayError
	if !errors.As(err, &re) {
		t.Fatalf("replay: %v, want a *ReplayError", err)
	}
	return re
}

// TestReplayReportsChangedCode replays recorded histories against code that
// changed since: each change is reported at the event where code and history
// part.
func TestReplayReportsChangedCode(t *testing.T) {
	t.Parallel()
	echo := func(_ *durable.ActivityContext, in string) (string, error) { return in, nil }
	cases := []struct {
		name, scenario, orchestration string
		code                          durable.OrchestrationFunc
		// cut, when set, keeps only that many events: a running instance
		cut                    int
		eventID                uint64
		expected, got, message string
	}{
		{
			name: "other activity", scenario: "01_hello", orchestration: "Hello",
			code: func(ctx *durable.OrchestrationContext, in string) (string, error) {
				return ctx.ScheduleActivity("Greet", in).Get()
			},
			eventID: 2, expected: "ActivityScheduled", got: "ActivityScheduled", message: "schedule mismatch",
		},
		{
			name: "other input", scenario: "01_hello", orchestration: "Hello",
			code: func(ctx *durable.OrchestrationContext, _ string) (string, error) {
				return ctx.ScheduleActivity("Echo", "moon").Get()
			},
			eventID: 2, expected: "ActivityScheduled", got: "ActivityScheduled", message: "schedule mismatch",
		},
		{
			name: "extra activity at the end", scenario: "01_hello", orchestration: "Hello",
			code: func(ctx *durable.OrchestrationContext, in string) (string, error) {
				v, err := ctx.ScheduleActivity("Echo", in).Get()
				if err != nil {
					return "", err
				}
				return ctx.ScheduleActivity("Echo", v).Get()
			},
			// history completes at event 4 where the code schedules again
			eventID: 4, expected: "OrchestrationCompleted", got: "ActivityScheduled", message: "the code writes ActivityScheduled",
		},
		{
			name: "activity removed", scenario: "10_custom_status", orchestration: "Status",
			code: func(ctx *durable.OrchestrationContext, in string) (string, error) {
				ctx.SetCustomStatus("step1")
				ctx.SetCustomStatus("step2")
				return "echo:" + in, nil
			},
			// event 2 is CustomStatusUpdated, 3 the Echo the code no longer
			// calls: the engine meets the second status update there
			eventID: 3, expected: "ActivityScheduled", got: "CustomStatusUpdated", message: "schedule mismatch",
		},
		{
			name: "still waits", scenario: "01_hello", orchestration: "Hello",
			code: func(ctx *durable.OrchestrationContext, in string) (string, error) {
				if _, err := ctx.ScheduleActivity("Echo", in).Get(); err != nil {
					return "", err
				}
				return ctx.WaitForEvent("Done").Get()
			},
			// Completed at 4 in history; the code's subscription would be 4
			eventID: 4, expected: "OrchestrationCompleted", got: "ExternalSubscribed", message: "the code writes ExternalSubscribed",
		},
		{
			name: "keeps what it dropped", scenario: "14_race_activity_loses", orchestration: "RaceActivity",
			code: func(ctx *durable.OrchestrationContext, _ string) (string, error) {
				act := ctx.ScheduleActivity("Slow", "y")
				if _, err := ctx.Timer(time.Second).Get(); err != nil {
					return "", err
				}
				return act.Get()
			},
			// history cancelled the activity the code now waits for: found at
			// the end of the replay, tied to no one event
			eventID: 0, message: "cancellation mismatch",
		},
		{
			name: "goes on past a running history", scenario: "01_hello", orchestration: "Hello", cut: 2,
			code: func(ctx *durable.OrchestrationContext, in string) (string, error) {
				a, b := ctx.ScheduleActivity("Echo", in), ctx.ScheduleActivity("Echo", in+"2")
				ctx.Join(a, b)
				return a.Get()
			},
			eventID: 3, got: "ActivityScheduled", message: "history ends here, the code goes on with ActivityScheduled",
		},
		{
			name: "returns early", scenario: "01_hello", orchestration: "Hello",
			code: func(_ *durable.OrchestrationContext, in string) (string, error) {
				return "echo:" + in, nil
			},
			// same output, but history holds an activity the code no longer calls
			eventID: 2, expected: "ActivityScheduled", message: "history schedule but no emitted action",
		},
		{
			name: "other output", scenario: "01_hello", orchestration: "Hello",
			code: func(ctx *durable.OrchestrationContext, in string) (string, error) {
				v, err := ctx.ScheduleActivity("Echo", in).Get()
				return v + "!", err
			},
			eventID: 4, expected: "OrchestrationCompleted", got: "OrchestrationCompleted", message: `the code writes OrchestrationCompleted{Output:"echo:world!"}`,
		},
		{
			name: "timer instead of activity", scenario: "02_fanout", orchestration: "FanOut",
			code: func(ctx *durable.OrchestrationContext, _ string) (string, error) {
				a := ctx.ScheduleActivity("Echo", "a")
				b := ctx.ScheduleActivity("Echo", "b")
				_, err := ctx.Timer(1).Get()
				ctx.Join(a, b)
				return "", err
			},
			eventID: 4, expected: "ActivityScheduled", got: "TimerCreated", message: "schedule mismatch",
		},
		{
			name: "second execution changed", scenario: "07_continue_as_new", orchestration: "Cans",
			code: func(ctx *durable.OrchestrationContext, in string) (string, error) {
				n, _ := strconv.Atoi(in)
				name := "Echo"
				if n == 1 {
					name = "Shout"
				}
				if _, err := ctx.ScheduleActivity(name, "gen"+in).Get(); err != nil {
					return "", err
				}
				if n < 2 {
					ctx.ContinueAsNew(strconv.Itoa(n + 1))
				}
				return "done:" + in, nil
			},
			eventID: 2, expected: "ActivityScheduled", got: "ActivityScheduled", message: "schedule mismatch",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rec := loadRecording(t, c.scenario)
			inst := "s-" + c.scenario
			reg := durable.NewRegistry().MustAddActivity("Echo", echo).MustAddOrchestration(c.orchestration, c.code)
			history := recordedInstanceHistory(t, rec, inst)
			if c.cut > 0 {
				history = history[:c.cut]
			}
			re := replayErr(t, reg, history)
			if re.Instance != inst || re.EventID != c.eventID || !strings.HasPrefix(re.Expected, c.expected) || (c.expected == "") != (re.Expected == "") ||
				!strings.HasPrefix(re.Got, c.got) || (c.got == "") != (re.Got == "") || !strings.Contains(re.Message, c.message) {
				t.Errorf("got %+v\nwant instance %s event %d expected %s… got %q… message …%s…", re, inst, c.eventID, c.expected, c.got, c.message)
			}
		})
	}
}

// TestReplayReportsEachExecution names the execution of a continue-as-new
// chain that no longer replays.
func TestReplayReportsEachExecution(t *testing.T) {
	t.Parallel()
	rec := loadRecording(t, "07_continue_as_new")
	reg := durable.NewRegistry().MustAddOrchestration("Cans", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		name := "Echo"
		if in == "2" {
			name = "Shout"
		}
		if _, err := ctx.ScheduleActivity(name, "gen"+in).Get(); err != nil {
			return "", err
		}
		if in != "2" {
			n, _ := strconv.Atoi(in)
			ctx.ContinueAsNew(strconv.Itoa(n + 1))
		}
		return "done:" + in, nil
	})
	if re := replayErr(t, reg, recordedInstanceHistory(t, rec, "s-07_continue_as_new")); re.Execution != 3 || re.EventID != 2 {
		t.Errorf("got %+v, want execution 3 event 2", re)
	}
}

// TestReplayBadInput classifies histories that cannot be replayed.
func TestReplayBadInput(t *testing.T) {
	t.Parallel()
	rec := loadRecording(t, "01_hello")
	history := recordedInstanceHistory(t, rec, "s-01_hello")
	for _, c := range []struct {
		name    string
		reg     *durable.Registry
		history []duroxide.Event
		kind    error
	}{
		{"empty", recordedRegistry(), nil, duroxide.ErrInvalidInput},
		{"no start", recordedRegistry(), history[1:], duroxide.ErrInvalidInput},
		{"unregistered", durable.NewRegistry(), history, duroxide.ErrNotFound},
	} {
		err := durable.ReplayHistory(c.reg, c.history)
		var re *durable.ReplayError
		if !errors.Is(err, c.kind) || errors.As(err, &re) {
			t.Errorf("%s: %v, want %v", c.name, err, c.kind)
		}
	}
	if err := durable.ReplayHistoryJSON(recordedRegistry(), strings.NewReader("[{")); !errors.Is(err, duroxide.ErrInvalidInput) {
		t.Errorf("bad JSON: %v, want ErrInvalidInput", err)
	}
}

// TestReplayHistoryJSON reads duroxide's event JSON as `history --json`
// prints it, one indented array per execution, concatenated.
func TestReplayHistoryJSON(t *testing.T) {
	t.Parallel()
	rec := loadRecording(t, "16_continue_as_new_queue")
	var buf bytes.Buffer
	for _, e := range []string{"1", "2"} {
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		if err := enc.Encode(decodeRecorded(t, rec.Instances["s-16_continue_as_new_queue"][e])); err != nil {
			t.Fatal(err)
		}
	}
	if err := durable.ReplayHistoryJSON(recordedRegistry(), bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatalf("replay: %v", err)
	}
	changed := durable.NewRegistry().MustAddOrchestration("CanQueue", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		return ctx.Dequeue("Q").Get()
	})
	var re *durable.ReplayError
	if err := durable.ReplayHistoryJSON(changed, &buf); !errors.As(err, &re) || re.Execution != 1 || re.EventID != 2 {
		t.Errorf("changed code: %v, want a ReplayError at execution 1 event 2", err)
	}
}

// TestReplayInstanceFromProvider replays instances straight from the
// provider: a continue-as-new chain whose second execution acts on the KV
// store the first left (so the replayer must hand it on), and an instance
// still running, whose replay must end where its history does.
func TestReplayInstanceFromProvider(t *testing.T) {
	t.Parallel()
	kvChain := func(ctx *durable.OrchestrationContext, in string) (string, error) {
		if in == "first" {
			ctx.SetValue("next", "Echo")
			ctx.ContinueAsNew("second")
			return "", nil
		}
		name, ok := ctx.Value("next")
		if !ok {
			name = "Missing"
		}
		return ctx.ScheduleActivity(name, in).Get()
	}
	waiter := func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.WaitForEvent("Go").Get()
	}
	reg := durable.NewRegistry().
		MustAddActivity("Echo", func(_ *durable.ActivityContext, in string) (string, error) { return "echo:" + in, nil }).
		MustAddOrchestration("KvChain", kvChain).
		MustAddOrchestration("Waiter", waiter)
	h := newHarness(t, reg)
	var admin duroxide.ProviderAdmin = h.env.Provider // the real provider: the runtime's may hide its admin calls (DUROXIDE_ACK_FETCH=off)

	h.start("kv-chain", "KvChain", "first")
	if st := h.wait("kv-chain"); st.Output != "echo:second" {
		t.Fatalf("KvChain: %+v", st)
	}
	h.start("waiting", "Waiter", "")
	h.awaitEvent("waiting", "ExternalSubscribed")
	for _, inst := range []string{"kv-chain", "waiting"} {
		if err := durable.ReplayInstance(h.ctx, reg, admin, inst); err != nil {
			t.Errorf("%s: %v", inst, err)
		}
	}

	changed := durable.NewRegistry().MustAddOrchestration("Waiter", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.ScheduleActivity("Echo", "first")
		return ctx.WaitForEvent("Go").Get()
	})
	var re *durable.ReplayError
	if err := durable.ReplayInstance(h.ctx, changed, admin, "waiting"); !errors.As(err, &re) || re.EventID != 2 ||
		!strings.HasPrefix(re.Expected, "ExternalSubscribed") || !strings.HasPrefix(re.Got, "ActivityScheduled") {
		t.Errorf("changed Waiter: %v, want a ReplayError at event 2", err)
	}
	if err := durable.ReplayInstance(h.ctx, reg, admin, "nope"); !errors.Is(err, duroxide.ErrNotFound) {
		t.Errorf("unknown instance: %v, want ErrNotFound", err)
	}
}

// TestReplayMain runs the replay command a user builds into their binary
// over exported files and stdin.
func TestReplayMain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	export := func(name, scenario string) string {
		rec := loadRecording(t, scenario)
		data, err := json.Marshal(recordedInstanceHistory(t, rec, "s-"+scenario))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	hello, cans := export("hello.json", "01_hello"), export("cans.json", "07_continue_as_new")
	broken := filepath.Join(dir, "broken.json")
	if err := os.WriteFile(broken, []byte("[{"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdin, err := os.ReadFile(cans)
	if err != nil {
		t.Fatal(err)
	}
	run := func(reg *durable.Registry, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := durable.ReplayMain(reg, args, bytes.NewReader(stdin), &out, &errb)
		return code, out.String(), errb.String()
	}

	if code, out, errs := run(recordedRegistry(), hello, cans, "-"); code != durable.ReplayExitOK ||
		out != "ok "+hello+"\nok "+cans+"\nok -\n" || errs != "" {
		t.Errorf("clean: %d %q %q", code, out, errs)
	}
	changed := durable.NewRegistry().MustAddOrchestration("Hello", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		return ctx.ScheduleActivity("Greet", in).Get()
	})
	if code, out, _ := run(changed, hello); code != durable.ReplayExitNondeterministic ||
		!strings.HasPrefix(out, "nondeterministic "+hello+": replay s-01_hello execution 1: nondeterministic at event 2") {
		t.Errorf("changed: %d %q", code, out)
	}
	if code, _, errs := run(changed, hello, broken, filepath.Join(dir, "missing.json")); code != durable.ReplayExitUnusable ||
		!strings.Contains(errs, "replay "+broken+": ") || !strings.Contains(errs, "missing.json") {
		t.Errorf("unusable: %d %q", code, errs)
	}
	if code, _, errs := run(recordedRegistry()); code != durable.ReplayExitUnusable || !strings.Contains(errs, "usage") {
		t.Errorf("no files: %d %q", code, errs)
	}
}

// TestReplayStopsAtRuntimeFailures checks an execution the runtime failed on
// its own (here an ack that could not be applied) up to that failure: the
// code had no outcome to compare, but what it did before still must match.
func TestReplayStopsAtRuntimeFailures(t *testing.T) {
	t.Parallel()
	history := recordedInstanceHistory(t, loadRecording(t, "01_hello"), "s-01_hello")[:2]
	history = append(history, duroxide.NewEvent(3, "", 0, nil, duroxide.OrchestrationFailedEvent{Details: duroxide.ErrorDetails{
		Infrastructure: &duroxide.InfrastructureError{Operation: "ack_orchestration_item", Message: "lost"},
	}}))
	if err := durable.ReplayHistory(recordedRegistry(), history); err != nil {
		t.Errorf("same code: %v", err)
	}
	changed := durable.NewRegistry().MustAddOrchestration("Hello", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		return ctx.ScheduleActivity("Greet", in).Get()
	})
	if re := replayErr(t, changed, history); re.EventID != 2 {
		t.Errorf("changed code: %+v, want event 2", re)
	}
}
