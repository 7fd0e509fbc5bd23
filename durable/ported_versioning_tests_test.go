package durable_test

import (
	"errors"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/versioning_tests.rs. duroxide's VersionPolicy (pinning a
// registry to an exact version) has no Go counterpart: the ports of policy tests pin
// the version where it is chosen instead (WithVersion on the start or the call).
// serde_boundary_v2_events needs duroxide's replay-version-test build feature.

func echoVersion(tag string) durable.OrchestrationFunc {
	return func(_ *durable.OrchestrationContext, input string) (string, error) { return tag + ":" + input, nil }
}

// startedVersion is the version recorded on an execution's OrchestrationStarted.
func (h *harness) startedVersion(instance string, exec uint64) string {
	h.t.Helper()
	k, ok := h.execHistory(instance, exec)[0].Kind.(duroxide.OrchestrationStartedEvent)
	if !ok {
		h.t.Fatalf("%s execution %d does not start with OrchestrationStarted", instance, exec)
	}
	return k.Version
}

// TestRuntimeStartVersionedStringUsesExplicitVersion mirrors
// runtime_start_versioned_string_uses_explicit_version (and the typed variant).
func TestRuntimeStartVersionedStringUsesExplicitVersion(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("Flow", echoVersion("v1")).
		MustAddOrchestrationVersion("Flow", "2.0.0", echoVersion("v2"))
	h := newHarness(t, reg)
	if err := h.client.StartOrchestration(h.ctx, "i1", "Flow", "x", durable.WithVersion("1.0.0")); err != nil {
		t.Fatal(err)
	}
	h.wantCompleted("i1", "v1:x")
	if v := h.startedVersion("i1", 1); v != "1.0.0" {
		t.Errorf("recorded version %q, want 1.0.0", v)
	}
}

// TestSubOrchestrationVersionedExplicitAndPolicy mirrors
// sub_orchestration_versioned_explicit_and_policy.
func TestSubOrchestrationVersionedExplicitAndPolicy(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("Child", echoVersion("c1")).
		MustAddOrchestrationVersion("Child", "2.0.0", echoVersion("c2")).
		MustAddOrchestration("Parent", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			a, err := ctx.ScheduleSubOrchestration("Child", "a", durable.WithVersion("1.0.0")).Get()
			if err != nil {
				return "", err
			}
			b, err := ctx.ScheduleSubOrchestration("Child", "b").Get()
			return a + "," + b, err
		})
	h := newHarness(t, reg)
	h.start("i3", "Parent", "")
	h.wantCompleted("i3", "c1:a,c2:b")
	if v1, v2 := h.startedVersion("i3::sub::2", 1), h.startedVersion("i3::sub::4", 1); v1 != "1.0.0" || v2 != "2.0.0" {
		t.Errorf("children recorded versions %q and %q, want 1.0.0 and 2.0.0", v1, v2)
	}
}

// TestDetachedVersionedUsesPolicyLatest mirrors detached_versioned_uses_policy_latest.
func TestDetachedVersionedUsesPolicyLatest(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("Leaf", echoVersion("l1")).
		MustAddOrchestrationVersion("Leaf", "2.0.0", echoVersion("l2")).
		MustAddOrchestration("Parent", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.StartOrchestration("child-1", "Leaf", "")
			return "ok", nil
		})
	h := newHarness(t, reg)
	h.start("i4", "Parent", "")
	h.wantCompleted("i4", "ok")
	h.wantCompleted("child-1", "l2:")
}

// TestContinueAsNewVersionedTypedExplicit mirrors continue_as_new_versioned_typed_explicit
// (and continue_as_new_upgrades_version_deterministically).
func TestContinueAsNewVersionedTypedExplicit(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("Up", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.ContinueAsNew("from_v1_to_v2", durable.WithVersion("2.0.0"))
			return "", nil
		}).
		MustAddOrchestrationVersion("Up", "2.0.0", func(_ *durable.OrchestrationContext, in string) (string, error) {
			return "v2_done:" + in, nil
		})
	h := newHarness(t, reg)
	if err := h.client.StartOrchestration(h.ctx, "i5", "Up", "seed", durable.WithVersion("1.0.0")); err != nil {
		t.Fatal(err)
	}
	h.wantCompleted("i5", "v2_done:from_v1_to_v2")
	if v1, v2 := h.startedVersion("i5", 1), h.startedVersion("i5", 2); v1 != "1.0.0" || v2 != "2.0.0" {
		t.Errorf("executions recorded versions %q and %q, want 1.0.0 then 2.0.0", v1, v2)
	}
}

// TestStartUsesLatestVersion mirrors start_uses_latest_version.
func TestStartUsesLatestVersion(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("OrderFlow", echoVersion("v1")).
		MustAddOrchestrationVersion("OrderFlow", "1.1.0", echoVersion("v1.1"))
	h := newHarness(t, reg)
	h.start("inst-vlatest", "OrderFlow", "X")
	h.wantCompleted("inst-vlatest", "v1.1:X")
	if v := h.startedVersion("inst-vlatest", 1); v != "1.1.0" {
		t.Errorf("recorded version %q, want 1.1.0", v)
	}
}

