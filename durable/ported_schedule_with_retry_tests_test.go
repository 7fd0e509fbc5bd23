package durable_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// Ports of duroxide's tests/schedule_with_retry_tests.rs. The Rust builder tests
// (RetryPolicy::new, with_timeout, with_backoff, new(0) panicking) have no Go
// counterpart: RetryPolicy is a plain struct whose zero MaxAttempts means the default.

// TestRetryPolicyDefault mirrors test_retry_policy_default: the zero policy retries 3
// times with exponential backoff from 100ms doubling up to 30s.
func TestRetryPolicyDefault(t *testing.T) {
	t.Parallel()
	var p durable.RetryPolicy
	want := []time.Duration{100 * msec, 200 * msec, 400 * msec}
	for i, w := range want {
		if got := p.DelayForAttempt(uint32(i + 1)); got != w {
			t.Errorf("default delay for attempt %d = %v, want %v", i+1, got, w)
		}
	}
	if got := p.DelayForAttempt(100); got != 30*time.Second {
		t.Errorf("default delay for attempt 100 = %v, want the 30s cap", got)
	}
	if p.Timeout != 0 {
		t.Errorf("default timeout %v, want none", p.Timeout)
	}
}

// TestBackoffDelays mirrors the BackoffStrategy unit tests, one subtest each.
func TestBackoffDelays(t *testing.T) {
	t.Parallel()
	exp := func(base time.Duration, mult float64, max time.Duration) durable.Backoff {
		return durable.Backoff{Kind: durable.BackoffExponential, Base: base, Multiplier: mult, Max: max}
	}
	cases := []struct {
		name    string
		backoff durable.Backoff
		want    map[uint32]time.Duration
	}{
		{"test_backoff_none_always_zero", durable.Backoff{Kind: durable.BackoffNone}, map[uint32]time.Duration{1: 0, 2: 0, 100: 0}},
		{"test_backoff_fixed_same_delay", durable.Backoff{Kind: durable.BackoffFixed, Base: 5 * time.Second},
			map[uint32]time.Duration{1: 5 * time.Second, 2: 5 * time.Second, 10: 5 * time.Second, 100: 5 * time.Second}},
		// Rust can say "zero delay" explicitly; in Go a zero field means its default
		// (issue 28: a Base-only exponential backoff collapsed to 0 after one retry),
		// so these three zero-base cases wait the default Base of 100ms. BackoffNone
		// is Go's "retry at once".
		{"test_backoff_fixed_zero_delay", durable.Backoff{Kind: durable.BackoffFixed}, map[uint32]time.Duration{1: 100 * msec, 5: 100 * msec}},
		{"test_backoff_linear_multiplies_by_attempt", durable.Backoff{Kind: durable.BackoffLinear, Base: 100 * msec, Max: 10 * time.Second},
			map[uint32]time.Duration{1: 100 * msec, 2: 200 * msec, 3: 300 * msec, 10: time.Second}},
		{"test_backoff_linear_respects_max", durable.Backoff{Kind: durable.BackoffLinear, Base: time.Second, Max: 5 * time.Second},
			map[uint32]time.Duration{1: time.Second, 5: 5 * time.Second, 10: 5 * time.Second, 100: 5 * time.Second}},
		{"test_backoff_linear_zero_base", durable.Backoff{Kind: durable.BackoffLinear, Max: 10 * time.Second}, map[uint32]time.Duration{1: 100 * msec, 100: 10 * time.Second}},
		{"test_backoff_exponential_doubles", exp(100*msec, 2, time.Minute),
			map[uint32]time.Duration{1: 100 * msec, 2: 200 * msec, 3: 400 * msec, 4: 800 * msec}},
		{"test_backoff_exponential_respects_max", exp(100*msec, 2, 500*msec),
			map[uint32]time.Duration{1: 100 * msec, 2: 200 * msec, 3: 400 * msec, 4: 500 * msec, 10: 500 * msec}},
		{"test_backoff_exponential_different_multiplier", exp(100*msec, 3, time.Minute),
			map[uint32]time.Duration{1: 100 * msec, 2: 300 * msec, 3: 900 * msec}},
		{"test_backoff_exponential_multiplier_one", exp(500*msec, 1, time.Minute),
			map[uint32]time.Duration{1: 500 * msec, 5: 500 * msec, 100: 500 * msec}},
		{"test_backoff_exponential_large_attempt_no_overflow", exp(100*msec, 2, 30*time.Second), map[uint32]time.Duration{1000: 30 * time.Second}},
		{"test_backoff_exponential_zero_base", exp(0, 2, 30*time.Second), map[uint32]time.Duration{1: 100 * msec, 100: 30 * time.Second}},
		{"test_policy_delay_for_attempt_delegates", durable.Backoff{Kind: durable.BackoffFixed, Base: 2 * time.Second},
			map[uint32]time.Duration{1: 2 * time.Second, 5: 2 * time.Second}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := durable.RetryPolicy{MaxAttempts: 5, Backoff: c.backoff}
			for attempt, want := range c.want {
				if got := p.DelayForAttempt(attempt); got != want {
					t.Errorf("delay for attempt %d = %v, want %v", attempt, got, want)
				}
			}
		})
	}
}

