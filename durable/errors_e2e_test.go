package durable_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// describeErr is what the test orchestrations return: the typed error's
// fields, so the test can check what orchestration code saw.
type errReport struct {
	Type                    string
	Name, Instance, Message string
	Attempt, Attempts       uint32
	Retryable, TimedOut     bool
	IsActivity, IsChild     bool
	IsRetry, IsTimeout      bool
	IsCancelled, AsTaskErr  bool
	DecodeKind              string
}

func report(err error) errReport {
	r := errReport{Type: fmt.Sprintf("%T", err), Message: err.Error()}
	var ae *durable.ActivityError
	if errors.As(err, &ae) {
		r.Name, r.Attempt, r.Retryable = ae.Name, ae.Attempt, ae.Retryable
	}
	var ce *durable.ChildError
	if errors.As(err, &ce) {
		r.Name, r.Instance = ce.Name, ce.Instance
	}
	var re *durable.RetryError
	if errors.As(err, &re) {
		r.Attempts, r.TimedOut = re.Attempts, re.TimedOut
	}
	var de *durable.DecodeError
	if errors.As(err, &de) {
		r.Name, r.DecodeKind = de.Name, de.Kind
	}
	var te *durable.TaskError
	r.AsTaskErr = errors.As(err, &te) && te.Message == err.Error()
	r.IsActivity = errors.Is(err, durable.ErrActivityFailed)
	r.IsChild = errors.Is(err, durable.ErrChildFailed)
	r.IsRetry = errors.Is(err, durable.ErrRetryExhausted)
	r.IsTimeout = errors.Is(err, durable.ErrTimeout)
	r.IsCancelled = errors.Is(err, durable.ErrCancelled)
	return r
}

// reportOrch runs body and completes with the report of the error it got.
func reportOrch(body func(ctx *durable.OrchestrationContext) error) durable.OrchestrationFunc {
	return durable.Orchestration(func(ctx *durable.OrchestrationContext, _ any) (errReport, error) {
		err := body(ctx)
		if err == nil {
			return errReport{}, errors.New("no error")
		}
		return report(err), nil
	})
}

// expectReport runs body as orchestration "O" on reg and checks the report
// of the error it got against want.
func expectReport(t *testing.T, reg *durable.Registry, body func(ctx *durable.OrchestrationContext) error, want errReport) *durabletest.Env {
	t.Helper()
	reg.MustAddOrchestration("O", reportOrch(body))
	env := durabletest.Start(t, reg)
	st := env.StartAndWait(t, "i", "O", "null")
	var got errReport
	if err := st.DecodeOutput(&got); err != nil {
		t.Fatalf("status %v %q: %v", st.Status, st.FailureMessage(), err)
	}
	if got != want {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	return env
}

// noBackoff retries at once.
var noBackoff = durable.Backoff{Kind: durable.BackoffNone}

func TestErrorsActivityErrorNamesTheActivity(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	reg.MustAddActivity("Charge", func(*durable.ActivityContext, string) (string, error) { return "", errors.New("card declined") })
	expectReport(t, reg, func(ctx *durable.OrchestrationContext) error {
		_, err := ctx.ScheduleActivity("Charge", "").Get()
		return err
	}, errReport{Type: "*durable.ActivityError", Name: "Charge", Message: "card declined", Attempt: 1,
		Retryable: true, IsActivity: true, AsTaskErr: true})
}

func TestErrorsRetryExhaustedWrapsTheLastActivityError(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	var calls atomic.Int32
	reg.MustAddActivity("Flaky", func(*durable.ActivityContext, string) (string, error) {
		return "", fmt.Errorf("transient %d", calls.Add(1))
	})
	expectReport(t, reg, func(ctx *durable.OrchestrationContext) error {
		_, err := ctx.ScheduleActivityWithRetry("Flaky", "", durable.RetryPolicy{MaxAttempts: 3, Backoff: noBackoff}).Get()
		return err
	}, errReport{Type: "*durable.RetryError", Name: "Flaky", Message: "transient 3", Attempt: 3, Attempts: 3,
		Retryable: true, IsActivity: true, IsRetry: true, AsTaskErr: true})
}

func TestErrorsNonRetryableStopsTheRetriesAndIsRecorded(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	var calls atomic.Int32
	reg.MustAddActivity("Charge", func(*durable.ActivityContext, string) (string, error) {
		calls.Add(1)
		return "", durable.NonRetryable(errors.New("card declined"))
	})
	env := expectReport(t, reg, func(ctx *durable.OrchestrationContext) error {
		_, err := ctx.ScheduleActivityWithRetry("Charge", "", durable.RetryPolicy{MaxAttempts: 5, Backoff: noBackoff}).Get()
		return err
	}, errReport{Type: "*durable.RetryError", Name: "Charge", Message: "card declined", Attempt: 1, Attempts: 1,
		IsActivity: true, IsRetry: true, AsTaskErr: true})
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d attempts ran, want 1", n)
	}
	// The mark lives in the recorded failure as valid duroxide details.
	var failed []duroxide.ActivityFailedEvent
	for _, ev := range read(t, env, "i") {
		if k, ok := ev.Kind.(duroxide.ActivityFailedEvent); ok {
			failed = append(failed, k)
		}
	}
	if len(failed) != 1 {
		t.Fatalf("%d ActivityFailed events, want 1", len(failed))
	}
	a := failed[0].Details.Application
	if a == nil || a.Kind.Variant != duroxide.AppErrorActivityFailed || a.Retryable || a.Message != "non-retryable: card declined" {
		t.Fatalf("recorded details %+v", failed[0].Details)
	}
	if _, err := duroxide.MarshalWorkItem(duroxide.ActivityFailed{Instance: "i", ID: 2, Details: failed[0].Details}); err != nil {
		t.Fatalf("details do not encode as duroxide JSON: %v", err)
	}
}

