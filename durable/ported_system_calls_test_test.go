package durable_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/system_calls_test.rs (NewGUID / UTCNow). The
// single-thread-mode test has no Go counterpart (the runtime has no such mode).

var guidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// recordedResults lists the results of the completed system activities of one kind.
func recordedResults(hist []duroxide.Event, activity string) []string {
	scheduled := map[uint64]bool{}
	var out []string
	for _, e := range hist {
		switch k := e.Kind.(type) {
		case duroxide.ActivityScheduledEvent:
			scheduled[e.EventID] = k.Name == activity
		case duroxide.ActivityCompletedEvent:
			if e.SourceEventID != nil && scheduled[*e.SourceEventID] {
				out = append(out, k.Result)
			}
		}
	}
	return out
}

// TestNewGUID mirrors test_new_guid.
func TestNewGUID(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("Guid", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.NewGUID().Get()
	})
	h := newHarness(t, reg)
	h.start("test-guid", "Guid", "")
	st := h.wait("test-guid")
	if !guidRE.MatchString(st.Output) {
		t.Fatalf("output %q is not a GUID", st.Output)
	}
	if got := recordedResults(h.history("test-guid"), "__duroxide_syscall:new_guid"); len(got) != 1 || got[0] != st.Output {
		t.Errorf("recorded GUIDs %q, want exactly the returned %q", got, st.Output)
	}
}

// TestUtcNowMs mirrors test_utc_now_ms: the value is the recorded one.
func TestUtcNowMs(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("Now", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		now, err := ctx.UTCNow().Get()
		return fmt.Sprint(now.UnixMilli()), err
	})
	h := newHarness(t, reg)
	h.start("test-now", "Now", "")
	st := h.wait("test-now")
	if got := recordedResults(h.history("test-now"), "__duroxide_syscall:utc_now_ms"); len(got) != 1 || got[0] != st.Output {
		t.Errorf("recorded times %q, output %q; want the output to be the recorded value", got, st.Output)
	}
}

// TestSystemCallsDeterministicReplay mirrors test_system_calls_deterministic_replay,
// made to replay for real: the values are produced, the runtime restarts, and the
// code that replays them on the next turn must see the recorded values.
func TestSystemCallsDeterministicReplay(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("TestDeterminism", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		guid, err := ctx.NewGUID().Get()
		if err != nil {
			return "", err
		}
		now, err := ctx.UTCNow().Get()
		if err != nil {
			return "", err
		}
		if _, err := ctx.WaitForEvent("go").Get(); err != nil {
			return "", err
		}
		return fmt.Sprintf("guid:%s,time:%d", guid, now.UnixMilli()), nil
	})
	h := newHarness(t, reg)
	h.start("test-determinism", "TestDeterminism", "")
	h.awaitEvent("test-determinism", "ExternalSubscribed")
	h.restart(reg, durable.Options{})
	h.raise("test-determinism", "go", "")
	st := h.wait("test-determinism")
	hist := h.history("test-determinism")
	guids, times := recordedResults(hist, "__duroxide_syscall:new_guid"), recordedResults(hist, "__duroxide_syscall:utc_now_ms")
	if len(guids) != 1 || len(times) != 1 || st.Output != "guid:"+guids[0]+",time:"+times[0] {
		t.Errorf("output %q, recorded guid %q time %q: the replayed values differ from history", st.Output, guids, times)
	}
}

// TestSystemCallsWithSelect mirrors test_system_calls_with_select.
func TestSystemCallsWithSelect(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("QuickTask", constActivity("task_done")).
		MustAddOrchestration("TestSelect", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			guid, err := ctx.NewGUID().Get()
			if err != nil {
				return "", err
			}
			a1, a2 := ctx.ScheduleActivity("QuickTask", "task1"), ctx.ScheduleActivity("QuickTask", "task2")
			winner := ctx.Select(a1, a2)
			res, err := []durable.Future[string]{a1, a2}[winner].Get()
			if err != nil {
				return "", err
			}
			now, err := ctx.UTCNow().Get()
			if err != nil || now.UnixMilli() <= 0 {
				return "", fmt.Errorf("bad time %v: %v", now, err)
			}
			return fmt.Sprintf("winner:%d,result:%s,guid_len:%d", winner, res, len(guid)), nil
		})
	h := newHarness(t, reg)
	h.start("test-select", "TestSelect", "")
	st := h.wait("test-select")
	if !regexp.MustCompile(`^winner:[01],result:task_done,guid_len:36$`).MatchString(st.Output) {
		t.Fatalf("output %q (failure %q)", st.Output, st.FailureMessage())
	}
}

// TestSystemCallsJoinWithActivities mirrors test_system_calls_join_with_activities.
func TestSystemCallsJoinWithActivities(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("SlowTask", func(_ *durable.ActivityContext, in string) (string, error) { return "slow:" + in, nil }).
		MustAddOrchestration("TestJoin", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			guid, now, task := ctx.NewGUID(), ctx.UTCNow(), ctx.ScheduleActivity("SlowTask", "x")
			ctx.Join(guid, now, task)
			g, _ := guid.Get()
			n, _ := now.Get()
			r, err := task.Get()
			return fmt.Sprintf("%d,%t,%s", len(g), n.UnixMilli() > 0, r), err
		})
	h := newHarness(t, reg)
	h.start("test-join", "TestJoin", "")
	h.wantCompleted("test-join", "36,true,slow:x")
}

