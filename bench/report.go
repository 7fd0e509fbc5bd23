// The report: the points every scenario adds, the ratios and targets derived
// from them, the text table, and the JSON and SVG files.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
)

// Point is one measurement: a scenario variant at one concurrency.
type Point struct {
	Scenario    string             `json:"scenario"`
	Variant     string             `json:"variant"`
	Concurrency int                `json:"concurrency"`
	Unit        string             `json:"unit"` // what one counted operation is
	Ops         int64              `json:"ops"`
	Seconds     float64            `json:"seconds"`
	PerSec      float64            `json:"per_sec"`
	Latency     *Percentiles       `json:"latency_ms,omitempty"`
	LatencyOf   string             `json:"latency_of,omitempty"` // what the latency spans
	Metrics     map[string]float64 `json:"metrics,omitempty"`
	Counts      *counts            `json:"counts,omitempty"`
	Note        string             `json:"note,omitempty"` // shown in the table
	// Result is how the single root of a run-to-completion point (the
	// workflows scenario's sequence and wide shapes) ended: "completed",
	// "failed: <the engine's message>" or "timed out after <bound>". Empty
	// for windowed points.
	Result string `json:"result,omitempty"`
	// Shards is each cluster master's part of a cluster scenario point.
	Shards []ShardShare `json:"shards,omitempty"`
}

// Ratio is a derived figure: the ones the issue asks for.
type Ratio struct {
	Name        string  `json:"name"`
	Concurrency int     `json:"concurrency,omitempty"`
	Value       float64 `json:"value"`
	Meaning     string  `json:"meaning"`
}

// Target is one of the goals with what this run measured.
type Target struct {
	Goal     string `json:"goal"`
	Measured string `json:"measured"`
	Met      bool   `json:"met"`
}

// ScenarioError records a scenario that failed, with the provider's words.
type ScenarioError struct {
	Scenario string `json:"scenario"`
	Error    string `json:"error"`
}

// Settings is the run's Options in readable form.
type Settings struct {
	Duration    string  `json:"duration"`
	Warmup      string  `json:"warmup"`
	Concurrency []int   `json:"concurrency"`
	Payload     int     `json:"payload_bytes"`
	FanOut      int     `json:"fanout"`
	Tree        string  `json:"tree_depth_x_width"`
	SequenceN   []int   `json:"sequence_n"`
	WideN       []int   `json:"wide_n"`
	ShapeLimit  string  `json:"shape_timeout"`
	InFlight    int     `json:"inflight_per_concurrency"`
	Rate        float64 `json:"latency_rate_per_sec"`
	IdleWindow  string  `json:"idle_window"`
	IdlePoll    string  `json:"idle_poll_timeout"`
	ScaleDepths []int   `json:"scale_depths"`
	Histories   []int   `json:"history_lengths"`
	Memory      int     `json:"memory_orchestrations"`
	AsynqPoll   string  `json:"asynq_tuned_poll"`
	Cluster     string  `json:"cluster,omitempty"` // the cluster scenario's masters or -cluster addresses, and partitions
	// AckFetchPoll: the durable runtime's ack-and-fetch calls had its poll
	// timeout, as in an application (the default since 2026-11-28; false:
	// -ackfetch-poll=false, the no-poll path). Always written: reports
	// from before that date omit it, and those ran the no-poll path unless
	// their command says -ackfetch-poll.
	AckFetchPoll bool `json:"ackfetch_poll"`
	// NoAckFetch: -ackfetch=false, the runtime acked and fetched in
	// separate calls (omitted when false).
	NoAckFetch bool     `json:"no_ackfetch,omitempty"`
	Scenarios  []string `json:"scenarios,omitempty"`
}

// Report is everything a run found; it is also the JSON file.
type Report struct {
	Mode     string          `json:"mode"` // "smoke" or "redis"
	Warning  string          `json:"warning,omitempty"`
	Command  string          `json:"command"`
	Started  time.Time       `json:"started"`
	Finished time.Time       `json:"finished"`
	Machine  Machine         `json:"machine"`
	Settings Settings        `json:"settings"`
	Points   []Point         `json:"points"`
	Ratios   []Ratio         `json:"ratios"`
	Targets  []Target        `json:"targets"`
	Skipped  []string        `json:"skipped,omitempty"`
	Errors   []ScenarioError `json:"errors,omitempty"`
	out      io.Writer
}