func TestErrorsRetryTimeoutIsATimeout(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	reg.MustAddActivity("Slow", func(ctx *durable.ActivityContext, _ string) (string, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return "late", nil
	})
	expectReport(t, reg, func(ctx *durable.OrchestrationContext) error {
		_, err := ctx.ScheduleActivityWithRetry("Slow", "", durable.RetryPolicy{MaxAttempts: 3, Timeout: time.Millisecond}).Get()
		return err
	}, errReport{Type: "*durable.RetryError", Message: "timeout: activity timed out", Attempts: 1, TimedOut: true,
		IsRetry: true, IsTimeout: true, AsTaskErr: true})
}

func TestErrorsChildErrorNamesTheChild(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Kid", func(*durable.OrchestrationContext, string) (string, error) { return "", errors.New("kid failed") })
	expectReport(t, reg, func(ctx *durable.OrchestrationContext) error {
		_, err := ctx.ScheduleSubOrchestration("Kid", "", durable.WithInstanceID("kid-1")).Get()
		return err
	}, errReport{Type: "*durable.ChildError", Name: "Kid", Instance: "kid-1", Message: "kid failed", IsChild: true, AsTaskErr: true})
}

func TestErrorsDecodeErrorNamesTheEvent(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	type shipped struct{ Carrier string }
	reg.MustAddOrchestration("O", reportOrch(func(ctx *durable.OrchestrationContext) error {
		_, err := durable.WaitForEvent[shipped](ctx, "Shipped").Get()
		return err
	}))
	env := durabletest.Start(t, reg)
	if err := env.Client.StartOrchestration(t.Context(), "i", "O", "null"); err != nil {
		t.Fatal(err)
	}
	waitForHistory(t, env, "i", "ExternalSubscribed")
	if err := env.Client.RaiseEvent(t.Context(), "i", "Shipped", "Garbage"); err != nil {
		t.Fatal(err)
	}
	st := env.Wait(t, "i")
	var got errReport
	if err := st.DecodeOutput(&got); err != nil {
		t.Fatalf("status %v %q: %v", st.Status, st.FailureMessage(), err)
	}
	if got.Type != "*durable.DecodeError" || got.DecodeKind != "event" || got.Name != "Shipped" ||
		!strings.Contains(got.Message, `decode event "Shipped"`) {
		t.Fatalf("got %+v", got)
	}
}

// waitForHistory waits until instance's history has an event of kind.
func waitForHistory(t *testing.T, env *durabletest.Env, instance, kind string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), durabletest.DefaultWaitTimeout)
	defer cancel()
	for {
		for _, ev := range read(t, env, instance) {
			if ev.Kind.EventType() == kind {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no %s in %s's history", kind, instance)
		case <-time.After(5 * time.Millisecond): // a poll interval, not a sleep the test depends on
		}
	}
}

func TestErrorsWaitTimeoutNamesTheInstance(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, durable.NewRegistry())
	_, err := env.Client.WaitForOrchestration(t.Context(), "never-started", time.Millisecond)
	var wt *durable.WaitTimeoutError
	if !errors.As(err, &wt) || wt.Instance != "never-started" || wt.Last.Status != durable.StatusNotFound {
		t.Fatalf("err %v (%T)", err, err)
	}
	if !errors.Is(err, durable.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), `"never-started"`) {
		t.Fatalf("err %v does not classify as a timeout naming the instance", err)
	}
}

func TestErrorsValidationIsDurableInvalidInput(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, durable.NewRegistry())
	err := env.Client.StartOrchestration(t.Context(), "", "O", "")
	var ie *durable.InvalidInputError
	if !errors.As(err, &ie) || ie.Op != "start_orchestration" {
		t.Fatalf("err %v (%T)", err, err)
	}
	if !errors.Is(err, durable.ErrInvalidInput) || !errors.Is(err, duroxide.ErrInvalidInput) {
		t.Fatalf("err %v does not classify as invalid input", err)
	}
	var pe *duroxide.ProviderError
	if errors.As(err, &pe) {
		t.Fatalf("validation error is a provider error: %v", err)
	}
}

// countingProvider counts the writes a client makes.
type countingProvider struct {
	duroxide.Provider
	enqueues atomic.Int32
}

