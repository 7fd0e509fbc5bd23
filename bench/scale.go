// Scenario 5, scale: fetch+ack latency with few vs very many queued items,
// for orchestration instances (each with a pending StartOrchestration) and
// for activities. Every indexed structure a fetch touches is a sorted set or
// hash, so the cost should stay flat; this is the check. The queue is kept
// at its depth during a point: each fetched item is replaced by a new one
// (enqueued outside the timed part), and c extra items cover those in
// flight, so even 10 queued means 10 waiting at every moment.

package main

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// scaleKind is one kind of queue the scale scenario fills.
type scaleKind struct {
	name    string
	enqueue func(p *redisprovider.Provider, size int) func(ctx context.Context) error
	// take fetches one item and acks it; it fails when nothing is there
	take func(ctx context.Context, p *redisprovider.Provider) (fetched time.Time, err error)
}

var scaleKinds = []scaleKind{
	{
		name: "orchestrator",
		enqueue: func(p *redisprovider.Provider, size int) func(ctx context.Context) error {
			return orchestrationStarter(p, size, "scale-")
		},
		take: func(ctx context.Context, p *redisprovider.Provider) (time.Time, error) {
			item, err := p.FetchOrchestrationItem(ctx, 0, workerPoll, nil)
			if err != nil || item == nil {
				return time.Time{}, fmt.Errorf("FetchOrchestrationItem on a full queue: item %v, %w", item != nil, err)
			}
			at := time.Now()
			start, ok := item.Messages[0].(duroxide.StartOrchestration)
			if !ok {
				return at, fmt.Errorf("unexpected message %T", item.Messages[0])
			}
			// a one-turn orchestration: started and completed in the same ack
			inst, x := item.Instance, item.ExecutionID
			out := orchOutput
			return at, p.AckOrchestrationItem(context.WithoutCancel(ctx), item.LockToken, duroxide.OrchestrationCommit{
				ExecutionID: x,
				HistoryDelta: []duroxide.Event{
					duroxide.NewEvent(1, inst, x, nil, duroxide.OrchestrationStartedEvent{Name: orchName, Version: orchVersion, Input: start.Input}),
					duroxide.NewEvent(2, inst, x, nil, duroxide.OrchestrationCompletedEvent{Output: out}),
				},
				Metadata: duroxide.ExecutionMetadata{Status: "Completed", Output: &out, OrchestrationName: orchName,
					OrchestrationVersion: orchVersion, PinnedDuroxideVersion: pinned},
			})
		},
	},
	{
		name: "worker",
		enqueue: func(p *redisprovider.Provider, size int) func(ctx context.Context) error {
			return activityProducer(p, size, 5)
		},
		take: func(ctx context.Context, p *redisprovider.Provider) (time.Time, error) {
			item, err := p.FetchWorkItem(ctx, 0, workerPoll, nil, duroxide.DefaultOnly())
			if err != nil || item == nil {
				return time.Time{}, fmt.Errorf("FetchWorkItem on a full queue: item %v, %w", item != nil, err)
			}
			at := time.Now()
			act := item.Item.(duroxide.ActivityExecute)
			return at, p.AckWorkItem(context.WithoutCancel(ctx), item.LockToken, duroxide.ActivityCompleted{
				Instance: act.Instance, ExecutionID: act.ExecutionID, ID: act.ID, Result: `"ok"`})
		},
	},
}

func runScale(ctx context.Context, e *env) error {
	for _, kind := range scaleKinds {
		if err := e.scale(ctx, kind); err != nil {
			return err
		}
	}
	return nil
}

func (e *env) scale(ctx context.Context, kind scaleKind) error {
	p, done, err := e.provider(ctx, "scale")
	if err != nil {
		return err
	}
	defer done()
	enqueue := kind.enqueue(p, e.opts.Payload)
	queued := 0
	for _, depth := range e.opts.ScaleDepths {
		for _, c := range e.opts.Concurrency {
			if want := depth + c; want > queued {
				if err := e.fill(ctx, fmt.Sprintf("queueing %d %s items", want-queued, kind.name), want-queued, enqueue); err != nil {
					return err
				}
				queued = want
			}
			m := newMeter(e.opts.Warmup, e.opts.Duration, 0)
			fa, fetch, ack := m.sibling(), m.sibling(), m.sibling()
			err := e.measure(ctx, fmt.Sprintf("scale %s depth=%d c=%d", kind.name, depth, c), m, func(ctx context.Context) error {
				return closedLoop(ctx, c, m, func(ctx context.Context, w int) error {
					t0 := time.Now()
					t1, err := kind.take(ctx, p)
					if err != nil {
						return err
					}
					t2 := time.Now()
					fa.observe(t0, t2)
					fetch.observe(t0, t1)
					ack.observe(t1, t2)
					return enqueue(context.WithoutCancel(ctx)) // keeps the depth
				})
			}, func(k counts) {
				pt := Point{Scenario: "scale", Variant: vScale(kind.name, depth), Concurrency: c, Unit: "fetch+acks",
					Ops: m.count(), Seconds: m.seconds(), Latency: fa.percentiles(),
					LatencyOf: fmt.Sprintf("fetch + ack with %d %s items waiting (the rate also includes the enqueue that keeps the depth)", depth, kind.name),
					Metrics:   map[string]float64{"queued": float64(depth)}, Counts: &k}
				if f, a := fetch.percentiles(), ack.percentiles(); f != nil && a != nil {
					pt.Metrics["fetch_p50_ms"], pt.Metrics["ack_p50_ms"] = f.P50, a.P50
					pt.Note = fmt.Sprintf("fetch p50 %s, ack p50 %s ms", fmtMs(f.P50), fmtMs(a.P50))
				}
				k.perOp(pt.Metrics, pt.Ops)
				if k.EvalUsecCall > 0 {
					pt.Note += fmt.Sprintf(", Redis %.0f us/script", k.EvalUsecCall)
				}
				e.add(pt)
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// fill runs enqueue n times from 16 goroutines (setup, not measured).
func (e *env) fill(ctx context.Context, label string, n int, enqueue func(ctx context.Context) error) error {
	var left, doneN atomic.Int64
	left.Store(int64(n))
	stop := e.prog.track(label, 0, doneN.Load)
	defer stop()
	start := time.Now()
	err := group(ctx, 16, func(ctx context.Context, w int) error {
		for left.Add(-1) >= 0 {
			if err := enqueue(ctx); err != nil {
				return fmt.Errorf("%s: %w", label, err)
			}
			doneN.Add(1)
		}
		return nil
	})
	if err == nil && n >= 10000 {
		fmt.Fprintf(e.out, "   (%s: %s/s)\n", label, strconv.FormatFloat(float64(n)/time.Since(start).Seconds(), 'f', 0, 64))
	}
	return err
}
