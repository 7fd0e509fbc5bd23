package durable_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// Ports of duroxide's tests/scenarios/ (production regressions). Tests are named
// after the scenario file and test. The tokio single-thread mode has no Go
// counterpart; its 1x1-concurrency cases run on a runtime with one dispatcher
// goroutine and one worker.

// TestVersionReplayBugE2eReplayCompletionOnlyMustUseVersionFromHistory mirrors
// version_replay_bug.rs e2e_replay_completion_only_must_use_version_from_history: a
// turn whose batch holds only a completion replays the version in history, not the
// latest one.
func TestVersionReplayBugE2eReplayCompletionOnlyMustUseVersionFromHistory(t *testing.T) {
	t.Parallel()
	var v102, v103 atomic.Int32
	reg := durable.NewRegistry().
		MustAddActivity("system-prune", func(_ *durable.ActivityContext, in string) (string, error) { return "pruned:" + in, nil }).
		MustAddActivity("system-prune-2", func(_ *durable.ActivityContext, in string) (string, error) { return "pruned-v2:" + in, nil }).
		MustAddOrchestrationVersion("SystemPruner", "1.0.2", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			v102.Add(1)
			return ctx.ScheduleActivity("system-prune", "prune-input").Get()
		}).
		MustAddOrchestrationVersion("SystemPruner", "1.0.3", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			v103.Add(1)
			return ctx.ScheduleActivity("system-prune-2", "prune-input").Get()
		})
	// Without the instance cache the completion-only turn replays the code,
	// which is what this scenario checks (a cached turn resumes it instead).
	h := newHarnessWith(t, reg, durable.Options{InstanceCacheEntries: -1})
	if err := h.client.StartOrchestration(h.ctx, "issue49-repro", "SystemPruner", "test-input", durable.WithVersion("1.0.2")); err != nil {
		t.Fatal(err)
	}
	h.wantCompleted("issue49-repro", "pruned:prune-input")
	if v102.Load() < 2 || v103.Load() != 0 {
		t.Errorf("1.0.2 ran %d times, 1.0.3 %d times; want the replay (>=2 runs) on 1.0.2 only", v102.Load(), v103.Load())
	}
}

// TestVersionReplayBugE2eReplayCompletionOnlyAfterCanMustUseVersionFromHistory mirrors
// e2e_replay_completion_only_after_can_must_use_version_from_history: the same for a
// second execution started on an explicit older version.
func TestVersionReplayBugE2eReplayCompletionOnlyAfterCanMustUseVersionFromHistory(t *testing.T) {
	t.Parallel()
	var v2 atomic.Int32
	reg := durable.NewRegistry().
		MustAddActivity("Work", func(_ *durable.ActivityContext, in string) (string, error) { return "work:" + in, nil }).
		MustAddOrchestrationVersion("Pruner", "1.0.0", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			if input == "first" {
				ctx.ContinueAsNew("second", durable.WithVersion("1.0.0"))
			}
			return ctx.ScheduleActivity("Work", input).Get()
		}).
		MustAddOrchestrationVersion("Pruner", "2.0.0", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			v2.Add(1)
			return "v2:" + input, nil
		})
	h := newHarness(t, reg)
	if err := h.client.StartOrchestration(h.ctx, "can-version", "Pruner", "first", durable.WithVersion("1.0.0")); err != nil {
		t.Fatal(err)
	}
	h.wantCompleted("can-version", "work:second")
	if v2.Load() != 0 || h.startedVersion("can-version", 2) != "1.0.0" {
		t.Errorf("2.0.0 ran %d times, execution 2 recorded %q; want 0 and 1.0.0", v2.Load(), h.startedVersion("can-version", 2))
	}
}

