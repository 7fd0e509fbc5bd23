package durable_test

import (
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// Ports of duroxide's tests/dispatcher_queues_fs.rs.

// TestDispatcherQueues mirrors dispatcher_enqueues_timer_schedule_then_completes
// and dispatcher_enqueues_start_orchestration_to_orch_queue.
func TestDispatcherQueues(t *testing.T) {
	t.Parallel()
	t.Run("dispatcher_enqueues_timer_schedule_then_completes", func(t *testing.T) {
		t.Parallel()
		env := durabletest.Start(t, durable.NewRegistry().MustAddOrchestration("OneTimer", timerOrchestration("ok", 50*time.Millisecond)))
		mustComplete(t, env.StartAndWait(t, "inst-disp-timer", "OneTimer", ""), "ok")
		if n := countEvents(read(t, env, "inst-disp-timer"), "TimerFired"); n != 1 {
			t.Fatalf("%d TimerFired, want 1", n)
		}
	})
	t.Run("dispatcher_enqueues_start_orchestration_to_orch_queue", func(t *testing.T) {
		t.Parallel()
		env := durabletest.Start(t, durable.NewRegistry().
			MustAddOrchestration("Child", func(_ *durable.OrchestrationContext, in string) (string, error) { return in, nil }).
			MustAddOrchestration("Parent", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
				ctx.StartOrchestration("W1", "Child", "A")
				return "scheduled", nil
			}))
		mustComplete(t, env.StartAndWait(t, "inst-parent", "Parent", ""), "scheduled")
		mustComplete(t, env.Wait(t, "W1"), "A")
	})
}
