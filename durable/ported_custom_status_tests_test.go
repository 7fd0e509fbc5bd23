package durable_test

import (
	"strings"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// Ports of duroxide's tests/custom_status_tests.rs. duroxide's limit is 256 KiB.

const maxCustomStatusBytes = 256 * 1024

// wantCustomStatus checks the status a client reads; nil means none.
func wantCustomStatus(t *testing.T, st durable.OrchestrationStatus, want *string) {
	t.Helper()
	switch {
	case want == nil && st.CustomStatus != nil:
		t.Errorf("custom status %q, want none", *st.CustomStatus)
	case want != nil && (st.CustomStatus == nil || *st.CustomStatus != *want):
		t.Errorf("custom status %v, want %q", st.CustomStatus, *want)
	}
}

func strp(s string) *string { return &s }

// statusOrch registers fn with an Echo activity and runs it to a terminal state.
func statusOrch(t *testing.T, instance string, fn durable.OrchestrationFunc) (*harness, durable.OrchestrationStatus) {
	t.Helper()
	reg := durable.NewRegistry().
		MustAddActivity("Echo", func(_ *durable.ActivityContext, in string) (string, error) { return in, nil }).
		MustAddOrchestration("Status", fn)
	h := newHarness(t, reg)
	h.start(instance, "Status", "")
	return h, h.wait(instance)
}

// TestCustomStatusSetVisibleOnCompletion mirrors custom_status_set_visible_on_completion.
func TestCustomStatusSetVisibleOnCompletion(t *testing.T) {
	t.Parallel()
	_, st := statusOrch(t, "cs-set", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetCustomStatus("processing")
		return "done", nil
	})
	wantCustomStatus(t, st, strp("processing"))
}

// TestCustomStatusResetClearsToNone mirrors custom_status_reset_clears_to_none.
func TestCustomStatusResetClearsToNone(t *testing.T) {
	t.Parallel()
	_, st := statusOrch(t, "cs-reset", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetCustomStatus("temp")
		ctx.ResetCustomStatus()
		return "done", nil
	})
	wantCustomStatus(t, st, nil)
}

// TestCustomStatusLastWriteWins mirrors custom_status_last_write_wins.
func TestCustomStatusLastWriteWins(t *testing.T) {
	t.Parallel()
	_, st := statusOrch(t, "cs-lww", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		for _, s := range []string{"one", "two", "three"} {
			ctx.SetCustomStatus(s)
		}
		return "done", nil
	})
	wantCustomStatus(t, st, strp("three"))
}

// TestCustomStatusPersistsAcrossTurns mirrors custom_status_persists_across_turns.
func TestCustomStatusPersistsAcrossTurns(t *testing.T) {
	t.Parallel()
	_, st := statusOrch(t, "cs-turns", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetCustomStatus("step1")
		_, err := ctx.ScheduleActivity("Echo", "a").Get()
		return "done", err
	})
	wantCustomStatus(t, st, strp("step1"))
}

// TestCustomStatusUpdatedInLaterTurn mirrors custom_status_updated_in_later_turn.
func TestCustomStatusUpdatedInLaterTurn(t *testing.T) {
	t.Parallel()
	_, st := statusOrch(t, "cs-later", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetCustomStatus("before")
		if _, err := ctx.ScheduleActivity("Echo", "a").Get(); err != nil {
			return "", err
		}
		ctx.SetCustomStatus("after")
		return "done", nil
	})
	wantCustomStatus(t, st, strp("after"))
}

// TestCustomStatusNoneWhenNotSet mirrors custom_status_none_when_not_set.
func TestCustomStatusNoneWhenNotSet(t *testing.T) {
	t.Parallel()
	_, st := statusOrch(t, "cs-none", func(*durable.OrchestrationContext, string) (string, error) { return "done", nil })
	wantCustomStatus(t, st, nil)
}

// TestCustomStatusVisibleOnFailure mirrors custom_status_visible_on_failure.
func TestCustomStatusVisibleOnFailure(t *testing.T) {
	t.Parallel()
	_, st := statusOrch(t, "cs-fail", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetCustomStatus("failing")
		return "", &durable.TaskError{Message: "boom"}
	})
	if st.Status != durable.StatusFailed {
		t.Fatalf("status %v, want Failed", st.Status)
	}
	wantCustomStatus(t, st, strp("failing"))
}

