package durable_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/registry_tests.rs. Go's Registry has no
// builder, merge, introspection (list_names, has, count, list_versions) or
// version policy: a library composes by registering into the caller's
// registry, and what a registry holds is observed by running it or by
// registering again (a duplicate is an ErrConflict). Those Rust-only tests
// are n/a in the table.

func prefixed(prefix string) durable.OrchestrationFunc {
	return func(_ *durable.OrchestrationContext, in string) (string, error) { return prefix + ": " + in, nil }
}

func prefixedActivity(prefix string) durable.ActivityFunc {
	return func(_ *durable.ActivityContext, in string) (string, error) { return prefix + ": " + in, nil }
}

// callActivity is an orchestration calling the activity named by its input.
func callActivity(ctx *durable.OrchestrationContext, name string) (string, error) {
	return ctx.ScheduleActivity(name, "x").Get()
}

// TestRegistryChainedRegister mirrors test_orchestration_registry_chained_register
// and test_activity_registry_chained_register: every name registered in one
// chain runs.
func TestRegistryChainedRegister(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("orch1", prefixed("orch1")).
		MustAddOrchestration("orch2", prefixed("orch2")).
		MustAddOrchestration("orch3", prefixed("orch3")).
		MustAddActivity("activity1", prefixedActivity("activity1")).
		MustAddActivity("activity2", prefixedActivity("activity2")).
		MustAddActivity("activity3", prefixedActivity("activity3")).
		MustAddOrchestration("Call", callActivity)
	env := durabletest.Start(t, reg)
	t.Run("test_orchestration_registry_chained_register", func(t *testing.T) {
		for _, n := range []string{"orch1", "orch2", "orch3"} {
			mustComplete(t, env.StartAndWait(t, "chain-"+n, n, "in"), n+": in")
		}
	})
	t.Run("test_activity_registry_chained_register", func(t *testing.T) {
		for _, n := range []string{"activity1", "activity2", "activity3"} {
			mustComplete(t, env.StartAndWait(t, "chain-"+n, "Call", n), n+": x")
		}
	})
}

// TestRegistryCloneExtends mirrors test_orchestration_registry_builder_from and
// test_activity_registry_from_registry: a clone (Go's builder_from) extended
// with a third entry holds all three, and the base keeps its two.
func TestRegistryCloneExtends(t *testing.T) {
	t.Parallel()
	t.Run("test_orchestration_registry_builder_from", func(t *testing.T) {
		t.Parallel()
		base := durable.NewRegistry().MustAddOrchestration("orch1", prefixed("orch1")).MustAddOrchestration("orch2", prefixed("orch2"))
		extended := base.Clone().MustAddOrchestration("orch3", prefixed("orch3"))
		for _, n := range []string{"orch1", "orch2", "orch3"} {
			if err := extended.AddOrchestration(n, prefixed(n)); !errors.Is(err, duroxide.ErrConflict) {
				t.Errorf("extended: adding %s again: %v, want ErrConflict (it is registered)", n, err)
			}
		}
		if err := base.AddOrchestration("orch3", prefixed("orch3")); err != nil {
			t.Errorf("base: adding orch3: %v, want nil (the clone's registration must not reach the base)", err)
		}
		env := durabletest.Start(t, extended)
		mustComplete(t, env.StartAndWait(t, "from-orch3", "orch3", "in"), "orch3: in")
	})
	t.Run("test_activity_registry_from_registry", func(t *testing.T) {
		t.Parallel()
		base := durable.NewRegistry().MustAddActivity("activity1", prefixedActivity("activity1")).MustAddActivity("activity2", prefixedActivity("activity2"))
		extended := base.Clone().MustAddActivity("activity3", prefixedActivity("activity3"))
		for _, n := range []string{"activity1", "activity2", "activity3"} {
			if err := extended.AddActivity(n, prefixedActivity(n)); !errors.Is(err, duroxide.ErrConflict) {
				t.Errorf("extended: adding %s again: %v, want ErrConflict", n, err)
			}
		}
		if err := base.AddActivity("activity3", prefixedActivity("activity3")); err != nil {
			t.Errorf("base: adding activity3: %v, want nil", err)
		}
	})
}

// TestActivityRegistryBuilderDetectsDuplicates mirrors
// test_activity_registry_builder_detects_duplicates: the second registration
// of a name is refused (duroxide: "duplicate activity registration"; here an
// ErrConflict naming the activity) and the first one stays.
func TestActivityRegistryBuilderDetectsDuplicates(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddActivity("activity1", prefixedActivity("activity1"))
	err := reg.AddActivity("activity1", prefixedActivity("activity2"))
	if !errors.Is(err, duroxide.ErrConflict) || !strings.Contains(err.Error(), `"activity1"`) || !strings.Contains(err.Error(), "already registered") {
		t.Fatalf("duplicate: %v, want ErrConflict naming activity1", err)
	}
	if err := reg.AddOrchestrationVersion("o", "1.0.0", prefixed("o")); err != nil {
		t.Fatal(err)
	}
	if err := reg.AddOrchestration("o", prefixed("o2")); !errors.Is(err, duroxide.ErrConflict) {
		t.Fatalf("duplicate orchestration version: %v, want ErrConflict", err)
	}
	env := durabletest.Start(t, reg.MustAddOrchestration("Call", callActivity))
	mustComplete(t, env.StartAndWait(t, "dup", "Call", "activity1"), "activity1: x")
}