// TestUtcNowAsActivityInputReplaysCorrectly mirrors
// test_utc_now_as_activity_input_replays_correctly: after a replay the activity gets
// the recorded time, not a new one.
func TestUtcNowAsActivityInputReplaysCorrectly(t *testing.T) {
	t.Parallel()
	testSyscallAsActivityInput(t, "__duroxide_syscall:utc_now_ms", func(ctx *durable.OrchestrationContext) (string, error) {
		now, err := ctx.UTCNow().Get()
		return fmt.Sprint(now.UnixMilli()), err
	})
}

// TestNewGUIDAsActivityInputReplaysCorrectly mirrors
// test_new_guid_as_activity_input_replays_correctly.
func TestNewGUIDAsActivityInputReplaysCorrectly(t *testing.T) {
	t.Parallel()
	testSyscallAsActivityInput(t, "__duroxide_syscall:new_guid", func(ctx *durable.OrchestrationContext) (string, error) {
		return ctx.NewGUID().Get()
	})
}

func testSyscallAsActivityInput(t *testing.T, syscall string, value func(*durable.OrchestrationContext) (string, error)) {
	reg := durable.NewRegistry().
		MustAddActivity("Process", func(_ *durable.ActivityContext, in string) (string, error) { return "processed:" + in, nil }).
		MustAddOrchestration("AsInput", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			v, err := value(ctx)
			if err != nil {
				return "", err
			}
			if _, err := ctx.WaitForEvent("continue").Get(); err != nil {
				return "", err
			}
			return ctx.ScheduleActivity("Process", v).Get()
		})
	h := newHarness(t, reg)
	h.start("syscall-input", "AsInput", "")
	h.awaitEvent("syscall-input", "ExternalSubscribed")
	h.raise("syscall-input", "continue", "go")
	st := h.wait("syscall-input")
	got := recordedResults(h.history("syscall-input"), syscall)
	if len(got) != 1 || st.Output != "processed:"+got[0] {
		t.Errorf("output %q, recorded %q: the activity did not get the recorded value", st.Output, got)
	}
}

// TestActivityThenSyscallOrdering mirrors test_activity_then_syscall_ordering.
func TestActivityThenSyscallOrdering(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("A", constActivity("a")).
		MustAddActivity("B", func(_ *durable.ActivityContext, in string) (string, error) { return "b:" + in, nil }).
		MustAddOrchestration("Ordering", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			if _, err := ctx.ScheduleActivity("A", "").Get(); err != nil {
				return "", err
			}
			guid, err := ctx.NewGUID().Get()
			if err != nil {
				return "", err
			}
			_, err = ctx.ScheduleActivity("B", guid).Get()
			return "ok", err
		})
	h := newHarness(t, reg)
	h.start("test-ordering-1", "Ordering", "")
	h.wantCompleted("test-ordering-1", "ok")
	var names []string
	for _, e := range h.execHistory("test-ordering-1", 1) {
		if k, ok := e.Kind.(duroxide.ActivityScheduledEvent); ok {
			names = append(names, k.Name)
		}
	}
	if strings.Join(names, ",") != "A,__duroxide_syscall:new_guid,B" {
		t.Errorf("scheduled %q, want A, the new_guid system activity, B", names)
	}
}

// TestMultipleSyscallsSameType mirrors test_multiple_syscalls_same_type.
func TestMultipleSyscallsSameType(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("TwoGuids", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		g1, err := ctx.NewGUID().Get()
		if err != nil {
			return "", err
		}
		g2, err := ctx.NewGUID().Get()
		return g1 + "," + g2, err
	})
	h := newHarness(t, reg)
	h.start("two-guids", "TwoGuids", "")
	st := h.wait("two-guids")
	parts := strings.Split(st.Output, ",")
	if len(parts) != 2 || !guidRE.MatchString(parts[0]) || !guidRE.MatchString(parts[1]) || parts[0] == parts[1] {
		t.Errorf("output %q, want two different GUIDs", st.Output)
	}
}

// TestCancellationWithPendingSyscall mirrors test_cancellation_with_pending_syscall:
// an instance cancelled while it waits after a system call fails as cancelled.
func TestCancellationWithPendingSyscall(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("SyscallCancel", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if _, err := ctx.NewGUID().Get(); err != nil {
			return "", err
		}
		_, err := ctx.WaitForEvent("never").Get()
		return "done", err
	})
	h := newHarness(t, reg)
	h.start("syscall-cancel", "SyscallCancel", "")
	h.awaitEvent("syscall-cancel", "ExternalSubscribed")
	h.cancel("syscall-cancel", "stop")
	h.wantCancelled("syscall-cancel", "stop")
}