// TestPolicyExactPinsStart mirrors policy_exact_pins_start, pinning on the start.
func TestPolicyExactPinsStart(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("OrderFlow", echoVersion("v1")).
		MustAddOrchestrationVersion("OrderFlow", "1.1.0", echoVersion("v1.1"))
	h := newHarness(t, reg)
	if err := h.client.StartOrchestration(h.ctx, "inst-vpin", "OrderFlow", "Y", durable.WithVersion("1.0.0")); err != nil {
		t.Fatal(err)
	}
	h.wantCompleted("inst-vpin", "v1:Y")
}

// TestParentCallsChildUpgradeChildAndVerifyLatestUsed mirrors
// parent_calls_child_upgrade_child_and_verify_latest_used.
func TestParentCallsChildUpgradeChildAndVerifyLatestUsed(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("Child", echoVersion("cv1")).
		MustAddOrchestrationVersion("Child", "1.1.0", echoVersion("cv1.1")).
		MustAddOrchestration("Parent", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			return ctx.ScheduleSubOrchestration("Child", input).Get()
		})
	h := newHarness(t, reg)
	h.start("inst-parent-child-upgrade", "Parent", "inp")
	h.wantCompleted("inst-parent-child-upgrade", "cv1.1:inp")
}

// TestInFlightExecutionKeepsItsVersion checks what duroxide's version pinning is for
// (scenarios/rolling_deployment.rs): an execution started on 1.0.0 replays on 1.0.0
// after a deployment that adds 2.0.0, while new starts get 2.0.0.
func TestInFlightExecutionKeepsItsVersion(t *testing.T) {
	t.Parallel()
	waiter := func(tag string) durable.OrchestrationFunc {
		return func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			v, err := ctx.WaitForEvent("go").Get()
			return tag + ":" + v, err
		}
	}
	regV1 := durable.NewRegistry().MustAddOrchestration("Flow", waiter("v1"))
	h := newHarness(t, regV1)
	h.start("inflight", "Flow", "")
	h.awaitEvent("inflight", "ExternalSubscribed")
	h.restart(durable.NewRegistry().
		MustAddOrchestration("Flow", waiter("v1")).
		MustAddOrchestrationVersion("Flow", "2.0.0", waiter("v2")), durable.Options{})
	h.raise("inflight", "go", "x")
	h.wantCompleted("inflight", "v1:x")
	h.start("fresh", "Flow", "")
	h.awaitEvent("fresh", "ExternalSubscribed")
	h.raise("fresh", "go", "y")
	h.wantCompleted("fresh", "v2:y")
}

// TestRegisterDefaultIs100 mirrors register_default_is_1_0_0_and_list_versions.
func TestRegisterDefaultIs100(t *testing.T) {
	t.Parallel()
	if durable.DefaultVersion != "1.0.0" {
		t.Errorf("DefaultVersion %q, want 1.0.0", durable.DefaultVersion)
	}
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("OrderFlow", echoVersion("v")))
	h.start("default-version", "OrderFlow", "")
	h.wantCompleted("default-version", "v:")
	if v := h.startedVersion("default-version", 1); v != "1.0.0" {
		t.Errorf("recorded version %q, want 1.0.0", v)
	}
}

// TestDuplicateVersionReturnsError mirrors duplicate_default_version_returns_error and
// duplicate_specific_version_returns_error.
func TestDuplicateVersionReturnsError(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("OrderFlow", echoVersion("a"))
	if err := reg.AddOrchestration("OrderFlow", echoVersion("b")); !errors.Is(err, duroxide.ErrConflict) {
		t.Errorf("second default registration: %v, want ErrConflict", err)
	}
	reg.MustAddOrchestrationVersion("OrderFlow", "2.0.0", echoVersion("c"))
	if err := reg.AddOrchestrationVersion("OrderFlow", "2.0.0", echoVersion("d")); !errors.Is(err, duroxide.ErrConflict) {
		t.Errorf("second 2.0.0 registration: %v, want ErrConflict", err)
	}
	if err := reg.AddOrchestrationVersion("OrderFlow", "not-semver", echoVersion("e")); !errors.Is(err, duroxide.ErrInvalidInput) {
		t.Errorf("non-semver version: %v, want ErrInvalidInput", err)
	}
}

// TestResolveHandlerExactMissingReturnsNone mirrors resolve_handler_exact_missing_returns_none:
// starting an unregistered version never runs another one.
func TestResolveHandlerExactMissingReturnsNone(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("OrderFlow", echoVersion("v1"))
	h := newHarnessWith(t, reg, durable.Options{UnregisteredBackoffBase: 10 * msec, UnregisteredBackoffMax: 20 * msec, MaxAttempts: 3})
	if err := h.client.StartOrchestration(h.ctx, "missing-version", "OrderFlow", "", durable.WithVersion("9.9.9")); err != nil {
		t.Fatal(err)
	}
	st := h.wait("missing-version")
	if st.Status != durable.StatusFailed || st.Output != "" {
		t.Errorf("status %v output %q, want a failure (the 9.9.9 handler does not exist)", st.Status, st.Output)
	}
}
