// Scenario 2, activity round trip: producers EnqueueForWorker an
// ActivityExecute, workers ack each item with an ActivityCompleted and take
// the next in one call (AckWorkItemAndFetch, long-polling with
// FetchWorkItem only when they hold nothing), the worker half of every
// duroxide activity as the runtime runs it. The yardstick stays the
// 3-command ceiling divided by 3, as when a round trip took three calls.

package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	dxredis "github.com/duroxide-go/duroxide-redis"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// workerPoll is the poll timeout of every benchmark worker and dispatcher. It
// only bounds how long a fetch blocks with no work (the provider wakes it the
// moment work arrives), so its value does not shape any figure.
const workerPoll = time.Second

func runRoundTrip(ctx context.Context, e *env) error {
	for _, c := range e.opts.Concurrency {
		if err := e.roundTrip(ctx, c); err != nil {
			return err
		}
	}
	return e.scriptCosts(ctx)
}

// scriptCosts splits a round trip into its three scripts, run one kind at a
// time at concurrency 1, and reads Redis's own time per call for each (INFO
// commandstats), next to the cost of the same script stopped right after its
// library prelude: the part every call pays before doing any work.
func (e *env) scriptCosts(ctx context.Context) error {
	p, done, err := e.provider(ctx, "scripts")
	if err != nil {
		return err
	}
	defer done()
	n := 5000
	if e.embedded {
		n = 50
	}
	enqueue := activityProducer(p, e.opts.Payload, e.opts.FanOut)
	items := make([]*duroxide.LockedWorkItem, 0, n)
	steps := []struct {
		script string
		call   func(ctx context.Context, i int) error
	}{
		{"enqueue_for_worker", func(ctx context.Context, i int) error { return enqueue(ctx) }},
		{"fetch_work_item", func(ctx context.Context, i int) error {
			item, err := p.FetchWorkItem(ctx, 0, 0, nil, duroxide.DefaultOnly())
			if err == nil && item == nil {
				err = fmt.Errorf("FetchWorkItem found nothing with %d items queued", n-i)
			}
			items = append(items, item)
			return err
		}},
		{"ack_work_item", func(ctx context.Context, i int) error {
			act := items[i].Item.(duroxide.ActivityExecute)
			return p.AckWorkItem(ctx, items[i].LockToken, okCompletion(act))
		}},
	}
	for _, st := range steps {
		m := newMeter(0, time.Hour, 0)
		pr := e.startProbe(ctx)
		for i := range n {
			t0 := time.Now()
			if err := st.call(ctx, i); err != nil {
				return fmt.Errorf("%s: %w", st.script, err)
			}
			m.observe(t0, time.Now())
		}
		k, err := pr.stop(ctx)
		if err != nil {
			return err
		}
		pt := Point{Scenario: "roundtrip", Variant: "script alone: " + st.script, Concurrency: 1, Unit: "calls",
			Ops: int64(n), Seconds: k.Seconds, Latency: m.percentiles(), LatencyOf: "one provider call, nothing else running",
			Metrics: map[string]float64{}, Counts: &k}
		k.perOp(pt.Metrics, pt.Ops)
		pt.Note = fmt.Sprintf("%.1f Redis cmds/call", pt.Metrics["redis_cmds_per_op"])
		if k.EvalUsecCall > 0 {
			pt.Note += fmt.Sprintf(", Redis %.1f us/call", k.EvalUsecCall)
			// a function library is defined once, at load: no call pays a prelude
			if !p.UsesFunctions() {
				e.notePrelude(ctx, &pt, st.script, p.Keys().Prefix(), n)
			}
		}
		e.add(pt)
	}
	return nil
}

// notePrelude adds to pt the part of a script's time spent defining its
// libraries, when it can be measured.
func (e *env) notePrelude(ctx context.Context, pt *Point, script, prefix string, n int) {
	if pre, err := e.preludeCost(ctx, script, prefix, n); err == nil && pre > 0 {
		pt.Metrics["prelude_server_usec"] = pre
		pt.Note += fmt.Sprintf(" of which %.1f us defining its libraries (prelude alone)", pre)
	}
}

// preludeCost runs the provider's script name cut right after its prelude
// (key functions and libraries, which every call defines anew) and returns
// Redis's time per call; 0 when the script's body cannot be found. Bench
// only: it relies on each body starting with its "-- <name>:" comment.
func (e *env) preludeCost(ctx context.Context, name, prefix string, n int) (float64, error) {
	src, err := dxredis.Script(name)
	if err != nil {
		return 0, err
	}
	i := strings.LastIndex(src, "-- "+name+":")
	if i < 0 {
		return 0, nil
	}
	script := redis.NewScript(src[:i] + "do return 1 end\n" + src[i:])
	e.calls.nameScript("prelude_"+name, src[:i]+"do return 1 end\n"+src[i:])
	if err := script.Load(ctx, e.main).Err(); err != nil {
		return 0, err
	}
	pr := e.startProbe(ctx)
	for range n {
		if err := script.Run(ctx, e.main, []string{prefix}).Err(); err != nil {
			return 0, err
		}
	}
	k, err := pr.stop(ctx)
	return k.EvalUsecCall, err
}

