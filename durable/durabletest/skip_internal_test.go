package durabletest

import (
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// A running activity's real time is never skipped: while it runs, the
// deadline timer raced against it must not fire, however many times
// skipping looks.
func TestDurabletestSkipNotWhileActivityRuns(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}), make(chan struct{})
	reg := durable.NewRegistry()
	reg.MustAddActivity("Slow", func(*durable.ActivityContext, string) (string, error) {
		close(started)
		<-release
		return "done", nil
	})
	reg.MustAddOrchestration("Race", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		work := ctx.ScheduleActivity("Slow", "")
		if ctx.Select(work, ctx.Timer(time.Hour)) == 1 {
			return "timer", nil
		}
		return work.Get()
	})
	env := Start(t, reg)
	if err := env.Client.StartOrchestration(t.Context(), "race", "Race", ""); err != nil {
		t.Fatal(err)
	}
	go func() {
		<-started
		// Let skipping look at least a few times while the activity runs.
		from := env.skipChecks.Load()
		for delay := time.Millisecond; env.skipChecks.Load() < from+5; delay = min(2*delay, 20*time.Millisecond) {
			select {
			case <-env.stop:
				return
			case <-time.After(delay):
			}
		}
		close(release)
	}()
	if st := env.Wait(t, "race"); st.Status != durable.StatusCompleted || st.Output != "done" {
		t.Fatalf("status %v output %q %s: the timer fired while the activity ran", st.Status, st.Output, st.FailureMessage())
	}
}
