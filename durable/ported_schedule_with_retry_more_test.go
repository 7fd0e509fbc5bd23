package durable_test

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// More ports of duroxide's tests/schedule_with_retry_tests.rs, on
// durabletest.Env.

// TestLargeMaxAttemptsIntegration mirrors test_large_max_attempts_integration:
// a policy of 20 attempts carries an activity through 9 failures.
func TestLargeMaxAttemptsIntegration(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	reg := durable.NewRegistry().
		MustAddActivity("FlakyActivity", flaky(&n, 10)).
		MustAddOrchestration("RetryOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleActivityWithRetry("FlakyActivity", "", durable.RetryPolicy{MaxAttempts: 20, Backoff: durable.Backoff{Kind: durable.BackoffNone}}).Get()
		})
	env := durabletest.Start(t, reg)
	mustComplete(t, env.StartAndWait(t, "retry-large-1", "RetryOrch", ""), "done")
	if n.Load() != 10 {
		t.Fatalf("%d attempts, want 10", n.Load())
	}
}

// TestReplayWithStaleEventsInHistory mirrors test_replay_with_stale_events_in_history:
// the replays of a retried activity's turns do not run it again.
func TestReplayWithStaleEventsInHistory(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	reg := durable.NewRegistry().
		MustAddActivity("CountedActivity", flaky(&n, 1)).
		MustAddOrchestration("ReplayOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleActivityWithRetry("CountedActivity", "", durable.RetryPolicy{MaxAttempts: 3, Backoff: durable.Backoff{Kind: durable.BackoffNone}}).Get()
		})
	env := durabletest.Start(t, reg)
	mustComplete(t, env.StartAndWait(t, "replay-1", "ReplayOrch", ""), "done")
	if n.Load() != 1 {
		t.Fatalf("the activity ran %d times, want 1", n.Load())
	}
}

// TestTimeoutHistoryReplaysCorrectly mirrors test_timeout_history_replays_correctly:
// a retry timeout is a durable timer that fires in history.
func TestTimeoutHistoryReplaysCorrectly(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("SlowActivity", untilCancelled).
		MustAddOrchestration("TimeoutOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			v, err := ctx.ScheduleActivityWithRetry("SlowActivity", "", durable.RetryPolicy{MaxAttempts: 1, Timeout: 50 * msec}).Get()
			if err != nil {
				return "error:" + err.Error(), nil
			}
			return v, nil
		})
	env := durabletest.Start(t, reg)
	st := env.StartAndWait(t, "timeout-replay-1", "TimeoutOrch", "")
	if st.Status != durable.StatusCompleted || !strings.Contains(st.Output, "timeout") {
		t.Fatalf("status %v output %q, want a timeout error as output", st.Status, st.Output)
	}
	hist := read(t, env, "timeout-replay-1")
	if countEvents(hist, "TimerCreated") < 1 || countEvents(hist, "TimerFired") < 1 {
		t.Fatalf("history %v: want the deadline's TimerCreated and TimerFired", kindsOf(hist))
	}
}

// TestActivityCompletesAfterContinueAsNew mirrors test_activity_completes_after_continue_as_new:
// each execution runs its own activity once.
func TestActivityCompletesAfterContinueAsNew(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	reg := durable.NewRegistry().
		MustAddActivity("TrackedActivity", func(_ *durable.ActivityContext, in string) (string, error) {
			return fmt.Sprintf("exec%d:%s", n.Add(1)-1, in), nil
		}).
		MustAddOrchestration("CANOrch", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			count, _ := strconv.Atoi(in)
			r, err := ctx.ScheduleActivity("TrackedActivity", in).Get()
			if err != nil {
				return "", err
			}
			if count < 2 {
				ctx.ContinueAsNew(strconv.Itoa(count + 1))
				return "", nil
			}
			return r, nil
		})
	env := durabletest.Start(t, reg)
	mustComplete(t, env.StartAndWait(t, "can-stale-1", "CANOrch", "0"), "exec2:2")
	if n.Load() != 3 {
		t.Fatalf("%d activity runs, want 3", n.Load())
	}
}

