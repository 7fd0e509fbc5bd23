package main

import (
	"context"
	"fmt"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// runLimits measures what flow control (docs/flow-control.md) costs the
// activity path: the same round trips (enqueue, fetch, ack, one at a time)
// in a namespace without limits and with a limit on the activity's name
// that never binds (a concurrency, then a concurrency and a rate, far above
// what the run reaches), so every item goes through its limit group.
// Redis's own time per round trip (INFO commandstats) is the figure; the
// note compares each variant with the first.
func runLimits(ctx context.Context, e *env) error {
	n := 5000
	if e.embedded {
		n = 50
	}
	variants := []struct {
		name  string
		limit *duroxide.Limit
	}{
		{"no limit", nil},
		{"concurrency limit", &duroxide.Limit{Name: "bench.noop", Concurrency: 1 << 30}},
		{"concurrency and rate limit", &duroxide.Limit{Name: "bench.noop", Concurrency: 1 << 30, RatePerSecond: 1e9, Burst: 1 << 30}},
	}
	base := 0.0
	for _, v := range variants {
		p, done, err := e.provider(ctx, "limits")
		if err != nil {
			return err
		}
		if v.limit != nil {
			if err := p.SetLimit(ctx, *v.limit); err != nil {
				done()
				return err
			}
		}
		enqueue := activityProducer(p, e.opts.Payload, e.opts.FanOut)
		m := newMeter(0, time.Hour, 0)
		pr := e.startProbe(ctx)
		for range n {
			t0 := time.Now()
			if err := enqueue(ctx); err != nil {
				done()
				return err
			}
			item, err := p.FetchWorkItem(ctx, time.Minute, 0, nil, duroxide.DefaultOnly())
			if err == nil && item == nil {
				err = fmt.Errorf("FetchWorkItem found nothing with an item queued")
			}
			if err == nil {
				err = p.AckWorkItem(ctx, item.LockToken, okCompletion(item.Item.(duroxide.ActivityExecute)))
			}
			if err != nil {
				done()
				return fmt.Errorf("limits, %s: %w", v.name, err)
			}
			m.observe(t0, time.Now())
		}
		k, err := pr.stop(ctx)
		done()
		if err != nil {
			return err
		}
		pt := Point{Scenario: "limits", Variant: v.name, Concurrency: 1, Unit: "round trips",
			Ops: int64(n), Seconds: k.Seconds, Latency: m.percentiles(), LatencyOf: "enqueue, fetch and ack of one activity, nothing else running",
			Metrics: map[string]float64{}, Counts: &k}
		k.perOp(pt.Metrics, pt.Ops)
		pt.Note = fmt.Sprintf("%.1f Redis cmds/round trip", pt.Metrics["redis_cmds_per_op"])
		if k.EvalUsecCall > 0 {
			us := k.EvalUsecCall * 3 // three script calls per round trip
			pt.Metrics["server_usec_per_op"] = us
			pt.Note += fmt.Sprintf(", Redis %.1f us/round trip", us)
			if base == 0 {
				base = us
			} else {
				pt.Note += fmt.Sprintf(" (%+.1f%% vs no limit)", (us/base-1)*100)
			}
		}
		e.add(pt)
	}
	return nil
}
