package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The recorded tests rebuild, turn by turn and without a provider, the
// histories duroxide's own Rust runtime wrote (durable/testdata/recorded; its
// README describes each scenario): every run of events a message produced
// becomes a batch, and each turn must write exactly the recorded events that
// follow it, ids, sources and fields, except time (timer fire times, KV
// timestamps). durable's TestRecordedHistories runs the same scenarios end to
// end over Redis.

const recordedDir = "../../testdata/recorded"

// recordedCode is the engine-level code of the recorded orchestrations,
// as durable/recorded_test.go registers them with the public API.
var recordedCode = map[string]Func{
	"Hello": func(ctx *Context, in string) (string, error) { return ctx.ScheduleActivity("Echo", in, nil, nil).Get() },
	"FanOut": func(ctx *Context, _ string) (string, error) {
		fs := []*Future{ctx.ScheduleActivity("Echo", "a", nil, nil), ctx.ScheduleActivity("Echo", "b", nil, nil), ctx.ScheduleActivity("Echo", "c", nil, nil)}
		ctx.Join(fs...)
		var out []string
		for _, f := range fs {
			v, err := f.Get()
			if err != nil {
				return "", err
			}
			out = append(out, v)
		}
		return strings.Join(out, ","), nil
	},
	"Timer": func(ctx *Context, _ string) (string, error) {
		_, err := ctx.Timer(time.Second).Get()
		return "timer-done", err
	},
	"WaitEvent": func(ctx *Context, _ string) (string, error) {
		v, err := ctx.WaitForEvent("Approve").Get()
		return "got:" + v, err
	},
	"Race": func(ctx *Context, in string) (string, error) {
		secs, err := strconv.Atoi(in)
		if err != nil {
			return "", err
		}
		ev := ctx.WaitForEvent("Go")
		if ctx.Select(ev, ctx.Timer(time.Duration(secs)*time.Second)) == 1 {
			return "timeout", nil
		}
		v, err := ev.Get()
		return "event:" + v, err
	},
	"Child": func(ctx *Context, in string) (string, error) {
		v, err := ctx.ScheduleActivity("Echo", in, nil, nil).Get()
		return "child:" + v, err
	},
	"FailingChild": func(ctx *Context, in string) (string, error) { return ctx.ScheduleActivity("Fail", in, nil, nil).Get() },
	"Parent": func(ctx *Context, in string) (string, error) {
		outcome := func(v string, err error) string {
			if err != nil {
				return "err(" + err.Error() + ")"
			}
			return "ok(" + v + ")"
		}
		first := outcome(ctx.ScheduleSubOrchestration("Child", in+"-1", "", nil).Get())
		second := outcome(ctx.ScheduleSubOrchestration("FailingChild", in+"-2", "", nil).Get())
		return first + ";" + second, nil
	},
	"Cans": func(ctx *Context, in string) (string, error) {
		n, err := strconv.Atoi(in)
		if err != nil {
			return "", err
		}
		if _, err := ctx.ScheduleActivity("Echo", "gen"+in, nil, nil).Get(); err != nil {
			return "", err
		}
		if n < 2 {
			ctx.ContinueAsNew(strconv.Itoa(n+1), nil)
		}
		return "done:" + in, nil
	},
	"SysCalls": func(ctx *Context, _ string) (string, error) {
		guid, err := ctx.ScheduleActivity("__duroxide_syscall:new_guid", "", nil, nil).Get()
		if err != nil {
			return "", err
		}
		now, err := ctx.ScheduleActivity("__duroxide_syscall:utc_now_ms", "", nil, nil).Get()
		ms, _ := strconv.ParseInt(now, 10, 64)
		return fmt.Sprintf("guid_len=%d;time_positive=%t", len(guid), ms > 0), err
	},
	"Status": func(ctx *Context, in string) (string, error) {
		ctx.SetCustomStatus(ptr("step1"))
		v, err := ctx.ScheduleActivity("Echo", in, nil, nil).Get()
		ctx.SetCustomStatus(ptr("step2"))
		return v, err
	},
	"Kv": func(ctx *Context, _ string) (string, error) {
		get := func(k string) string {
			if v, ok := ctx.Value(k); ok {
				return v
			}
			return "none"
		}
		ctx.SetValue("a", "1")
		ctx.SetValue("b", "2")
		if _, err := ctx.ScheduleActivity("Echo", "kv", nil, nil).Get(); err != nil {
			return "", err
		}
		a := get("a")
		ctx.ClearValue("a")
		return "a=" + a + ";a_after_clear=" + get("a") + ";b=" + get("b"), nil
	},
	"CancelMe": func(ctx *Context, _ string) (string, error) {
		act, ev := ctx.ScheduleActivity("Slow", "x", nil, nil), ctx.WaitForEvent("Never")
		ctx.Join(act, ev)
		return "joined", nil
	},
	"Queue": func(ctx *Context, in string) (string, error) {
		g, err := ctx.ScheduleActivity("Gate", in, nil, nil).Get()
		if err != nil {
			return "", err
		}
		m, err := ctx.Dequeue("Q").Get()
		return g + "|" + m, err
	},
	"RaceActivity": func(ctx *Context, _ string) (string, error) {
		return raceSecond(ctx, ctx.ScheduleActivity("Slow", "y", nil, nil))
	},
	"WaitForever": func(ctx *Context, _ string) (string, error) { return ctx.WaitForEvent("Never").Get() },
	"RaceChild": func(ctx *Context, _ string) (string, error) {
		return raceSecond(ctx, ctx.ScheduleSubOrchestration("WaitForever", "z", "", nil))
	},
	"CanQueue": func(ctx *Context, in string) (string, error) {
		if in == "start" {
			if _, err := ctx.ScheduleActivity("Gate", "c", nil, nil).Get(); err != nil {
				return "", err
			}
			m, err := ctx.Dequeue("Q").Get()
			if err != nil {
				return "", err
			}
			ctx.ContinueAsNew("next:"+m, nil)
		}
		m, err := ctx.Dequeue("Q").Get()
		return in + "|" + m, err
	},
	"Spawner": func(ctx *Context, _ string) (string, error) {
		ctx.StartOrchestration("Child", "det-17", "d", nil)
		return ctx.ScheduleSubOrchestration("Child", "e", "explicit-17", nil).Get()
	},
	"LateSub": func(ctx *Context, _ string) (string, error) {
		g, err := ctx.ScheduleActivity("Gate", "e", nil, nil).Get()
		if err != nil {
			return "", err
		}
		v, err := ctx.WaitForEvent("E").Get()
		return g + "|" + v, err
	},
}

