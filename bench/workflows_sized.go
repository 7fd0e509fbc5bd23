// The sized shapes of the workflows scenario: one long root at a time, run
// to completion, where the windowed shapes keep many short roots in flight.
// They show what a turn costs as its history grows, which a fan-out of 5
// (12 events) never reaches:
//
//   - sequence N: N echo activities awaited one after another, one turn
//     each, so the k-th turn replays (or reads) a history of about 2k
//     events;
//   - wide N: the fan-out orchestration with N activities, scheduled in
//     one turn and joined as their completions arrive in batches.
//
// Each size (-sequence-n, -wide-n) runs once on the durable runtime and
// once on go-workflows (the synthetic dispatcher has neither shape), at the
// key concurrency, after one fan-out root has warmed the engine up. A point
// reports the root's wall time (start call to the commit of its final
// turn), then the run's costs divided by the events of the root's history,
// read back from the engine afterwards: this process's allocation
// (runtime.MemStats TotalAlloc), Redis's CPU (INFO cpu, through the probe
// every point uses), this process's CPU, commands and calls. The engines
// cut histories differently (go-workflows also records a marker per
// workflow task), so the same figures per activity are in the JSON too.
//
// A root is bounded by -shape-timeout. One that fails or overruns it is a
// result, not a scenario failure: go-workflows fails a workflow whose
// history reaches 10,000 events, and the durable runtime may be slower than
// the bound; the point says so in its Result and its figures cover the time
// until then.

package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"time"
)

// sizedShape is one size of a sized shape.
type sizedShape struct {
	kind  string // "sequence" or "wide"
	n     int    // activities
	start func(r engineRun, ctx context.Context, id, payload string, n int) error
}

func (s sizedShape) name() string { return fmt.Sprintf("%s %d", s.kind, s.n) }

// sizedShapes returns the sizes to run, sequences first.
func (e *env) sizedShapes() []sizedShape {
	var out []sizedShape
	for _, n := range e.opts.SequenceN {
		out = append(out, sizedShape{kind: "sequence", n: n, start: engineRun.startSequence})
	}
	for _, n := range e.opts.WideN {
		out = append(out, sizedShape{kind: "wide", n: n, start: engineRun.startWide})
	}
	return out
}

// runSized runs every sized shape on every engine that has it. A durable
// root that fails is a bug of the runtime (it has no history limit): it is
// recorded like any result, then fails the scenario once every point ran.
func (e *env) runSized(ctx context.Context) error {
	c := keyConcurrency(e.opts.Concurrency)
	var failed []error
	for _, sh := range e.sizedShapes() {
		for _, en := range engines {
			if en.fanOutOnly || (e.embedded && en.smokeless != "") {
				continue
			}
			res, err := e.sizedPoint(ctx, sh, en, c)
			if err != nil {
				return err
			}
			if en.ackFetch && res.failure != nil {
				failed = append(failed, fmt.Errorf("%s on %s: %w", sh.name(), en.name, res.failure))
			}
		}
	}
	return errors.Join(failed...)
}

// rootEnd is how a root ended, as its engine reported it.
type rootEnd struct {
	failure error // nil: completed
	at      time.Time
}

// sizedResult is how a measured root ended: reported by its engine, or not
// within the bound.
type sizedResult struct {
	timedOut bool          // no end within the bound
	bound    time.Duration // the bound it was given
	failure  error         // the engine's failure of the root
}

// String is the point's Result.
func (r sizedResult) String() string {
	switch {
	case r.timedOut:
		return "timed out after " + r.bound.String()
	case r.failure != nil:
		return "failed: " + r.failure.Error()
	default:
		return "completed"
	}
}

