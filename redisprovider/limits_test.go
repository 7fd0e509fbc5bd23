package redisprovider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// limitedProvider is what the flow tests drive.
type limitedProvider interface {
	duroxide.Provider
	duroxide.FlowController
}

// openLimited opens a namespace of parts partitions on url.
func openLimited(t *testing.T, url, ns string, parts int) limitedProvider {
	t.Helper()
	p, err := New(context.Background(), Options{URL: url, Namespace: ns, Partitions: parts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// enqueueSends enqueues n activities named "Send", of instances i0 to
// i<n-1>, in one batch.
func enqueueSends(t *testing.T, p limitedProvider, n int) {
	t.Helper()
	var items []duroxide.WorkItem
	for i := range n {
		items = append(items, duroxide.ActivityExecute{Instance: fmt.Sprintf("i%d", i), ExecutionID: 1, ID: 1, Name: "Send", Input: "x"})
	}
	if err := p.(duroxide.BatchEnqueuer).EnqueueForWorkerBatch(context.Background(), items); err != nil {
		t.Fatal(err)
	}
}

// TestRateLimitHoldsWithinBurst runs 10 s of a server clock in 10 ms steps,
// fetching (and acking) every item a 50/s limit with burst 5 lets out at
// each step: in every window of the run at most burst + rate x its length
// are handed out, and the rate is reached (the bucket refills on time). With
// two partitions the shares (25/s, burst 3 and 2) hold the sum.
func TestRateLimitHoldsWithinBurst(t *testing.T) {
	t.Parallel()
	for _, parts := range []int{1, 2} {
		t.Run(fmt.Sprintf("partitions=%d", parts), func(t *testing.T) {
			t.Parallel()
			m, _ := newMiniProvider(t)
			start := time.UnixMilli(1_800_000_000_000)
			m.SetTime(start)
			p := openLimited(t, "redis://"+m.Addr()+"/0", "rate", parts)
			ctx := context.Background()
			const rate, burst, steps, step = 50, 5, 1000, 10 * time.Millisecond
			if err := p.SetLimit(ctx, duroxide.Limit{Name: "Send", RatePerSecond: rate, Burst: burst}); err != nil {
				t.Fatal(err)
			}
			enqueueSends(t, p, 700)
			counts := make([]int, steps+1)
			for s := 0; s <= steps; s++ {
				m.SetTime(start.Add(time.Duration(s) * step))
				for {
					w, err := p.FetchWorkItem(ctx, time.Minute, 0, nil, duroxide.AnyTag())
					if err != nil {
						t.Fatal(err)
					}
					if w == nil {
						break
					}
					counts[s]++
					if err := p.AckWorkItem(ctx, w.LockToken, nil); err != nil {
						t.Fatal(err)
					}
				}
			}
			total := 0
			for i := range counts {
				n := 0
				for j := i; j < len(counts); j++ {
					n += counts[j]
					allowed := burst + rate*float64(j-i)*step.Seconds()
					if float64(n) > allowed+1e-9 {
						t.Fatalf("%d items handed out from %v to %v, more than burst+rate x window = %.1f", n, time.Duration(i)*step, time.Duration(j)*step, allowed)
					}
				}
				total += counts[i]
			}
			if want := burst + rate*10 - 10; total < want {
				t.Fatalf("%d items handed out in 10 s, want at least %d: the bucket refills too slowly", total, want)
			}
		})
	}
}

// TestConcurrencyLimitHoldsAcrossPartitions locks every item the fetch
// hands out, never acking, on namespaces of 1, 2 and 3 partitions:
// limit 3 lets out exactly 3 while the items are spread over every
// partition (shares 2+1, 1+1+1).
func TestConcurrencyLimitHoldsAcrossPartitions(t *testing.T) {
	t.Parallel()
	for _, parts := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("partitions=%d", parts), func(t *testing.T) {
			t.Parallel()
			m, _ := newMiniProvider(t)
			p := openLimited(t, "redis://"+m.Addr()+"/0", "conc", parts)
			ctx := context.Background()
			if err := p.SetLimit(ctx, duroxide.Limit{Name: "Send", Concurrency: 3}); err != nil {
				t.Fatal(err)
			}
			enqueueSends(t, p, 60)
			locked := 0
			for {
				w, err := p.FetchWorkItem(ctx, time.Minute, 0, nil, duroxide.AnyTag())
				if err != nil {
					t.Fatal(err)
				}
				if w == nil {
					break
				}
				locked++
			}
			if locked != 3 {
				t.Fatalf("%d items locked at once under limit 3", locked)
			}
			ls, err := p.Limits(ctx)
			if err != nil || len(ls) != 1 || ls[0].Concurrency != 3 {
				t.Fatalf("Limits = %+v, %v; want Send with concurrency 3", ls, err)
			}
		})
	}
}

// TestRateLimitBucketsOfUnusedKeysExpire: a rate limit held per key keeps a
// token bucket per key value (a customer, say); once a bucket would be full
// again it is gone, so keys used once leave nothing behind (the buckets
// were fields of one hash that only grew).
func TestRateLimitBucketsOfUnusedKeysExpire(t *testing.T) {
	t.Parallel()
	m, _ := newMiniProvider(t)
	p := openLimited(t, "redis://"+m.Addr()+"/0", "bkt", 1)
	ctx := context.Background()
	if err := p.SetLimit(ctx, duroxide.Limit{Name: "Send", RatePerSecond: 10, Burst: 2}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		key := fmt.Sprintf("customer-%d", i)
		item := duroxide.ActivityExecute{Instance: key, ExecutionID: 1, ID: 1, Name: "Send", Input: "x", LimitKey: &key}
		if err := p.EnqueueForWorker(ctx, item); err != nil {
			t.Fatal(err)
		}
		w, err := p.FetchWorkItem(ctx, time.Minute, 0, nil, duroxide.AnyTag())
		if err != nil || w == nil {
			t.Fatalf("fetch of %s: %v, %v", key, w, err)
		}
		if err := p.AckWorkItem(ctx, w.LockToken, nil); err != nil {
			t.Fatal(err)
		}
	}
	buckets := func() []string {
		var out []string
		for _, k := range m.Keys() {
			if strings.Contains(k, "}:lbkt") {
				out = append(out, k)
			}
		}
		return out
	}
	if n := len(buckets()); n == 0 {
		t.Fatal("no token bucket after five rate-limited takes")
	}
	// one token spent of 2 at 10/s: full again after 100 ms
	m.FastForward(100 * time.Millisecond)
	if left := buckets(); len(left) != 0 {
		t.Fatalf("token buckets left once full again: %v", left)
	}
}
