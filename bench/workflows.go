// Scenario workflows: real orchestrations, written as orchestration code
// and replayed by a runtime, rather than the turns scenario's hand-made
// commits. The same two orchestrations run on two systems in the same run,
// on the same Redis, point after point: this module's durable runtime and
// go-workflows (the closest Go peer: durable workflows on Redis); the
// fan-out also on the turns scenario's synthetic dispatcher, the provider
// without the replay engine (workflows_synth.go).
//
//   - fan-out: one orchestration schedules -fanout activities at once and
//     completes when all returned; each activity echoes a -payload input.
//   - tree: a root starts -tree-width sub-orchestrations, each of which
//     does the same down to -tree-depth levels; a leaf runs one activity.
//   - sequence and wide (workflows_sized.go): one long root at a time,
//     -sequence-n activities awaited one after another or -wide-n fanned
//     out and joined, measured by its wall time and its cost per history
//     event rather than by a window.
//
// A point keeps c x -inflight fan-outs or c trees in flight (a tree is 13
// orchestrations: with 4c of them a 10 s window held only three waves of
// completions at c=32, and the rate measured the waves). It measures roots
// completed per second, every orchestration (children included) and
// activity completed per second, and each root's latency from just before
// its start call to the commit of its final turn. Each system reports that
// commit from its storage layer, after the write returned.

package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// engine is a workflow system the scenario runs.
type engine struct {
	name       string // in variant names
	fanOutOnly bool   // the engine runs only the fan-out shape
	sizedOnly  bool   // the engine runs only the sized shapes (workflows_sized.go)
	// smokeless is why the engine cannot run on miniredis ("": it can)
	smokeless string
	// ackFetch: the durable runtime, whose points say which ack-and-fetch
	// path they ran (see env.ackFetchPath)
	ackFetch bool
	// start runs the engine's dispatchers and workers at concurrency c,
	// reporting to ev; everything it stores is deleted by the run's stop.
	start func(ctx context.Context, e *env, c int, ev engineEvents) (engineRun, error)
}

// engineEvents is what a running engine reports, each when committed.
type engineEvents struct {
	finished func(instance string, root bool, failure error, at time.Time)
	activity func(at time.Time)
}

// engineRun is an engine started for one point.
type engineRun interface {
	startFanOut(ctx context.Context, id, payload string) error
	startTree(ctx context.Context, id, payload string) error
	// startSequence and startWide start the sized shapes' roots with n
	// activities each (workflows_sized.go).
	startSequence(ctx context.Context, id, payload string, n int) error
	startWide(ctx context.Context, id, payload string, n int) error
	// historyLength is the number of events the engine stored for root id.
	historyLength(ctx context.Context, id string) (int, error)
	// stop ends the dispatchers and workers and deletes what the run stored.
	stop() error
}

// shape is one of the two orchestrations.
type shape struct {
	name           string // in variant names
	unit           string // what a counted root is
	orchestrations int    // per root, itself included
	activities     int    // per root
	inflight       int    // roots in flight per unit of concurrency
	vsTurns        bool   // the synthetic dispatcher runs the same orchestration by hand
	start          func(r engineRun, ctx context.Context, id, payload string) error
}

// shapes returns the orchestrations measured, sized by the options.
func (e *env) shapes() []shape {
	d, w := e.opts.TreeDepth, e.opts.TreeWidth
	nodes, leaves := 1, 1
	for range d {
		leaves *= w
		nodes += leaves
	}
	return []shape{
		{name: fmt.Sprintf("fan-out %d", e.opts.FanOut), unit: "orchestrations", orchestrations: 1,
			activities: e.opts.FanOut, inflight: e.opts.InFlight, vsTurns: true, start: engineRun.startFanOut},
		{name: fmt.Sprintf("tree %dx%d", d, w), unit: "trees", orchestrations: nodes,
			activities: leaves, inflight: 1, start: engineRun.startTree},
	}
}

// engines in the order each point runs them.
var engines = []engine{durableEngine, durableDefaultsEngine, synthEngine, gwEngine}

func vWorkflow(sh, engine string) string { return sh + ", " + engine }

