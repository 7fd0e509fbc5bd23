package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// sample is one reading of the provider's counters and queue depths: the
// namespace's and, with several partitions, each partition's.
type sample struct {
	At time.Time
	reading
	Parts []reading
}

// sampler keeps the last readings in memory, so the overview can show
// throughput without storing anything in Redis. Each reading costs what
// `stats` costs (two counter scripts per partition; with several, as many
// again and a ZCARD of each outbox for the partition table), whatever the
// data volume.
type sampler struct {
	s    *session
	keep int

	mu      sync.Mutex
	samples []sample
	err     error // of the last reading
}

func newSampler(s *session, keep int) *sampler { return &sampler{s: s, keep: keep} }

// run samples interval apart until ctx ends; rates use each sample's own
// time, so a slow reading only stretches the gap.
func (sm *sampler) run(ctx context.Context, interval time.Duration) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
			sm.sample(ctx)
		}
	}
}

func (sm *sampler) sample(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	nr, err := sm.s.readStats(ctx)
	sm.mu.Lock()
	defer sm.mu.Unlock()
	sm.err = err
	if err != nil {
		return
	}
	sm.samples = append(sm.samples, sample{At: time.Now(), reading: nr.Total, Parts: nr.Parts})
	if len(sm.samples) > sm.keep {
		sm.samples = sm.samples[len(sm.samples)-sm.keep:]
	}
}

func (sm *sampler) snapshot() ([]sample, error) {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	return append([]sample(nil), sm.samples...), sm.err
}

// overviewData is the overview page.
type overviewData struct {
	Latest    sample
	Err       error
	Finished  series // instances completed or failed per second
	Events    series // history events appended per second
	Orch      series // orchestrator queue depth
	Work      series // worker queue depth
	Window    string
	SampledAt string
}

// series is one sparkline: its points and the figures beside it.
type series struct {
	Points string // an SVG polyline's points
	Last   string
	Max    string
}

func (u *uiServer) overview(w http.ResponseWriter, r *http.Request) {
	samples, err := u.sampler.snapshot()
	d := overviewData{Err: err}
	if len(samples) > 0 {
		d.Latest = samples[len(samples)-1]
		d.SampledAt = d.Latest.At.UTC().Format(time.RFC3339)
		d.Window = shortDuration(d.Latest.At.Sub(samples[0].At))
	}
	d.Finished = rates(samples, func(s sample) uint64 { return s.Metrics.CompletedInstances + s.Metrics.FailedInstances })
	d.Events = rates(samples, func(s sample) uint64 { return s.Metrics.TotalEvents })
	d.Orch = levels(samples, func(s sample) float64 { return float64(s.Queues.OrchestratorQueue) })
	d.Work = levels(samples, func(s sample) float64 { return float64(s.Queues.WorkerQueue) })
	u.render(w, r, http.StatusOK, "overview", "Overview", d)
}

// rates turns a counter into per-second rates between readings; a counter
// that went down (instances deleted) counts as no progress.
func rates(samples []sample, counter func(sample) uint64) series {
	var vs []float64
	for i := 1; i < len(samples); i++ {
		a, b := counter(samples[i-1]), counter(samples[i])
		dt := samples[i].At.Sub(samples[i-1].At).Seconds()
		v := 0.0
		if b > a && dt > 0 {
			v = float64(b-a) / dt
		}
		vs = append(vs, v)
	}
	return sparkline(vs, "/s")
}

func levels(samples []sample, level func(sample) float64) series {
	vs := make([]float64, len(samples))
	for i, s := range samples {
		vs[i] = level(s)
	}
	return sparkline(vs, "")
}

// Sparkline size, in the SVG's own units.
const sparkW, sparkH = 240.0, 40.0

func sparkline(vs []float64, unit string) series {
	if len(vs) == 0 {
		return series{Last: "-", Max: "-"}
	}
	top := 0.0
	for _, v := range vs {
		top = max(top, v)
	}
	pts := make([]string, len(vs))
	for i, v := range vs {
		x := sparkW
		if len(vs) > 1 {
			x = sparkW * float64(i) / float64(len(vs)-1)
		}
		y := sparkH
		if top > 0 {
			y = sparkH - sparkH*v/top
		}
		pts[i] = fmt.Sprintf("%.1f,%.1f", x, y)
	}
	f := func(v float64) string { return strings.TrimSuffix(fmt.Sprintf("%.1f", v), ".0") + unit }
	return series{Points: strings.Join(pts, " "), Last: f(vs[len(vs)-1]), Max: f(top)}
}
