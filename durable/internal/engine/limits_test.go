package engine

import (
	"strings"
	"testing"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// payloadTurn runs fn's first turn with a payload limit of 8 bytes.
func payloadTurn(fn Func) (*Engine, turnResult) {
	h := hist{}.add(started("in"))
	e := engineAt(h, len(h))
	e.maxPayload = 8
	e.prepCompletions(nil)
	return e, e.execute(fn, "in", "O", "1.0.0")
}

func TestPayloadOverTheLimitFailsTheTurnUnrecorded(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		fn   Func
		want string
	}{
		"activity input": {func(c *Context, _ string) (string, error) {
			return c.ScheduleActivity("A", "123456789", nil, nil).Get()
		}, "Activity 'A' input size (9 bytes) exceeds limit (8 bytes)"},
		"child input": {func(c *Context, _ string) (string, error) {
			return c.ScheduleSubOrchestration("Kid", "123456789", "", nil).Get()
		}, "Orchestration 'Kid' input size (9 bytes) exceeds limit (8 bytes)"},
		"detached input": {func(c *Context, _ string) (string, error) {
			c.StartOrchestration("D", "d", "123456789", nil)
			return "done", nil
		}, "Orchestration 'D' input size (9 bytes) exceeds limit (8 bytes)"},
		"continue-as-new input": {func(c *Context, _ string) (string, error) {
			c.ContinueAsNew("123456789", nil)
			return "", nil
		}, "ContinueAsNew input size (9 bytes) exceeds limit (8 bytes)"},
		"output": {func(*Context, string) (string, error) { return "123456789", nil },
			"Orchestration output size (9 bytes) exceeds limit (8 bytes)"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e, res := payloadTurn(tc.fn)
			a := res.details.Application
			if res.kind != turnFailed || a == nil || a.Kind.Variant != duroxide.AppErrorOrchestrationFailed || a.Message != tc.want {
				t.Fatalf("result %+v %+v, want failure %q", res, res.details, tc.want)
			}
			if got := kinds(e.turn.delta); strings.Contains(got, "Scheduled") || strings.Contains(got, "Chained") {
				t.Fatalf("the oversized action was recorded: %s", got)
			}
		})
	}
}

func TestPayloadAtTheLimitPasses(t *testing.T) {
	t.Parallel()
	e, res := payloadTurn(func(c *Context, _ string) (string, error) {
		c.ScheduleActivity("A", "12345678", nil, nil)
		return "12345678", nil
	})
	if res.kind != turnCompleted || !strings.Contains(kinds(e.turn.delta), "ActivityScheduled") {
		t.Fatalf("result %+v, delta %s", res, kinds(e.turn.delta))
	}
}
