package durable

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Get on a Select loser returns a cancellation error at once instead of
// stalling the instance, and records nothing: the history is the one the
// same code writes without that Get.
func TestCancelledFutureGetReturnsCancellation(t *testing.T) {
	t.Parallel()
	orch := func(awaitLoser bool) OrchestrationFunc {
		return func(ctx *OrchestrationContext, _ string) (string, error) {
			act := ctx.ScheduleActivity("A", "")
			if ctx.Select(act, ctx.Timer(time.Second)) == 0 {
				return "won", nil
			}
			if !awaitLoser {
				return "lost", nil
			}
			_, err := act.Get()
			var ce *CancelledError
			if !errors.Is(err, ErrCancelled) || !errors.As(err, &ce) || ce.What != "activity" {
				return "", fmt.Errorf("Get on a cancelled future returned %v", err)
			}
			return "lost", nil
		}
	}
	h := hist{}.add(started("")).add(duroxide.ActivityScheduledEvent{Name: "A"}).add(duroxide.TimerCreatedEvent{FireAtMs: 1})
	fired := duroxide.TimerFired{Instance: "inst", ExecutionID: 1, ID: 3, FireAtMs: 1}
	plain, _ := turnWithin(t, h, orch(false), fired)
	e, res := turnWithin(t, h, orch(true), fired)
	if res.kind != turnCompleted || res.output != "lost" {
		t.Fatalf("result %+v: Get on a cancelled future did not return", res)
	}
	expect(t, kinds(e.delta), kinds(plain.delta))
	expect(t, kinds(e.delta), "4:TimerFired<3 5:ActivityCancelRequested<2")
}