// sizedPoint runs one root of sh on a fresh engine at concurrency c and
// records its point. The error is for what makes the point meaningless (the
// engine does not start, a start call fails, the warm-up root does not
// complete, the root completes twice); how the root itself ended is in the
// result.
func (e *env) sizedPoint(ctx context.Context, sh sizedShape, en engine, c int) (sizedResult, error) {
	label := fmt.Sprintf("%s %s c=%d", en.name, sh.name(), c)
	prefix := fmt.Sprintf("wf-%s-%d-", e.runID, e.nsN.Add(1))
	warmID, id := prefix+"warm", prefix+sh.kind
	// each root's first report goes to its channel; later ones are counted
	ends := map[string]chan rootEnd{warmID: make(chan rootEnd, 1), id: make(chan rootEnd, 1)}
	reports := map[string]*atomic.Int64{warmID: new(atomic.Int64), id: new(atomic.Int64)}
	var acts atomic.Int64
	run, err := en.start(ctx, e, c, engineEvents{
		finished: func(inst string, root bool, failure error, at time.Time) {
			if n, ok := reports[inst]; ok && root && n.Add(1) == 1 {
				ends[inst] <- rootEnd{failure, at}
			}
		},
		activity: func(time.Time) { acts.Add(1) },
	})
	if err != nil {
		return sizedResult{}, fmt.Errorf("%s: %w", en.name, err)
	}
	pt, res, err := e.measureSized(ctx, run, sh, en, c, label, warmID, id, ends, &acts)
	late, stopErr := stopWithin(run, stopGrace)
	if err == nil && !stopped(stopErr) {
		err = fmt.Errorf("%s: stopping: %w", label, stopErr)
	}
	for inst, n := range reports {
		if err == nil && n.Load() > 1 {
			err = fmt.Errorf("%s: root %s reported finished %d times", label, inst, n.Load())
		}
	}
	if pt != nil {
		if late {
			pt.Note += fmt.Sprintf(" (engine still stopping %v later: its turn in progress ran on beside the next points)", stopGrace)
		}
		e.add(*pt)
	}
	return res, err
}

// stopGrace is how long a sized point waits for its engine to stop. A turn
// in progress cannot be interrupted (the durable runtime's Shutdown waits
// for it past its own deadline), and after a root that timed out such a
// turn may replay a history of thousands of events for minutes: past the
// grace the scenario moves on, and the point says so.
const stopGrace = time.Minute

// stopWithin stops run, waiting up to grace; late reports that it had not
// stopped by then (it goes on stopping, and deletes what it stored, in the
// background).
func stopWithin(run engineRun, grace time.Duration) (late bool, err error) {
	done := make(chan error, 1)
	go func() { done <- run.stop() }()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err = <-done:
		return false, err
	case <-t.C:
		return true, nil
	}
}

