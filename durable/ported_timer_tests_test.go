package durable_test

import (
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/timer_tests.rs.

func timerOrchestration(out string, delays ...time.Duration) durable.OrchestrationFunc {
	return func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		for _, d := range delays {
			if _, err := ctx.Timer(d).Get(); err != nil {
				return "", err
			}
		}
		return out, nil
	}
}

// TestSingleTimerFires mirrors single_timer_fires: the timer never fires before its
// delay has passed.
func TestSingleTimerFires(t *testing.T) {
	t.Parallel()
	const delay = 50 * time.Millisecond
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("OneTimer", timerOrchestration("done", delay)))
	begin := time.Now()
	h.start("inst-one", "OneTimer", "")
	h.wantCompleted("inst-one", "done")
	if elapsed := time.Since(begin); elapsed < delay {
		t.Errorf("completed after %v, before the %v timer was due", elapsed, delay)
	}
}

// TestMultipleTimersFireInOrder mirrors multiple_timers_fire_in_order: each timer is
// created after the previous fired, so their fire times follow the code's delays.
func TestMultipleTimersFireInOrder(t *testing.T) {
	t.Parallel()
	delays := []time.Duration{100 * msec, 50 * msec, 75 * msec}
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("MultiTimer", timerOrchestration("timers", delays...)))
	h.start("inst-multi", "MultiTimer", "")
	h.wantCompleted("inst-multi", "timers")
	var created []uint64
	for _, e := range h.history("inst-multi") {
		if k, ok := e.Kind.(duroxide.TimerCreatedEvent); ok {
			created = append(created, k.FireAtMs)
		}
	}
	if len(created) != 3 {
		t.Fatalf("%d TimerCreated events, want 3", len(created))
	}
	for i := 1; i < 3; i++ {
		if gap := time.Duration(created[i]-created[i-1]) * time.Millisecond; gap < delays[i] {
			t.Errorf("timer %d fires %v after timer %d; it was created after that one fired, so at least %v", i+1, gap, i, delays[i])
		}
	}
}

// TestTimerWithActivity mirrors timer_with_activity.
func TestTimerWithActivity(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("TestActivity", func(_ *durable.ActivityContext, in string) (string, error) { return "processed: " + in, nil }).
		MustAddOrchestration("TimerActivity", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			timer, act := ctx.Timer(50*msec), ctx.ScheduleActivity("TestActivity", "input")
			if _, err := timer.Get(); err != nil {
				return "", err
			}
			v, err := act.Get()
			return "timer: (), activity: " + v, err
		})
	h := newHarness(t, reg)
	h.start("inst-timer-activity", "TimerActivity", "")
	h.wantCompleted("inst-timer-activity", "timer: (), activity: processed: input")
}

// TestTimerRecoveryAfterCrashBeforeFire mirrors timer_recovery_after_crash_before_fire:
// the runtime stops while the timer is pending; a new runtime fires it.
func TestTimerRecoveryAfterCrashBeforeFire(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("TimerRecovery", timerOrchestration("timer-recovered", 300*msec))
	h := newHarness(t, reg)
	h.start("inst-timer-recovery", "TimerRecovery", "")
	h.awaitEvent("inst-timer-recovery", "TimerCreated")
	h.shutdown()
	if n := countEvents(h.history("inst-timer-recovery"), "TimerFired"); n != 0 {
		t.Fatalf("timer fired before the restart (%d TimerFired)", n)
	}
	h.restart(reg, durable.Options{})
	h.wantCompleted("inst-timer-recovery", "timer-recovered")
}

// TestTimerRecoveryAfterCrashAfterFire mirrors timer_recovery_after_crash_after_fire:
// the timer comes due while no runtime runs and fires once one starts.
func TestTimerRecoveryAfterCrashAfterFire(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("TimerRecovery", timerOrchestration("ok", 50*msec))
	h := newHarness(t, reg)
	h.start("inst-timer-after", "TimerRecovery", "")
	h.awaitEvent("inst-timer-after", "TimerCreated")
	h.shutdown()
	h.awaitDue() // past the fire time, with no runtime running
	h.restart(reg, durable.Options{})
	h.wantCompleted("inst-timer-after", "ok")
	if n := countEvents(h.history("inst-timer-after"), "TimerFired"); n != 1 {
		t.Errorf("%d TimerFired events, want 1", n)
	}
}