func raceSecond(ctx *Context, f *Future) (string, error) {
	if ctx.Select(f, ctx.Timer(time.Second)) == 1 {
		return "timeout", nil
	}
	return f.Get()
}

// recordedFile is one file of testdata/recorded: instance -> execution ->
// events as duroxide wrote them.
type recordedFile struct {
	Instances map[string]map[string][]duroxide.Event `json:"instances"`
}

func loadRecorded(t *testing.T, path string) recordedFile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	var f recordedFile
	if err := json.Unmarshal(data, &f); err != nil || len(f.Instances) == 0 {
		t.Fatalf("decode %s: %v (%d instances)", path, err, len(f.Instances))
	}
	return f
}

// TestExecutorRebuildsRecordedHistories: every recorded scenario except
// 08_retry (its retry loop is durable's, above the engine) is rebuilt.
func TestExecutorRebuildsRecordedHistories(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join(recordedDir, "*.json"))
	if err != nil || len(paths) < 18 {
		t.Fatalf("recordings in %s: %v (%d files)", recordedDir, err, len(paths))
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		if name == "08_retry" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rec := loadRecorded(t, path)
			for inst, execs := range rec.Instances {
				t.Run(inst, func(t *testing.T) {
					t.Parallel()
					bothModes(t, func(t *testing.T, resume bool) { rebuild(t, inst, execs, resume) })
				})
			}
		})
	}
}

// rebuild runs one recorded instance's executions in order.
func rebuild(t *testing.T, inst string, execs map[string][]duroxide.Event, resume bool) {
	first := execs["1"]
	if len(first) == 0 {
		t.Fatalf("no execution 1")
	}
	st, ok := first[0].Kind.(duroxide.OrchestrationStartedEvent)
	code := recordedCode[st.Name]
	if !ok || code == nil {
		t.Fatalf("execution 1 starts with %s, whose code is not here", first[0].Kind.EventType())
	}
	s := newSession(t, code, resume, nil)
	s.instance = inst
	var last turnOut
	for n := 1; n <= len(execs); n++ {
		want := execs[strconv.Itoa(n)]
		if len(want) == 0 {
			t.Fatalf("executions %d of %d missing", n, len(execs))
		}
		for len(s.history) < len(want) || s.execution != uint64(n) {
			pos := 0
			if s.execution == uint64(n) {
				pos = len(s.history)
			}
			batch := messagesAt(t, inst, want, pos)
			if pos == 0 && n > 1 {
				batch = append(workToMessages(last.commit, inst), batch...)
			}
			last = s.turn(batch...)
			if !last.ran || len(last.commit.HistoryDelta) == 0 || last.commit.ExecutionID != uint64(n) {
				t.Fatalf("execution %d at event %d: the turn wrote nothing to it (ran %v, execution %d)", n, pos+1, last.ran, last.commit.ExecutionID)
			}
			got := last.commit.HistoryDelta
			if pos+len(got) > len(want) {
				t.Fatalf("execution %d: the turn at event %d wrote past the recording:\n got %s\nwant %s", n, pos+1, kinds(got), kinds(want[pos:]))
			}
			compareRecorded(t, n, got, want[pos:pos+len(got)])
		}
	}
	if last.goesOn {
		t.Errorf("the last execution goes on after its recorded end")
	}
}