// measureSized warms run up with one fan-out root, then measures the sized
// root id from its start call to its end or the bound, and returns its
// point (nil with the error).
func (e *env) measureSized(ctx context.Context, run engineRun, sh sizedShape, en engine, c int, label, warmID, id string,
	ends map[string]chan rootEnd, acts *atomic.Int64) (*Point, sizedResult, error) {
	bound := e.opts.ShapeLimit
	if err := run.startFanOut(ctx, warmID, payload(e.opts.Payload)); err != nil {
		return nil, sizedResult{}, fmt.Errorf("%s: warm-up start: %w", label, err)
	}
	switch end, ok, err := waitRoot(ctx, ends[warmID], bound); {
	case err != nil:
		return nil, sizedResult{}, fmt.Errorf("%s: warm-up: %w", label, err)
	case !ok:
		return nil, sizedResult{}, fmt.Errorf("%s: the warm-up fan-out did not complete within %v", label, bound)
	case end.failure != nil:
		return nil, sizedResult{}, fmt.Errorf("%s: the warm-up fan-out failed: %w", label, end.failure)
	}
	// an activity is reported when its ack call returns, which may be after
	// the root it completed was: all the warm-up's must be in before counting
	warmActs := int64(e.opts.FanOut)
	if err := waitFor(ctx, nil, bound, label+": warm-up activities", func() (bool, string) {
		return acts.Load() >= warmActs, fmt.Sprintf("%d of %d reported", acts.Load(), warmActs)
	}); err != nil {
		return nil, sizedResult{}, err
	}
	acts0 := acts.Load()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	p := e.startProbe(ctx)
	t0 := time.Now()
	if err := sh.start(run, ctx, id, payload(e.opts.Payload), sh.n); err != nil {
		return nil, sizedResult{}, fmt.Errorf("%s: start: %w", label, err)
	}
	stopProg := e.prog.track(label, bound, func() int64 { return acts.Load() - acts0 })
	end, ok, err := waitRoot(ctx, ends[id], bound-time.Since(t0))
	stopProg()
	if err != nil {
		return nil, sizedResult{}, fmt.Errorf("%s: %w", label, err)
	}
	res := sizedResult{timedOut: !ok, bound: bound, failure: end.failure}
	if !ok {
		end.at = time.Now()
	}
	runtime.ReadMemStats(&m1)
	k, err := p.stop(context.WithoutCancel(ctx))
	if err != nil {
		return nil, res, fmt.Errorf("%s: reading Redis counters: %w", label, err)
	}
	// a completed root ran all its activities: wait for their reports (see
	// the warm-up), which also checks that none went missing
	if ok && end.failure == nil {
		if err := waitFor(ctx, nil, 30*time.Second, label+": activities", func() (bool, string) {
			return acts.Load()-acts0 >= int64(sh.n), fmt.Sprintf("%d of %d reported", acts.Load()-acts0, sh.n)
		}); err != nil {
			return nil, res, err
		}
	}
	activities := acts.Load() - acts0
	// after the measurement: reading the history allocates too
	events, herr := run.historyLength(ctx, id)
	wall := end.at.Sub(t0)
	pt := Point{Scenario: "workflows", Variant: vWorkflow(sh.name(), en.name), Concurrency: c, Unit: "activities",
		Ops: activities, Seconds: wall.Seconds(), Result: res.String(), Counts: &k,
		Metrics: sizedMetrics(wall, events, activities, m1.TotalAlloc-m0.TotalAlloc, m1.Mallocs-m0.Mallocs, k)}
	pt.Note = sizedNote(pt.Result, wall, events, pt.Metrics)
	if en.ackFetch {
		pt.Note += "; " + e.ackFetchPath()
	}
	if herr != nil {
		pt.Note += fmt.Sprintf(" (history unreadable: %v)", herr)
	}
	return &pt, res, nil
}

// waitRoot waits up to bound for a root's end; ok is false when the bound
// passed first.
func waitRoot(ctx context.Context, ch <-chan rootEnd, bound time.Duration) (end rootEnd, ok bool, err error) {
	t := time.NewTimer(max(bound, 0))
	defer t.Stop()
	select {
	case end = <-ch:
		return end, true, nil
	case <-t.C:
		return rootEnd{}, false, nil
	case <-ctx.Done():
		return rootEnd{}, false, ctx.Err()
	}
}

// sizedMetrics are a sized point's figures: its totals, then each divided
// by the root's history events (when it has any) and by its completed
// activities (the "_per_op" figures of perOp).
func sizedMetrics(wall time.Duration, events int, activities int64, alloc, mallocs uint64, k counts) map[string]float64 {
	m := map[string]float64{
		"wall_seconds":   wall.Seconds(),
		"history_events": float64(events),
		"alloc_bytes":    float64(alloc),
		"mallocs":        float64(mallocs),
	}
	if events > 0 {
		ev := float64(events)
		m["alloc_bytes_per_event"] = float64(alloc) / ev
		m["mallocs_per_event"] = float64(mallocs) / ev
		m["redis_cmds_per_event"] = float64(k.RedisCmds) / ev
		m["client_calls_per_event"] = float64(k.ClientCalls) / ev
		if k.ServerCPU > 0 {
			m["redis_cpu_us_per_event"] = 1e6 * k.ServerCPU / ev
		}
		if k.ClientCPU > 0 {
			m["client_cpu_us_per_event"] = 1e6 * k.ClientCPU / ev
		}
	}
	if activities > 0 {
		m["alloc_bytes_per_activity"] = float64(alloc) / float64(activities)
	}
	k.perOp(m, activities)
	return m
}