// TestRetryTimeoutWithContinueAsNew mirrors test_retry_timeout_with_continue_as_new:
// retries exhausted in execution 1 continue as new, where they succeed.
func TestRetryTimeoutWithContinueAsNew(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	reg := durable.NewRegistry().
		MustAddActivity("FlakyActivity", func(_ *durable.ActivityContext, in string) (string, error) {
			a := n.Add(1)
			if in == "0" {
				return "", fmt.Errorf("fail exec0 attempt%d", a)
			}
			return fmt.Sprintf("success exec%s attempt%d", in, a), nil
		}).
		MustAddOrchestration("RetryCANOrch", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			exec, _ := strconv.Atoi(in)
			v, err := ctx.ScheduleActivityWithRetry("FlakyActivity", in, durable.RetryPolicy{MaxAttempts: 2, Backoff: durable.Backoff{Kind: durable.BackoffNone}}).Get()
			if err != nil && exec < 1 {
				ctx.ContinueAsNew(strconv.Itoa(exec + 1))
				return "", nil
			}
			return v, err
		})
	env := durabletest.Start(t, reg)
	mustComplete(t, env.StartAndWait(t, "retry-can-1", "RetryCANOrch", "0"), "success exec1 attempt3")
}

// TestRetryOnSession mirrors retry_on_session_all_attempts_fail and
// retry_on_session_typed_round_trip: retries of an activity pinned to a
// session (Rust's schedule_activity_with_retry_on_session[_typed]) is
// ScheduleActivityWithRetry with WithSession.
func TestRetryOnSession(t *testing.T) {
	t.Parallel()
	t.Run("retry_on_session_all_attempts_fail", func(t *testing.T) {
		t.Parallel()
		reg := durable.NewRegistry().
			MustAddActivity("AlwaysFail", func(*durable.ActivityContext, string) (string, error) { return "", fmt.Errorf("nope") }).
			MustAddOrchestration("RetrySessionFail", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
				session, err := ctx.NewGUID().Get()
				if err != nil {
					return "", err
				}
				return ctx.ScheduleActivityWithRetry("AlwaysFail", "", durable.RetryPolicy{MaxAttempts: 2, Backoff: durable.Backoff{Kind: durable.BackoffNone}}, durable.WithSession(session)).Get()
			})
		env := durabletest.Start(t, reg)
		st := env.StartAndWait(t, "retry-sess-fail", "RetrySessionFail", "")
		if st.Status != durable.StatusFailed || !strings.Contains(st.FailureMessage(), "nope") {
			t.Fatalf("status %v %q, want Failed with nope", st.Status, st.FailureMessage())
		}
		if n := countEvents(read(t, env, "retry-sess-fail"), "ActivityFailed"); n != 2 {
			t.Fatalf("%d ActivityFailed, want 2", n)
		}
	})
	t.Run("retry_on_session_typed_round_trip", func(t *testing.T) {
		t.Parallel()
		type query struct {
			SQL string `json:"sql"`
		}
		type queryResult struct {
			Rows int `json:"rows"`
		}
		var n atomic.Int32
		var mu sync.Mutex
		var sessions []string
		reg := durable.NewRegistry().
			MustAddActivity("TypedSessionAct", durable.Activity(func(ctx *durable.ActivityContext, q query) (queryResult, error) {
				s, _ := ctx.SessionID()
				mu.Lock()
				sessions = append(sessions, s)
				mu.Unlock()
				if n.Add(1) < 2 || q.SQL != "SELECT 1" {
					return queryResult{}, fmt.Errorf("transient")
				}
				return queryResult{42}, nil
			})).
			MustAddOrchestration("TypedRetrySession", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
				session, err := ctx.NewGUID().Get()
				if err != nil {
					return "", err
				}
				r, err := durable.ScheduleActivityWithRetry[queryResult](ctx, "TypedSessionAct", query{"SELECT 1"},
					durable.RetryPolicy{MaxAttempts: 3, Backoff: durable.Backoff{Kind: durable.BackoffNone}}, durable.WithSession(session)).Get()
				return fmt.Sprintf("rows=%d", r.Rows), err
			})
		env := durabletest.Start(t, reg)
		mustComplete(t, env.StartAndWait(t, "typed-retry-sess", "TypedRetrySession", ""), "rows=42")
		mu.Lock()
		defer mu.Unlock()
		if n.Load() != 2 || len(sessions) != 2 || sessions[0] == "" || sessions[0] != sessions[1] {
			t.Fatalf("%d attempts on sessions %q, want 2 on one session", n.Load(), sessions)
		}
	})
}
