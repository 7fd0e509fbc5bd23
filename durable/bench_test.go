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
			fs[i] = durable.CallActivity[int](ctx, "Inc", i)
		}
		ctx.Join(fs...)
		return n, nil
	}))
	return reg
}

func runFanOut(b *testing.B, c *durable.Client, wait func(string) durable.OrchestrationStatus) {
	b.ResetTimer()
	start := time.Now()
	defer func() { b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "orch/s") }()
	for i := 0; i < b.N; i++ {
		if err := c.StartOrchestration(b.Context(), fmt.Sprint("fan-", i), "Fan", "1"); err != nil {
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
// quadratic in the history and the batch (1.53 s, 936 MB before the index).
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
