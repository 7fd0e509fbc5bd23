package chaos

import (
	"context"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// queue is one of the provider's two queues as the fault tests use it: put
// an item for an instance on it, take one with a long poll, ack it.
type queue struct {
	name    string
	enqueue func(ctx context.Context, inst string) error
	fetch   func(ctx context.Context, poll time.Duration) (token string, err error) // "" = no work
	ack     func(ctx context.Context, token string) error
}

// queuesOf returns the orchestrator and the worker queue of p; fetches lock
// for lock.
func queuesOf(p duroxide.Provider, lock time.Duration) (orch, work queue) {
	orch = queue{
		name: "orchestrator",
		enqueue: func(ctx context.Context, inst string) error {
			return p.EnqueueForOrchestrator(ctx, StartMessage(inst), 0)
		},
		fetch: func(ctx context.Context, poll time.Duration) (string, error) {
			item, err := p.FetchOrchestrationItem(ctx, lock, poll, nil)
			if item == nil {
				return "", err
			}
			return item.LockToken, err
		},
		ack: func(ctx context.Context, token string) error {
			return p.AckOrchestrationItem(ctx, token, duroxide.OrchestrationCommit{ExecutionID: 1})
		},
	}
	work = queue{
		name: "worker",
		enqueue: func(ctx context.Context, inst string) error {
			return p.EnqueueForWorker(ctx, activity(inst, 2))
		},
		fetch: func(ctx context.Context, poll time.Duration) (string, error) {
			item, err := p.FetchWorkItem(ctx, lock, poll, nil, duroxide.DefaultOnly())
			if item == nil {
				return "", err
			}
			return item.LockToken, err
		},
		ack: func(ctx context.Context, token string) error { return p.AckWorkItem(ctx, token, nil) },
	}
	return orch, work
}

// activity is an ActivityExecute of inst.
func activity(inst string, id uint64) duroxide.WorkItem {
	return duroxide.ActivityExecute{Instance: inst, ExecutionID: 1, ID: id, Name: "work", Input: inst}
}

// fetchResult is what a background long-poll fetch returned.
type fetchResult struct {
	token string // "" = no work
	err   error
	at    time.Time
}

// blockedFetch starts a fetch with a long poll of poll in the background.
func (q queue) blockedFetch(poll time.Duration) <-chan fetchResult {
	ch := make(chan fetchResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), poll+5*time.Second)
		defer cancel()
		token, err := q.fetch(ctx, poll)
		ch <- fetchResult{token: token, err: err, at: time.Now()}
	}()
	return ch
}

// expectWork waits for a background fetch on q and requires that it returned
// work within limit of since. With retryOK, the fetch may instead have
// failed with a retryable error (its script met the fault): a runtime then
// fetches again, and that fetch must return the work.
func (q queue) expectWork(t *testing.T, what string, ch <-chan fetchResult, since time.Time, limit time.Duration, retryOK bool) fetchResult {
	t.Helper()
	var r fetchResult
	select {
	case r = <-ch:
	case <-time.After(limit + 10*time.Second):
		t.Fatalf("%s: the blocked fetch never returned", what)
	}
	if retryOK && r.token == "" && duroxide.IsRetryable(r.err) {
		t.Logf("%s: the blocked fetch failed retryably (%v); fetching again", what, r.err)
		return q.expectWork(t, what, q.blockedFetch(limit), since, limit, false)
	}
	if r.err != nil || r.token == "" {
		t.Fatalf("%s: the blocked fetch returned no work (err %v) %v after it was enqueued: its waiter stopped",
			what, r.err, r.at.Sub(since))
	}
	if d := r.at.Sub(since); d > limit {
		t.Errorf("%s: the blocked fetch got the work %v after it was enqueued (limit %v)", what, d, limit)
	}
	return r
}

// withRetry runs an ordinary call right after a fault: one retryable error is
// tolerated, the second attempt must succeed.
func withRetry(t *testing.T, what string, call func(ctx context.Context) error) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := call(ctx)
		cancel()
		switch {
		case err == nil:
			return
		case attempt == 1 && duroxide.IsRetryable(err):
			t.Logf("%s: first call after the fault: %v", what, err)
		default:
			t.Fatalf("%s: attempt %d after the fault: %v", what, attempt, err)
		}
	}
}
