package dxotel_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/extra/dxotel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
)

type attrs = map[attribute.Key]string

func TestFetchSpanNamesTheLockedInstanceAndEmptyFetches(t *testing.T) {
	ctx := context.Background()
	tel := newTelemetry(t)
	w := wrap(t, newRedisProvider(t), tel)
	start := duroxide.StartOrchestration{Instance: "order-1", Orchestration: "Ship", Input: "{}"}
	if err := w.EnqueueForOrchestrator(ctx, start, 0); err != nil {
		t.Fatal(err)
	}
	item, err := w.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
	if err != nil || item == nil {
		t.Fatalf("fetch: %v %v", item, err)
	}
	if again, err := w.FetchOrchestrationItem(ctx, time.Minute, 0, nil); err != nil || again != nil {
		t.Fatalf("second fetch should find nothing: %v %v", again, err)
	}

	fetches := tel.spansNamed("fetch_orchestration_item")
	if len(fetches) != 2 {
		t.Fatalf("want 2 fetch spans, got %d", len(fetches))
	}
	got := fetches[0]
	want := attrs{dxotel.KeyInstance: "order-1", dxotel.KeyExecution: "1", dxotel.KeyAttempt: "1",
		dxotel.KeyOutcome: "ok", dxotel.KeyOperation: "fetch_orchestration_item"}
	for k, v := range want {
		if a := attr(got, k); a != v {
			t.Errorf("fetch span %s = %q, want %q", k, a, v)
		}
	}
	if o := attr(fetches[1], dxotel.KeyOutcome); o != "empty" {
		t.Errorf("empty fetch outcome %q, want empty", o)
	}
	if a := attr(tel.spansNamed("enqueue_for_orchestrator")[0], dxotel.KeyInstance); a != "order-1" {
		t.Errorf("enqueue span instance %q", a)
	}

	wantOneOkOneEmpty(t, tel, "fetch_orchestration_item")
}

func TestAckCountsTurnByStatusAndPoison(t *testing.T) {
	ctx := context.Background()
	tel := newTelemetry(t)
	w := wrap(t, newRedisProvider(t), tel)
	if err := w.EnqueueForOrchestrator(ctx, duroxide.StartOrchestration{Instance: "i", Orchestration: "O", Input: "{}"}, 0); err != nil {
		t.Fatal(err)
	}
	item, err := w.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
	if err != nil || item == nil {
		t.Fatalf("fetch: %v %v", item, err)
	}
	poison := duroxide.ErrorDetails{Poison: &duroxide.PoisonError{AttemptCount: 11, MaxAttempts: 10,
		MessageType: duroxide.PoisonMessageType{Orchestration: &duroxide.PoisonOrchestration{Instance: "i", ExecutionID: 1}}}}
	failed := "poisoned"
	commit := duroxide.OrchestrationCommit{ExecutionID: 1, HistoryDelta: []duroxide.Event{
		duroxide.NewEvent(1, "i", 1, nil, duroxide.OrchestrationStartedEvent{Name: "O", Version: "1.0.0", Input: "{}"}),
		duroxide.NewEvent(2, "i", 1, nil, duroxide.OrchestrationFailedEvent{Details: poison}),
	}, Metadata: duroxide.ExecutionMetadata{Status: "Failed", Output: &failed, OrchestrationName: "O", OrchestrationVersion: "1.0.0"}}
	if err := w.AckOrchestrationItem(ctx, item.LockToken, commit); err != nil {
		t.Fatalf("ack: %v", err)
	}
	if n := sumCount(t, tel.collect(t, dxotel.MetricTurns), attrs{dxotel.KeyStatus: "failed"}); n != 1 {
		t.Errorf("failed turns = %d, want 1", n)
	}
	if n := sumCount(t, tel.collect(t, dxotel.MetricPoison), attrs{dxotel.KeyPoisonKind: "orchestration"}); n != 1 {
		t.Errorf("poisoned orchestrations = %d, want 1", n)
	}
}

