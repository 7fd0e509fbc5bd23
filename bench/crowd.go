// Scenario crowd: what idle runtimes cost the runtimes that work. An
// operator's deployment has many replicas, most of them idle at any moment,
// each with its orchestration dispatcher and activity worker parked in a long
// poll. Those parked fetchers should cost Redis nothing while they sleep and
// must not multiply the scripts the working ones run, nor slow down the
// pickup of new work.
//
// The crowd is simulated in this process: each idle runtime is a
// durable.Runtime on its own provider and its own Redis client (its own
// connection pools), with one orchestration dispatcher and one activity
// worker, in the namespace the load runs in. The load is a steady rate of
// orchestrations (a 1 s timer, then one activity) started through a working
// runtime. The same
// load is measured without the crowd and with it: Redis script calls per
// second and per orchestration, and the pickup latency (start call to the
// first turn's orchestration code, on whichever runtime took it).

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// Names of the crowd scenario's orchestration and activity.
const (
	crowdOrch = "bench.crowd.orch"
	crowdAct  = "bench.crowd.act"
)

// crowdTimer is the timer each load orchestration waits on between its
// first turn and its activity.
const crowdTimer = time.Second

// crowdRun counts what the runtimes of one crowd point did.
type crowdRun struct {
	pickup *meter // start call to the first turn's code
	done   *meter // completed orchestrations
	bad    atomic.Value
}

// registry registers the crowd's orchestration on every runtime, idle or
// not: any of them may take the load's work, as replicas of one deployment.
func (r *crowdRun) registry() *durable.Registry {
	return durable.NewRegistry().
		MustAddOrchestration(crowdOrch, durable.Orchestration(func(ctx *durable.OrchestrationContext, in string) (string, error) {
			if !ctx.IsReplaying() {
				// the first turn: the code runs from the top only once
				// without replaying, whichever runtime takes the turn
				if sent, err := sentAt(in); err == nil {
					now := time.Now()
					r.pickup.record(now.Sub(sent), now)
				} else {
					r.bad.CompareAndSwap(nil, err)
				}
			}
			// a timer: the due times every waiter of every runtime learns
			if _, err := ctx.Timer(crowdTimer).Get(); err != nil {
				return "", err
			}
			out, err := durable.ScheduleActivity[string](ctx, crowdAct, in).Get()
			if err == nil && !ctx.IsReplaying() {
				r.done.record(0, time.Now())
			}
			return out, err
		})).
		MustAddActivity(crowdAct, durable.Activity(echo))
}

func (r *crowdRun) failed() error {
	if err, ok := r.bad.Load().(error); ok {
		return err
	}
	return nil
}

func runCrowd(ctx context.Context, e *env) error {
	for _, n := range []int{0, e.opts.Crowd} {
		if err := e.crowdPoint(ctx, n); err != nil {
			return err
		}
	}
	e.crowdTargets()
	return nil
}

// vCrowd names the crowd point with n idle runtimes.
func vCrowd(n int) string {
	if n == 0 {
		return "load alone"
	}
	return fmt.Sprintf("load + %d idle runtimes", n)
}

// crowdPoint measures the load with n idle runtimes beside it.
func (e *env) crowdPoint(ctx context.Context, n int) error {
	ns := e.namespace("crowd")
	r := &crowdRun{}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("scenario", "crowd")
	idle, err := e.startCrowd(ctx, ns, n, r, logger)
	defer idle.stop()
	if err != nil {
		return err
	}
	if err := e.settleCrowd(ctx, n); err != nil {
		return err
	}
	p, err := redisprovider.New(ctx, redisprovider.Options{Client: e.main, Namespace: ns, Logger: logger})
	if err != nil {
		return err
	}
	defer e.cleanup(p.Keys().Prefix() + "*")
	defer p.Close()
	const c = 4
	rt, err := durable.NewRuntime(p, r.registry(), durable.Options{OrchestrationConcurrency: c, WorkerConcurrency: c,
		WorkerNodeID: "bench-crowd-load", Logger: logger})
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = rt.Shutdown(sctx)
	}()
	client := rt.Client()
	window := e.crowdWindow()
	m := newMeter(e.opts.Warmup, window, 0)
	r.pickup, r.done = m.sibling(), m.sibling()
	var next atomic.Int64
	rate := e.opts.CrowdRate
	label := fmt.Sprintf("crowd %s", vCrowd(n))
	return e.measure(ctx, label, r.done, func(ctx context.Context) error {
		err := paced(ctx, rate, m, func(ctx context.Context) error {
			id := ns + "-" + strconv.FormatInt(next.Add(1), 10)
			return client.StartOrchestrationJSON(ctx, id, crowdOrch, payload(16))
		})
		if err == nil {
			err = r.failed()
		}
		return err
	}, func(k counts) {
		scripts := k.ServerByCmd["fcall"] + k.ServerByCmd["evalsha"]
		pt := Point{Scenario: "crowd", Variant: vCrowd(n), Concurrency: c, Unit: "orchestrations",
			LatencyOf: fmt.Sprintf("pickup: StartOrchestration call to the first turn's code, %.0f orchestrations/s (timer %v, one activity)", rate, crowdTimer),
			Metrics:   map[string]float64{"idle_runtimes": float64(n)},
		}.measured(r.done, r.pickup, k)
		if k.Seconds > 0 && k.BZPopKnown {
			pt.Metrics["script_calls_per_sec"] = float64(scripts) / k.Seconds
			pt.Metrics["bzpopmin_per_sec"] = float64(k.BZPopMin) / k.Seconds
			if pt.Ops > 0 {
				pt.Metrics["script_calls_per_orchestration"] = float64(scripts) / float64(pt.Ops)
			}
			if k.ServerCPU > 0 {
				pt.Metrics["redis_cpu_percent"] = 100 * k.ServerCPU / k.Seconds
			}
			pt.Note = fmt.Sprintf("%s script calls/s (%.1f per orchestration), %s BZPOPMIN/s, Redis CPU %.0f%%",
				human(pt.Metrics["script_calls_per_sec"]), pt.Metrics["script_calls_per_orchestration"],
				human(pt.Metrics["bzpopmin_per_sec"]), pt.Metrics["redis_cpu_percent"])
		}
		e.add(pt)
	})
}

