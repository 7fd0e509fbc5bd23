package durable_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// TestStickyRoutingKeepsTurnsCached runs sequences of five activities on
// three runtimes (BenchmarkCacheHitRate's shape): sticky routing sends each
// instance's turns back to the runtime that caches it, so nearly every turn
// after the first is a hit (at most 5 of 6: 83%), where turns going to
// whichever runtime fetches first hit about one time in three (25%
// measured). The wait is longer than the default so that a loaded machine,
// where a busy owner may take more than 50 ms to come back, cannot make the
// bound fail; BenchmarkCacheHitRate measures the default.
func TestStickyRoutingKeepsTurnsCached(t *testing.T) {
	t.Parallel()
	const instances = 30
	opts := durable.Options{LongPollTimeout: 100 * time.Millisecond, OrchestrationConcurrency: 4, WorkerConcurrency: 8,
		StickyWait: time.Second}
	reg := sequenceRegistry(5)
	// sticky routing is a fast path the plain provider hides (EnvAckFetch)
	env := durabletest.Start(t, reg, durabletest.WithOptions(opts), durabletest.WithAckFetch(true))
	rts := []*durable.Runtime{env.Runtime, env.NewRuntime(t, reg, opts), env.NewRuntime(t, reg, opts)}
	for i := range instances {
		if err := env.Client.StartOrchestration(t.Context(), fmt.Sprint("seq-", i), "Seq", "1"); err != nil {
			t.Fatal(err)
		}
	}
	for i := range instances {
		if st := env.Wait(t, fmt.Sprint("seq-", i)); st.Status != durable.StatusCompleted || st.Output != "6" {
			t.Fatalf("seq-%d: %v %q %s", i, st.Status, st.Output, st.FailureMessage())
		}
	}
	var hits, misses uint64
	ran := 0
	for _, rt := range rts {
		s := rt.CacheStats()
		hits, misses = hits+s.Hits, misses+s.Misses
		if s.Hits+s.Misses > 0 {
			ran++
		}
	}
	if hits+misses != 6*instances {
		t.Fatalf("%d turns counted, want %d", hits+misses, 6*instances)
	}
	if rate := float64(hits) / float64(hits+misses); rate < 0.7 {
		t.Fatalf("cache hit rate %.0f%% (%d of %d turns) with sticky routing, want at least 70%%", 100*rate, hits, hits+misses)
	}
	if ran < 2 {
		t.Fatalf("turns ran on %d runtime(s): the test needs several to say anything", ran)
	}
}