func TestActivityOutcomesAndPoisonAreCountedOnAck(t *testing.T) {
	ctx := context.Background()
	tel := newTelemetry(t)
	w := wrap(t, newRedisProvider(t), tel)
	poison := duroxide.ErrorDetails{Poison: &duroxide.PoisonError{AttemptCount: 11, MaxAttempts: 10,
		MessageType: duroxide.PoisonMessageType{Activity: &duroxide.PoisonActivity{Instance: "i", ExecutionID: 1, ActivityName: "A", ActivityID: 3}}}}
	completions := []func(id uint64) duroxide.WorkItem{
		func(id uint64) duroxide.WorkItem {
			return duroxide.ActivityCompleted{Instance: "i", ExecutionID: 1, ID: id, Result: "ok"}
		},
		func(id uint64) duroxide.WorkItem {
			return duroxide.ActivityFailed{Instance: "i", ExecutionID: 1, ID: id, Details: duroxide.ApplicationFailure("boom")}
		},
		func(id uint64) duroxide.WorkItem {
			return duroxide.ActivityFailed{Instance: "i", ExecutionID: 1, ID: id, Details: poison}
		},
		func(uint64) duroxide.WorkItem { return nil },
	}
	for i, completion := range completions {
		id := uint64(i + 1)
		if err := w.EnqueueForWorker(ctx, duroxide.ActivityExecute{Instance: "i", ExecutionID: 1, ID: id, Name: "A", Input: "x"}); err != nil {
			t.Fatal(err)
		}
		locked, err := w.FetchWorkItem(ctx, time.Minute, 0, nil, duroxide.TagFilter{})
		if err != nil || locked == nil {
			t.Fatalf("fetch %d: %v %v", id, locked, err)
		}
		if err := w.AckWorkItem(ctx, locked.LockToken, completion(id)); err != nil {
			t.Fatalf("ack %d: %v", id, err)
		}
	}
	acts := tel.collect(t, dxotel.MetricActivities)
	for _, outcome := range []string{"completed", "failed", "poisoned", "cancelled"} {
		if n := sumCount(t, acts, attrs{dxotel.KeyOutcome: outcome}); n != 1 {
			t.Errorf("activities %s = %d, want 1", outcome, n)
		}
	}
	if n := sumCount(t, tel.collect(t, dxotel.MetricPoison), attrs{dxotel.KeyPoisonKind: "activity"}); n != 1 {
		t.Errorf("poisoned activities = %d, want 1", n)
	}
	fetch := tel.spansNamed("fetch_work_item")[0]
	if attr(fetch, dxotel.KeyActivityName) != "A" || attr(fetch, dxotel.KeyAttempt) != "1" {
		t.Errorf("fetch_work_item span lacks the activity: %v", fetch.Attributes())
	}
}

// failing is a provider whose lock operations fail with a given error; the
// embedded interface makes every other call panic, so the test notices any
// call it did not expect.
type failing struct {
	duroxide.Provider
	err error
}

func (f failing) AckWorkItem(context.Context, string, duroxide.WorkItem) error { return f.err }
func (f failing) RenewWorkItemLock(context.Context, string, time.Duration) error {
	return f.err
}
func (failing) Admin() duroxide.ProviderAdmin { return nil }

func TestErrorKindReachesSpanHistogramAndRenewalCounter(t *testing.T) {
	ctx := context.Background()
	tel := newTelemetry(t)
	lost := fmt.Errorf("wrapped: %w", duroxide.Errorf("ack_work_item", duroxide.ErrLockLost, "lock_token t1 expired"))
	w := wrap(t, failing{err: lost}, tel)
	if err := w.AckWorkItem(ctx, "t1", nil); !errors.Is(err, duroxide.ErrLockLost) {
		t.Fatalf("the wrapper must return the inner error unchanged, got %v", err)
	}
	if err := w.RenewWorkItemLock(ctx, "t1", time.Second); !errors.Is(err, duroxide.ErrLockLost) {
		t.Fatalf("renew: %v", err)
	}
	span := tel.spansNamed("ack_work_item")[0]
	if span.Status().Code != codes.Error || attr(span, dxotel.KeyErrorType) != "lock_lost" || attr(span, dxotel.KeyOutcome) != "error" {
		t.Errorf("ack span: status %v, attributes %v", span.Status(), span.Attributes())
	}
	if n := histCount(t, tel.collect(t, dxotel.MetricCallDuration), attrs{dxotel.KeyOperation: "ack_work_item", dxotel.KeyErrorType: "lock_lost"}); n != 1 {
		t.Errorf("lock_lost ack calls = %d, want 1", n)
	}
	if n := sumCount(t, tel.collect(t, dxotel.MetricRenewals), attrs{dxotel.KeyLockKind: "work_item", dxotel.KeyOutcome: "error", dxotel.KeyErrorType: "lock_lost"}); n != 1 {
		t.Errorf("failed work-item renewals = %d, want 1", n)
	}
	if tel.collected(t, dxotel.MetricActivities) {
		t.Errorf("a failed ack must not count an activity")
	}
	if w.Admin() != nil {
		t.Errorf("Admin of a provider without one must be a nil interface")
	}
}

func TestErrorTypeClassifiesEveryKind(t *testing.T) {
	cases := map[string]error{
		"lock_lost":       duroxide.Errorf("op", duroxide.ErrLockLost, "x"),
		"not_found":       duroxide.Errorf("op", duroxide.ErrNotFound, "x"),
		"invalid_input":   duroxide.Errorf("op", duroxide.ErrInvalidInput, "x"),
		"duplicate_event": duroxide.Errorf("op", duroxide.ErrDuplicateEvent, "x"),
		"undecodable":     duroxide.Errorf("op", duroxide.ErrUndecodable, "x"),
		"conflict":        duroxide.Errorf("op", duroxide.ErrConflict, "x"),
		"unavailable":     duroxide.Retryable("op", "x"),
		"canceled":        fmt.Errorf("fetch: %w", context.Canceled),
		"timeout":         context.DeadlineExceeded,
		"_OTHER":          errors.New("plain"),
	}
	for want, err := range cases {
		if got := dxotel.ErrorType(err); got != want {
			t.Errorf("ErrorType(%v) = %q, want %q", err, got, want)
		}
	}
}

func TestWrapProviderRejectsNil(t *testing.T) {
	if _, err := dxotel.WrapProvider(nil, dxotel.Options{}); !errors.Is(err, duroxide.ErrInvalidInput) {
		t.Fatalf("want ErrInvalidInput, got %v", err)
	}
}
