package durable_test

import (
	"encoding/json"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// More ports of duroxide's tests/versioning_tests.rs.

// TestRuntimeStartVersionedTypedUsesExplicitVersion mirrors
// runtime_start_versioned_typed_uses_explicit_version.
func TestRuntimeStartVersionedTypedUsesExplicitVersion(t *testing.T) {
	t.Parallel()
	version := func(n int) durable.OrchestrationFunc {
		return durable.Orchestration(func(*durable.OrchestrationContext, int) (int, error) { return n, nil })
	}
	env := durabletest.Start(t, durable.NewRegistry().MustAddOrchestration("T", version(1)).MustAddOrchestrationVersion("T", "2.0.0", version(2)))
	if err := env.Client.StartOrchestrationJSON(t.Context(), "i2", "T", 0, durable.WithVersion("1.0.0")); err != nil {
		t.Fatal(err)
	}
	var got int
	if st := env.Wait(t, "i2"); st.DecodeOutput(&got) != nil || got != 1 {
		t.Fatalf("status %v output %q, want 1 (version 1.0.0 as asked, not the latest)", st.Status, st.Output)
	}
}

// TestSubOrchestrationUsesLatestByDefaultAndPinnedWhenSet mirrors
// sub_orchestration_uses_latest_by_default_and_pinned_when_set. duroxide
// pins the child with a registry version policy; Go has none, the parent
// names the version (WithVersion).
func TestSubOrchestrationUsesLatestByDefaultAndPinnedWhenSet(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, durable.NewRegistry().
		MustAddOrchestration("ChildFlow", func(_ *durable.OrchestrationContext, in string) (string, error) { return "c1:" + in, nil }).
		MustAddOrchestrationVersion("ChildFlow", "1.1.0", func(_ *durable.OrchestrationContext, in string) (string, error) { return "c1.1:" + in, nil }).
		MustAddOrchestration("ParentFlow", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			var opts []durable.OrchestrationOption
			if in == "Q" {
				opts = append(opts, durable.WithVersion("1.0.0"))
			}
			return ctx.ScheduleSubOrchestration("ChildFlow", in, opts...).Get()
		}))
	mustComplete(t, env.StartAndWait(t, "inst-child-latest", "ParentFlow", "Z"), "c1.1:Z")
	mustComplete(t, env.StartAndWait(t, "inst-child-pinned", "ParentFlow", "Q"), "c1:Q")
}

// TestRegisterVersionsLatestIsHighest mirrors register_multiple_versions_latest_is_highest
// and non_monotonic_registration_panics.
//
// Differs from duroxide on purpose: registering an older version after a
// newer one panics there; here the registry keeps versions sorted, so the
// order of registration does not matter and the highest is the latest.
func TestRegisterVersionsLatestIsHighest(t *testing.T) {
	t.Parallel()
	echo := func(v string) durable.OrchestrationFunc {
		return func(*durable.OrchestrationContext, string) (string, error) { return v, nil }
	}
	for _, c := range []struct {
		name  string
		order []string
	}{
		{"register_multiple_versions_latest_is_highest", []string{"1.0.0", "1.1.0", "2.0.0"}},
		{"non_monotonic_registration_panics", []string{"2.0.0", "1.1.0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			reg := durable.NewRegistry()
			for _, v := range c.order {
				if err := reg.AddOrchestrationVersion("OrderFlow", v, echo(v)); err != nil {
					t.Fatalf("register %s: %v", v, err)
				}
			}
			env := durabletest.Start(t, reg)
			mustComplete(t, env.StartAndWait(t, "latest", "OrderFlow", ""), "2.0.0")
			for _, v := range c.order {
				mustComplete(t, env.StartAndWait(t, "pinned-"+v, "OrderFlow", "", durable.WithVersion(v)), v)
			}
		})
	}
}

// TestSerdeBoundaryV2Events mirrors serde_boundary_v2_events (without
// duroxide's replay-version-test feature): event kinds of a future format
// do not decode.
func TestSerdeBoundaryV2Events(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{`"type":"ExternalSubscribed2","name":"x","topic":"y"}`, `"type":"ExternalEvent2","name":"x","topic":"y","data":"payload"}`} {
		var e duroxide.Event
		if err := json.Unmarshal([]byte(eventEnvelope+kind), &e); err == nil {
			t.Errorf("%s decoded as %#v, want an error", kind, e.Kind)
		}
	}
}
