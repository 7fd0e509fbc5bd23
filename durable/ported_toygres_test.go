package durable_test

import (
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// TestTimerFiresAtCorrectTimeRegression mirrors timer_fires_at_correct_time_regression
// (scenarios/toygres.rs): a timer created after time has moved on is due its
// delay after the current time, not after the previous timer's fire time
// (duroxide once computed it from the last TimerFired and fired 33s early).
// Instead of a 2s activity, the clock is moved 10 minutes while the first
// activity runs.
func TestTimerFiresAtCorrectTimeRegression(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}, 1), make(chan struct{})
	env := durabletest.Start(t, durable.NewRegistry().
		MustAddActivity("SlowActivity", func(ctx *durable.ActivityContext, in string) (string, error) {
			if in == "slow" {
				started <- struct{}{}
				select {
				case <-release:
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}
			return "activity_done", nil
		}).
		MustAddOrchestration("TimerBugTest", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			if _, err := ctx.Timer(100 * time.Millisecond).Get(); err != nil {
				return "", err
			}
			if _, err := ctx.ScheduleActivity("SlowActivity", "slow").Get(); err != nil {
				return "", err
			}
			timer := ctx.Timer(time.Second)
			act := ctx.ScheduleActivity("SlowActivity", "fast")
			if ctx.Select(timer, act) == 0 {
				return "timer_won", nil
			}
			return act.Get()
		}), durabletest.WithTimeSkipping(false))
	if err := env.Client.StartOrchestration(t.Context(), "timer-bug-test", "TimerBugTest", ""); err != nil {
		t.Fatal(err)
	}
	<-started
	env.Advance(10 * time.Minute)
	close(release)
	mustComplete(t, env.Wait(t, "timer-bug-test"), "activity_done")
	var fired, second uint64
	for _, e := range read(t, env, "timer-bug-test") {
		switch k := e.Kind.(type) {
		case duroxide.TimerFiredEvent:
			fired = k.FireAtMs
		case duroxide.TimerCreatedEvent:
			if fired != 0 {
				second = k.FireAtMs
			}
		}
	}
	if fired == 0 || second == 0 || second-fired < uint64((10*time.Minute).Milliseconds()) {
		t.Fatalf("second timer due at %d, first fired at %d: want it due 1s after the moved clock, 10 minutes later", second, fired)
	}
}
