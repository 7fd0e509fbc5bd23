package durable_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// Ports of duroxide's tests/scenarios/single_thread.rs and
// test_syscalls_work_in_single_thread_mode (system_calls_test.rs). duroxide
// runs them on tokio's current-thread runtime; Go's scheduler cannot be
// pinned per test (GOMAXPROCS is process-wide), so the counterpart is one
// orchestration and one worker slot (OrchestrationConcurrency and
// WorkerConcurrency 1), the setting whose deadlocks these guard against.

// TestSingleThread runs each scenario on a 1x1 runtime.
func TestSingleThread(t *testing.T) {
	t.Parallel()
	add := func(_ *durable.ActivityContext, in string) (string, error) {
		n, _ := strconv.Atoi(in)
		return strconv.Itoa(n + 1), nil
	}
	cases := []struct {
		name, input, want string
		orch              durable.OrchestrationFunc
		instances         int
	}{
		{"single_thread_basic_orchestration", "hello", "echo: hello", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			return ctx.ScheduleActivity("Echo", in).Get()
		}, 1},
		{"single_thread_sequential_activities", "0", "3", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			r := in
			for range 3 {
				var err error
				if r, err = ctx.ScheduleActivity("Add", r).Get(); err != nil {
					return "", err
				}
			}
			return r, nil
		}, 1},
		{"single_thread_timer_handling", "", "timer_done", timerOrchestration("timer_done", 50*time.Millisecond), 1},
		{"single_thread_continue_as_new", "0", "done:3", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			n, _ := strconv.Atoi(in)
			if n < 3 {
				ctx.ContinueAsNew(strconv.Itoa(n + 1))
				return "", nil
			}
			return "done:" + in, nil
		}, 1},
		{"single_thread_concurrent_orchestrations", "", "", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			return ctx.ScheduleActivity("Process", in).Get()
		}, 3},
		{"test_syscalls_work_in_single_thread_mode", "", "ok", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			for range 3 {
				if _, err := ctx.NewGUID().Get(); err != nil {
					return "", err
				}
				if _, err := ctx.UTCNow().Get(); err != nil {
					return "", err
				}
			}
			return "ok", nil
		}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			reg := durable.NewRegistry().
				MustAddActivity("Echo", prefixedActivity("echo")).
				MustAddActivity("Add", add).
				MustAddActivity("Process", prefixActivity("processed")).
				MustAddOrchestration("O", c.orch)
			env := durabletest.Start(t, reg, durabletest.WithOptions(durable.Options{
				LongPollTimeout: 100 * time.Millisecond, OrchestrationConcurrency: 1, WorkerConcurrency: 1}))
			if c.instances == 1 {
				mustComplete(t, env.StartAndWait(t, "st-"+c.name, "O", c.input), c.want)
				return
			}
			for i := range c.instances {
				if err := env.Client.StartOrchestration(t.Context(), "st-"+strconv.Itoa(i), "O", strconv.Itoa(i)); err != nil {
					t.Fatal(err)
				}
			}
			for i := range c.instances {
				mustComplete(t, env.Wait(t, "st-"+strconv.Itoa(i)), "processed:"+strconv.Itoa(i))
			}
		})
	}
}