// TestCustomStatusVersionIncrements mirrors custom_status_version_increments.
func TestCustomStatusVersionIncrements(t *testing.T) {
	t.Parallel()
	_, st := statusOrch(t, "cs-ver", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetCustomStatus("v1")
		if _, err := ctx.ScheduleActivity("Echo", "a").Get(); err != nil {
			return "", err
		}
		ctx.SetCustomStatus("v2")
		return "done", nil
	})
	if st.CustomStatusVersion < 2 {
		t.Errorf("custom status version %d, want at least 2", st.CustomStatusVersion)
	}
}

// TestCustomStatusExceedingSizeLimitFailsOrchestration mirrors
// custom_status_exceeding_size_limit_fails_orchestration.
func TestCustomStatusExceedingSizeLimitFailsOrchestration(t *testing.T) {
	t.Parallel()
	_, st := statusOrch(t, "cs-oversize", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetCustomStatus(strings.Repeat("x", maxCustomStatusBytes+1))
		return "should-not-reach", nil
	})
	if st.Status != durable.StatusFailed || !strings.Contains(st.FailureMessage(), "Custom status size") || !strings.Contains(st.FailureMessage(), "exceeds limit") {
		t.Fatalf("status %v output %q failure %q; want Failed with a custom status size error", st.Status, st.Output, st.FailureMessage())
	}
}

// TestCustomStatusAtSizeLimitSucceeds mirrors custom_status_at_size_limit_succeeds.
func TestCustomStatusAtSizeLimitSucceeds(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", maxCustomStatusBytes)
	_, st := statusOrch(t, "cs-exact", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetCustomStatus(big)
		return "done", nil
	})
	if st.Status != durable.StatusCompleted {
		t.Fatalf("status %v (%q), want Completed", st.Status, st.FailureMessage())
	}
	wantCustomStatus(t, st, &big)
}

// TestCustomStatusPersistsAcrossContinueAsNew mirrors
// custom_status_persists_across_continue_as_new.
func TestCustomStatusPersistsAcrossContinueAsNew(t *testing.T) {
	t.Parallel()
	h, st := statusOrch(t, "cs-can", func(ctx *durable.OrchestrationContext, input string) (string, error) {
		if input == "" {
			ctx.SetCustomStatus("carried")
			ctx.ContinueAsNew("second")
		}
		s, ok := ctx.CustomStatus()
		if !ok {
			return "none", nil
		}
		return s, nil
	})
	if st.Output != "carried" {
		t.Errorf("second execution saw custom status %q, want the carried one", st.Output)
	}
	wantCustomStatus(t, st, strp("carried"))
	if started := h.execHistory("cs-can", 2)[0].Kind; !strings.Contains(toJSON(t, started), `"initial_custom_status":"carried"`) {
		t.Errorf("execution 2 starts with %s, want initial_custom_status carried", toJSON(t, started))
	}
}

// TestCustomStatusResetAcrossContinueAsNew mirrors custom_status_reset_across_continue_as_new.
func TestCustomStatusResetAcrossContinueAsNew(t *testing.T) {
	t.Parallel()
	_, st := statusOrch(t, "cs-can-reset", func(ctx *durable.OrchestrationContext, input string) (string, error) {
		if input == "" {
			ctx.SetCustomStatus("temp")
			ctx.ResetCustomStatus()
			ctx.ContinueAsNew("second")
		}
		_, ok := ctx.CustomStatus()
		if ok {
			return "carried", nil
		}
		return "none", nil
	})
	if st.Output != "none" {
		t.Errorf("second execution output %q, want none (the status was reset)", st.Output)
	}
	wantCustomStatus(t, st, nil)
}

// TestCustomStatusGetReflectsSetAcrossTurns mirrors
// custom_status_get_reflects_set_across_turns.
func TestCustomStatusGetReflectsSetAcrossTurns(t *testing.T) {
	t.Parallel()
	_, st := statusOrch(t, "cs-get", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetCustomStatus("first")
		if _, err := ctx.ScheduleActivity("Echo", "a").Get(); err != nil {
			return "", err
		}
		s, _ := ctx.CustomStatus()
		return s, nil
	})
	if st.Output != "first" {
		t.Errorf("output %q, want the status set in the earlier turn", st.Output)
	}
}
