package main

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// TestObservedReportsAnAckWhenItApplied: with the runtime's poll, an
// ack-and-fetch that finds nothing returns only at its poll timeout; the
// activity its ack completed must be reported as of the ack's reply, not
// the call's return (a sequence's last turn was reported a whole poll
// timeout late, which the sized points counted as wall time).
func TestObservedReportsAnAckWhenItApplied(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
	client.AddHook(newCallCounter()) // as env.main has it
	t.Cleanup(func() { _ = client.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := redisprovider.New(ctx, redisprovider.Options{Client: client, Namespace: "observed-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })

	reported := make(chan time.Time, 1)
	obs := newObserved(p, engineEvents{activity: func(at time.Time) { reported <- at }}, true)
	if err := p.EnqueueForWorker(ctx, duroxide.ActivityExecute{Instance: "i", ExecutionID: 1, ID: 1, Name: "a", Input: `""`}); err != nil {
		t.Fatal(err)
	}
	locked, err := p.FetchWorkItem(ctx, time.Minute, 0, nil, duroxide.DefaultOnly())
	if err != nil || locked == nil {
		t.Fatalf("fetch: %v, %v", locked, err)
	}
	const poll = 600 * time.Millisecond
	start := time.Now()
	next, err := obs.AckWorkItemAndFetch(ctx, locked.LockToken, duroxide.ActivityCompleted{Instance: "i", ExecutionID: 1, ID: 1, Result: `""`},
		time.Minute, poll, nil, duroxide.DefaultOnly())
	returned := time.Now()
	if err != nil || next != nil {
		t.Fatalf("ack-and-fetch on an empty queue: %v, %v", next, err)
	}
	if returned.Sub(start) < poll/2 {
		t.Fatalf("the call returned after %v: its fetch half did not wait, so this test shows nothing", returned.Sub(start))
	}
	at := <-reported
	if at.Before(start) || returned.Sub(at) < poll/3 {
		t.Errorf("activity reported at +%v, the call returned at +%v: want the ack's reply, well before the return",
			at.Sub(start), returned.Sub(start))
	}
}

// TestObservedKeepsTheApplicationsPath: the wrapper must offer the runtime
// and the client what the provider offers them in an application, or the
// bench measures another path. Without sticky routing the runtime never
// routes an instance's turns to itself (the bench measured sequences
// without the sticky offers every application's step makes); without the
// checked enqueue the client's starts take the plain one.
func TestObservedKeepsTheApplicationsPath(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	ctx := context.Background()
	p, err := redisprovider.New(ctx, redisprovider.Options{URL: "redis://" + m.Addr(), Namespace: "observed-path"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	var obs duroxide.Provider = newObserved(p, engineEvents{}, true)
	if sr, ok := obs.(duroxide.StickyRouter); !ok || !sr.SupportsStickyRouting() {
		t.Error("the wrapper hides the provider's sticky routing")
	}
	if _, ok := obs.(duroxide.CheckedEnqueuer); !ok {
		t.Error("the wrapper hides the provider's checked enqueue")
	}
}