// TestToygresContinueAsNewChain5Iterations mirrors toygres.rs
// continue_as_new_chain_5_iterations (with an activity per iteration, as in
// continue_as_new_chain_with_activities).
func TestToygresContinueAsNewChain5Iterations(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Check", func(_ *durable.ActivityContext, in string) (string, error) { return "checked-" + in, nil }).
		MustAddOrchestration("Chain", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			var n int
			fmt.Sscan(input, &n)
			r, err := ctx.ScheduleActivity("Check", fmt.Sprint(n)).Get()
			if err != nil {
				return "", err
			}
			if n < 4 {
				ctx.ContinueAsNew(fmt.Sprint(n + 1))
			}
			return r, nil
		})
	h := newHarness(t, reg)
	h.start("toygres-chain", "Chain", "0")
	h.wantCompleted("toygres-chain", "checked-4")
	h.wantExecutions("toygres-chain", 1, 2, 3, 4, 5)
}

// TestToygresConcurrentContinueAsNewChains mirrors concurrent_continue_as_new_chains.
func TestToygresConcurrentContinueAsNewChains(t *testing.T) {
	t.Parallel()
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("Counter", counterUntil(3)))
	for i := 0; i < 5; i++ {
		h.start(fmt.Sprint("chain-", i), "Counter", "0")
	}
	for i := 0; i < 5; i++ {
		h.wantCompleted(fmt.Sprint("chain-", i), "done:3")
		h.wantExecutions(fmt.Sprint("chain-", i), 1, 2, 3, 4)
	}
}

// TestToygresInstanceActorPattern mirrors instance_actor_pattern_stress_test, scaled
// down: an actor that health-checks, sleeps, keeps its state in the input and
// continues as new until told to stop. The stop signal is a queue message, which
// waits for the next round (and is carried over a continue-as-new), where a
// positional event raised between two subscriptions would be lost.
func TestToygresInstanceActorPattern(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("HealthCheck", func(_ *durable.ActivityContext, in string) (string, error) { return "healthy", nil }).
		MustAddOrchestration("InstanceActor", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			var round int
			fmt.Sscan(input, &round)
			if _, err := ctx.ScheduleActivity("HealthCheck", input).Get(); err != nil {
				return "", err
			}
			stop := ctx.Dequeue("stop")
			if ctx.Select(stop, ctx.Timer(20*msec)) == 0 {
				return fmt.Sprint("stopped after ", round), nil
			}
			ctx.ContinueAsNew(fmt.Sprint(round + 1))
			return "", nil
		})
	h := newHarness(t, reg)
	h.start("actor-1", "InstanceActor", "0")
	h.awaitEvents("actor-1", 4, 2) // a few rounds in
	h.enqueueEvent("actor-1", "stop", "")
	st := h.wait("actor-1")
	var round int
	if _, err := fmt.Sscanf(st.Output, "stopped after %d", &round); err != nil || round < 3 {
		t.Fatalf("output %q (failure %q), want a stop after at least 3 rounds", st.Output, st.FailureMessage())
	}
	execs, _ := h.client.Admin().ListExecutions(h.ctx, "actor-1")
	if len(execs) != round+1 {
		t.Errorf("%d executions for %d rounds", len(execs), round+1)
	}
}

