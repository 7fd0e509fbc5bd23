package durable_test

import (
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/management_interface_test.rs: the management
// calls (duroxide's Client::list_all_instances ... and ProviderAdmin) are
// Client.Admin() here. duroxide polls list_instances_by_status until its
// instances complete; these wait for each instance.

// adminEnv starts an Env for reg and returns its admin.
func adminEnv(t *testing.T, reg *durable.Registry) (*durabletest.Env, duroxide.ProviderAdmin) {
	t.Helper()
	env := durabletest.Start(t, reg)
	a := env.Client.Admin()
	if a == nil {
		t.Fatal("the Redis provider has no management capability")
	}
	return env, a
}

// must(call())(t) is call's value, failing t on its error.
func must[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// processRegistry is TestOrchestration calling TestActivity.
func processRegistry() *durable.Registry {
	return durable.NewRegistry().
		MustAddActivity("TestActivity", prefixedActivity("Processed")).
		MustAddOrchestration("TestOrchestration", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			return ctx.ScheduleActivity("TestActivity", in).Get()
		})
}

// wantSingleCompletedExecution checks what the admin says of a completed
// instance of orch with one execution.
func wantSingleCompletedExecution(t *testing.T, env *durabletest.Env, a duroxide.ProviderAdmin, instance, orch string) {
	t.Helper()
	info := must(a.GetInstanceInfo(t.Context(), instance))(t)
	if info.InstanceID != instance || info.OrchestrationName != orch || info.OrchestrationVersion != "1.0.0" ||
		info.CurrentExecutionID != 1 || info.Status != "Completed" || info.Output == nil {
		t.Errorf("instance info %+v", info)
	}
	if execs := must(a.ListExecutions(t.Context(), instance))(t); !slices.Equal(execs, []uint64{1}) {
		t.Errorf("executions %v, want [1]", execs)
	}
	exec := must(a.GetExecutionInfo(t.Context(), instance, 1))(t)
	if exec.ExecutionID != 1 || exec.Status != "Completed" || exec.Output == nil || exec.EventCount == 0 {
		t.Errorf("execution info %+v", exec)
	}
	hist := must(a.ReadHistoryWithExecutionID(t.Context(), instance, 1))(t)
	if len(hist) != exec.EventCount || hist[0].Kind.EventType() != "OrchestrationStarted" || hist[len(hist)-1].Kind.EventType() != "OrchestrationCompleted" {
		t.Errorf("history %v (%d events counted)", kindsOf(hist), exec.EventCount)
	}
}

// TestManagementCapabilityDiscovery mirrors test_capability_discovery: an
// empty namespace lists nothing and counts zero.
func TestManagementCapabilityDiscovery(t *testing.T) {
	t.Parallel()
	_, a := adminEnv(t, durable.NewRegistry())
	if ids := must(a.ListInstances(t.Context()))(t); len(ids) != 0 {
		t.Errorf("instances %v", ids)
	}
	if m := must(a.GetSystemMetrics(t.Context()))(t); m != (duroxide.SystemMetrics{}) {
		t.Errorf("metrics %+v, want zeros", m)
	}
	if q := must(a.GetQueueDepths(t.Context()))(t); q != (duroxide.QueueDepths{}) {
		t.Errorf("queue depths %+v, want zeros", q)
	}
}

// TestManagementFeaturesWithWorkflow mirrors test_management_features_with_workflow,
// test_instance_info and test_execution_info: one completed instance as the
// management calls see it.
func TestManagementFeaturesWithWorkflow(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"test_management_features_with_workflow", "test_instance_info", "test_execution_info"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env, a := adminEnv(t, processRegistry())
			mustComplete(t, env.StartAndWait(t, "test-instance", "TestOrchestration", "test-input"), "Processed: test-input")
			if ids := must(a.ListInstances(t.Context()))(t); !slices.Equal(ids, []string{"test-instance"}) {
				t.Errorf("instances %v", ids)
			}
			wantSingleCompletedExecution(t, env, a, "test-instance", "TestOrchestration")
			if m := must(a.GetSystemMetrics(t.Context()))(t); m.TotalInstances != 1 || m.TotalExecutions != 1 || m.CompletedInstances != 1 {
				t.Errorf("metrics %+v", m)
			}
			if _, err := a.GetInstanceInfo(t.Context(), "nonexistent"); !errors.Is(err, duroxide.ErrNotFound) {
				t.Errorf("info of nonexistent: %v, want ErrNotFound", err)
			}
			if _, err := a.GetExecutionInfo(t.Context(), "test-instance", 999); !errors.Is(err, duroxide.ErrNotFound) {
				t.Errorf("execution 999: %v, want ErrNotFound", err)
			}
		})
	}
}

