// The SVG chart, written by hand: two panels (throughput against
// concurrency, latency percentiles), no plotting dependency. Both value axes
// are logarithmic because the figures span four orders of magnitude (50k
// calls/s next to 1k orchestrations/s; 0.3 ms next to asynq's 500 ms).

package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

const (
	chartW   = 1000
	panelH   = 380
	rowH     = 20
	leftPad  = 70
	rightPad = 260 // legend
)

var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#17becf", "#bcbd22", "#393b79", "#637939"}

// svg accumulates elements.
type svg struct{ b strings.Builder }

func (s *svg) add(format string, a ...any) { fmt.Fprintf(&s.b, format+"\n", a...) }

func (s *svg) text(x, y float64, size int, anchor, fill, txt string) {
	s.add(`<text x="%.1f" y="%.1f" font-size="%d" text-anchor="%s" fill="%s">%s</text>`, x, y, size, anchor, fill, html.EscapeString(txt))
}

func (s *svg) line(x1, y1, x2, y2 float64, stroke string, width float64, dash string) {
	d := ""
	if dash != "" {
		d = fmt.Sprintf(` stroke-dasharray="%s"`, dash)
	}
	s.add(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%.1f"%s/>`, x1, y1, x2, y2, stroke, width, d)
}

// logAxis maps values in [lo, hi] (powers of ten) onto [a, b].
type logAxis struct{ lo, hi, a, b float64 }

func newLogAxis(values []float64, a, b float64) logAxis {
	lo, hi := math.Inf(1), 0.0
	for _, v := range values {
		if v > 0 {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if hi == 0 {
		lo, hi = 1, 10
	}
	lo = math.Pow(10, math.Floor(math.Log10(lo)))
	hi = math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	return logAxis{lo, hi, a, b}
}

func (x logAxis) at(v float64) float64 {
	v = math.Max(v, x.lo)
	f := (math.Log10(v) - math.Log10(x.lo)) / (math.Log10(x.hi) - math.Log10(x.lo))
	return x.a + f*(x.b-x.a)
}

// decades returns the powers of ten of the axis.
func (x logAxis) decades() []float64 {
	var out []float64
	for v := x.lo; v <= x.hi*1.0001; v *= 10 {
		out = append(out, v)
	}
	return out
}

func axisLabel(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%gk", v/1e3)
	default:
		return fmt.Sprintf("%g", v)
	}
}

// series is one line of the throughput panel.
type series struct {
	name   string
	dash   string
	values map[int]float64 // concurrency -> per second
}

// Chart renders the report as an SVG document.
func (r *Report) Chart() string {
	conc := r.Settings.Concurrency
	rows := r.latencyRows()
	height := 90 + panelH + 60 + len(rows)*rowH + 80
	var s svg
	s.add(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif">`, chartW, height, chartW, height)
	s.add(`<rect width="100%%" height="100%%" fill="white"/>`)
	m := r.Machine
	s.text(20, 24, 16, "start", "#000", "duroxide-redis bench: "+m.Server)
	s.text(20, 42, 12, "start", "#333", fmt.Sprintf("%d x %s, GOMAXPROCS %d, %s, %s, load average %s",
		m.CPUs, m.CPUModel, m.GOMAXPROCS, m.GoVersion, m.Kernel, m.LoadStart))
	if r.Warning != "" {
		s.text(20, 60, 12, "start", "#c00", "SMOKE MODE (miniredis): these are NOT performance figures")
	} else {
		s.text(20, 60, 12, "start", "#333", fmt.Sprintf("%s per point after %s warm-up, payload %d B, go-redis pool %d, %s",
			r.Settings.Duration, r.Settings.Warmup, r.Settings.Payload, m.PoolSize, r.Started.Format("2006-01-02 15:04 MST")))
	}
	r.throughputPanel(&s, conc, 90)
	r.latencyPanel(&s, rows, float64(90+panelH+60))
	s.add(`</svg>`)
	return s.b.String()
}

func (r *Report) throughputSeries() []series {
	pick := func(scenario, variant string, f func(p Point) float64) map[int]float64 {
		out := map[int]float64{}
		for _, p := range r.Points {
			if p.Scenario == scenario && p.Variant == variant {
				out[p.Concurrency] = f(p)
			}
		}
		return out
	}
	rate := func(p Point) float64 { return p.PerSec }
	metric := func(k string) func(p Point) float64 { return func(p Point) float64 { return p.Metrics[k] } }
	all := []series{
		{"ceiling: trivial EVALSHA calls", "", pick("ceiling", vTrivial, rate)},
		{"ceiling: 3-command EVALSHA calls", "", pick("ceiling", vSmall, rate)},
		{"ceiling (3-command) / 3", "6,4", pick("ceiling", vSmall, func(p Point) float64 { return p.PerSec / 3 })},
		{"activity round trips (ours)", "", pick("roundtrip", vRoundTrip, rate)},
		{"asynq no-op tasks", "", pick("peer", vAsynqRT, rate)},
		{"orchestration turns", "", pick("turns", vTurns, metric("turns_per_sec"))},
		{"orchestration activities", "2,3", pick("turns", vTurns, metric("activities_per_sec"))},
		{"orchestrations completed", "", pick("turns", vTurns, rate)},
	}
	for _, w := range r.workflowVariants() {
		dash := ""
		if strings.HasSuffix(w, gwEngine.name) {
			dash = "5,3" // dashed: the peer
		}
		all = append(all, series{"workflows: " + w, dash, pick("workflows", w, rate)})
	}
	var out []series
	for _, x := range all {
		if len(x.values) > 0 {
			out = append(out, x)
		}
	}
	return out
}

func (r *Report) throughputPanel(s *svg, conc []int, top float64) {
	ser := r.throughputSeries()
	var vals []float64
	for _, x := range ser {
		for _, v := range x.values {
			vals = append(vals, v)
		}
	}
	x0, x1 := float64(leftPad), float64(chartW-rightPad)
	y0, y1 := top+panelH-40, top+20 // bottom, top
	ax := newLogAxis(vals, y0, y1)
	s.text(x0, top+10, 14, "start", "#000", "Throughput vs concurrency (per second, log scale)")
	for _, d := range ax.decades() {
		y := ax.at(d)
		s.line(x0, y, x1, y, "#ddd", 1, "")
		s.text(x0-6, y+4, 11, "end", "#555", axisLabel(d))
	}
	xAt := func(i int) float64 {
		if len(conc) == 1 {
			return (x0 + x1) / 2
		}
		return x0 + 30 + float64(i)*(x1-x0-60)/float64(len(conc)-1)
	}
	for i, c := range conc {
		s.line(xAt(i), y0, xAt(i), y0+5, "#555", 1, "")
		s.text(xAt(i), y0+18, 11, "middle", "#555", fmt.Sprintf("c=%d", c))
	}
	s.line(x0, y0, x1, y0, "#555", 1, "")
	s.text((x0+x1)/2, y0+34, 11, "middle", "#555", "concurrency (client goroutines: workers / dispatchers / callers)")
	for k, x := range ser {
		col := palette[k%len(palette)]
		var pts []string
		for i, c := range conc {
			if v, ok := x.values[c]; ok && v > 0 {
				px, py := xAt(i), ax.at(v)
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", px, py))
				s.add(`<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s c=%d: %s/s</title></circle>`, px, py, col, html.EscapeString(x.name), c, human(v))
			}
		}
		dash := ""
		if x.dash != "" {
			dash = fmt.Sprintf(` stroke-dasharray="%s"`, x.dash)
		}
		s.add(`<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`, strings.Join(pts, " "), col, dash)
		ly := top + 30 + float64(k)*20
		s.line(x1+15, ly-4, x1+40, ly-4, col, 2, x.dash)
		s.text(x1+46, ly, 11, "start", "#000", x.name)
	}
}

// latencyRow is one bar of the latency panel.
type latencyRow struct {
	label string
	p     *Percentiles
}

func (r *Report) latencyRows() []latencyRow {
	var rows []latencyRow
	add := func(label string, p *Point) {
		if p != nil && p.Latency != nil {
			rows = append(rows, latencyRow{label, p.Latency})
		}
	}
	conc := r.Settings.Concurrency
	for _, c := range conc {
		add(fmt.Sprintf("dispatch, ours, c=%d", c), r.find("latency", vLatency, c))
	}
	for _, c := range conc {
		add(fmt.Sprintf("dispatch, asynq 1s poll, c=%d", c), r.find("peer", vAsynqLatDef, c))
	}
	for _, c := range conc {
		add(fmt.Sprintf("dispatch, asynq %s poll, c=%d", r.Settings.AsynqPoll, c), r.find("peer", vAsynqLatTun, c))
	}
	for _, kind := range []string{"orchestrator", "worker"} {
		for _, d := range r.Settings.ScaleDepths {
			add(fmt.Sprintf("fetch+ack, %s, %d queued, c=1", kind, d), r.find("scale", vScale(kind, d), conc[0]))
		}
	}
	for _, n := range r.Settings.Histories {
		add(fmt.Sprintf("turn, %d-event history, c=1", n), r.find("turns", vHistory(n), 0))
	}
	for _, c := range conc {
		add(fmt.Sprintf("orchestration start->done, c=%d", c), r.find("turns", vTurns, c))
	}
	for _, w := range r.workflowVariants() {
		for _, c := range conc {
			add(fmt.Sprintf("%s, c=%d", w, c), r.find("workflows", w, c))
		}
	}
	return rows
}

func (r *Report) latencyPanel(s *svg, rows []latencyRow, top float64) {
	s.text(leftPad, top, 14, "start", "#000", "Latency (ms, log scale): bar to p50, lighter to p99, tick at max")
	if len(rows) == 0 {
		return
	}
	var vals []float64
	for _, x := range rows {
		vals = append(vals, x.p.P50, x.p.P99, x.p.Max)
	}
	labelW := 280.0
	x0, x1 := leftPad+labelW, float64(chartW-40)
	ax := newLogAxis(vals, x0, x1)
	y0 := top + 20
	yEnd := y0 + float64(len(rows)*rowH)
	for _, d := range ax.decades() {
		x := ax.at(d)
		s.line(x, y0-4, x, yEnd, "#ddd", 1, "")
		s.text(x, yEnd+14, 11, "middle", "#555", axisLabel(d))
	}
	for i, x := range rows {
		y := y0 + float64(i*rowH)
		col := palette[0]
		switch {
		case strings.Contains(x.label, "asynq"):
			col = palette[1]
		case strings.HasPrefix(x.label, "fetch+ack"):
			col = palette[2]
		case strings.HasPrefix(x.label, "turn"):
			col = palette[4]
		case strings.HasPrefix(x.label, "orchestration"):
			col = palette[5]
		}
		s.text(x0-8, y+13, 11, "end", "#000", x.label)
		p50, p99, mx := ax.at(x.p.P50), ax.at(x.p.P99), ax.at(x.p.Max)
		s.add(`<rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s" fill-opacity="0.3"/>`, x0, y+3, math.Max(p99-x0, 1), rowH-6, col)
		s.add(`<rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s"><title>p50 %s ms, p99 %s ms, max %s ms</title></rect>`,
			x0, y+3, math.Max(p50-x0, 1), rowH-6, col, fmtMs(x.p.P50), fmtMs(x.p.P99), fmtMs(x.p.Max))
		s.line(mx, y+2, mx, y+rowH-2, "#000", 1.5, "")
		s.text(math.Min(mx+4, x1-2), y+13, 10, "start", "#333", fmt.Sprintf("%s / %s", fmtMs(x.p.P50), fmtMs(x.p.P99)))
	}
	s.line(x0, yEnd, x1, yEnd, "#555", 1, "")
	s.text((x0+x1)/2, yEnd+30, 11, "middle", "#555", "milliseconds (labels: p50 / p99)")
}
