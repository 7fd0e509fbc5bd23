package durable_test

import (
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/deletion_integration_tests.rs,
// prune_integration_tests.rs and bulk_deletion_integration_tests.rs: the
// management calls on a running deployment, through Client.Admin().

// wantGone checks instance no longer exists.
func wantGone(t *testing.T, a duroxide.ProviderAdmin, instances ...string) {
	t.Helper()
	for _, i := range instances {
		if _, err := a.GetInstanceInfo(t.Context(), i); !errors.Is(err, duroxide.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound (deleted)", i, err)
		}
	}
}

// wantExists checks instances still exist.
func wantExists(t *testing.T, a duroxide.ProviderAdmin, instances ...string) {
	t.Helper()
	for _, i := range instances {
		if _, err := a.GetInstanceInfo(t.Context(), i); err != nil {
			t.Errorf("%s: %v, want it to exist", i, err)
		}
	}
}

func waitOn(event string) durable.OrchestrationFunc {
	return func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		_, err := ctx.WaitForEvent(event).Get()
		return "done", err
	}
}

// TestDeleteTerminalOrchestrations mirrors test_delete_terminal_orchestrations.
func TestDeleteTerminalOrchestrations(t *testing.T) {
	t.Parallel()
	env, a := adminEnv(t, statusRegistry())
	env.StartAndWait(t, "delete-completed", "Completed", "{}")
	env.StartAndWait(t, "delete-failed", "Failed", "{}")
	for _, i := range []string{"delete-completed", "delete-failed"} {
		r := must(a.DeleteInstance(t.Context(), i, false))(t)
		if r.InstancesDeleted != 1 || r.EventsDeleted == 0 {
			t.Errorf("delete %s: %+v", i, r)
		}
		wantGone(t, a, i)
	}
}

// TestForceDeleteInFlightWork mirrors test_force_delete_in_flight_work: a
// running instance with an activity in flight, a pending timer or a pending
// event wait is deleted with force.
func TestForceDeleteInFlightWork(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	env, a := adminEnv(t, durable.NewRegistry().
		MustAddActivity("SlowActivity", gatedActivity(started, release)).
		MustAddOrchestration("WaitOnActivity", activityOrch("SlowActivity")).
		MustAddOrchestration("WaitOnTimer", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			_, err := ctx.Timer(time.Hour).Get()
			return "done", err
		}).
		MustAddOrchestration("WaitOnEvent", waitOn("my-event")))
	start := func(id, name string) {
		if err := env.Client.StartOrchestration(t.Context(), id, name, ""); err != nil {
			t.Fatal(err)
		}
	}
	start("force-activity", "WaitOnActivity")
	start("force-timer", "WaitOnTimer")
	start("force-event", "WaitOnEvent")
	<-started
	env.WaitForTimer(t, "force-timer")
	env.WaitForEventSubscription(t, "force-event", "my-event")
	for _, i := range []string{"force-activity", "force-timer", "force-event"} {
		if _, err := a.DeleteInstance(t.Context(), i, false); err == nil {
			t.Errorf("%s: deleted while running without force", i)
		}
		if r := must(a.DeleteInstance(t.Context(), i, true))(t); r.InstancesDeleted != 1 {
			t.Errorf("force delete %s: %+v", i, r)
		}
		wantGone(t, a, i)
	}
}

// twoChildRegistry is ParentOrch running two auto-id children.
func twoChildRegistry() *durable.Registry {
	return durable.NewRegistry().
		MustAddOrchestration("ChildOrch", func(_ *durable.OrchestrationContext, in string) (string, error) { return "child:" + in, nil }).
		MustAddOrchestration("ParentOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return joined(ctx, ctx.ScheduleSubOrchestration("ChildOrch", "1"), ctx.ScheduleSubOrchestration("ChildOrch", "2"))
		})
}