// crowdWindow is the measured window of a crowd point: long enough to span
// several of the idle fetchers' 10 s refreshes and the load's lock expiries.
func (e *env) crowdWindow() time.Duration {
	if e.embedded { // an orchestration takes its timer and more to complete
		return max(e.opts.Duration, 2*crowdTimer)
	}
	return max(4*e.opts.Duration, 20*time.Second)
}

// idleCrowd is the idle runtimes of one point.
type idleCrowd struct {
	mu       sync.Mutex
	runtimes []*durable.Runtime
	closers  []func()
}

// startCrowd starts n idle runtimes on namespace ns, each on its own
// provider and client, started a few at a time (each loads the scripts).
func (e *env) startCrowd(ctx context.Context, ns string, n int, r *crowdRun, logger *slog.Logger) (*idleCrowd, error) {
	idle := &idleCrowd{}
	if n == 0 {
		return idle, nil
	}
	reg := r.registry()
	err := group(ctx, min(n, 16), func(ctx context.Context, w int) error {
		for i := w; i < n; i += min(n, 16) {
			o := *e.clientOpts
			o.PoolSize = 4 // an idle replica needs few command connections
			rdb := redis.NewClient(&o)
			p, err := redisprovider.New(ctx, redisprovider.Options{Client: rdb, Namespace: ns, Logger: logger})
			if err != nil {
				rdb.Close()
				return fmt.Errorf("idle runtime %d: %w", i, err)
			}
			rt, err := durable.NewRuntime(p, reg, durable.Options{OrchestrationConcurrency: 1, WorkerConcurrency: 1, Logger: logger})
			if err != nil {
				p.Close()
				rdb.Close()
				return fmt.Errorf("idle runtime %d: %w", i, err)
			}
			idle.mu.Lock()
			idle.runtimes = append(idle.runtimes, rt)
			idle.closers = append(idle.closers, func() { p.Close(); rdb.Close() })
			idle.mu.Unlock()
		}
		return nil
	})
	return idle, err
}

// stop shuts the idle runtimes down, all at once.
func (c *idleCrowd) stop() {
	var wg sync.WaitGroup
	for i, rt := range c.runtimes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = rt.Shutdown(ctx)
			c.closers[i]()
		}()
	}
	wg.Wait()
}

// settleCrowd waits until the idle runtimes' fetchers have parked: the
// number of clients blocked in Redis stops changing (on miniredis, which
// does not report it, a moment).
func (e *env) settleCrowd(ctx context.Context, n int) error {
	if n == 0 {
		return nil
	}
	if e.embedded {
		time.Sleep(500 * time.Millisecond)
		return nil
	}
	last, stable := int64(-1), 0
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		txt, err := e.admin.Info(ctx, "clients").Result()
		if err != nil {
			return err
		}
		v, _ := infoField(txt, "blocked_clients")
		b, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if b == last && b > 0 {
			if stable++; stable >= 3 {
				fmt.Fprintf(e.out, "   %d idle runtimes parked: %d clients blocked in Redis\n", n, b)
				return nil
			}
		} else {
			last, stable = b, 0
		}
		select {
		case <-time.After(500 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return errors.New("the idle runtimes never settled")
}

// crowdTargets compares the load with and without the crowd.
func (e *env) crowdTargets() {
	alone, crowd := e.report.find("crowd", vCrowd(0), 0), e.report.find("crowd", vCrowd(e.opts.Crowd), 0)
	if alone == nil || crowd == nil || alone.Metrics["script_calls_per_sec"] == 0 {
		return
	}
	v := crowd.Metrics["script_calls_per_sec"] / alone.Metrics["script_calls_per_sec"]
	e.report.ratio(Ratio{Name: "crowd_script_calls_with_vs_without", Value: v,
		Meaning: fmt.Sprintf("Redis script calls/s under the same load with %d idle runtimes vs without (1 = the crowd costs nothing)", e.opts.Crowd)})
	e.report.target(fmt.Sprintf("%d idle runtimes: script calls under load within 1.5x of the load alone", e.opts.Crowd),
		fmt.Sprintf("%.2fx (%s vs %s calls/s)", v, human(crowd.Metrics["script_calls_per_sec"]), human(alone.Metrics["script_calls_per_sec"])), v <= 1.5)
	if crowd.Latency != nil {
		e.report.target(fmt.Sprintf("%d idle runtimes: pickup p99 < 10 ms", e.opts.Crowd),
			fmt.Sprintf("p50 %s ms, p99 %s ms (alone: p99 %s ms)", fmtMs(crowd.Latency.P50), fmtMs(crowd.Latency.P99), fmtMs(alone.Latency.P99)),
			crowd.Latency.P99 < 10)
	}
}