func (e *env) roundTrip(ctx context.Context, c int) error {
	scenario, variant := e.transport.point("roundtrip", vRoundTrip)
	p, done, err := e.provider(ctx, scenario)
	if err != nil {
		return err
	}
	defer done()
	return e.runFlow(ctx, flow{
		label:   fmt.Sprintf("%s %s c=%d", scenario, variant, c),
		conc:    c,
		enqueue: activityProducer(p, e.opts.Payload, e.opts.FanOut),
		// the path the runtime's worker dispatcher takes: a worker that
		// holds an item acks it and takes the next in one call (the levers
		// scenario measures the two-call path next to it)
		consume: ackFetchWorkers(p, c),
		record: func(m *meter, s *sink, k counts) {
			pt := Point{Scenario: scenario, Variant: variant, Concurrency: c, Unit: "round trips",
				LatencyOf: fmt.Sprintf("enqueue start to ack done, %d items in flight", c*e.opts.InFlight),
			}.measured(m, m, k)
			pt.Note = callsNote(k, pt.Ops, "fetch_work_item", "ack_fetch_work_item")
			e.add(pt)
		},
	})
}

// activityProducer returns an enqueue of a fresh ActivityExecute per call.
// Instances group fanout activities each, as an orchestration would, so the
// per-instance cancellation index has a realistic size.
func activityProducer(p *redisprovider.Provider, size, fanout int) func(ctx context.Context) error {
	var next atomic.Uint64
	return func(ctx context.Context) error {
		id := next.Add(1)
		return p.EnqueueForWorker(ctx, duroxide.ActivityExecute{
			Instance:    "act-" + strconv.FormatUint(id/uint64(fanout), 10),
			ExecutionID: 1,
			ID:          id,
			Name:        "bench.noop",
			Input:       payload(size),
		})
	}
}

// activityWorkers starts c workers that fetch with a long poll and ack with
// an ActivityCompleted, reporting each item when fetched (atFetch: dispatch
// latency) or when acked (a full round trip).
func activityWorkers(p *redisprovider.Provider, c int, atFetch bool) func(ctx context.Context, s *sink) (func() error, func() error, error) {
	return func(ctx context.Context, s *sink) (func() error, func() error, error) {
		cs := startConsumers(ctx, c, func(ctx context.Context, w int) error {
			for ctx.Err() == nil {
				item, err := p.FetchWorkItem(ctx, 0, workerPoll, nil, duroxide.DefaultOnly())
				if err != nil {
					return err
				}
				if item == nil {
					continue
				}
				fetched := time.Now()
				act, ok := item.Item.(duroxide.ActivityExecute)
				if !ok {
					return fmt.Errorf("FetchWorkItem returned a %T", item.Item)
				}
				sent, err := sentAt(act.Input)
				if err != nil {
					return err
				}
				id := act.Instance + "#" + strconv.FormatUint(act.ID, 10)
				if atFetch {
					s.complete(id, sent, fetched)
				}
				// not cancellable: a fetched item is always finished, so the
				// drain's counts stay exact
				err = p.AckWorkItem(context.WithoutCancel(ctx), item.LockToken, okCompletion(act))
				if err != nil {
					return fmt.Errorf("AckWorkItem: %w", err)
				}
				if !atFetch {
					s.complete(id, sent, time.Now())
				}
			}
			return nil
		})
		return cs.stop, cs.failed, nil
	}
}

// okCompletion is the successful result every benchmark worker acks activity
// a with.
func okCompletion(a duroxide.ActivityExecute) duroxide.ActivityCompleted {
	return duroxide.ActivityCompleted{Instance: a.Instance, ExecutionID: a.ExecutionID, ID: a.ID, Result: `"ok"`}
}

// callsNote summarises client calls per operation for the table, naming the
// calls worth watching (e.g. fetch scripts that found nothing).
func callsNote(k counts, ops int64, watch ...string) string {
	if ops <= 0 {
		return ""
	}
	s := fmt.Sprintf("%.2f calls/op", float64(k.ClientCalls)/float64(ops))
	for _, w := range watch {
		s += fmt.Sprintf(", %s %.2f", w, float64(scriptCalls(k, w))/float64(ops))
	}
	if k.ServerCPU > 0 {
		s += fmt.Sprintf("; CPU/op redis %.0f us, client %.0f us", 1e6*k.ServerCPU/float64(ops), 1e6*k.ClientCPU/float64(ops))
	}
	return s
}

// scriptCalls counts the client calls of name: a script by EVALSHA or FCALL,
// or a plain command.
func scriptCalls(k counts, name string) int64 {
	return k.ByCall[name] + k.ByCall["evalsha:"+name] + k.ByCall["fcall:"+name]
}