// TestCascadeDeleteRealSubOrchestrations mirrors test_cascade_delete_real_sub_orchestrations
// and test_get_instance_tree: a child cannot be deleted on its own; deleting
// the root deletes its tree.
func TestCascadeDeleteRealSubOrchestrations(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"test_cascade_delete_real_sub_orchestrations", "test_get_instance_tree"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env, a := adminEnv(t, twoChildRegistry())
			mustComplete(t, env.StartAndWait(t, "cascade-parent", "ParentOrch", ""), "child:1,child:2")
			tree := must(a.GetInstanceTree(t.Context(), "cascade-parent"))(t)
			if tree.RootID != "cascade-parent" || len(tree.AllIDs) != 3 {
				t.Fatalf("tree %+v, want the parent and 2 children", tree)
			}
			var children []string
			for _, id := range tree.AllIDs {
				if id != "cascade-parent" {
					children = append(children, id)
				}
			}
			wantExists(t, a, tree.AllIDs...)
			if _, err := a.DeleteInstance(t.Context(), children[0], false); err == nil {
				t.Error("a sub-orchestration was deleted on its own")
			}
			if r := must(a.DeleteInstance(t.Context(), "cascade-parent", false))(t); r.InstancesDeleted != 3 {
				t.Errorf("cascade delete: %+v, want 3 instances", r)
			}
			wantGone(t, a, tree.AllIDs...)
		})
	}
}

// TestIdentityReuseAfterDelete mirrors test_identity_reuse_after_delete: a
// deleted id starts afresh.
func TestIdentityReuseAfterDelete(t *testing.T) {
	t.Parallel()
	env, a := adminEnv(t, durable.NewRegistry().
		MustAddOrchestration("SimpleOrch", func(_ *durable.OrchestrationContext, in string) (string, error) { return "out:" + in, nil }).
		MustAddOrchestration("WaitOrch", waitOn("never")))
	mustComplete(t, env.StartAndWait(t, "reuse-id", "SimpleOrch", "first"), "out:first")
	must(a.DeleteInstance(t.Context(), "reuse-id", false))(t)
	mustComplete(t, env.StartAndWait(t, "reuse-id", "SimpleOrch", "second"), "out:second")
	if info := must(a.GetInstanceInfo(t.Context(), "reuse-id"))(t); info.Status != "Completed" || info.Output == nil || *info.Output != "out:second" {
		t.Fatalf("after reuse: %+v", info)
	}
	must(a.DeleteInstance(t.Context(), "reuse-id", false))(t)
	if err := env.Client.StartOrchestration(t.Context(), "reuse-id", "WaitOrch", ""); err != nil {
		t.Fatal(err)
	}
	env.WaitForEventSubscription(t, "reuse-id", "never")
	must(a.DeleteInstance(t.Context(), "reuse-id", true))(t)
	mustComplete(t, env.StartAndWait(t, "reuse-id", "SimpleOrch", "third"), "out:third")
}

// TestDeleteErrorCases mirrors test_delete_error_cases.
func TestDeleteErrorCases(t *testing.T) {
	t.Parallel()
	env, a := adminEnv(t, durable.NewRegistry().
		MustAddOrchestration("WaitOrch", waitOn("never")).
		MustAddOrchestration("ParentOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleSubOrchestration("WaitOrch", "").Get()
		}))
	if _, err := a.DeleteInstance(t.Context(), "does-not-exist", false); !errors.Is(err, duroxide.ErrNotFound) {
		t.Errorf("unknown: %v, want ErrNotFound", err)
	}
	for _, s := range [][2]string{{"error-running", "WaitOrch"}, {"error-parent", "ParentOrch"}} {
		if err := env.Client.StartOrchestration(t.Context(), s[0], s[1], ""); err != nil {
			t.Fatal(err)
		}
	}
	env.WaitForEventSubscription(t, "error-running", "never")
	if _, err := a.DeleteInstance(t.Context(), "error-running", false); err == nil {
		t.Error("a running instance was deleted without force")
	}
	child := "error-parent::sub::2"
	env.WaitForEventSubscription(t, child, "never")
	for _, force := range []bool{false, true} {
		if _, err := a.DeleteInstance(t.Context(), child, force); err == nil {
			t.Errorf("force=%v: a sub-orchestration was deleted on its own", force)
		}
	}
	wantExists(t, a, "error-running", "error-parent", child)
}

// TestDispatcherResilienceAfterDelete mirrors test_dispatcher_resilience_after_delete:
// force-deleting a waiting instance leaves the dispatchers running others.
func TestDispatcherResilienceAfterDelete(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	env, a := adminEnv(t, durable.NewRegistry().
		MustAddActivity("CountingActivity", func(*durable.ActivityContext, string) (string, error) { n.Add(1); return "counted", nil }).
		MustAddOrchestration("CountOrch", activityOrch("CountingActivity")).
		MustAddOrchestration("WaitOrch", waitOn("never")))
	if err := env.Client.StartOrchestration(t.Context(), "resilience-wait", "WaitOrch", ""); err != nil {
		t.Fatal(err)
	}
	env.WaitForEventSubscription(t, "resilience-wait", "never")
	must(a.DeleteInstance(t.Context(), "resilience-wait", true))(t)
	for i := range 3 {
		mustComplete(t, env.StartAndWait(t, "resilience-"+strconv.Itoa(i), "CountOrch", ""), "counted")
	}
	if n.Load() != 3 {
		t.Fatalf("%d activity runs, want 3", n.Load())
	}
}