// flaky fails until attempt okFrom (counting from 1), then answers "done"; okFrom 0
// never succeeds. It counts its attempts in n.
func flaky(n *atomic.Int32, okFrom int32) durable.ActivityFunc {
	return func(*durable.ActivityContext, string) (string, error) {
		a := n.Add(1)
		if okFrom == 0 || a < okFrom {
			return "", fmt.Errorf("fail on attempt %d", a)
		}
		return "done", nil
	}
}

// retryOrch runs activity name with policy; a final failure becomes the output
// "error: <message>", as the Rust tests accept it either as output or failure.
func retryOrch(name string, policy durable.RetryPolicy) durable.OrchestrationFunc {
	return func(ctx *durable.OrchestrationContext, input string) (string, error) {
		out, err := ctx.ScheduleActivityWithRetry(name, input, policy).Get()
		if err != nil {
			return "error: " + err.Error(), nil
		}
		return out, nil
	}
}

// TestRetryAttempts mirrors the retry tests whose activity fails a known number of
// times, one subtest each: how many attempts ran, the output, and the events the
// retries left (backoff timers, failures, schedules).
func TestRetryAttempts(t *testing.T) {
	t.Parallel()
	none := durable.Backoff{Kind: durable.BackoffNone}
	cases := []struct {
		name     string
		okFrom   int32 // flaky's first good attempt; 0: never
		policy   durable.RetryPolicy
		output   string
		attempts int32          // 0: not counted
		events   map[string]int // wire type -> count in history
	}{
		{"test_activity_succeeds_first_attempt", 1, durable.RetryPolicy{MaxAttempts: 3}, "done", 1, map[string]int{"TimerCreated": 0}},
		{"test_activity_fails_then_succeeds", 3, durable.RetryPolicy{MaxAttempts: 5, Backoff: none}, "done", 3, nil},
		// the last attempt's error is returned
		{"test_activity_exhausts_all_attempts", 0, durable.RetryPolicy{MaxAttempts: 3, Backoff: none}, "error: fail on attempt 3", 0, map[string]int{"ActivityFailed": 3}},
		{"test_single_attempt_fails", 0, durable.RetryPolicy{MaxAttempts: 1}, "error: fail on attempt 1", 0, map[string]int{"ActivityScheduled": 1}},
		// one durable timer per retry
		{"test_retry_with_fixed_backoff", 3, durable.RetryPolicy{MaxAttempts: 5, Backoff: durable.Backoff{Kind: durable.BackoffFixed, Base: 50 * msec}}, "done", 0, map[string]int{"TimerCreated": 2}},
		{"test_retry_with_no_backoff", 3, durable.RetryPolicy{MaxAttempts: 5, Backoff: none}, "done", 0, map[string]int{"TimerCreated": 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var n atomic.Int32
			reg := durable.NewRegistry().
				MustAddActivity("Flaky", flaky(&n, c.okFrom)).
				MustAddOrchestration("RetryOrch", retryOrch("Flaky", c.policy))
			h := newHarness(t, reg)
			h.start("retry-1", "RetryOrch", "input")
			h.wantCompleted("retry-1", c.output)
			if c.attempts != 0 && n.Load() != c.attempts {
				t.Errorf("%d attempts, want %d", n.Load(), c.attempts)
			}
			hist := h.history("retry-1")
			for typ, want := range c.events {
				if got := countEvents(hist, typ); got != want {
					t.Errorf("%d %s events, want %d", got, typ, want)
				}
			}
		})
	}
}