// TestZeroDurationTimer mirrors zero_duration_timer.
func TestZeroDurationTimer(t *testing.T) {
	t.Parallel()
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("ZeroTimer", timerOrchestration("zero-timer-fired", 0)))
	h.start("inst-zero", "ZeroTimer", "")
	h.wantCompleted("inst-zero", "zero-timer-fired")
}

// TestTimerCancellation mirrors timer_cancellation (despite its name, a plain 100ms
// timer that completes).
func TestTimerCancellation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("TimerCancel", timerOrchestration("timer-completed", 100*msec)))
	h.start("inst-cancel", "TimerCancel", "")
	h.wantCompleted("inst-cancel", "timer-completed")
}

// TestMultipleTimersRecoveryAfterCrash mirrors multiple_timers_recovery_after_crash:
// three pending timers survive a restart and all fire.
func TestMultipleTimersRecoveryAfterCrash(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("MultiTimerRecovery", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			t1, t2, t3 := ctx.Timer(100*msec), ctx.Timer(200*msec), ctx.Timer(300*msec)
			ctx.Join(t1, t2, t3)
			return "all-timers-fired", nil
		})
	h := newHarness(t, reg)
	h.start("inst-multi-recovery", "MultiTimerRecovery", "")
	h.awaitEvents("inst-multi-recovery", 1, 4)
	h.shutdown()
	h.restart(reg, durable.Options{})
	h.wantCompleted("inst-multi-recovery", "all-timers-fired")
	if n := countEvents(h.history("inst-multi-recovery"), "TimerFired"); n != 3 {
		t.Errorf("%d TimerFired events, want 3", n)
	}
}

// TestTimerFiresAtCorrectTimeAfterPreviousTimer mirrors
// timer_fires_at_correct_time_after_previous_timer: a timer created after real time
// has passed is due that long after the first one, not at a time computed from the
// start of the history, so a fast activity beats it.
func TestTimerFiresAtCorrectTimeAfterPreviousTimer(t *testing.T) {
	t.Parallel()
	const slow = 300 * time.Millisecond
	reg := durable.NewRegistry().
		MustAddActivity("SlowActivity", func(_ *durable.ActivityContext, in string) (string, error) {
			if in == "slow" {
				time.Sleep(slow) // sleep: the activity must take real time, which the next timer's due time must count from
			}
			return "activity_done", nil
		}).
		MustAddOrchestration("TimerFireTimeTest", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			if _, err := ctx.Timer(100 * msec).Get(); err != nil {
				return "", err
			}
			if _, err := ctx.ScheduleActivity("SlowActivity", "slow").Get(); err != nil {
				return "", err
			}
			timer, act := ctx.Timer(time.Second), ctx.ScheduleActivity("SlowActivity", "fast")
			if ctx.Select(timer, act) == 0 {
				return "timer_won", nil
			}
			return act.Get()
		})
	h := newHarness(t, reg)
	h.start("timer-fire-time-test", "TimerFireTimeTest", "")
	h.wantCompleted("timer-fire-time-test", "activity_done")
	var fires []uint64
	for _, e := range h.history("timer-fire-time-test") {
		if k, ok := e.Kind.(duroxide.TimerCreatedEvent); ok {
			fires = append(fires, k.FireAtMs)
		}
	}
	if len(fires) != 2 {
		t.Fatalf("%d TimerCreated events, want 2", len(fires))
	}
	// The second timer was created after the slow activity, so it is due at least
	// slow + 1s - 100ms after the first.
	if gap := time.Duration(fires[1]-fires[0]) * time.Millisecond; gap < slow+900*msec {
		t.Errorf("second timer due %v after the first, want at least %v", gap, slow+900*msec)
	}
}
