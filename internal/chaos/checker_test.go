package chaos

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// The tests of this file prove that the checker catches the bugs it exists
// for, by running the runtime on a provider wrapped to misbehave (on an
// embedded miniredis: they need no redis-server).

// miniProvider returns a provider on a fresh miniredis.
func miniProvider(t *testing.T) *redisprovider.Provider {
	m := miniredis.RunT(t)
	p, err := redisprovider.New(context.Background(), redisprovider.Options{URL: "redis://" + m.Addr() + "/0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// runBroken runs a small workload on p and returns the checker's verdict.
func runBroken(t *testing.T, p duroxide.Provider) []string {
	const lock = 2 * time.Second
	check := NewChecker(lock)
	ids := instanceIDs("broken", 8)
	cfg := Config{FanOut: 3, Orchestrators: 2, Workers: 2, LockTimeout: lock,
		PollTimeout: 100 * time.Millisecond, CallTimeout: 3 * time.Second, Seed: 9}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := Start(p, cfg, check)
	if err := r.StartInstances(ctx, ids); err != nil {
		t.Fatal(err)
	}
	err := check.WaitCompleted(ctx, p, ids)
	r.Kill()
	if err != nil {
		t.Fatal(err)
	}
	return check.Verify(ctx, p, ids, cfg.FanOut)
}

// expectViolation requires a violation containing want.
func expectViolation(t *testing.T, violations []string, want string) {
	t.Helper()
	for _, v := range violations {
		if strings.Contains(v, want) {
			return
		}
	}
	t.Errorf("no violation mentions %q; got %q", want, violations)
}

// lostWorkAcks answers nil to every third worker ack but gives the item
// back instead: an acknowledged result that is lost.
type lostWorkAcks struct {
	*redisprovider.Provider
	n atomic.Int64
}

func (p *lostWorkAcks) AckWorkItem(ctx context.Context, token string, c duroxide.WorkItem) error {
	if p.n.Add(1)%3 == 0 {
		return p.AbandonWorkItem(ctx, token, 0, false)
	}
	return p.Provider.AckWorkItem(ctx, token, c)
}

func TestCheckerCatchesLostAcks(t *testing.T) {
	v := runBroken(t, &lostWorkAcks{Provider: miniProvider(t)})
	expectViolation(t, v, "but the worker ack that returned nil sent")
}

// duplicateDelivery hands every first ActivityCompleted of a batch out twice.
type duplicateDelivery struct{ *redisprovider.Provider }

func (p duplicateDelivery) FetchOrchestrationItem(ctx context.Context, lock, poll time.Duration, f *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	item, err := p.Provider.FetchOrchestrationItem(ctx, lock, poll, f)
	if item != nil {
		if c := completionsOf(item.Messages); len(c) > 0 {
			item.Messages = append(item.Messages, c[0])
		}
	}
	return item, err
}

func TestCheckerCatchesDuplicateDelivery(t *testing.T) {
	v := runBroken(t, duplicateDelivery{miniProvider(t)})
	expectViolation(t, v, "results recorded")
}

func TestCheckerCatchesTwoLockHolders(t *testing.T) {
	c := NewChecker(time.Second)
	now := time.Now()
	c.Fetched("i1", "t1", now, now.Add(time.Millisecond))
	c.Fetched("i1", "t2", now.Add(100*time.Millisecond), now.Add(110*time.Millisecond))
	expectViolation(t, c.Violations(), "held by two lock holders")

	c = NewChecker(time.Second)
	c.Fetched("i1", "t1", now, now.Add(time.Millisecond))
	c.Releasing("i1", "t1")
	c.Fetched("i1", "t2", time.Now(), time.Now())
	if v := c.Violations(); len(v) != 0 {
		t.Errorf("a released lock taken over: %q", v)
	}
}

func TestCheckerCatchesLostHistory(t *testing.T) {
	p := miniProvider(t)
	v := runBroken(t, p)
	if len(v) != 0 {
		t.Fatalf("a correct run has violations: %q", v)
	}
	c := NewChecker(time.Second)
	c.Acked("broken-0000", duroxide.OrchestrationCommit{ExecutionID: 1, HistoryDelta: []duroxide.Event{
		duroxide.NewEvent(99, "broken-0000", 1, nil, duroxide.OrchestrationCompletedEvent{Output: "x"})}}, false)
	expectViolation(t, c.Verify(context.Background(), p, []string{"broken-0000"}, 3), "acked event 99")
}

func TestClassify(t *testing.T) {
	cases := map[Class]error{
		OK:        nil,
		Retryable: duroxide.Retryable("op", "LOADING"),
		Canceled:  &duroxide.ProviderError{Operation: "op", Message: "cancelled", Retryable: true, Err: context.Canceled},
		LockLost:  duroxide.Errorf("ack", duroxide.ErrLockLost, "lock_token abc is invalid or expired"),
		Permanent: duroxide.Permanent("op", "invalid input"),
	}
	for want, err := range cases {
		if got := Classify(err); got != want {
			t.Errorf("Classify(%v) = %v, want %v", err, got, want)
		}
	}
}