// TestTimeoutFiresBeforeSuccess mirrors test_timeout_fires_before_success.
func TestTimeoutFiresBeforeSuccess(t *testing.T) {
	t.Parallel()
	var h *harness
	reg := durable.NewRegistry().
		MustAddActivity("SlowActivity", func(ctx *durable.ActivityContext, in string) (string, error) { return h.blockUntilCancelled(ctx, in) }).
		MustAddOrchestration("RetryOrch", retryOrch("SlowActivity", durable.RetryPolicy{MaxAttempts: 3, Timeout: 100 * msec}))
	h = newHarness(t, reg)
	h.start("retry-timeout-1", "RetryOrch", "")
	if st := h.wait("retry-timeout-1"); !strings.Contains(st.Output, "timeout") {
		t.Fatalf("output %q (failure %q), want a timeout error", st.Output, st.FailureMessage())
	}
}

// TestSuccessBeforeTimeout mirrors test_success_before_timeout.
func TestSuccessBeforeTimeout(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("FastActivity", func(_ *durable.ActivityContext, in string) (string, error) { return "fast:" + in, nil }).
		MustAddOrchestration("RetryOrch", retryOrch("FastActivity", durable.RetryPolicy{MaxAttempts: 3, Timeout: time.Minute}))
	h := newHarness(t, reg)
	h.start("retry-fast-1", "RetryOrch", "data")
	h.wantCompleted("retry-fast-1", "fast:data")
}

// TestTimeoutExitsImmediatelyWithoutRetry mirrors
// test_timeout_exits_immediately_without_retry: one attempt, one deadline timer.
func TestTimeoutExitsImmediatelyWithoutRetry(t *testing.T) {
	t.Parallel()
	var h *harness
	var n atomic.Int32
	reg := durable.NewRegistry().
		MustAddActivity("SlowActivity", func(ctx *durable.ActivityContext, in string) (string, error) {
			n.Add(1)
			return h.blockUntilCancelled(ctx, in)
		}).
		MustAddOrchestration("RetryOrch", retryOrch("SlowActivity", durable.RetryPolicy{MaxAttempts: 3, Timeout: 150 * msec, Backoff: durable.Backoff{Kind: durable.BackoffNone}}))
	h = newHarness(t, reg)
	h.start("timeout-no-retry-1", "RetryOrch", "")
	if st := h.wait("timeout-no-retry-1"); !strings.Contains(st.Output, "timeout") {
		t.Fatalf("output %q, want a timeout error", st.Output)
	}
	hist := h.history("timeout-no-retry-1")
	if a, tc, tf := countEvents(hist, "ActivityScheduled"), countEvents(hist, "TimerCreated"), countEvents(hist, "TimerFired"); a != 1 || tc != 1 || tf != 1 {
		t.Errorf("%d ActivityScheduled, %d TimerCreated, %d TimerFired; want 1 each (no retry after a timeout)", a, tc, tf)
	}
	if n.Load() > 1 {
		t.Errorf("the activity ran %d times, want at most once", n.Load())
	}
}

// TestErrorRetriesButTimeoutExits mirrors test_error_retries_but_timeout_exits: an
// error is retried, the timeout of the next attempt ends the retries.
func TestErrorRetriesButTimeoutExits(t *testing.T) {
	t.Parallel()
	var h *harness
	var n atomic.Int32
	reg := durable.NewRegistry().
		MustAddActivity("MixedActivity", func(ctx *durable.ActivityContext, in string) (string, error) {
			if n.Add(1) == 1 {
				return "", fmt.Errorf("fast failure")
			}
			return h.blockUntilCancelled(ctx, in)
		}).
		MustAddOrchestration("RetryOrch", retryOrch("MixedActivity", durable.RetryPolicy{MaxAttempts: 5, Timeout: 300 * msec, Backoff: durable.Backoff{Kind: durable.BackoffNone}}))
	h = newHarness(t, reg)
	h.start("error-then-timeout-1", "RetryOrch", "")
	if st := h.wait("error-then-timeout-1"); !strings.Contains(st.Output, "timeout") {
		t.Fatalf("output %q, want a timeout error", st.Output)
	}
	hist := h.history("error-then-timeout-1")
	if a, f := countEvents(hist, "ActivityScheduled"), countEvents(hist, "ActivityFailed"); a != 2 || f != 1 {
		t.Errorf("%d ActivityScheduled, %d ActivityFailed; want 2 and 1", a, f)
	}
}