// TestInstanceDiscovery mirrors test_instance_discovery.
func TestInstanceDiscovery(t *testing.T) {
	t.Parallel()
	env, a := adminEnv(t, processRegistry())
	ids := []string{"instance-1", "instance-2", "instance-3"}
	for _, id := range ids {
		mustComplete(t, env.StartAndWait(t, id, "TestOrchestration", "input"), "Processed: input")
	}
	got := must(a.ListInstances(t.Context()))(t)
	slices.Sort(got)
	completed := must(a.ListInstancesByStatus(t.Context(), "Completed"))(t)
	slices.Sort(completed)
	if !slices.Equal(got, ids) || !slices.Equal(completed, ids) {
		t.Errorf("instances %v, completed %v, want %v", got, completed, ids)
	}
	if running := must(a.ListInstancesByStatus(t.Context(), "Running"))(t); len(running) != 0 {
		t.Errorf("running %v", running)
	}
}

// continueTo continues as new until its input reaches last.
func continueTo(last int) durable.OrchestrationFunc {
	return func(ctx *durable.OrchestrationContext, in string) (string, error) {
		n, _ := strconv.Atoi(in)
		if n < last {
			ctx.ContinueAsNew(strconv.Itoa(n + 1))
			return "", nil
		}
		return "Final: " + in, nil
	}
}

// TestMultiExecutionSupport mirrors test_multi_execution_support and
// test_management_read_execution_specific: each execution of a
// continue-as-new chain is listed, described and readable on its own.
func TestMultiExecutionSupport(t *testing.T) {
	t.Parallel()
	env, a := adminEnv(t, durable.NewRegistry().MustAddOrchestration("ContinueAsNewTest", continueTo(3)))
	mustComplete(t, env.StartAndWait(t, "test-continue", "ContinueAsNewTest", "0"), "Final: 3")
	execs := must(a.ListExecutions(t.Context(), "test-continue"))(t)
	if !slices.Equal(execs, []uint64{1, 2, 3, 4}) {
		t.Fatalf("executions %v, want [1 2 3 4]", execs)
	}
	for _, id := range execs {
		info := must(a.GetExecutionInfo(t.Context(), "test-continue", id))(t)
		want := "ContinuedAsNew"
		if id == 4 {
			want = "Completed"
		}
		if info.ExecutionID != id || info.Status != want {
			t.Errorf("execution %d: %+v, want status %s", id, info, want)
		}
		hist := must(a.ReadHistoryWithExecutionID(t.Context(), "test-continue", id))(t)
		if len(hist) == 0 || hist[0].Kind.EventType() != "OrchestrationStarted" {
			t.Errorf("execution %d history %v", id, kindsOf(hist))
		}
	}
	if info := must(a.GetInstanceInfo(t.Context(), "test-continue"))(t); info.CurrentExecutionID != 4 || info.Status != "Completed" {
		t.Errorf("instance info %+v", info)
	}
	if latest := must(a.LatestExecutionID(t.Context(), "test-continue"))(t); latest != 4 {
		t.Errorf("latest execution %d, want 4", latest)
	}
}

// statusRegistry has an orchestration ending in each status, and one that
// waits for an event that never comes.
func statusRegistry() *durable.Registry {
	return durable.NewRegistry().
		MustAddActivity("OkActivity", func(_ *durable.ActivityContext, in string) (string, error) { return in, nil }).
		MustAddActivity("FailActivity", func(*durable.ActivityContext, string) (string, error) { return "", errors.New("Intentional failure") }).
		MustAddOrchestration("Completed", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			return ctx.ScheduleActivity("OkActivity", in).Get()
		}).
		MustAddOrchestration("Failed", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			return ctx.ScheduleActivity("FailActivity", in).Get()
		}).
		MustAddOrchestration("ContinuedAsNew", continueTo(1)).
		MustAddOrchestration("Running", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			_, err := ctx.WaitForEvent("NeverComes").Get()
			return "done", err
		})
}