func (p *countingProvider) EnqueueForOrchestrator(ctx context.Context, item duroxide.WorkItem, delay time.Duration) error {
	p.enqueues.Add(1)
	return p.Provider.EnqueueForOrchestrator(ctx, item, delay)
}

func TestLimitsStartOverRedisLimitWritesNothing(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, durable.NewRegistry())
	p := &countingProvider{Provider: env.Provider}
	c := durable.NewClient(p)
	huge := strings.Repeat("x", 513<<20)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	began := time.Now()
	err := c.StartOrchestration(ctx, "huge", "O", huge)
	took := time.Since(began)
	huge = ""
	t.Logf("rejected in %v", took)
	if took > 10*time.Second { // generous: the check is a length comparison
		t.Errorf("the rejection took %v", took)
	}
	var ie *durable.InvalidInputError
	if !errors.As(err, &ie) || !errors.Is(err, durable.ErrInvalidInput) || duroxide.IsRetryable(err) {
		t.Fatalf("err %v (%T), want a non-retryable *InvalidInputError", err, err)
	}
	if !strings.Contains(err.Error(), fmt.Sprint(durable.MaxPayloadBytes)) {
		t.Fatalf("err %q does not name the limit", err)
	}
	if n := p.enqueues.Load(); n != 0 {
		t.Fatalf("%d provider writes, want none", n)
	}
	if st, err := c.Status(ctx, "huge"); err != nil || st.Status != durable.StatusNotFound {
		t.Fatalf("status %v, %v: want NotFound", st.Status, err)
	}
}

func TestLimitsEventsOverTheLimitWriteNothing(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, durable.NewRegistry(), durabletest.WithOptions(durable.WithMaxPayloadBytes(durable.Options{}, 16)))
	big := strings.Repeat("x", 17)
	for name, call := range map[string]func() error{
		"start":   func() error { return env.Client.StartOrchestration(t.Context(), "i", "O", big) },
		"raise":   func() error { return env.Client.RaiseEvent(t.Context(), "i", "E", big) },
		"enqueue": func() error { return env.Client.EnqueueEvent(t.Context(), "i", "Q", big) },
	} {
		if err := call(); !errors.Is(err, durable.ErrInvalidInput) || !strings.Contains(err.Error(), "limit of 16 bytes") {
			t.Errorf("%s: err %v", name, err)
		}
	}
	if h := read(t, env, "i"); len(h) != 0 {
		t.Fatalf("history %v, want none", h)
	}
	// at the limit the payload passes the check and reaches the provider,
	// which refuses an event for an instance that never existed
	if err := env.Client.RaiseEvent(t.Context(), "i", "E", big[:16]); !errors.Is(err, durable.ErrNotFound) {
		t.Fatalf("payload at the limit: %v, want the provider's ErrNotFound", err)
	}
}

func TestLimitsOrchestrationPayloadsFailTheInstance(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	big := strings.Repeat("x", 65)
	reg.MustAddActivity("Echo", func(_ *durable.ActivityContext, in string) (string, error) { return in, nil })
	reg.MustAddActivity("Big", func(*durable.ActivityContext, string) (string, error) { return big, nil })
	reg.MustAddOrchestration("BigInput", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.ScheduleActivity("Echo", big).Get()
	})
	reg.MustAddOrchestration("BigOutput", func(*durable.OrchestrationContext, string) (string, error) { return big, nil })
	reg.MustAddOrchestration("BigResult", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		_, err := ctx.ScheduleActivityWithRetry("Big", "", durable.RetryPolicy{MaxAttempts: 3, Backoff: noBackoff}).Get()
		var re *durable.RetryError
		if !errors.As(err, &re) || re.Last == nil {
			return "", fmt.Errorf("got %T", err)
		}
		// Short, to stay under the test's 64-byte limit itself.
		return fmt.Sprintf("%d %t %t", re.Attempts, re.Last.Retryable, strings.Contains(re.Last.Message, "limit of 64 bytes")), nil
	})
	env := durabletest.Start(t, reg, durabletest.WithOptions(durable.WithMaxPayloadBytes(durable.Options{}, 64)))

	st := env.StartAndWait(t, "in", "BigInput", "")
	if st.Status != durable.StatusFailed || st.FailureMessage() != "Activity 'Echo' input size (65 bytes) exceeds limit (64 bytes)" {
		t.Fatalf("input: %v %q", st.Status, st.FailureMessage())
	}
	for _, ev := range read(t, env, "in") {
		if _, ok := ev.Kind.(duroxide.ActivityScheduledEvent); ok {
			t.Fatalf("the oversized activity was recorded: %+v", ev)
		}
	}
	st = env.StartAndWait(t, "out", "BigOutput", "")
	if st.Status != durable.StatusFailed || st.FailureMessage() != "Orchestration output size (65 bytes) exceeds limit (64 bytes)" {
		t.Fatalf("output: %v %q", st.Status, st.FailureMessage())
	}
	// An oversized result fails the activity as non-retryable: one attempt.
	mustComplete(t, env.StartAndWait(t, "res", "BigResult", ""), "1 false true")
}
