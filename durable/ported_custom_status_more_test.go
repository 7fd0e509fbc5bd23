package durable_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// More ports of duroxide's tests/custom_status_tests.rs.

// TestCustomStatusGetReflectsCarryForwardAfterCAN mirrors
// custom_status_get_reflects_carry_forward_after_can: CustomStatus reads
// what the previous execution left (a reset carried as none), also on
// replay.
func TestCustomStatusGetReflectsCarryForwardAfterCAN(t *testing.T) {
	t.Parallel()
	read := func(ctx *durable.OrchestrationContext) string {
		if s, ok := ctx.CustomStatus(); ok {
			return s
		}
		return "<none>"
	}
	env := durabletest.Start(t, durable.NewRegistry().
		MustAddActivity("Echo", func(_ *durable.ActivityContext, in string) (string, error) { return in, nil }).
		MustAddOrchestration("CANGetter", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			check := func(step, want string) error {
				if got := read(ctx); got != want {
					return fmt.Errorf("iteration %s, %s: custom status %q, want %q", in, step, got, want)
				}
				return nil
			}
			var err error
			switch in {
			case "0":
				err = check("initial", "<none>")
				ctx.SetCustomStatus("from-first")
				if err == nil {
					err = check("after set", "from-first")
				}
				if err == nil {
					ctx.ContinueAsNew("1")
				}
			case "1":
				err = check("carried", "from-first")
				ctx.ResetCustomStatus()
				if err == nil {
					err = check("after reset", "<none>")
				}
				if err == nil {
					ctx.ContinueAsNew("2")
				}
			case "2":
				if err = check("carried reset", "<none>"); err == nil {
					ctx.SetCustomStatus("from-third")
					ctx.ContinueAsNew("3")
				}
			default:
				if err = check("carried", "from-third"); err != nil {
					return "", err
				}
				if _, err := ctx.ScheduleActivity("Echo", "ping").Get(); err != nil {
					return "", err
				}
				if err = check("after replay", "from-third"); err != nil {
					return "", err
				}
				return "done", nil
			}
			return "", err
		}))
	mustComplete(t, env.StartAndWait(t, "cs-can-get", "CANGetter", "0"), "done")
}

// TestCustomStatusSizeLimitPreciseBoundary mirrors custom_status_size_limit_precise_boundary.
func TestCustomStatusSizeLimitPreciseBoundary(t *testing.T) {
	t.Parallel()
	set := func(n int) durable.OrchestrationFunc {
		return func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetCustomStatus(strings.Repeat("x", n))
			return "ok", nil
		}
	}
	env := durabletest.Start(t, durable.NewRegistry().
		MustAddOrchestration("BelowLimit", set(durable.MaxCustomStatusBytes-1)).
		MustAddOrchestration("AtLimit", set(durable.MaxCustomStatusBytes)).
		MustAddOrchestration("AboveLimit", set(durable.MaxCustomStatusBytes+1)))
	mustComplete(t, env.StartAndWait(t, "cs-below", "BelowLimit", ""), "ok")
	mustComplete(t, env.StartAndWait(t, "cs-at", "AtLimit", ""), "ok")
	st := env.StartAndWait(t, "cs-above", "AboveLimit", "")
	if msg := st.FailureMessage(); st.Status != durable.StatusFailed || !strings.Contains(msg, "Custom status size") || !strings.Contains(msg, "exceeds limit") {
		t.Fatalf("status %v %q, want a failure naming the custom status size limit", st.Status, msg)
	}
}