// smokeWarning is printed first and last in smoke mode: nobody should quote
// these figures.
const smokeWarning = "SMOKE MODE: embedded miniredis (a Go emulation, in this process). " +
	"These numbers are NOT performance figures; they only show that every scenario runs. " +
	"For the real benchmark: go run ./bench -redis redis://127.0.0.1:6379/0"

func newReport(ctx context.Context, e *env, args []string) *Report {
	o := e.opts
	r := &Report{
		Mode:    "redis",
		Command: "go run ./bench " + strings.Join(args[1:], " "),
		Started: time.Now(),
		Machine: e.machine(ctx),
		out:     e.out,
		Settings: Settings{
			Duration: o.Duration.String(), Warmup: o.Warmup.String(), Concurrency: o.Concurrency,
			Payload: o.Payload, FanOut: o.FanOut, Tree: fmt.Sprintf("%dx%d", o.TreeDepth, o.TreeWidth),
			SequenceN: o.SequenceN, WideN: o.WideN, ShapeLimit: o.ShapeLimit.String(), InFlight: o.InFlight, Rate: o.Rate,
			IdleWindow: o.IdleWindow.String(), IdlePoll: o.IdlePoll.String(),
			ScaleDepths: o.ScaleDepths, Histories: o.Histories, Memory: o.Memory,
			AsynqPoll: o.AsynqPoll.String(), Scenarios: o.Scenarios, AckFetchPoll: !o.AckFetchNoPoll,
			NoAckFetch: o.NoAckFetch,
		},
	}
	if selected(o.Scenarios, "cluster") {
		on := fmt.Sprintf("masters %v", o.ClusterMasters)
		if len(o.ClusterAddrs) > 0 {
			on = "existing " + strings.Join(o.ClusterAddrs, ",")
		}
		r.Settings.Cluster = fmt.Sprintf("%s, partitions %v", on, o.ClusterPartitions)
	}
	if e.embedded {
		r.Mode, r.Warning = "smoke", smokeWarning
	}
	return r
}

// Banner is the first thing a run prints.
func (r *Report) Banner() string {
	m := r.Machine
	var b strings.Builder
	if r.Warning != "" {
		fmt.Fprintf(&b, "!! %s\n", r.Warning)
	}
	fmt.Fprintf(&b, "duroxide-redis bench: %s, %s | %d x %s, GOMAXPROCS %d, %s, %s | pool %d\n",
		r.Mode, m.Server, m.CPUs, m.CPUModel, m.GOMAXPROCS, m.GoVersion, m.Kernel, m.PoolSize)
	s := r.Settings
	fmt.Fprintf(&b, "points: %s measured after %s warm-up, concurrency %v, payload %d B | load average %s",
		s.Duration, s.Warmup, s.Concurrency, s.Payload, m.LoadStart)
	return b.String()
}

// add records a point and prints it at once, so a long run shows results as
// it goes.
func (e *env) add(p Point) {
	if p.Seconds > 0 && p.PerSec == 0 {
		p.PerSec = float64(p.Ops) / p.Seconds
	}
	e.report.Points = append(e.report.Points, p)
	fmt.Fprintf(e.out, "   %-10s %-34s c=%-3d %s\n", p.Scenario, p.Variant, p.Concurrency, p.summary())
}

// skip records that part of a scenario did not run, and why.
func (e *env) skip(what string) {
	e.report.Skipped = append(e.report.Skipped, what)
	fmt.Fprintf(e.out, "   skipped: %s\n", what)
}

// rate formats the point's rate, "-" for points that are not rates (memory).
func (p Point) rate() string {
	if p.Seconds == 0 {
		return "-"
	}
	return human(p.PerSec)
}