// TestSystemMetrics mirrors test_system_metrics: counts by status of
// two completed, one failed and one running instance.
func TestSystemMetrics(t *testing.T) {
	t.Parallel()
	env, a := adminEnv(t, statusRegistry())
	env.StartAndWait(t, "success-1", "Completed", "input-1")
	env.StartAndWait(t, "success-2", "Completed", "input-2")
	env.StartAndWait(t, "failure-1", "Failed", "input-1")
	if err := env.Client.StartOrchestration(t.Context(), "running-1", "Running", ""); err != nil {
		t.Fatal(err)
	}
	env.WaitForEventSubscription(t, "running-1", "NeverComes")
	m := must(a.GetSystemMetrics(t.Context()))(t)
	if m.TotalInstances != 4 || m.TotalExecutions != 4 || m.RunningInstances != 1 || m.CompletedInstances != 2 || m.FailedInstances != 1 || m.TotalEvents == 0 {
		t.Errorf("metrics %+v", m)
	}
	for status, want := range map[string][]string{"Completed": {"success-1", "success-2"}, "Failed": {"failure-1"}, "Running": {"running-1"}} {
		got := must(a.ListInstancesByStatus(t.Context(), status))(t)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", status, got, want)
		}
	}
}

// TestManagementAllStatusTypes mirrors test_management_all_status_types.
func TestManagementAllStatusTypes(t *testing.T) {
	t.Parallel()
	env, a := adminEnv(t, statusRegistry())
	env.StartAndWait(t, "inst-completed", "Completed", "test")
	env.StartAndWait(t, "inst-failed", "Failed", "test")
	env.StartAndWait(t, "inst-continued", "ContinuedAsNew", "0")
	if err := env.Client.StartOrchestration(t.Context(), "inst-running", "Running", ""); err != nil {
		t.Fatal(err)
	}
	env.WaitForEventSubscription(t, "inst-running", "NeverComes")
	for status, want := range map[string][]string{"Completed": {"inst-completed", "inst-continued"}, "Failed": {"inst-failed"}, "Running": {"inst-running"}} {
		got := must(a.ListInstancesByStatus(t.Context(), status))(t)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", status, got, want)
		}
	}
}

// TestQueueDepths mirrors test_queue_depths: with an activity running, its
// locked entry is not waiting, and nothing else is queued.
func TestQueueDepths(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}, 1), make(chan struct{})
	env, a := adminEnv(t, durable.NewRegistry().
		MustAddActivity("SlowActivity", gatedActivity(started, release)).
		MustAddOrchestration("QueueTest", activityOrch("SlowActivity")))
	if err := env.Client.StartOrchestration(t.Context(), "queue-1", "QueueTest", ""); err != nil {
		t.Fatal(err)
	}
	<-started
	if q := must(a.GetQueueDepths(t.Context()))(t); q != (duroxide.QueueDepths{}) {
		t.Errorf("depths with the only activity running: %+v, want zeros", q)
	}
	close(release)
	mustComplete(t, env.Wait(t, "queue-1"), "quick")
	if q := must(a.GetQueueDepths(t.Context()))(t); q != (duroxide.QueueDepths{}) {
		t.Errorf("depths after completion: %+v, want zeros", q)
	}
}

