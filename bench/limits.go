package main

import (
	"context"
	"fmt"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// runLimits measures what flow control (docs/flow-control.md) costs the
// activity path: the same round trips (enqueue, fetch, ack, one at a time)
// in a namespace without limits and with a limit on the activity's name
// that never binds (a concurrency, then a concurrency and a rate, far above
// what the run reaches), so every item goes through its limit group. The
// variants take turns in rounds. Redis's own time per round trip (INFO
// commandstats) is the figure; the note compares each variant with the
// first.
func runLimits(ctx context.Context, e *env) error {
	n, rounds := 500, 10
	if e.embedded {
		n, rounds = 20, 2
	}
	variants := []struct {
		name  string
		limit *duroxide.Limit
	}{
		{"no limit", nil},
		{"concurrency limit", &duroxide.Limit{Name: "bench.noop", Concurrency: 1 << 30}},
		{"concurrency and rate limit", &duroxide.Limit{Name: "bench.noop", Concurrency: 1 << 30, RatePerSecond: 1e9, Burst: 1 << 30}},
	}
	type acc struct {
		p       *redisprovider.Provider
		enqueue func(context.Context) error
		m       *meter
		usec    float64 // Redis time of the variant's script calls
		cmds    int64
		seconds float64
	}
	accs := make([]*acc, len(variants))
	for i, v := range variants {
		p, done, err := e.provider(ctx, "limits")
		if err != nil {
			return err
		}
		defer done()
		if v.limit != nil {
			if err := p.SetLimit(ctx, *v.limit); err != nil {
				return err
			}
		}
		accs[i] = &acc{p: p, enqueue: activityProducer(p, e.opts.Payload, e.opts.FanOut), m: newMeter(0, time.Hour, 0)}
	}
	// the variants take turns, n round trips each, so that the load of a
	// shared machine weighs on them alike
	for range rounds {
		for i, v := range variants {
			a := accs[i]
			pr := e.startProbe(ctx)
			for range n {
				t0 := time.Now()
				if err := a.enqueue(ctx); err != nil {
					return err
				}
				item, err := a.p.FetchWorkItem(ctx, time.Minute, 0, nil, duroxide.DefaultOnly())
				if err == nil && item == nil {
					err = fmt.Errorf("FetchWorkItem found nothing with an item queued")
				}
				if err == nil {
					err = a.p.AckWorkItem(ctx, item.LockToken, okCompletion(item.Item.(duroxide.ActivityExecute)))
				}
				if err != nil {
					return fmt.Errorf("limits, %s: %w", v.name, err)
				}
				a.m.observe(t0, time.Now())
			}
			k, err := pr.stop(ctx)
			if err != nil {
				return err
			}
			a.usec += k.EvalUsecCall * float64(k.ServerByCmd["evalsha"]+k.ServerByCmd["fcall"])
			a.cmds += k.RedisCmds
			a.seconds += k.Seconds
		}
	}
	base := 0.0
	for i, v := range variants {
		a := accs[i]
		ops := int64(n * rounds)
		pt := Point{Scenario: "limits", Variant: v.name, Concurrency: 1, Unit: "round trips",
			Ops: ops, Seconds: a.seconds, Latency: a.m.percentiles(), LatencyOf: "enqueue, fetch and ack of one activity, nothing else running",
			Metrics: map[string]float64{"redis_cmds_per_op": float64(a.cmds) / float64(ops)}}
		pt.Note = fmt.Sprintf("%.1f Redis cmds/round trip", pt.Metrics["redis_cmds_per_op"])
		if a.usec > 0 {
			us := a.usec / float64(ops)
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