// TestConcurrentDeleteOperations mirrors test_concurrent_delete_operations:
// of two concurrent deletes, one deletes and the other finds nothing.
func TestConcurrentDeleteOperations(t *testing.T) {
	t.Parallel()
	env, a := adminEnv(t, durable.NewRegistry().MustAddOrchestration("SimpleOrch", returns("ok")))
	env.StartAndWait(t, "concurrent-delete", "SimpleOrch", "{}")
	var wg sync.WaitGroup
	results := make([]error, 2)
	deleted := make([]uint64, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := a.DeleteInstance(t.Context(), "concurrent-delete", false)
			results[i], deleted[i] = err, r.InstancesDeleted
		}()
	}
	wg.Wait()
	ok := 0
	for i, err := range results {
		switch {
		case err == nil && deleted[i] == 1:
			ok++
		case errors.Is(err, duroxide.ErrNotFound):
		default:
			t.Errorf("delete %d: %v (deleted %d)", i, err, deleted[i])
		}
	}
	if ok != 1 {
		t.Errorf("%d deletes succeeded, want exactly 1", ok)
	}
	wantGone(t, a, "concurrent-delete")
}

// TestListChildrenAndParentPrimitives mirrors test_list_children_primitive and
// test_get_parent_id_primitive.
func TestListChildrenAndParentPrimitives(t *testing.T) {
	t.Parallel()
	env, a := adminEnv(t, durable.NewRegistry().
		MustAddOrchestration("GrandchildOrch", returns("leaf")).
		MustAddOrchestration("ChildOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleSubOrchestration("GrandchildOrch", "").Get()
		}).
		MustAddOrchestration("ParentOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleSubOrchestration("ChildOrch", "").Get()
		}))
	mustComplete(t, env.StartAndWait(t, "list-children-parent", "ParentOrch", ""), "leaf")
	ctx := t.Context()
	t.Run("test_list_children_primitive", func(t *testing.T) {
		children := must(a.ListChildren(ctx, "list-children-parent"))(t)
		if len(children) != 1 {
			t.Fatalf("children %v, want 1", children)
		}
		grand := must(a.ListChildren(ctx, children[0]))(t)
		if len(grand) != 1 {
			t.Fatalf("grandchildren %v, want 1", grand)
		}
		if leaf := must(a.ListChildren(ctx, grand[0]))(t); len(leaf) != 0 {
			t.Fatalf("the grandchild has children %v", leaf)
		}
	})
	t.Run("test_get_parent_id_primitive", func(t *testing.T) {
		if p := must(a.GetParentID(ctx, "list-children-parent"))(t); p != "" {
			t.Errorf("root's parent %q", p)
		}
		child := must(a.ListChildren(ctx, "list-children-parent"))(t)[0]
		if p := must(a.GetParentID(ctx, child))(t); p != "list-children-parent" {
			t.Errorf("child's parent %q", p)
		}
		if _, err := a.GetParentID(ctx, "non-existent"); !errors.Is(err, duroxide.ErrNotFound) {
			t.Errorf("unknown: %v, want ErrNotFound", err)
		}
	})
	must(a.DeleteInstance(ctx, "list-children-parent", false))(t)
}

// TestDeleteOrphanRaceConditionDetection mirrors test_delete_orphan_race_condition_detection:
// an atomic delete naming a parent but not its child is refused, as it
// would orphan the child; naming the whole tree succeeds.
func TestDeleteOrphanRaceConditionDetection(t *testing.T) {
	t.Parallel()
	env, a := adminEnv(t, twoChildRegistry())
	mustComplete(t, env.StartAndWait(t, "orphan-parent", "ParentOrch", ""), "child:1,child:2")
	tree := must(a.GetInstanceTree(t.Context(), "orphan-parent"))(t)
	if _, err := a.DeleteInstancesAtomic(t.Context(), []string{"orphan-parent"}, false); err == nil {
		t.Fatal("deleting the parent alone succeeded, orphaning its children")
	}
	wantExists(t, a, tree.AllIDs...)
	if r := must(a.DeleteInstancesAtomic(t.Context(), tree.AllIDs, false))(t); r.InstancesDeleted != uint64(len(tree.AllIDs)) {
		t.Errorf("delete of the tree: %+v", r)
	}
	wantGone(t, a, tree.AllIDs...)
}

