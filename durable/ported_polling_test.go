package durable_test

import (
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// Ports of duroxide's tests/runtime_options_test.rs and the runtime half of
// long_poll_tests.rs. duroxide sleeps dispatcher_min_poll_interval between
// empty polls; these dispatchers long-poll (Options.LongPollTimeout) and
// are woken by new work, so a start runs at once whatever the poll timeout.

// TestPollingFrequency mirrors test_default_polling_frequency,
// test_custom_polling_frequency, test_fast_polling and
// test_dispatcher_uses_long_polling: an orchestration with an activity
// completes well within the poll timeout (30s by default), so the
// dispatchers did not wait it out.
func TestPollingFrequency(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		poll time.Duration
	}{
		{"test_default_polling_frequency", 0},
		{"test_custom_polling_frequency", 50 * time.Millisecond},
		{"test_fast_polling", 10 * time.Millisecond},
		{"test_dispatcher_uses_long_polling", time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			reg := durable.NewRegistry().
				MustAddActivity("QuickTask", func(*durable.ActivityContext, string) (string, error) { return "done", nil }).
				MustAddOrchestration("TestOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
					return ctx.ScheduleActivity("QuickTask", "").Get()
				})
			env := durabletest.Start(t, reg, durabletest.WithOptions(durable.Options{LongPollTimeout: c.poll}),
				durabletest.WithTimeSkipping(false))
			if err := env.Client.StartOrchestration(t.Context(), "poll-"+c.name, "TestOrch", ""); err != nil {
				t.Fatal(err)
			}
			st, err := env.Client.WaitForOrchestration(t.Context(), "poll-"+c.name, 5*time.Second)
			if err != nil {
				t.Fatalf("not completed within 5s (the default poll timeout is 30s): %v", err)
			}
			mustComplete(t, st, "done")
		})
	}
}