// sizedNote is a sized point's line in the table.
func sizedNote(result string, wall time.Duration, events int, m map[string]float64) string {
	s := fmt.Sprintf("%s, wall %.2f s, %d events", result, wall.Seconds(), events)
	if events == 0 {
		return s
	}
	s += fmt.Sprintf("; per event: %s allocated", bytesHuman(m["alloc_bytes_per_event"]))
	if v, ok := m["redis_cpu_us_per_event"]; ok {
		s += fmt.Sprintf(", Redis CPU %.1f us", v)
	}
	if v, ok := m["client_cpu_us_per_event"]; ok {
		s += fmt.Sprintf(", client CPU %.1f us", v)
	}
	return s + fmt.Sprintf(", %.1f Redis cmds", m["redis_cmds_per_event"])
}

// bytesHuman formats a byte count with a binary suffix.
func bytesHuman(v float64) string {
	switch {
	case v >= 1<<30:
		return fmt.Sprintf("%.2f GiB", v/(1<<30))
	case v >= 1<<20:
		return fmt.Sprintf("%.2f MiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	default:
		return fmt.Sprintf("%.0f B", v)
	}
}

// sizedRatios compares the sized points: each completed root's wall time on
// the durable runtime against go-workflows's, and for each engine and shape
// the cost per event at its largest completed size against its smallest,
// which stays near 1 when a turn costs the same however long its history.
func (r *Report) sizedRatios(e *env) {
	c := keyConcurrency(e.opts.Concurrency)
	done := func(sh sizedShape, en string) *Point {
		p := r.find("workflows", vWorkflow(sh.name(), en), c)
		if p == nil || p.Result != "completed" {
			return nil
		}
		return p
	}
	for _, sh := range e.sizedShapes() {
		peer := done(sh, gwEngine.name)
		for _, en := range []string{durableEngine.name, durableDefaultsEngine.name} {
			if ours := done(sh, en); ours != nil && peer != nil && peer.Seconds > 0 {
				r.ratio(Ratio{sh.name() + " wall time " + en + " / go-workflows", c, ours.Seconds / peer.Seconds, "lower is better"})
			}
		}
	}
	for _, kind := range []string{"sequence", "wide"} {
		for _, en := range []string{durableEngine.name, durableDefaultsEngine.name, gwEngine.name} {
			var pts []*Point
			var sizes []int
			for _, sh := range e.sizedShapes() {
				if p := done(sh, en); sh.kind == kind && p != nil {
					pts, sizes = append(pts, p), append(sizes, sh.n)
				}
			}
			for _, x := range growth(sizes, pts) {
				r.ratio(Ratio{fmt.Sprintf("%s %d / %s %d %s, %s", kind, x.hi, kind, x.lo, x.metric, en), c, x.value,
					"1.0 = the cost of an event does not grow with the history"})
			}
		}
	}
}

// growthRatio is one figure per event at a shape's largest size over the
// same at its smallest.
type growthRatio struct {
	metric string
	lo, hi int
	value  float64
}

// perEventFigures are the per-event metrics whose growth sizedRatios reports.
var perEventFigures = []string{"alloc_bytes_per_event", "redis_cpu_us_per_event"}

// growth compares the per-event figures of the largest and the smallest
// sizes of one shape on one engine (pts[i] measured sizes[i]); fewer than
// two distinct sizes give nothing.
func growth(sizes []int, pts []*Point) []growthRatio {
	if len(sizes) < 2 {
		return nil
	}
	lo, hi := slices.Index(sizes, slices.Min(sizes)), slices.Index(sizes, slices.Max(sizes))
	if sizes[lo] == sizes[hi] {
		return nil
	}
	var out []growthRatio
	for _, f := range perEventFigures {
		a, b := pts[lo].Metrics[f], pts[hi].Metrics[f]
		if a > 0 && b > 0 {
			out = append(out, growthRatio{f, sizes[lo], sizes[hi], b / a})
		}
	}
	return out
}