// TestPruneIntegration mirrors test_prune_continue_as_new_chain,
// test_prune_bulk_operations and test_prune_safety.
func TestPruneIntegration(t *testing.T) {
	t.Parallel()
	t.Run("test_prune_continue_as_new_chain", func(t *testing.T) {
		t.Parallel()
		env, a := adminEnv(t, durable.NewRegistry().MustAddOrchestration("ContinueOrch", continueTo(5)))
		env.StartAndWait(t, "prune-chain", "ContinueOrch", "0")
		if e := must(a.ListExecutions(t.Context(), "prune-chain"))(t); len(e) != 6 {
			t.Fatalf("executions %v, want 6", e)
		}
		r := must(a.PruneExecutions(t.Context(), "prune-chain", duroxide.PruneOptions{KeepLast: 2}))(t)
		if r.InstancesProcessed != 1 || r.ExecutionsDeleted != 4 {
			t.Errorf("prune: %+v", r)
		}
		if e := must(a.ListExecutions(t.Context(), "prune-chain"))(t); !slices.Equal(e, []uint64{5, 6}) {
			t.Errorf("executions after prune %v, want [5 6]", e)
		}
	})
	t.Run("test_prune_bulk_operations", func(t *testing.T) {
		t.Parallel()
		env, a := adminEnv(t, durable.NewRegistry().MustAddOrchestration("ContinueOrch", continueTo(3)))
		for i := range 3 {
			env.StartAndWait(t, "prune-bulk-"+strconv.Itoa(i), "ContinueOrch", "0")
		}
		r := must(a.PruneExecutionsBulk(t.Context(), duroxide.InstanceFilter{InstanceIDs: []string{"prune-bulk-0", "prune-bulk-1"}},
			duroxide.PruneOptions{KeepLast: 1}))(t)
		if r.InstancesProcessed != 2 || r.ExecutionsDeleted != 6 {
			t.Errorf("bulk prune: %+v", r)
		}
		for i, want := range []int{1, 1, 4} {
			if e := must(a.ListExecutions(t.Context(), "prune-bulk-"+strconv.Itoa(i)))(t); len(e) != want {
				t.Errorf("prune-bulk-%d: executions %v, want %d", i, e, want)
			}
		}
	})
	t.Run("test_prune_safety", func(t *testing.T) {
		t.Parallel()
		env, a := adminEnv(t, durable.NewRegistry().MustAddOrchestration("ContinueOrch", continueTo(3)))
		env.StartAndWait(t, "prune-safety", "ContinueOrch", "0")
		for _, opts := range []duroxide.PruneOptions{{KeepLast: 0}, {}} {
			must(a.PruneExecutions(t.Context(), "prune-safety", opts))(t)
			info := must(a.GetInstanceInfo(t.Context(), "prune-safety"))(t)
			if e := must(a.ListExecutions(t.Context(), "prune-safety"))(t); !slices.Contains(e, info.CurrentExecutionID) {
				t.Errorf("prune %+v removed the current execution %d: %v", opts, info.CurrentExecutionID, e)
			}
			mustComplete(t, status(t, env, "prune-safety"), "Final: 3")
		}
	})
}