// TestRollingDeploymentE2eRollingDeploymentThreeNodes mirrors rolling_deployment.rs
// e2e_rolling_deployment_three_nodes: three runtimes share one store, are replaced
// one by one while instances run, and every instance completes exactly once.
func TestRollingDeploymentE2eRollingDeploymentThreeNodes(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	reg := func() *durable.Registry {
		return durable.NewRegistry().
			MustAddActivity("Step", func(_ *durable.ActivityContext, in string) (string, error) {
				runs.Add(1)
				return in, nil
			}).
			MustAddOrchestration("Rolling", func(ctx *durable.OrchestrationContext, input string) (string, error) {
				out := ""
				for i := 0; i < 3; i++ {
					s, err := ctx.ScheduleActivity("Step", fmt.Sprint(i)).Get()
					if err != nil {
						return "", err
					}
					out += s
					if _, err := ctx.Timer(10 * msec).Get(); err != nil {
						return "", err
					}
				}
				return input + ":" + out, nil
			})
	}
	h := newHarness(t, reg())
	nodes := []*durable.Runtime{}
	for i := 0; i < 2; i++ {
		rt, err := durable.NewRuntime(h.p, reg(), durable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, rt)
	}
	for i := 0; i < 6; i++ {
		h.start(fmt.Sprint("roll-", i), "Rolling", fmt.Sprint(i))
	}
	// Replace the nodes one at a time while the instances run.
	for i, rt := range nodes {
		shutdownRuntime(t, rt)
		next, err := durable.NewRuntime(h.p, reg(), durable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		nodes[i] = next
	}
	h.restart(reg(), durable.Options{})
	for i := 0; i < 6; i++ {
		h.wantCompleted(fmt.Sprint("roll-", i), fmt.Sprintf("%d:012", i))
	}
	for _, rt := range nodes {
		shutdownRuntime(t, rt)
	}
	if runs.Load() < 18 {
		t.Errorf("%d activity runs for 6 instances of 3 steps", runs.Load())
	}
}

// TestSingleThreadSingleConcurrency mirrors single_thread.rs
// single_thread_single_concurrency (and _basic_orchestration, _sequential_activities,
// _timer_handling, _continue_as_new, _concurrent_orchestrations): one dispatcher and
// one worker still serve several instances of each kind.
func TestSingleThreadSingleConcurrency(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Echo", func(_ *durable.ActivityContext, in string) (string, error) { return in, nil }).
		MustAddOrchestration("Seq", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			out := ""
			for i := 0; i < 3; i++ {
				s, err := ctx.ScheduleActivity("Echo", fmt.Sprint(i)).Get()
				if err != nil {
					return "", err
				}
				out += s
			}
			_, err := ctx.Timer(10 * msec).Get()
			return input + out, err
		}).
		MustAddOrchestration("Counter", counterUntil(2))
	h := newHarnessWith(t, reg, durable.Options{OrchestrationConcurrency: 1, WorkerConcurrency: 1})
	for i := 0; i < 4; i++ {
		h.start(fmt.Sprint("st-seq-", i), "Seq", fmt.Sprint(i, ":"))
	}
	h.start("st-can", "Counter", "0")
	for i := 0; i < 4; i++ {
		h.wantCompleted(fmt.Sprint("st-seq-", i), fmt.Sprint(i, ":012"))
	}
	h.wantCompleted("st-can", "done:2")
}

// TestSingleThread1x1CooperativeActivityCancellation mirrors
// single_thread_1x1_cooperative_activity_cancellation.
func TestSingleThread1x1CooperativeActivityCancellation(t *testing.T) {
	t.Parallel()
	started, cancelled := make(chan string, 1), make(chan string, 1)
	reg := durable.NewRegistry().
		MustAddActivity("Cooperative", signalOnCancel(started, cancelled)).
		MustAddOrchestration("Orch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleActivity("Cooperative", "x").Get()
		})
	opts := quickCancelOptions
	opts.OrchestrationConcurrency, opts.WorkerConcurrency = 1, 1
	h := newHarnessWith(t, reg, opts)
	h.start("st-coop", "Orch", "")
	receive(t, started, "the activity to start")
	h.cancel("st-coop", "stop")
	receive(t, cancelled, "the activity to see its cancellation")
	h.wantCancelled("st-coop", "stop")
}

// TestSingleThread1x1RunawayActivityAborted mirrors
// single_thread_1x1_runaway_activity_aborted: an activity that ignores its
// cancellation is abandoned after the grace period, and the single worker moves on.
func TestSingleThread1x1RunawayActivityAborted(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	reg := durable.NewRegistry().
		MustAddActivity("Runaway", func(*durable.ActivityContext, string) (string, error) {
			<-release
			return "late", nil
		}).
		MustAddActivity("Next", constActivity("next-ran")).
		MustAddOrchestration("Orch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleActivity("Runaway", "x").Get()
		}).
		MustAddOrchestration("After", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleActivity("Next", "").Get()
		})
	opts := quickCancelOptions
	opts.OrchestrationConcurrency, opts.WorkerConcurrency, opts.ActivityCancellationGracePeriod = 1, 1, 200*time.Millisecond
	h := newHarnessWith(t, reg, opts)
	h.start("st-runaway", "Orch", "")
	h.awaitEvent("st-runaway", "ActivityScheduled")
	h.cancel("st-runaway", "stop")
	h.wantCancelled("st-runaway", "stop")
	h.start("st-after", "After", "")
	h.wantCompleted("st-after", "next-ran")
}