// messagesAt is the batch that produced the run of events at pos: the start
// for event 1, then each event a message records (a completion, an
// external event, a queue message, a cancel request). A continued
// execution's carried queue messages come with its ContinueAsNew instead.
func messagesAt(t *testing.T, inst string, evs []duroxide.Event, pos int) []duroxide.WorkItem {
	t.Helper()
	var msgs []duroxide.WorkItem
	skipCarried := 0
	if pos == 0 {
		st := evs[0].Kind.(duroxide.OrchestrationStartedEvent)
		if evs[0].ExecutionID == duroxide.InitialExecutionID {
			msgs = append(msgs, duroxide.StartOrchestration{Instance: inst, Orchestration: st.Name, Input: st.Input,
				ParentInstance: st.ParentInstance, ParentID: st.ParentID, ExecutionID: duroxide.InitialExecutionID})
		}
		if st.CarryForwardEvents != nil {
			skipCarried = len(*st.CarryForwardEvents)
		}
		pos = 1
	}
	exec := evs[0].ExecutionID
	for _, ev := range evs[pos:] {
		var m duroxide.WorkItem
		src := uint64(0)
		if ev.SourceEventID != nil {
			src = *ev.SourceEventID
		}
		switch k := ev.Kind.(type) {
		case duroxide.ActivityCompletedEvent:
			m = duroxide.ActivityCompleted{Instance: inst, ExecutionID: exec, ID: src, Result: k.Result}
		case duroxide.ActivityFailedEvent:
			m = duroxide.ActivityFailed{Instance: inst, ExecutionID: exec, ID: src, Details: k.Details}
		case duroxide.TimerFiredEvent:
			m = duroxide.TimerFired{Instance: inst, ExecutionID: exec, ID: src, FireAtMs: k.FireAtMs}
		case duroxide.ExternalEventEvent:
			m = duroxide.ExternalRaised{Instance: inst, Name: k.Name, Data: k.Data}
		case duroxide.QueueEventDeliveredEvent:
			if skipCarried > 0 {
				skipCarried--
				continue
			}
			m = duroxide.QueueMessage{Instance: inst, Name: k.Name, Data: k.Data}
		case duroxide.SubOrchestrationCompletedEvent:
			m = duroxide.SubOrchCompleted{ParentInstance: inst, ParentExecutionID: exec, ParentID: src, Result: k.Result}
		case duroxide.SubOrchestrationFailedEvent:
			m = duroxide.SubOrchFailed{ParentInstance: inst, ParentExecutionID: exec, ParentID: src, Details: k.Details}
		case duroxide.OrchestrationCancelRequestedEvent:
			m = duroxide.CancelInstance{Instance: inst, Reason: k.Reason}
		}
		if m == nil {
			break
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// compareRecorded requires got to be the recorded events want: same ids,
// sources and fields, time apart.
func compareRecorded(t *testing.T, exec int, got, want []duroxide.Event) {
	t.Helper()
	for i := range want {
		g, w := recordedLine(got[i]), recordedLine(want[i])
		if g != w {
			t.Fatalf("execution %d event %d:\n got %s\nwant %s\nturn wrote %s", exec, want[i].EventID, g, w, kinds(got))
		}
	}
}

func recordedLine(ev duroxide.Event) string {
	k := ev.Kind
	switch v := k.(type) {
	case duroxide.TimerCreatedEvent:
		v.FireAtMs = 0
		k = v
	case duroxide.KeyValueSetEvent:
		v.LastUpdatedAtMs = 0
		k = v
	}
	return kinds([]duroxide.Event{ev}) + " " + Describe(k)
}

// TestExecutorReplaysCompletedHistories replays each recorded execution as
// durable's replayer does (replayer.go): the stored events up to its end,
// every one checked (CheckAll), no messages. The turn must write exactly the
// recorded end and no work; and the whole history, end included, handed to
// a turn writes nothing at all.
func TestExecutorReplaysCompletedHistories(t *testing.T) {
	t.Parallel()
	paths, _ := filepath.Glob(filepath.Join(recordedDir, "*.json"))
	checked := 0
	for _, path := range paths {
		rec := loadRecorded(t, path)
		for inst, execs := range rec.Instances {
			for exec, evs := range execs {
				st, _ := evs[0].Kind.(duroxide.OrchestrationStartedEvent)
				code := recordedCode[st.Name]
				if code == nil {
					continue
				}
				checked++
				t.Run(filepath.Base(path)+"/"+inst+"/"+exec, func(t *testing.T) {
					t.Parallel()
					replayRecorded(t, inst, evs, code)
				})
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d recorded executions replayed", checked)
	}
}

func replayRecorded(t *testing.T, inst string, evs []duroxide.Event, code Func) {
	cut := slices.IndexFunc(evs, func(ev duroxide.Event) bool { return IsTerminal(ev.Kind) })
	if cut < 0 {
		t.Fatalf("no terminal event in %s", kinds(evs))
	}
	// A cancel is not the code's doing: the replayer leaves it and what
	// follows out of the comparison, so the replay stops before it.
	if i := slices.IndexFunc(evs, func(ev duroxide.Event) bool {
		_, ok := ev.Kind.(duroxide.OrchestrationCancelRequestedEvent)
		return ok
	}); i >= 0 {
		cut = i
	}
	prefix := slices.Clone(evs[:cut])
	exec := evs[0].ExecutionID
	item := &duroxide.OrchestrationItem{Instance: inst, ExecutionID: exec, OrchestrationName: prefix[0].Kind.(duroxide.OrchestrationStartedEvent).Name,
		Version: execVersion.String(), History: prefix}

	eng := New(inst, exec, prefix)
	defer eng.Close()
	eng.CheckAll()
	commit, goesOn := eng.Turn(item, ReadBatch(nil, eng.Info(), inst), execVersion, code, execEnv())
	if d := eng.Divergence(); d != nil {
		t.Fatalf("replay diverged at event %d (%s): %s", d.Event.EventID, d.Action, deref(commit.Metadata.Output))
	}
	tail := evs[cut:]
	if _, cancelled := tail[0].Kind.(duroxide.OrchestrationCancelRequestedEvent); cancelled {
		// Replaying to the cancel leaves the code waiting where it was.
		if !goesOn || len(commit.HistoryDelta) != 0 || len(commit.WorkerItems)+len(commit.OrchestratorItems) != 0 {
			t.Fatalf("replay to the cancel: goesOn %v, events %s, work %s", goesOn,
				kinds(commit.HistoryDelta), workItems(append(commit.WorkerItems, commit.OrchestratorItems...)))
		}
	} else {
		ends := slices.IndexFunc(commit.HistoryDelta, func(ev duroxide.Event) bool { return IsTerminal(ev.Kind) })
		if ends < 0 {
			t.Fatalf("replay did not end the execution: %s", kinds(commit.HistoryDelta))
		}
		compareRecorded(t, int(exec), commit.HistoryDelta[:ends+1], tail[:ends+1])
		// The terminal's own work (the parent told, the next execution
		// started) may follow; nothing history already holds is scheduled
		// again.
		for _, w := range append(commit.WorkerItems, commit.OrchestratorItems...) {
			switch w.(type) {
			case duroxide.ActivityExecute, duroxide.TimerFired, duroxide.StartOrchestration:
				t.Errorf("replay scheduled %s again", workItems([]duroxide.WorkItem{w}))
			}
		}
	}

	whole := New(inst, exec, evs)
	defer whole.Close()
	item.History = evs
	commit, goesOn = whole.Turn(item, ReadBatch(nil, whole.Info(), inst), execVersion, code, execEnv())
	if goesOn || len(commit.HistoryDelta) != 0 || len(commit.WorkerItems)+len(commit.OrchestratorItems) != 0 || commit.Metadata.Status != "" {
		t.Fatalf("a turn over the ended history: goesOn %v, events %s, work %s, status %q", goesOn,
			kinds(commit.HistoryDelta), workItems(append(commit.WorkerItems, commit.OrchestratorItems...)), commit.Metadata.Status)
	}
}