// TestReservedActivityPrefixRejected mirrors test_reserved_prefix_rejected and
// test_user_cannot_override_builtins: no activity may take a name under the
// system-call prefix, so user code cannot replace new_guid or utc_now.
func TestReservedActivityPrefixRejected(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ test, name string }{
		{"test_reserved_prefix_rejected", "__duroxide_syscall:evil"},
		{"test_user_cannot_override_builtins", "__duroxide_syscall:new_guid"},
	} {
		t.Run(c.test, func(t *testing.T) {
			t.Parallel()
			err := durable.NewRegistry().AddActivity(c.name, prefixedActivity("evil"))
			if !errors.Is(err, durable.ErrInvalidInput) || !strings.Contains(err.Error(), "reserved") || !strings.Contains(err.Error(), "__duroxide_syscall:") {
				t.Fatalf("register %q: %v, want an invalid-input error naming the reserved prefix", c.name, err)
			}
		})
	}
}

// TestBuiltinsExistWithEmptyRegistry mirrors test_builtins_exist_with_empty_registry.
func TestBuiltinsExistWithEmptyRegistry(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("TestBuiltins", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if _, err := ctx.NewGUID().Get(); err != nil {
			return "", err
		}
		if _, err := ctx.UTCNow().Get(); err != nil {
			return "", err
		}
		return "ok", nil
	})
	env := durabletest.Start(t, reg)
	mustComplete(t, env.StartAndWait(t, "test-builtins", "TestBuiltins", ""), "ok")
}

// TestRegisterVersionedTyped mirrors test_register_versioned_typed: a typed
// orchestration registered at 2.0.0 is the version a start runs.
func TestRegisterVersionedTyped(t *testing.T) {
	t.Parallel()
	type myInput struct {
		Value int `json:"value"`
	}
	type myOutput struct {
		Result int `json:"result"`
	}
	reg := durable.NewRegistry().MustAddOrchestrationVersion("typed-orch", "2.0.0",
		durable.Orchestration(func(_ *durable.OrchestrationContext, in myInput) (myOutput, error) {
			return myOutput{in.Value * 2}, nil
		}))
	env := durabletest.Start(t, reg)
	mustComplete(t, env.StartAndWait(t, "typed-v2", "typed-orch", `{"value":21}`), `{"result":42}`)
	if s, ok := read(t, env, "typed-v2")[0].Kind.(duroxide.OrchestrationStartedEvent); !ok || s.Version != "2.0.0" {
		t.Fatalf("started %#v, want version 2.0.0", read(t, env, "typed-v2")[0].Kind)
	}
}

// TestResolveVersionLatest mirrors test_resolve_version_latest: a start that
// names no version runs the latest registered one.
func TestResolveVersionLatest(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("orch1", prefixed("orch1")).
		MustAddOrchestrationVersion("orch1", "2.0.0", prefixed("orch2"))
	env := durabletest.Start(t, reg)
	mustComplete(t, env.StartAndWait(t, "latest", "orch1", "in"), "orch2: in")
}

// TestActivityContextMetadata mirrors activity_context_metadata.
func TestActivityContextMetadata(t *testing.T) {
	t.Parallel()
	type meta struct {
		instance, orchName, orchVersion, activity string
		execution                                 uint64
	}
	var mu sync.Mutex
	var got []meta
	reg := durable.NewRegistry().
		MustAddActivity("Inspect", func(ctx *durable.ActivityContext, _ string) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, meta{ctx.InstanceID(), ctx.OrchestrationName(), ctx.OrchestrationVersion(), ctx.ActivityName(), ctx.ExecutionID()})
			return "ok", nil
		}).
		MustAddOrchestration("InspectOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleActivity("Inspect", "payload").Get()
		})
	env := durabletest.Start(t, reg)
	mustComplete(t, env.StartAndWait(t, "registry-test-instance", "InspectOrch", ""), "ok")
	mu.Lock()
	defer mu.Unlock()
	want := meta{"registry-test-instance", "InspectOrch", "1.0.0", "Inspect", 1}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("recorded %+v, want one execution with %+v", got, want)
	}
}

// TestCrossCrateCompositionPattern mirrors test_cross_crate_composition_pattern:
// libraries register namespaced names into one registry (Go's merge) and
// each runs under its full name.
func TestCrossCrateCompositionPattern(t *testing.T) {
	t.Parallel()
	azure := func(r *durable.Registry) {
		r.MustAddOrchestration("duroxide-azure-arm::orchestration::provision-postgres", prefixed("orch1")).
			MustAddOrchestration("duroxide-azure-arm::orchestration::deploy-webapp", prefixed("orch2"))
	}
	aws := func(r *durable.Registry) {
		r.MustAddOrchestration("duroxide-aws-ec2::orchestration::create-vpc", prefixed("orch3"))
	}
	reg := durable.NewRegistry()
	azure(reg)
	aws(reg)
	env := durabletest.Start(t, reg)
	for i, n := range []string{"duroxide-azure-arm::orchestration::provision-postgres", "duroxide-azure-arm::orchestration::deploy-webapp", "duroxide-aws-ec2::orchestration::create-vpc"} {
		mustComplete(t, env.StartAndWait(t, "compose-"+n, n, "in"), []string{"orch1", "orch2", "orch3"}[i]+": in")
	}
}

// TestActivityRegisterTyped mirrors test_activity_register_typed: a typed
// activity decodes its JSON input and encodes its output.
func TestActivityRegisterTyped(t *testing.T) {
	t.Parallel()
	type in struct {
		Value int `json:"value"`
	}
	type out struct {
		Result int `json:"result"`
	}
	reg := durable.NewRegistry().
		MustAddActivity("typed-activity", durable.Activity(func(_ *durable.ActivityContext, i in) (out, error) { return out{i.Value * 2}, nil })).
		MustAddOrchestration("O", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleActivity("typed-activity", `{"value":4}`).Get()
		})
	env := durabletest.Start(t, reg)
	mustComplete(t, env.StartAndWait(t, "typed-act", "O", ""), `{"result":8}`)
}
