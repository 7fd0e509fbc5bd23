package durable_test

import (
	"fmt"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// Port of duroxide's tests/activity_routing_tests.rs.

// TestSameActivityNameAndInputRoutesCorrectlyAcrossRestart mirrors
// same_activity_name_and_input_routes_correctly_across_restart:
// two schedules of the same activity and input get their own results.
func TestSameActivityNameAndInputRoutesCorrectlyAcrossRestart(t *testing.T) {
	t.Parallel()
	calls := make(chan struct{}, 8)
	reg := func() *durable.Registry {
		return durable.NewRegistry().
			MustAddActivity("Task", func(*durable.ActivityContext, string) (string, error) {
				calls <- struct{}{}
				return fmt.Sprintf("R%d", len(calls)), nil
			}).
			MustAddOrchestration("SameActivityTwice", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
				r1, err := ctx.ScheduleActivity("Task", "same").Get()
				if err != nil {
					return "", err
				}
				if _, err := ctx.Timer(200 * msec).Get(); err != nil {
					return "", err
				}
				r2, err := ctx.ScheduleActivity("Task", "same").Get()
				return r1 + "," + r2, err
			})
	}
	h := newHarness(t, reg())
	h.start("inst-same-activity", "SameActivityTwice", "")
	h.awaitEvent("inst-same-activity", "TimerCreated")
	h.restart(reg(), durable.Options{})
	h.wantCompleted("inst-same-activity", "R1,R2")
	if len(calls) != 2 {
		t.Errorf("the activity ran %d times, want 2", len(calls))
	}
}