// ackFetchPath says which path the durable runtime's ack-and-fetch calls
// took, for the notes of its points: every figure says which.
func (e *env) ackFetchPath() string {
	if e.opts.NoAckFetch {
		return "no ack-and-fetch (-ackfetch=false: acks and fetches in separate calls, the runtime's polls)"
	}
	if e.opts.AckFetchNoPoll {
		return "ack-and-fetch without poll (-ackfetch-poll=false)"
	}
	return "ack-and-fetch with the runtime's poll (the application's path)"
}

func runWorkflows(ctx context.Context, e *env) error {
	for _, en := range engines {
		if e.embedded && en.smokeless != "" {
			e.skip(en.name + ": " + en.smokeless)
		}
	}
	for _, sh := range e.shapes() {
		for _, c := range e.opts.Concurrency {
			for _, en := range engines {
				if (e.embedded && en.smokeless != "") || (en.fanOutOnly && !sh.vsTurns) || en.sizedOnly {
					continue
				}
				if err := e.workflowPoint(ctx, sh, en, c); err != nil {
					return err
				}
			}
		}
	}
	return e.runSized(ctx)
}

// workflowWindow is the measured window of a workflows point. A window
// shorter than a root's latency counts nothing: on miniredis under the race
// detector a tree takes about 0.4 s, longer than a smoke run's window, so
// smoke points get at least a second.
func (e *env) workflowWindow() time.Duration {
	if e.embedded {
		return max(e.opts.Duration, time.Second)
	}
	return e.opts.Duration
}

// completions turns an engine's reports into the point's counts: roots go
// to the flow's sink (rate, latency, exactly-once check), every
// orchestration and activity to meters of the same window, and the first
// failure or unknown root into an error the point fails with.
type completions struct {
	starts sync.Map // root id -> time just before its start call
	s      *sink
	orchs  *meter
	acts   *meter
	bad    atomic.Value // first error
}

func (k *completions) events() engineEvents {
	return engineEvents{
		finished: func(inst string, root bool, failure error, at time.Time) {
			if failure != nil {
				k.bad.CompareAndSwap(nil, fmt.Errorf("orchestration %s failed: %w", inst, failure))
				return
			}
			k.orchs.record(0, at)
			if !root {
				return
			}
			sent, ok := k.starts.Load(inst)
			if !ok {
				k.bad.CompareAndSwap(nil, fmt.Errorf("root %s completed but was never started by this point", inst))
				return
			}
			k.s.complete(inst, sent.(time.Time), at)
		},
		activity: func(at time.Time) { k.acts.record(0, at) },
	}
}

func (k *completions) failed() error {
	if err, ok := k.bad.Load().(error); ok {
		return err
	}
	return nil
}

// workflowPoint measures one shape on one engine at concurrency c.
func (e *env) workflowPoint(ctx context.Context, sh shape, en engine, c int) error {
	scenario, variant := e.transport.point("workflows", vWorkflow(sh.name, en.name))
	return e.enginePoint(ctx, sh, en, c, scenario, variant, nil)
}