// TestTypedActivityRetrySuccess mirrors test_typed_activity_retry_success.
func TestTypedActivityRetrySuccess(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	reg := durable.NewRegistry().
		MustAddActivity("TypedAdd", durable.Activity(func(_ *durable.ActivityContext, r addReq) (addRes, error) {
			if n.Add(1) < 2 {
				return addRes{}, fmt.Errorf("transient")
			}
			return addRes{Sum: r.A + r.B}, nil
		})).
		MustAddOrchestration("TypedRetry", durable.Orchestration(func(ctx *durable.OrchestrationContext, r addReq) (addRes, error) {
			return durable.ScheduleActivityWithRetry[addRes](ctx, "TypedAdd", r, durable.RetryPolicy{MaxAttempts: 3, Backoff: durable.Backoff{Kind: durable.BackoffNone}}).Get()
		}))
	h := newHarness(t, reg)
	if err := h.client.StartOrchestrationJSON(h.ctx, "typed-retry-1", "TypedRetry", addReq{A: 3, B: 4}); err != nil {
		t.Fatal(err)
	}
	h.wantCompleted("typed-retry-1", `{"sum":7}`)
}

// TestHistoryContainsAllActivityScheduledEvents mirrors
// test_history_contains_all_activity_scheduled_events: one ActivityScheduled per
// attempt, all with the same name and input.
func TestHistoryContainsAllActivityScheduledEvents(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	reg := durable.NewRegistry().
		MustAddActivity("FlakyActivity", flaky(&n, 4)).
		MustAddOrchestration("RetryOrch", retryOrch("FlakyActivity", durable.RetryPolicy{MaxAttempts: 5, Backoff: durable.Backoff{Kind: durable.BackoffNone}}))
	h := newHarness(t, reg)
	h.start("retry-history-1", "RetryOrch", "same-input")
	h.wantCompleted("retry-history-1", "done")
	hist := h.history("retry-history-1")
	if a, f, c := countEvents(hist, "ActivityScheduled"), countEvents(hist, "ActivityFailed"), countEvents(hist, "ActivityCompleted"); a != 4 || f != 3 || c != 1 {
		t.Errorf("%d scheduled, %d failed, %d completed; want 4, 3, 1", a, f, c)
	}
}

// TestMultipleOrchestrationsRetrying mirrors test_multiple_orchestrations_retrying:
// retries of different instances do not mix.
func TestMultipleOrchestrationsRetrying(t *testing.T) {
	t.Parallel()
	var attempts [3]atomic.Int32
	reg := durable.NewRegistry().
		MustAddActivity("PerInstance", func(_ *durable.ActivityContext, in string) (string, error) {
			var i int
			fmt.Sscan(in, &i)
			if attempts[i].Add(1) < 2 {
				return "", fmt.Errorf("instance %d transient", i)
			}
			return "ok-" + in, nil
		}).
		MustAddOrchestration("RetryOrch", retryOrch("PerInstance", durable.RetryPolicy{MaxAttempts: 3, Backoff: durable.Backoff{Kind: durable.BackoffNone}}))
	h := newHarness(t, reg)
	for i := 0; i < 3; i++ {
		h.start(fmt.Sprint("retry-multi-", i), "RetryOrch", fmt.Sprint(i))
	}
	for i := 0; i < 3; i++ {
		h.wantCompleted(fmt.Sprint("retry-multi-", i), fmt.Sprint("ok-", i))
		if got := attempts[i].Load(); got != 2 {
			t.Errorf("instance %d: %d attempts, want 2", i, got)
		}
	}
}

// TestRetryOnSessionBasicSuccess mirrors retry_on_session_basic_success: every
// attempt carries the session id.
func TestRetryOnSessionBasicSuccess(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	sessions := make(chan string, 8)
	reg := durable.NewRegistry().
		MustAddActivity("SessionFlaky", func(ctx *durable.ActivityContext, in string) (string, error) {
			s, _ := ctx.SessionID()
			sessions <- s
			return flaky(&n, 2)(ctx, in)
		}).
		MustAddOrchestration("RetryOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleActivityWithRetry("SessionFlaky", "", durable.RetryPolicy{MaxAttempts: 3, Backoff: durable.Backoff{Kind: durable.BackoffNone}}, durable.WithSession("sess-1")).Get()
		})
	h := newHarness(t, reg)
	h.start("retry-session-1", "RetryOrch", "")
	h.wantCompleted("retry-session-1", "done")
	for len(sessions) > 0 {
		if s := <-sessions; s != "sess-1" {
			t.Errorf("an attempt ran with session %q, want sess-1", s)
		}
	}
}