// TestPruneWhileRunning mirrors test_prune_during_active_continue_as_new and
// test_prune_bulk_includes_running_instances: pruning a running
// continue-as-new chain keeps its current execution, and it goes on to
// complete.
func TestPruneWhileRunning(t *testing.T) {
	t.Parallel()
	for _, bulk := range []bool{false, true} {
		name := "test_prune_during_active_continue_as_new"
		if bulk {
			name = "test_prune_bulk_includes_running_instances"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env, a := adminEnv(t, durable.NewRegistry().MustAddOrchestration("Chain", func(ctx *durable.OrchestrationContext, in string) (string, error) {
				n, _ := strconv.Atoi(in)
				if n == 3 {
					if _, err := ctx.WaitForEvent("proceed").Get(); err != nil {
						return "", err
					}
				}
				if n < 5 {
					ctx.ContinueAsNew(strconv.Itoa(n + 1))
					return "", nil
				}
				return "done " + in, nil
			}))
			const id = "prune-active"
			if err := env.Client.StartOrchestration(t.Context(), id, "Chain", "0"); err != nil {
				t.Fatal(err)
			}
			env.WaitForEventSubscription(t, id, "proceed") // execution 4, running
			var r duroxide.PruneResult
			if bulk {
				r = must(a.PruneExecutionsBulk(t.Context(), duroxide.InstanceFilter{Limit: 100}, duroxide.PruneOptions{KeepLast: 2}))(t)
			} else {
				r = must(a.PruneExecutions(t.Context(), id, duroxide.PruneOptions{KeepLast: 1}))(t)
			}
			if r.InstancesProcessed != 1 || r.ExecutionsDeleted == 0 {
				t.Errorf("prune: %+v", r)
			}
			info := must(a.GetInstanceInfo(t.Context(), id))(t)
			execs := must(a.ListExecutions(t.Context(), id))(t)
			if info.Status != "Running" || info.CurrentExecutionID != 4 || !slices.Contains(execs, 4) || len(execs) > 2 {
				t.Fatalf("after prune: %+v, executions %v", info, execs)
			}
			if err := env.Client.RaiseEvent(t.Context(), id, "proceed", "go!"); err != nil {
				t.Fatal(err)
			}
			mustComplete(t, env.Wait(t, id), "done 5")
		})
	}
}

// TestDeleteInstanceBulk mirrors test_delete_instance_bulk_retention_policies
// and test_delete_instance_bulk_safety.
func TestDeleteInstanceBulk(t *testing.T) {
	t.Parallel()
	t.Run("test_delete_instance_bulk_retention_policies", func(t *testing.T) {
		t.Parallel()
		env, a := adminEnv(t, durable.NewRegistry().MustAddOrchestration("SimpleOrch", returns("ok")))
		var ids []string
		for i := range 6 {
			ids = append(ids, "bulk-del-test-"+strconv.Itoa(i))
			env.StartAndWait(t, ids[i], "SimpleOrch", strconv.Itoa(i))
		}
		if r := must(a.DeleteInstanceBulk(t.Context(), duroxide.InstanceFilter{InstanceIDs: ids[:2]}))(t); r.InstancesDeleted != 2 {
			t.Errorf("by ids: %+v", r)
		}
		wantGone(t, a, ids[:2]...)
		wantExists(t, a, ids[2:]...)
		for i, want := range []uint64{2, 2, 0} {
			if r := must(a.DeleteInstanceBulk(t.Context(), duroxide.InstanceFilter{Limit: 2}))(t); r.InstancesDeleted != want {
				t.Errorf("round %d with limit 2: %+v, want %d", i, r, want)
			}
		}
		wantGone(t, a, ids...)
	})
	t.Run("test_delete_instance_bulk_safety", func(t *testing.T) {
		t.Parallel()
		env, a := adminEnv(t, durable.NewRegistry().
			MustAddOrchestration("SimpleOrch", returns("ok")).
			MustAddOrchestration("WaitOrch", waitOn("never")).
			MustAddOrchestration("ParentOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
				return ctx.ScheduleSubOrchestration("SimpleOrch", "").Get()
			}))
		env.StartAndWait(t, "bulk-del-completed", "SimpleOrch", "")
		if err := env.Client.StartOrchestration(t.Context(), "bulk-del-running", "WaitOrch", ""); err != nil {
			t.Fatal(err)
		}
		env.WaitForEventSubscription(t, "bulk-del-running", "never")
		r := must(a.DeleteInstanceBulk(t.Context(), duroxide.InstanceFilter{InstanceIDs: []string{"bulk-del-completed", "bulk-del-running"}}))(t)
		if r.InstancesDeleted != 1 {
			t.Errorf("bulk delete: %+v, want only the completed one", r)
		}
		wantGone(t, a, "bulk-del-completed")
		wantExists(t, a, "bulk-del-running")
		must(a.DeleteInstance(t.Context(), "bulk-del-running", true))(t)

		env.StartAndWait(t, "bulk-del-parent", "ParentOrch", "")
		child := "bulk-del-parent::sub::2"
		wantExists(t, a, "bulk-del-parent", child)
		if r := must(a.DeleteInstanceBulk(t.Context(), duroxide.InstanceFilter{InstanceIDs: []string{"bulk-del-parent"}}))(t); r.InstancesDeleted < 1 {
			t.Errorf("bulk delete of the parent: %+v", r)
		}
		wantGone(t, a, "bulk-del-parent", child)
	})
}
