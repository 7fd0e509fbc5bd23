package durable_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/unit_tests.rs.

// TestDeterministicReplayActivityOnly mirrors deterministic_replay_activity_only.
func TestDeterministicReplayActivityOnly(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, durable.NewRegistry().
		MustAddActivity("A", func(_ *durable.ActivityContext, in string) (string, error) {
			n, _ := strconv.Atoi(in)
			return strconv.Itoa(n + 1), nil
		}).
		MustAddOrchestration("TestOrchestration", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			a, err := ctx.ScheduleActivity("A", "2").Get()
			return "a=" + a, err
		}))
	mustComplete(t, env.StartAndWait(t, "inst-unit-1", "TestOrchestration", ""), "a=3")
}

// TestRuntimeDuplicateOrchestrationDedupedSingleExecution mirrors
// runtime_duplicate_orchestration_deduped_single_execution: a second start
// of the same id runs nothing more (here it is refused, or with UseExisting
// accepted and ignored; duroxide accepts it silently).
func TestRuntimeDuplicateOrchestrationDedupedSingleExecution(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, durable.NewRegistry().MustAddOrchestration("TestOrch", timerOrchestration("ok", 20*time.Millisecond)))
	if err := env.Client.StartOrchestration(t.Context(), "dup-orch", "TestOrch", ""); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.StartOrchestration(t.Context(), "dup-orch", "TestOrch", ""); !errors.Is(err, durable.ErrAlreadyExists) {
		t.Fatalf("second start: %v, want ErrAlreadyExists", err)
	}
	if err := env.Client.StartOrchestration(t.Context(), "dup-orch", "TestOrch", "", durable.UseExisting()); err != nil {
		t.Fatalf("second start with UseExisting: %v", err)
	}
	mustComplete(t, env.Wait(t, "dup-orch"), "ok")
	hist := read(t, env, "dup-orch")
	if countEvents(hist, "OrchestrationStarted") != 1 || countEvents(hist, "OrchestrationCompleted")+countEvents(hist, "OrchestrationFailed") != 1 {
		t.Fatalf("history %v, want one start and one terminal event", kindsOf(hist))
	}
}

// TestOrchestrationDescriptorRootAndChild mirrors orchestration_descriptor_root_and_child:
// duroxide's Runtime::get_orchestration_descriptor is the instance record
// (Admin().GetInstanceInfo) and the execution's OrchestrationStarted here.
func TestOrchestrationDescriptorRootAndChild(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, durable.NewRegistry().
		MustAddOrchestration("ChildDsc", returns("child")).
		MustAddOrchestration("ParentDsc", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			_, err := ctx.ScheduleSubOrchestration("ChildDsc", "x").Get()
			return "done", err
		}))
	mustComplete(t, env.StartAndWait(t, "inst-desc", "ParentDsc", "seed"), "done")
	a := env.Client.Admin()
	root := must(a.GetInstanceInfo(t.Context(), "inst-desc"))(t)
	if root.OrchestrationName != "ParentDsc" || root.OrchestrationVersion == "" || root.ParentInstanceID != "" {
		t.Errorf("root %+v", root)
	}
	if s := read(t, env, "inst-desc")[0].Kind.(duroxide.OrchestrationStartedEvent); s.ParentInstance != nil || s.ParentID != nil {
		t.Errorf("root started %+v has a parent", s)
	}
	child := must(a.GetInstanceInfo(t.Context(), "inst-desc::sub::2"))(t)
	if child.OrchestrationName != "ChildDsc" || child.OrchestrationVersion == "" || child.ParentInstanceID != "inst-desc" {
		t.Errorf("child %+v", child)
	}
	s := read(t, env, "inst-desc::sub::2")[0].Kind.(duroxide.OrchestrationStartedEvent)
	if s.ParentInstance == nil || *s.ParentInstance != "inst-desc" || s.ParentID == nil || *s.ParentID != 2 {
		t.Errorf("child started %+v, want parent inst-desc, id 2", s)
	}
}

// TestOrchestrationStatusAPIs mirrors orchestration_status_apis.
func TestOrchestrationStatusAPIs(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, durable.NewRegistry().
		MustAddOrchestration("ShortTimer", timerOrchestration("ok", 100*time.Millisecond)).
		MustAddOrchestration("AlwaysFails", func(*durable.OrchestrationContext, string) (string, error) { return "", errors.New("boom") }),
		durabletest.WithTimeSkipping(false))
	if st := status(t, env, "no-such"); st.Status != durable.StatusNotFound {
		t.Errorf("unknown: %v", st.Status)
	}
	if err := env.Client.StartOrchestration(t.Context(), "inst-status-running", "ShortTimer", ""); err != nil {
		t.Fatal(err)
	}
	env.WaitForTimer(t, "inst-status-running")
	if st := status(t, env, "inst-status-running"); st.Status != durable.StatusRunning {
		t.Errorf("with its timer pending: %v, want Running", st.Status)
	}
	mustComplete(t, env.Wait(t, "inst-status-running"), "ok")
	mustComplete(t, status(t, env, "inst-status-running"), "ok")
	env.StartAndWait(t, "inst-status-fail", "AlwaysFails", "")
	wantAppFailure(t, status(t, env, "inst-status-fail"), duroxide.AppErrorOrchestrationFailed, "boom")
}

// TestOrchestrationContextMetadataAccessors mirrors orchestration_context_metadata_accessors.
func TestOrchestrationContextMetadataAccessors(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, durable.NewRegistry().MustAddOrchestrationVersion("MetadataOrch", "2.1.0",
		func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.InstanceID() + "|" + strconv.FormatUint(ctx.ExecutionID(), 10) + "|" + ctx.OrchestrationName() + "|" + ctx.OrchestrationVersion(), nil
		}))
	mustComplete(t, env.StartAndWait(t, "test-instance-123", "MetadataOrch", ""), "test-instance-123|1|MetadataOrch|2.1.0")
}