// TestManagementUnknownInstanceErrors mirrors test_error_handling and
// test_management_unknown_instance_errors.
//
// Differs from duroxide on purpose: LatestExecutionID of an unknown instance
// is ErrNotFound, not 1, so a missing instance is never mistaken for a fresh
// one (duroxide.ProviderAdmin's contract here).
func TestManagementUnknownInstanceErrors(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"test_error_handling", "test_management_unknown_instance_errors"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, a := adminEnv(t, durable.NewRegistry())
			ctx := t.Context()
			if _, err := a.GetInstanceInfo(ctx, "nonexistent"); !errors.Is(err, duroxide.ErrNotFound) {
				t.Errorf("GetInstanceInfo: %v, want ErrNotFound", err)
			}
			if _, err := a.GetExecutionInfo(ctx, "nonexistent", 1); !errors.Is(err, duroxide.ErrNotFound) {
				t.Errorf("GetExecutionInfo: %v, want ErrNotFound", err)
			}
			if h := must(a.ReadHistoryWithExecutionID(ctx, "nonexistent", 1))(t); len(h) != 0 {
				t.Errorf("history %v", kindsOf(h))
			}
			if e := must(a.ListExecutions(ctx, "nonexistent"))(t); len(e) != 0 {
				t.Errorf("executions %v", e)
			}
			if ids := must(a.ListInstancesByStatus(ctx, "NonExistentStatus"))(t); len(ids) != 0 {
				t.Errorf("by unknown status: %v", ids)
			}
			if _, err := a.LatestExecutionID(ctx, "nonexistent"); !errors.Is(err, duroxide.ErrNotFound) {
				t.Errorf("LatestExecutionID: %v, want ErrNotFound", err)
			}
		})
	}
}

// TestComplexWorkflowManagement mirrors test_complex_workflow_management.
func TestComplexWorkflowManagement(t *testing.T) {
	t.Parallel()
	env, a := adminEnv(t, durable.NewRegistry().
		MustAddActivity("ProcessOrder", prefixedActivity("Processed order")).
		MustAddActivity("SendEmail", prefixedActivity("Email sent")).
		MustAddActivity("UpdateInventory", prefixedActivity("Inventory updated")).
		MustAddOrchestration("OrderProcessing", func(ctx *durable.OrchestrationContext, order string) (string, error) {
			var out []string
			for _, act := range []string{"ProcessOrder", "UpdateInventory", "SendEmail"} {
				r, err := ctx.ScheduleActivity(act, order).Get()
				if err != nil {
					return "", err
				}
				out = append(out, r)
			}
			return out[0] + "; " + out[1] + "; " + out[2], nil
		}))
	orders := []string{"order-1", "order-2", "order-3", "order-4", "order-5"}
	for _, o := range orders {
		env.StartAndWait(t, o, "OrderProcessing", o)
	}
	m := must(a.GetSystemMetrics(t.Context()))(t)
	if m.TotalInstances != 5 || m.TotalExecutions != 5 || m.CompletedInstances != 5 || m.FailedInstances != 0 || m.RunningInstances != 0 || m.TotalEvents == 0 {
		t.Errorf("metrics %+v", m)
	}
	for _, o := range orders {
		wantSingleCompletedExecution(t, env, a, o, "OrderProcessing")
		if countEvents(must(a.ReadHistoryWithExecutionID(t.Context(), o, 1))(t), "ActivityScheduled") != 3 {
			t.Errorf("%s: want 3 activities in history", o)
		}
	}
	if q := must(a.GetQueueDepths(t.Context()))(t); q != (duroxide.QueueDepths{}) {
		t.Errorf("queue depths %+v", q)
	}
}

// TestManagementGetInstanceTree mirrors test_management_get_instance_tree.
func TestManagementGetInstanceTree(t *testing.T) {
	t.Parallel()
	env, a := adminEnv(t, durable.NewRegistry().
		MustAddActivity("SimpleActivity", prefixedActivity("Processed")).
		MustAddOrchestration("Child", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			return ctx.ScheduleActivity("SimpleActivity", in).Get()
		}).
		MustAddOrchestration("Parent", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return joined(ctx, ctx.ScheduleSubOrchestration("Child", "input1", durable.WithInstanceID("child-1")),
				ctx.ScheduleSubOrchestration("Child", "input2", durable.WithInstanceID("child-2")))
		}))
	mustComplete(t, env.StartAndWait(t, "parent-1", "Parent", "start"), "Processed: input1,Processed: input2")
	tree := must(a.GetInstanceTree(t.Context(), "parent-1"))(t)
	ids := slices.Clone(tree.AllIDs)
	slices.Sort(ids)
	if tree.RootID != "parent-1" || !slices.Equal(ids, []string{"child-1", "child-2", "parent-1"}) {
		t.Errorf("tree %+v", tree)
	}
}
