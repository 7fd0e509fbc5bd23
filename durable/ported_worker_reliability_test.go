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

// Ports of duroxide's tests/worker_reliability_test.rs. duroxide kills its
// runtime between an activity's execution and its completion's enqueue; here
// a provider wrapper loses the first completions (the ack returns nil but
// never reaches Redis: what a crash after the activity ran leaves), so the
// items' locks expire and they run again, at least once each.

// lossyAcks drops the first `lose` work acks and, when failAfter is set,
// fails the next one with a retryable error after applying it.
type lossyAcks struct {
	duroxide.Provider
	lose, failAfter atomic.Int32
}

func (p *lossyAcks) AckWorkItem(ctx context.Context, token string, c duroxide.WorkItem) error {
	if p.lose.Add(-1) >= 0 {
		return nil // the crash: nothing written, the lock left to expire
	}
	err := p.Provider.AckWorkItem(ctx, token, c)
	if err == nil && p.failAfter.Add(-1) >= 0 {
		return duroxide.Retryable("ack_work_item", "connection reset after the write")
	}
	return err
}

func lossyEnv(t *testing.T, reg *durable.Registry, lose, failAfter int32) *durabletest.Env {
	p := &lossyAcks{}
	p.lose.Store(lose)
	p.failAfter.Store(failAfter)
	return durabletest.Start(t, reg, durabletest.WithAckFetch(false),
		durabletest.WithOptions(durable.Options{LongPollTimeout: 100 * time.Millisecond, WorkerLockTimeout: time.Second}),
		durabletest.WithProviderWrapper(func(inner duroxide.Provider) duroxide.Provider { p.Provider = inner; return p }))
}

// TestWorkerReliability mirrors the tests of worker_reliability_test.rs.
func TestWorkerReliability(t *testing.T) {
	t.Parallel()
	t.Run("activity_reliability_after_crash_before_completion_enqueue", func(t *testing.T) {
		t.Parallel()
		var runs atomic.Int32
		env := lossyEnv(t, durable.NewRegistry().
			MustAddActivity("TestActivity", func(_ *durable.ActivityContext, in string) (string, error) {
				runs.Add(1)
				return "Processed: " + in, nil
			}).
			MustAddOrchestration("O", func(ctx *durable.OrchestrationContext, in string) (string, error) {
				r, err := ctx.ScheduleActivity("TestActivity", in).Get()
				return "Activity result: " + r, err
			}), 1, 0)
		mustComplete(t, env.StartAndWait(t, "worker-crash", "O", "test-data"), "Activity result: Processed: test-data")
		if n := runs.Load(); n != 2 {
			t.Errorf("activity ran %d times, want 2 (once lost, once redelivered)", n)
		}
		if n := countEvents(read(t, env, "worker-crash"), "ActivityCompleted"); n != 1 {
			t.Errorf("%d ActivityCompleted, want 1", n)
		}
	})
	t.Run("multiple_activities_reliability_after_crash", func(t *testing.T) {
		t.Parallel()
		var runs atomic.Int32
		env := lossyEnv(t, durable.NewRegistry().
			MustAddActivity("Task", func(_ *durable.ActivityContext, in string) (string, error) {
				runs.Add(1)
				return "done-" + in, nil
			}).
			MustAddOrchestration("O", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
				r, err := joined(ctx, ctx.ScheduleActivity("Task", "1"), ctx.ScheduleActivity("Task", "2"), ctx.ScheduleActivity("Task", "3"))
				return "All activities completed: " + r, err
			}), 3, 0)
		mustComplete(t, env.StartAndWait(t, "multi-crash", "O", ""), "All activities completed: done-1,done-2,done-3")
		if n := runs.Load(); n != 6 {
			t.Errorf("activities ran %d times, want 6 (three lost, three redelivered)", n)
		}
		if n := countEvents(read(t, env, "multi-crash"), "ActivityCompleted"); n != 3 {
			t.Errorf("%d ActivityCompleted, want 3", n)
		}
	})
	t.Run("worker_abandon_on_ack_failure_enables_retry", func(t *testing.T) {
		t.Parallel()
		var runs atomic.Int32
		env := lossyEnv(t, durable.NewRegistry().
			MustAddActivity("CountingActivity", func(*durable.ActivityContext, string) (string, error) {
				runs.Add(1)
				return "done", nil
			}).
			MustAddOrchestration("AckFailOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
				return ctx.ScheduleActivity("CountingActivity", "{}").Get()
			}), 0, 1)
		st := env.StartAndWait(t, "ack-fail-test", "AckFailOrch", "")
		mustComplete(t, st, "done")
		if runs.Load() < 1 || countEvents(read(t, env, "ack-fail-test"), "ActivityCompleted") != 1 {
			t.Errorf("ran %d times, history %s", runs.Load(), strings.Join(kindsOf(read(t, env, "ack-fail-test")), ","))
		}
	})
}
