package durable_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// flakyAcks fails the first n orchestration acks with err, and counts the
// batches the runtime abandons.
type flakyAcks struct {
	duroxide.Provider
	left      atomic.Int32
	err       error
	abandoned atomic.Int32
}

func (f *flakyAcks) AbandonOrchestrationItem(ctx context.Context, token string, delay time.Duration, ignoreAttempt bool) error {
	err := f.Provider.AbandonOrchestrationItem(ctx, token, delay, ignoreAttempt)
	if err == nil {
		f.abandoned.Add(1)
	}
	return err
}

func (f *flakyAcks) AckOrchestrationItem(ctx context.Context, token string, c duroxide.OrchestrationCommit) error {
	if f.left.Add(-1) >= 0 {
		return f.err
	}
	return f.Provider.AckOrchestrationItem(ctx, token, c)
}

func flakyEnv(t *testing.T, failures int32, err error, opts ...durabletest.Option) (*durabletest.Env, *flakyAcks) {
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Echo", func(_ *durable.OrchestrationContext, in string) (string, error) { return in, nil })
	f := &flakyAcks{err: err}
	f.left.Store(failures)
	env := durabletest.Start(t, reg, append(opts, durabletest.WithProviderWrapper(func(p duroxide.Provider) duroxide.Provider {
		f.Provider = p
		return f
	}))...)
	return env, f
}

func TestE2ETransientAckFailuresAreRetriedThenAbandoned(t *testing.T) {
	t.Parallel()
	// Six failures outlast the five quick retries: the batch is abandoned
	// and redone, and the instance still completes normally.
	env, f := flakyEnv(t, 6, duroxide.Retryable("ack_orchestration_item", "connection reset"))
	if err := env.Client.StartOrchestration(t.Context(), "echo", "Echo", "hi"); err != nil {
		t.Fatal(err)
	}
	durabletest.Eventually(t, "the batch abandoned after the quick retries", func() (bool, error) {
		return f.abandoned.Load() == 1, nil
	})
	if n := f.left.Load(); n != 0 {
		t.Fatalf("abandoned with %d ack failures left, want after all 6", n)
	}
	env.Advance(2 * time.Second) // the abandon delay
	mustComplete(t, env.Wait(t, "echo"), "hi")
}

func TestE2EPermanentAckFailureFailsTheInstance(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2EPermanentAckFailureFailsTheInstance)
}

func testE2EPermanentAckFailureFailsTheInstance(t *testing.T, backend durabletest.Backend) {
	env, _ := flakyEnv(t, 1, duroxide.Permanent("ack_orchestration_item", "history too large"), durabletest.WithBackend(backend))
	st := env.StartAndWait(t, "echo", "Echo", "hi")
	if st.Status != durable.StatusFailed || st.Failure.Infrastructure == nil ||
		st.FailureMessage() != "infrastructure:ack_orchestration_item: history too large" {
		t.Fatalf("status %v %q", st.Status, st.FailureMessage())
	}
}

func TestE2ELocksAreRenewedForLongWork(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2ELocksAreRenewedForLongWork)
}

func testE2ELocksAreRenewedForLongWork(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry()
	var activityRuns, turnRuns atomic.Int32
	reg.MustAddActivity("Long", func(_ *durable.ActivityContext, _ string) (string, error) {
		activityRuns.Add(1)
		time.Sleep(2500 * time.Millisecond) // sleep: work longer than its 2 s lock, in real time, so only renewal keeps the lock
		return "done", nil
	})
	reg.MustAddOrchestration("LongActivity", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.ScheduleActivity("Long", "").Get()
	})
	reg.MustAddOrchestration("LongTurn", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if !ctx.IsReplaying() {
			turnRuns.Add(1)
			time.Sleep(2500 * time.Millisecond) // sleep: a turn longer than its 2 s lock, in real time, so only renewal keeps the lock
		}
		return "turned", nil
	})
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend), durabletest.WithOptions(durable.Options{
		LongPollTimeout: 100 * time.Millisecond, OrchestratorLockTimeout: 2 * time.Second, WorkerLockTimeout: 2 * time.Second,
		OrchestrationConcurrency: 2, WorkerConcurrency: 2,
	}))
	ctx := t.Context()
	for _, s := range [][2]string{{"la", "LongActivity"}, {"lt", "LongTurn"}} {
		if err := env.Client.StartOrchestration(ctx, s[0], s[1], ""); err != nil {
			t.Fatal(err)
		}
	}
	mustComplete(t, env.Wait(t, "la"), "done")
	mustComplete(t, env.Wait(t, "lt"), "turned")
	if activityRuns.Load() != 1 || turnRuns.Load() != 1 {
		t.Fatalf("activity ran %d times, turn ran %d times: a lock expired under running work", activityRuns.Load(), turnRuns.Load())
	}
}

func TestE2ESessionStaysWithItsOwnerAcrossIdleGaps(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2ESessionStaysWithItsOwnerAcrossIdleGaps)
}

func testE2ESessionStaysWithItsOwnerAcrossIdleGaps(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry()
	reg.MustAddActivity("Node", func(ctx *durable.ActivityContext, _ string) (string, error) {
		id := ctx.WorkerID()
		return id[strings.LastIndex(id, "-node-")+1:], nil
	})
	reg.MustAddOrchestration("Pinned", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		first, err := ctx.ScheduleActivity("Node", "", durable.WithSession("s")).Get()
		if err != nil {
			return "", err
		}
		// Longer than the session lease: only renewal keeps it with its owner.
		if _, err := ctx.Timer(3 * time.Second).Get(); err != nil {
			return "", err
		}
		second, err := ctx.ScheduleActivity("Node", "", durable.WithSession("s")).Get()
		return first + "," + second, err
	})
	opts := func(node string) durable.Options {
		return durable.Options{
			LongPollTimeout: 100 * time.Millisecond, WorkerNodeID: node,
			SessionLockTimeout: 2 * time.Second, SessionIdleTimeout: 30 * time.Second,
		}
	}
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend), durabletest.WithOptions(opts("node-a")))
	other, err := durable.NewRuntime(env.Provider, reg, opts("node-b"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Shutdown(context.Background()) })
	st := env.StartAndWait(t, "pinned", "Pinned", "")
	if st.Status != durable.StatusCompleted {
		t.Fatalf("status %v %s", st.Status, st.FailureMessage())
	}
	nodes := strings.Split(st.Output, ",")
	if len(nodes) != 2 || nodes[0] != nodes[1] || !strings.HasPrefix(nodes[0], "node-") {
		t.Fatalf("session ran on %q", st.Output)
	}
}