// enginePoint measures one shape on one engine at concurrency c as a point
// of scenario and variant; finish, when set, adds to the point before it is
// recorded.
func (e *env) enginePoint(ctx context.Context, sh shape, en engine, c int, scenario, variant string, finish func(pt *Point, k counts)) error {
	k := &completions{}
	var run engineRun
	var next atomic.Int64
	prefix := fmt.Sprintf("wf-%s-%d-", e.runID, e.nsN.Add(1))
	return e.runFlow(ctx, flow{
		label:    fmt.Sprintf("%s %s c=%d", en.name, sh.name, c),
		conc:     c,
		window:   e.workflowWindow(),
		inflight: sh.inflight,
		enqueue: func(ctx context.Context) error {
			id := prefix + strconv.FormatInt(next.Add(1), 10)
			k.starts.Store(id, time.Now())
			return sh.start(run, ctx, id, payload(e.opts.Payload))
		},
		consume: func(ctx context.Context, s *sink) (func() error, func() error, error) {
			k.s, k.orchs, k.acts = s, s.m.sibling(), s.m.sibling()
			var err error
			if run, err = en.start(ctx, e, c, k.events()); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", en.name, err)
			}
			stop := func() error {
				if err := run.stop(); err != nil {
					return err
				}
				return k.failed()
			}
			return stop, k.failed, nil
		},
		record: func(m *meter, s *sink, cnt counts) {
			pt := Point{Scenario: scenario, Variant: variant, Concurrency: c, Unit: sh.unit,
				LatencyOf: fmt.Sprintf("root start call to the commit of its final turn, %d orchestrations and %d activities per root, %d roots in flight",
					sh.orchestrations, sh.activities, c*sh.inflight),
				Metrics: map[string]float64{
					"orchestrations_per_sec": k.orchs.rate(),
					"activities_per_sec":     k.acts.rate(),
				},
			}.measured(m, m, cnt)
			pt.Note = fmt.Sprintf("%s orchestrations/s, %s activities/s; %s", human(k.orchs.rate()), human(k.acts.rate()), callsNote(cnt, pt.Ops))
			if en.ackFetch {
				pt.Note += "; " + e.ackFetchPath()
			}
			if finish != nil {
				finish(&pt, cnt)
			}
			e.add(pt)
		},
	})
}

// workflowRatios compares the two engines point by point and the durable
// runtime's fan-out with the synthetic runtime of the turns scenario (what
// replaying orchestration code costs on top of the provider), and checks
// the goals at the key concurrency.
func (r *Report) workflowRatios(e *env) {
	key := keyConcurrency(e.opts.Concurrency)
	var goals []Target
	for _, sh := range e.shapes() {
		for _, c := range e.opts.Concurrency {
			ours, peer := r.find("workflows", vWorkflow(sh.name, durableEngine.name), c), r.find("workflows", vWorkflow(sh.name, gwEngine.name), c)
			if ours == nil || ours.PerSec == 0 {
				continue
			}
			if peer != nil && peer.PerSec > 0 {
				v := ours.PerSec / peer.PerSec
				r.ratio(Ratio{sh.name + " " + sh.unit + "/s durable / go-workflows", c, v, "higher is better"})
				if c == key {
					goals = append(goals, Target{fmt.Sprintf("%s: %s/s >= 3x go-workflows at concurrency %d", sh.name, sh.unit, c), fmt.Sprintf("%.2fx", v), v >= 3})
				}
				if ours.Latency != nil && peer.Latency != nil && peer.Latency.P50 > 0 {
					p := ours.Latency.P50 / peer.Latency.P50
					r.ratio(Ratio{sh.name + " p50 durable / go-workflows", c, p, "lower is better"})
					if c == key {
						goals = append(goals, Target{fmt.Sprintf("%s: start-to-completion p50 below go-workflows's at concurrency %d", sh.name, c),
							fmt.Sprintf("%s ms vs %s ms", fmtMs(ours.Latency.P50), fmtMs(peer.Latency.P50)), p < 1})
					}
				}
			}
			if synth := r.find("workflows", vWorkflow(sh.name, synthEngine.name), c); synth != nil && synth.PerSec > 0 {
				v := ours.PerSec / synth.PerSec
				r.ratio(Ratio{sh.name + " orchestrations/s durable / synthetic", c, v, "share the replay engine keeps of the provider's orchestration rate"})
				if c == key {
					goals = append(goals, Target{fmt.Sprintf("%s: durable orchestrations/s >= 70%% of the synthetic dispatcher's at concurrency %d", sh.name, c), fmt.Sprintf("%.0f%%", 100*v), v >= 0.7})
				}
			}
		}
	}
	r.Targets = append(r.Targets, goals...)
	r.sizedRatios(e)
}

// workflowVariants lists the workflows scenario's windowed variants present
// in the report (not the sized shapes' single roots, whose wall times would
// crush the chart's latency scale), in the order they were measured.
func (r *Report) workflowVariants() []string {
	var out []string
	for _, p := range r.Points {
		if p.Scenario == "workflows" && p.Result == "" && !slices.Contains(out, p.Variant) {
			out = append(out, p.Variant)
		}
	}
	return out
}