func (p Point) summary() string {
	s := fmt.Sprintf("%9s %s/s", p.rate(), p.Unit)
	if p.Latency != nil {
		s += fmt.Sprintf("  p50 %s  p99 %s  max %s", fmtMs(p.Latency.P50), fmtMs(p.Latency.P99), fmtMs(p.Latency.Max))
	}
	if p.Note != "" {
		s += "  | " + p.Note
	}
	return s
}

// find returns the point of scenario/variant at concurrency c (0: any).
func (r *Report) find(scenario, variant string, c int) *Point {
	for i := range r.Points {
		p := &r.Points[i]
		if p.Scenario == scenario && p.Variant == variant && (c == 0 || p.Concurrency == c) {
			return p
		}
	}
	return nil
}

// Variant names shared by the scenarios that produce points and the code
// that derives ratios from them.
const (
	vTrivial     = "trivial script (return 1)"
	vSmall       = "3-command script (TIME+ZADD+HSET)"
	vRoundTrip   = "activity round trip"
	vAsynqRT     = "asynq no-op task"
	vLatency     = "enqueue->fetch, long poll"
	vAsynqLatDef = "asynq enqueue->handler, default poll"
	vAsynqLatTun = "asynq enqueue->handler, tuned poll"
	vIdleWork    = "idle FetchWorkItem"
	vIdleOrch    = "idle FetchOrchestrationItem"
	vIdleAsynq   = "idle asynq server"
	vTurns       = "fan-out/fan-in orchestrations"
)

// measured fills what every metered point takes from its window: the
// operations m counted and its length, the latencies lat recorded, the Redis
// counts and the per-operation figures derived from them (added to the
// metrics pt already has).
func (pt Point) measured(m, lat *meter, k counts) Point {
	pt.Ops, pt.Seconds, pt.Latency, pt.Counts = m.count(), m.seconds(), lat.percentiles(), &k
	if pt.Metrics == nil {
		pt.Metrics = map[string]float64{}
	}
	k.perOp(pt.Metrics, pt.Ops)
	return pt
}

// fetchAck completes a measured point whose operation is a fetch then an ack:
// their medians and Redis's time per script.
func (pt *Point) fetchAck(fetch, ack *meter, k counts) {
	if f, a := fetch.percentiles(), ack.percentiles(); f != nil && a != nil {
		pt.Metrics["fetch_p50_ms"], pt.Metrics["ack_p50_ms"] = f.P50, a.P50
		pt.Note = fmt.Sprintf("fetch p50 %s ms, ack p50 %s ms", fmtMs(f.P50), fmtMs(a.P50))
	}
	if k.EvalUsecCall > 0 {
		pt.Note += fmt.Sprintf(", Redis %.0f us/script", k.EvalUsecCall)
	}
}

func vScale(kind string, depth int) string       { return fmt.Sprintf("%s, %d queued", kind, depth) }
func vHistory(events int) string                 { return fmt.Sprintf("turn on %d-event history", events) }
func (r *Report) ratio(x Ratio)                  { r.Ratios = append(r.Ratios, x) }
func (r *Report) target(goal, m string, ok bool) { r.Targets = append(r.Targets, Target{goal, m, ok}) }

