package redisprovider

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// TestAckFetchReportsItsAckBeforeItsPoll: a turn's ack-and-fetch through
// duroxide.OrchestrationAckReporter runs applied once its ack applied, while
// its fetch half still long-polls (the runtime caches a committed turn's engine
// then, instead of a poll later); an ack that does not apply never calls
// it. On one namespace and over partitions, whose fetch half polls every
// partition after the ack in the token's own.
func TestAckFetchReportsItsAckBeforeItsPoll(t *testing.T) {
	t.Parallel()
	m, _ := newMiniProvider(t)
	url := "redis://" + m.Addr() + "/0"
	for name, open := range map[string]func(ctx context.Context) (duroxide.Provider, error){
		"provider": func(ctx context.Context) (duroxide.Provider, error) {
			return openPartition(ctx, Options{URL: url, Namespace: "applied"})
		},
		"partitioned": func(ctx context.Context) (duroxide.Provider, error) {
			return New(ctx, Options{URL: url, Namespace: "applied-p", Partitions: 3})
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			p, err := open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.(interface{ Close() error }).Close() })
			rep := p.(duroxide.OrchestrationAckReporter)
			start := duroxide.StartOrchestration{Instance: "i", Orchestration: "O", Input: `""`, ExecutionID: 1}
			if err := p.EnqueueForOrchestrator(ctx, start, 0); err != nil {
				t.Fatal(err)
			}
			locked, err := p.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
			if err != nil || locked == nil {
				t.Fatalf("fetch: %v, %v", locked, err)
			}
			commit := started("i")

			applied := make(chan struct{})
			calls := 0
			pctx, stop := context.WithCancel(ctx)
			defer stop()
			type result struct {
				item *duroxide.OrchestrationItem
				err  error
			}
			returned := make(chan result, 1)
			go func() {
				got, err := rep.AckOrchestrationItemAndFetchReporting(pctx, locked.LockToken, commit, time.Minute, time.Minute, nil, false,
					func() { calls++; close(applied) })
				returned <- result{got, err}
			}()
			select {
			case <-applied:
			case r := <-returned:
				t.Fatalf("the call returned (%v, %v) without reporting its ack", r.item, r.err)
			case <-ctx.Done():
				t.Fatal("the ack was never reported")
			}
			select {
			case r := <-returned:
				t.Fatalf("the call returned (%v, %v) right after its ack: its poll of a minute did not run", r.item, r.err)
			default:
			}
			stop()
			r := <-returned
			if r.item != nil || !duroxide.FetchFailedAfterAck(r.err) || !errors.Is(r.err, context.Canceled) {
				t.Fatalf("cancelled in its poll: (%v, %v), want a FetchAfterAckError of the cancellation", r.item, r.err)
			}
			if calls != 1 {
				t.Fatalf("applied ran %d times, want once", calls)
			}

			// the same token again: the lock is gone, nothing applies
			again := 0
			if _, err := rep.AckOrchestrationItemAndFetchReporting(ctx, locked.LockToken, commit, time.Minute, time.Millisecond, nil, false,
				func() { again++ }); !errors.Is(err, duroxide.ErrLockLost) {
				t.Fatalf("second ack: %v, want ErrLockLost", err)
			}
			if again != 0 {
				t.Fatalf("an ack that did not apply ran applied %d times", again)
			}
		})
	}
}
