package main

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
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
	// names and runtimes are the last readings of the orchestrations of
	// the newest instances and of the runtimes the queues know
	names    nameWindow
	runtimes redisprovider.Runtimes
	count    int // samples taken, for reading names every namesEvery
}

// namesEvery is how many samples apart the orchestrations table is read:
// it reads up to nameWindowSize records per partition, where a sample's
// other reads cost a few counters.
const namesEvery = 5

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
	names := sm.names
	readNamesNow := sm.count%namesEvery == 0
	sm.count++
	sm.mu.Unlock()
	var rt redisprovider.Runtimes
	if err == nil && readNamesNow {
		names, err = readNames(sm.s.withContext(ctx))
	}
	if err == nil {
		rt, err = sm.s.prov.Runtimes(ctx)
	}
	sm.mu.Lock()
	defer sm.mu.Unlock()
	sm.err = err
	if err != nil {
		return
	}
	sm.names, sm.runtimes = names, rt
	sm.samples = append(sm.samples, sample{At: time.Now(), reading: nr.Total, Parts: nr.Parts})
	if len(sm.samples) > sm.keep {
		sm.samples = sm.samples[len(sm.samples)-sm.keep:]
	}
}

func (sm *sampler) snapshot() ([]sample, nameWindow, redisprovider.Runtimes, error) {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	return append([]sample(nil), sm.samples...), sm.names, sm.runtimes, sm.err
}

// nameWindowSize is how many of the newest instances the overview's table
// of orchestrations counts: one page of the instance index, whatever the
// namespace holds (the provider keeps no count per orchestration name).
const nameWindowSize = 1000

// nameWindow counts the newest instances by orchestration name.
type nameWindow struct {
	Instances int // counted (at most nameWindowSize)
	Since     uint64
	Names     []nameCount
}

// nameCount is one orchestration's instances among the newest, by status.
type nameCount struct {
	Name                                         string
	Total, Running, Completed, Failed, Cancelled int
	// FailureRate is Failed over the finished (completed, failed or
	// cancelled), as text; cancellations are not failures.
	FailureRate string
}

// readNames counts the newest instances by orchestration and status.
func readNames(s *session) (nameWindow, error) {
	infos, _, err := s.page(duroxide.InstancePageFilter{}, "", nameWindowSize)
	if err != nil {
		return nameWindow{}, err
	}
	w := nameWindow{Instances: len(infos)}
	by := map[string]*nameCount{}
	for _, i := range infos {
		if w.Since == 0 || i.CreatedAt < w.Since {
			w.Since = i.CreatedAt
		}
		n := by[i.OrchestrationName]
		if n == nil {
			n = &nameCount{Name: i.OrchestrationName}
			by[i.OrchestrationName] = n
		}
		n.Total++
		switch {
		case i.Status == "Running":
			n.Running++
		case i.Status == "Completed":
			n.Completed++
		case i.Status == "Failed" && i.Output != nil && strings.HasPrefix(*i.Output, cancelledPrefix):
			n.Cancelled++
		case i.Status == "Failed":
			n.Failed++
		}
	}
	for _, n := range by {
		n.FailureRate = "-"
		if done := n.Completed + n.Failed + n.Cancelled; done > 0 {
			n.FailureRate = strconv.FormatFloat(100*float64(n.Failed)/float64(done), 'f', 1, 64) + "%"
		}
		w.Names = append(w.Names, *n)
	}
	sort.Slice(w.Names, func(i, j int) bool {
		a, b := w.Names[i], w.Names[j]
		return a.Total > b.Total || a.Total == b.Total && a.Name < b.Name
	})
	return w, nil
}

// overviewData is the overview page.
type overviewData struct {
	Names     nameWindow
	Runtimes  redisprovider.Runtimes
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
	samples, names, rt, err := u.sampler.snapshot()
	d := overviewData{Err: err, Names: names, Runtimes: rt}
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