// finish derives the ratios and checks the targets from the points present;
// a scenario left out of the run simply yields no ratio.
func (r *Report) finish(e *env) {
	r.Finished = time.Now()
	r.Machine.LoadEnd = loadAvg()
	conc := e.opts.Concurrency
	key := keyConcurrency(conc)
	var rtCeil, rtAsynq, latP50, latP99 []string
	okCeil, okAsynq, okP50, okP99 := true, true, true, true
	haveCeil, haveAsynq, haveLat := false, false, false
	for _, c := range conc {
		rt := r.find("roundtrip", vRoundTrip, c)
		if rt == nil {
			continue
		}
		if ceil := r.find("ceiling", vSmall, c); ceil != nil && ceil.PerSec > 0 {
			v := rt.PerSec / (ceil.PerSec / 3)
			r.ratio(Ratio{"round trips / (3-command ceiling / 3)", c, v, "share of what 3 plain EVALSHA per round trip would reach"})
			if triv := r.find("ceiling", vTrivial, c); triv != nil && triv.PerSec > 0 {
				r.ratio(Ratio{"round trips / (trivial ceiling / 3)", c, rt.PerSec / (triv.PerSec / 3), "same against 'return 1'"})
			}
			if c == key {
				haveCeil, okCeil = true, v >= 0.70
				rtCeil = append(rtCeil, fmt.Sprintf("%.0f%% at c=%d", 100*v, c))
			}
		}
		if as := r.find("peer", vAsynqRT, c); as != nil && as.PerSec > 0 {
			v := rt.PerSec / as.PerSec
			r.ratio(Ratio{"round trips ours / asynq", c, v, "higher is better"})
			if c == key {
				haveAsynq, okAsynq = true, v >= 1.5
				rtAsynq = append(rtAsynq, fmt.Sprintf("%.2fx at c=%d", v, c))
			}
		}
	}
	for _, c := range conc {
		ours := r.find("latency", vLatency, c)
		if ours == nil || ours.Latency == nil {
			continue
		}
		haveLat = true
		okP50 = okP50 && ours.Latency.P50 < 1
		okP99 = okP99 && ours.Latency.P99 < 5
		latP50 = append(latP50, fmt.Sprintf("c=%d %s", c, fmtMs(ours.Latency.P50)))
		latP99 = append(latP99, fmt.Sprintf("c=%d %s", c, fmtMs(ours.Latency.P99)))
		for _, v := range []string{vAsynqLatDef, vAsynqLatTun} {
			if as := r.find("peer", v, c); as != nil && as.Latency != nil && as.Latency.P50 > 0 {
				r.ratio(Ratio{"latency p50 ours / " + strings.TrimPrefix(v, "asynq enqueue->handler, "), c, ours.Latency.P50 / as.Latency.P50, "lower is better (asynq: " + v + ")"})
				r.ratio(Ratio{"latency p99 ours / " + strings.TrimPrefix(v, "asynq enqueue->handler, "), c, ours.Latency.P99 / as.Latency.P99, "lower is better"})
			}
		}
	}
	if haveCeil {
		r.target(fmt.Sprintf("activity round trips >= 70%% of ceiling/3 at concurrency %d", key), strings.Join(rtCeil, ", "), okCeil)
	}
	if haveAsynq {
		r.target(fmt.Sprintf("activity round trips >= 1.5x asynq at concurrency %d", key), strings.Join(rtAsynq, ", "), okAsynq)
	}
	if haveLat {
		r.target("dispatch latency p50 < 1 ms", strings.Join(latP50, ", "), okP50)
		r.target("dispatch latency p99 < 5 ms", strings.Join(latP99, ", "), okP99)
	}
	r.workflowRatios(e)
	r.scaleRatios(e)
	r.historyRatios(e)
	r.idleTargets(e)
}

// keyConcurrency is the level the targets name (8), or the middle one run.
func keyConcurrency(conc []int) int {
	for _, c := range conc {
		if c == 8 {
			return 8
		}
	}
	return conc[len(conc)/2]
}

func (r *Report) scaleRatios(e *env) {
	d := e.opts.ScaleDepths
	if len(d) < 2 {
		return
	}
	lo, hi := d[0], d[len(d)-1]
	var parts []string
	ok, have := true, false
	for _, k := range scaleKinds {
		kind := k.name
		for _, c := range e.opts.Concurrency {
			a, b := r.find("scale", vScale(kind, lo), c), r.find("scale", vScale(kind, hi), c)
			if a == nil || b == nil || a.Latency == nil || b.Latency == nil || a.Latency.P50 == 0 {
				continue
			}
			v := b.Latency.P50 / a.Latency.P50
			r.ratio(Ratio{fmt.Sprintf("%s fetch+ack p50 at %d / at %d queued", kind, hi, lo), c, v, "1.0 = flat"})
			have = true
			ok = ok && v <= 1.2
			parts = append(parts, fmt.Sprintf("%s c=%d %.2fx", kind, c, v))
		}
	}
	if have {
		r.target(fmt.Sprintf("fetch+ack p50 at %d queued within 1.2x of %d", hi, lo), strings.Join(parts, ", "), ok)
	}
}

