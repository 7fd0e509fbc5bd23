package durable_test

import (
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/unregistered_backoff_tests.rs.

// fastPoison are the options of these tests: three attempts with a short
// unregistered backoff, so unregistered work is poisoned quickly.
func fastPoison() durabletest.Option {
	return durabletest.WithOptions(durable.Options{
		LongPollTimeout: 100 * time.Millisecond, MaxAttempts: 3,
		UnregisteredBackoffBase: 10 * time.Millisecond, UnregisteredBackoffMax: 50 * time.Millisecond,
	})
}

// wantPoisoned checks instance failed with a Poison error whose attempt
// count is over its maximum, recorded in its history too.
func wantPoisoned(t *testing.T, env *durabletest.Env, instance string, st durable.OrchestrationStatus) {
	t.Helper()
	if st.Status != durable.StatusFailed || st.Failure == nil || st.Failure.Poison == nil {
		t.Fatalf("%s: status %v failure %+v, want Poison", instance, st.Status, st.Failure)
	}
	if p := st.Failure.Poison; p.AttemptCount <= p.MaxAttempts {
		t.Fatalf("%s: poisoned at attempt %d of max %d", instance, p.AttemptCount, p.MaxAttempts)
	}
	if !hasEvent(read(t, env, instance), func(k duroxide.EventKind) bool {
		f, ok := k.(duroxide.OrchestrationFailedEvent)
		return ok && f.Details.Poison != nil
	}) {
		t.Fatalf("%s: no OrchestrationFailed with Poison details in history", instance)
	}
}

// TestUnknownOrchestrationFailsWithPoison mirrors unknown_orchestration_fails_with_poison:
// an unknown name and an unknown version of a known name are both poisoned.
func TestUnknownOrchestrationFailsWithPoison(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestrationVersion("VersionedOrch", "1.0.0", prefixed("v1"))
	env := durabletest.Start(t, reg, fastPoison())
	if err := env.Client.StartOrchestration(t.Context(), "inst-unknown-name", "DoesNotExist", ""); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.StartOrchestration(t.Context(), "inst-unknown-version", "VersionedOrch", "input", durable.WithVersion("9.9.9")); err != nil {
		t.Fatal(err)
	}
	for _, instance := range []string{"inst-unknown-name", "inst-unknown-version"} {
		wantPoisoned(t, env, instance, env.Wait(t, instance))
	}
}

// TestUnknownActivityFailsWithPoison mirrors unknown_activity_fails_with_poison:
// the orchestration returning the poisoned activity's error fails with the
// Poison details.
func TestUnknownActivityFailsWithPoison(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("SimpleOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.ScheduleActivity("UnknownActivity", "input").Get()
	})
	env := durabletest.Start(t, reg, fastPoison())
	st := env.StartAndWait(t, "inst-activity-unknown", "SimpleOrch", "")
	if st.Status != durable.StatusFailed || st.Failure == nil || st.Failure.Poison == nil {
		t.Fatalf("status %v failure %+v, want Poison", st.Status, st.Failure)
	}
}

// TestUnregisteredBackoffDelays mirrors test_backoff_calculation and
// test_backoff_custom_config: base * 2^(attempt-1), capped at the max.
func TestUnregisteredBackoffDelays(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		base, max time.Duration
		want      map[uint32]time.Duration
	}{
		{"test_backoff_calculation", time.Second, time.Minute, map[uint32]time.Duration{
			1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 8 * time.Second, 5: 16 * time.Second,
			6: 32 * time.Second, 7: time.Minute, 8: time.Minute, 10: time.Minute}},
		{"test_backoff_custom_config", 100 * msec, 500 * msec, map[uint32]time.Duration{
			1: 100 * msec, 2: 200 * msec, 3: 400 * msec, 4: 500 * msec, 5: 500 * msec, 10: 500 * msec}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := durable.Options{UnregisteredBackoffBase: c.base, UnregisteredBackoffMax: c.max}
			for attempt, want := range c.want {
				if got := durable.UnregisteredDelay(o, attempt); got != want {
					t.Errorf("delay at attempt %d = %v, want %v", attempt, got, want)
				}
			}
		})
	}
}

// TestContinueAsNewToMissingVersionFailsWithPoison mirrors
// continue_as_new_to_missing_version_fails_with_poison.
func TestContinueAsNewToMissingVersionFailsWithPoison(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestrationVersion("CanToMissing", "1.0.0", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.ContinueAsNew("new-input", durable.WithVersion("3.0.0"))
		return "", nil
	})
	env := durabletest.Start(t, reg, fastPoison())
	if err := env.Client.StartOrchestration(t.Context(), "can-missing-test", "CanToMissing", "start", durable.WithVersion("1.0.0")); err != nil {
		t.Fatal(err)
	}
	st := env.Wait(t, "can-missing-test")
	if st.Status != durable.StatusFailed || st.Failure == nil || st.Failure.Poison == nil {
		t.Fatalf("status %v failure %+v, want Poison", st.Status, st.Failure)
	}
}

// TestDeletePoisonedOrchestration mirrors delete_poisoned_orchestration: a
// poisoned instance is terminal, so it deletes without force.
func TestDeletePoisonedOrchestration(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, durable.NewRegistry(), fastPoison())
	const instance = "delete-after-poison"
	if err := env.Client.StartOrchestration(t.Context(), instance, "UnregisteredOrch", "input"); err != nil {
		t.Fatal(err)
	}
	wantPoisoned(t, env, instance, env.Wait(t, instance))
	if _, err := env.Client.Admin().DeleteInstance(t.Context(), instance, false); err != nil {
		t.Fatalf("delete without force: %v", err)
	}
	if st := status(t, env, instance); st.Status != durable.StatusNotFound {
		t.Fatalf("after delete: %v, want NotFound", st.Status)
	}
}
