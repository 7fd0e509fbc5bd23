package durable_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// BenchmarkFanOut5 measures whole orchestrations (start, five activities,
// fan-in, completion: three turns) on miniredis, all in flight at once.
func BenchmarkFanOut5(b *testing.B) {
	env := durabletest.Start(b, fanOutRegistry(), durabletest.WithOptions(benchOptions))
	runFanOut(b, env.Client, func(instance string) durable.OrchestrationStatus { return env.Wait(b, instance) })
}

// BenchmarkFanOut5Redis is BenchmarkFanOut5 on the Redis at
// DUROXIDE_REDIS_URL (skipped without it), in a fresh namespace. As with
// durabletest, DUROXIDE_ACK_FETCH=off measures the plain ack-then-fetch path.
func BenchmarkFanOut5Redis(b *testing.B) {
	url := os.Getenv("DUROXIDE_REDIS_URL")
	if url == "" {
		b.Skip("DUROXIDE_REDIS_URL not set")
	}
	p, err := redisprovider.New(b.Context(), redisprovider.Options{URL: url, Namespace: fmt.Sprint("bench-", time.Now().UnixNano())})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	var rp duroxide.Provider = p
	if os.Getenv(durabletest.EnvAckFetch) == "off" {
		rp = durabletest.PlainProvider{Provider: p}
	}
	rt, err := durable.NewRuntime(rp, fanOutRegistry(), benchOptions)
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Shutdown(context.Background())
	runFanOut(b, rt.Client(), func(instance string) durable.OrchestrationStatus {
		st, err := rt.Client().WaitForOrchestration(b.Context(), instance, time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		return st
	})
}

var benchOptions = durable.Options{LongPollTimeout: 100 * time.Millisecond, OrchestrationConcurrency: 4, WorkerConcurrency: 8}

func fanOutRegistry() *durable.Registry {
	reg := durable.NewRegistry()
	reg.MustAddActivity("Inc", durable.Activity(func(_ *durable.ActivityContext, n int) (int, error) { return n + 1, nil }))
	reg.MustAddOrchestration("Fan", durable.Orchestration(func(ctx *durable.OrchestrationContext, n int) (int, error) {
		fs := make([]durable.Awaitable, 5)
		for i := range fs {
			fs[i] = durable.ScheduleActivity[int](ctx, "Inc", i)
		}
		ctx.Join(fs...)
		return n, nil
	}))
	return reg
}

// runFanOut starts b.N instances of the orchestration (default "Fan") and
// waits for each to complete.
func runFanOut(b *testing.B, c *durable.Client, wait func(string) durable.OrchestrationStatus, name ...string) {
	orch := "Fan"
	if len(name) > 0 {
		orch = name[0]
	}
	b.ResetTimer()
	start := time.Now()
	defer func() { b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "orch/s") }()
	for i := 0; i < b.N; i++ {
		if err := c.StartOrchestration(b.Context(), fmt.Sprint("fan-", i), orch, "1"); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < b.N; i++ {
		if st := wait(fmt.Sprint("fan-", i)); st.Status != durable.StatusCompleted {
			b.Fatalf("fan-%d: %v %s", i, st.Status, st.FailureMessage())
		}
	}
}

// BenchmarkRunTurnFanIn2000 is the turn that joins a 2,000-activity fan-out
// when all 2,000 completions arrive in one batch: the turn whose cost was
// quadratic in the history and the batch (2.6 s and 982 MB per turn before
// the history index, on the 2-core development machine; 10 ms, 3.2 MB after).
func BenchmarkRunTurnFanIn2000(b *testing.B) {
	const n = 2000
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Wide", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		fs := make([]durable.Awaitable, n)
		for i := range fs {
			fs[i] = ctx.ScheduleActivity("A", fmt.Sprint(i))
		}
		ctx.Join(fs...)
		return "done", nil
	})
	history := []duroxide.Event{duroxide.NewEvent(1, "w", 1, nil, duroxide.OrchestrationStartedEvent{Name: "Wide", Version: "1.0.0"})}
	msgs := make([]duroxide.WorkItem, 0, n)
	for i := range n {
		id := uint64(i + 2)
		history = append(history, duroxide.NewEvent(id, "w", 1, nil, duroxide.ActivityScheduledEvent{Name: "A", Input: fmt.Sprint(i)}))
		msgs = append(msgs, duroxide.ActivityCompleted{Instance: "w", ExecutionID: 1, ID: id, Result: "r"})
	}
	item := duroxide.OrchestrationItem{Instance: "w", OrchestrationName: "Wide", ExecutionID: 1, Version: "1.0.0",
		History: history, Messages: msgs, LockToken: "t", AttemptCount: 1}
	b.ReportAllocs()
	for b.Loop() {
		out, err := durable.RunTurn(reg, item, durable.Options{})
		if err != nil || out.Commit.Metadata.Status != "Completed" {
			b.Fatalf("turn: %v %+v", err, out.Commit.Metadata)
		}
	}
}

// BenchmarkCacheHitRate runs sequences of five activities on one and on
// three runtimes sharing a provider, and reports the share of turns that
// resumed a cached instance instead of replaying it (hit-%).
func BenchmarkCacheHitRate(b *testing.B) {
	for _, runtimes := range []int{1, 3} {
		b.Run(fmt.Sprint("runtimes=", runtimes), func(b *testing.B) {
			reg := sequenceRegistry(5)
			env := durabletest.Start(b, reg, durabletest.WithOptions(benchOptions))
			rts := []*durable.Runtime{env.Runtime}
			for range runtimes - 1 {
				rts = append(rts, env.NewRuntime(b, reg, benchOptions))
			}
			runFanOut(b, env.Client, func(instance string) durable.OrchestrationStatus { return env.Wait(b, instance) }, "Seq")
			var hits, misses uint64
			for _, rt := range rts {
				s := rt.CacheStats()
				hits, misses = hits+s.Hits, misses+s.Misses
			}
			b.ReportMetric(100*float64(hits)/float64(max(hits+misses, 1)), "hit-%")
		})
	}
}

// sequenceRegistry runs n activities one after another.
func sequenceRegistry(n int) *durable.Registry {
	reg := durable.NewRegistry()
	reg.MustAddActivity("Inc", durable.Activity(func(_ *durable.ActivityContext, n int) (int, error) { return n + 1, nil }))
	reg.MustAddOrchestration("Seq", durable.Orchestration(func(ctx *durable.OrchestrationContext, x int) (int, error) {
		for range n {
			v, err := durable.ScheduleActivity[int](ctx, "Inc", x).Get()
			if err != nil {
				return 0, err
			}
			x = v
		}
		return x, nil
	}))
	return reg
}