func (r *Report) historyRatios(e *env) {
	h := e.opts.Histories
	if len(h) < 2 {
		return
	}
	a, b := r.find("turns", vHistory(h[0]), 0), r.find("turns", vHistory(h[len(h)-1]), 0)
	if a == nil || b == nil || a.Latency == nil || b.Latency == nil || a.Latency.P50 == 0 {
		return
	}
	r.ratio(Ratio{fmt.Sprintf("turn p50 at %d events / at %d events", h[len(h)-1], h[0]), a.Concurrency, b.Latency.P50 / a.Latency.P50, "the fetch returns the whole history: expected to grow"})
}

func (r *Report) idleTargets(e *env) {
	var parts []string
	ok, have := true, false
	for _, v := range []string{vIdleWork, vIdleOrch} {
		p := r.find("latency", v, 0)
		if p == nil || p.Metrics == nil {
			continue
		}
		have = true
		per := p.Metrics["client_calls_per_poll_timeout"]
		ok = ok && per <= 1
		parts = append(parts, fmt.Sprintf("%s %.3f calls/poll timeout (%.3f/s)", strings.TrimPrefix(v, "idle "), per, p.Metrics["client_calls_per_sec"]))
	}
	if have {
		r.target("a blocked fetcher issues <= 1 Redis command per poll timeout", strings.Join(parts, ", "), ok)
	}
}

// WriteText prints the results table, the ratios and the targets.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintln(w, "\n== results")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tvariant\tc\tops\trate/s\tunit\tp50 ms\tp99 ms\tmax ms\tnotes")
	for _, p := range r.Points {
		p50, p99, mx := "-", "-", "-"
		if p.Latency != nil {
			p50, p99, mx = fmtMs(p.Latency.P50), fmtMs(p.Latency.P99), fmtMs(p.Latency.Max)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n",
			p.Scenario, p.Variant, p.Concurrency, p.Ops, p.rate(), p.Unit, p50, p99, mx, p.Note)
	}
	tw.Flush()
	if len(r.Ratios) > 0 {
		fmt.Fprintln(w, "\n== ratios")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, x := range r.Ratios {
			c := ""
			if x.Concurrency > 0 {
				c = fmt.Sprintf("c=%d", x.Concurrency)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.3f\t%s\n", x.Name, c, x.Value, x.Meaning)
		}
		tw.Flush()
	}
	if len(r.Targets) > 0 {
		fmt.Fprintln(w, "\n== targets (goals, not assertions)")
		for _, t := range r.Targets {
			mark := "MISSED"
			if t.Met {
				mark = "met"
			}
			fmt.Fprintf(w, "   %-6s %s: %s\n", mark, t.Goal, t.Measured)
		}
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "   skipped: %s\n", s)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "!! %s FAILED: %s\n", e.Scenario, e.Error)
	}
	fmt.Fprintf(w, "\nload average: %s at the start, %s at the end (%d CPUs)\n", r.Machine.LoadStart, r.Machine.LoadEnd, r.Machine.CPUs)
	if r.Warning != "" {
		fmt.Fprintf(w, "\n!! %s\n", r.Warning)
	}
}

// save writes the JSON report and the chart (nothing when out is empty).
func (r *Report) save(out, svg string, w io.Writer) error {
	if out == "" {
		return nil
	}
	if svg == "" {
		svg = strings.TrimSuffix(out, filepath.Ext(out)) + ".svg"
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(svg, []byte(r.Chart()), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nwrote %s and %s\n", out, svg)
	return nil
}

// human formats a rate with a k/M suffix.
func human(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.1fk", v/1e3)
	case v >= 1e3:
		return fmt.Sprintf("%.2fk", v/1e3)
	case v >= 10:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// fmtMs formats milliseconds with a precision that suits the magnitude.
func fmtMs(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}
