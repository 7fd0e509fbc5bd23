package durable_test

import (
	"errors"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/recovery_tests.rs. The Rust file runs one scenario on
// two storage setups (file and in-memory SQLite); here the storage is the harness's
// (miniredis, or the Redis / Cluster named by DUROXIDE_REDIS_URL / _CLUSTER).

// portedRecoveryRegistry registers the activities and orchestration of the
// recovery ports.
func portedRecoveryRegistry() *durable.Registry {
	return durable.NewRegistry().
		MustAddActivity("Step", func(_ *durable.ActivityContext, in string) (string, error) { return in, nil }).
		MustAddOrchestration("RecoveryTest", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			out := ""
			for i, step := range []string{"1", "2", "3", "4"} {
				if i == 2 {
					if _, err := ctx.WaitForEvent("Resume").Get(); err != nil {
						return "", err
					}
				}
				s, err := ctx.ScheduleActivity("Step", step).Get()
				if err != nil {
					return "", err
				}
				out += s
			}
			return out, nil
		})
}

func countScheduledStep(hist []duroxide.Event, input string) int {
	n := 0
	for _, e := range hist {
		if k, ok := e.Kind.(duroxide.ActivityScheduledEvent); ok && k.Name == "Step" && k.Input == input {
			n++
		}
	}
	return n
}

// recoverAcrossRestart runs instance to the Resume wait, restarts the runtime,
// re-sends the start (which must be ignored) and resumes: every step runs once.
func recoverAcrossRestart(t *testing.T, h *harness, instance string) {
	t.Helper()
	h.start(instance, "RecoveryTest", "")
	h.awaitEvent(instance, "ExternalSubscribed")
	pre := h.history(instance)
	if countScheduledStep(pre, "1") != 1 || countScheduledStep(pre, "2") != 1 || countScheduledStep(pre, "3") != 0 {
		t.Fatalf("%s before the restart: steps scheduled 1:%d 2:%d 3:%d, want 1, 1, 0", instance,
			countScheduledStep(pre, "1"), countScheduledStep(pre, "2"), countScheduledStep(pre, "3"))
	}
	h.restart(portedRecoveryRegistry(), durable.Options{})
	// our client refuses the second start (duroxide's returns Ok): the
	// start message duroxide's client sends goes straight to the provider
	if err := h.client.StartOrchestration(h.ctx, instance, "RecoveryTest", ""); !errors.Is(err, durable.ErrAlreadyExists) {
		t.Fatalf("second start of %s = %v, want ErrAlreadyExists", instance, err)
	}
	h.enqueue(duroxide.StartOrchestration{Instance: instance, Orchestration: "RecoveryTest", ExecutionID: duroxide.InitialExecutionID})
	h.raise(instance, "Resume", "go")
	h.wantCompleted(instance, "1234")
	post := h.history(instance)
	for _, step := range []string{"1", "2", "3", "4"} {
		if n := countScheduledStep(post, step); n != 1 {
			t.Errorf("%s: step %s scheduled %d times, want once", instance, step, n)
		}
	}
}

// TestRecoveryAcrossRestart mirrors recovery_across_restart_sqlite_provider (and
// _sqlite_memory).
func TestRecoveryAcrossRestart(t *testing.T) {
	t.Parallel()
	h := newHarness(t, portedRecoveryRegistry())
	recoverAcrossRestart(t, h, "inst-recover-1")
}

// TestRecoveryMultipleOrchestrations mirrors recovery_multiple_orchestrations_sqlite_provider.
func TestRecoveryMultipleOrchestrations(t *testing.T) {
	t.Parallel()
	h := newHarness(t, portedRecoveryRegistry())
	instances := []string{"inst-rec-a", "inst-rec-b", "inst-rec-c"}
	for _, inst := range instances {
		h.start(inst, "RecoveryTest", "")
	}
	for _, inst := range instances {
		h.awaitEvent(inst, "ExternalSubscribed")
	}
	h.restart(portedRecoveryRegistry(), durable.Options{})
	for _, inst := range instances {
		h.raise(inst, "Resume", "go")
	}
	for _, inst := range instances {
		h.wantCompleted(inst, "1234")
		if n := countEvents(h.history(inst), "ActivityScheduled"); n != 4 {
			t.Errorf("%s: %d activities scheduled, want 4", inst, n)
		}
	}
}
