// The harness's own test: the smoke mode end to end on miniredis, so the
// benchmark cannot rot while the provider changes under it. It checks that
// every scenario ran, counted something and verified its work (a lost,
// doubled or stuck item fails Run), and that the report files are sound. It
// checks no figure: miniredis figures mean nothing.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// mustRun runs the bench with o, failing t with the output if it fails;
// the output is logged under -v.
func mustRun(t *testing.T, ctx context.Context, o Options) (*Report, *bytes.Buffer) {
	t.Helper()
	var out bytes.Buffer
	rep, err := Run(ctx, o, &out, io.Discard)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	if testing.Verbose() {
		t.Log(out.String())
	}
	return rep, &out
}

func TestSmokeRunsEveryScenario(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	o := Options{
		Out: filepath.Join(dir, "results.json"),
		// shorter than the command's smoke run: this runs under -race in CI
		Duration:    100 * time.Millisecond,
		Warmup:      30 * time.Millisecond,
		IdleWindow:  200 * time.Millisecond,
		ScaleDepths: []int{10, 200},
		Memory:      5,
		Crowd:       5,
	}
	// every scenario but cluster, which starts Redis Clusters of its own
	// and has its own test (cluster_test.go)
	for _, s := range scenarios {
		if s.name != "cluster" {
			o.Scenarios = append(o.Scenarios, s.name)
		}
	}
	rep, out := mustRun(t, ctx, o)

	ops := map[string]int64{}
	for _, p := range rep.Points {
		ops[p.Scenario] += p.Ops
	}
	for _, s := range scenarios {
		if ops[s.name] <= 0 && s.name != "cluster" {
			t.Errorf("scenario %s counted nothing (points: %d)", s.name, len(rep.Points))
		}
	}
	// the variants each scenario must report, at least one point each
	for _, v := range []struct{ scenario, variant string }{
		{"ceiling", vTrivial}, {"ceiling", vSmall}, {"roundtrip", vRoundTrip}, {"roundtrip", "script alone: ack_work_item"},
		{"latency", vLatency}, {"latency", vIdleWork}, {"latency", vIdleOrch},
		{"peer", vAsynqRT}, {"peer", vAsynqLatTun}, {"peer", vIdleAsynq},
		{"turns", vTurns}, {"turns", vHistory(10)}, {"turns", vHistory(1000)},
		{"workflows", vWorkflow("fan-out 5", "durable")}, {"workflows", vWorkflow("tree 2x3", "durable")},
		{"workflows", vWorkflow("fan-out 5", "synthetic")},
		{"scale", vScale("orchestrator", 200)}, {"scale", vScale("worker", 10)}, {"scale", vScale("worker with sessions", 200)},
		{"crowd", vCrowd(0)}, {"crowd", vCrowd(5)},
	} {
		if rep.find(v.scenario, v.variant, 0) == nil {
			t.Errorf("no point for %s / %s", v.scenario, v.variant)
		}
	}
	// the sized shapes at their smoke sizes (sequence 10, wide 20), whose
	// durable histories have a start, a scheduling and a result per
	// activity, and an end
	for _, sh := range []struct {
		name string
		n    int
	}{{"sequence 10", 10}, {"wide 20", 20}} {
		p := rep.find("workflows", vWorkflow(sh.name, durableEngine.name), 0)
		if p == nil {
			t.Errorf("no point for %s on durable", sh.name)
			continue
		}
		if p.Result != "completed" || p.Ops != int64(sh.n) || p.Metrics["history_events"] != float64(2*sh.n+2) || p.Metrics["alloc_bytes_per_event"] <= 0 {
			t.Errorf("%s on durable: result %q, %d activities, metrics %v", sh.name, p.Result, p.Ops, p.Metrics)
		}
	}
	// the zero Options measure what applications run, and say so
	if !rep.Settings.AckFetchPoll {
		t.Errorf("the default run gave ack-and-fetch no poll: settings say ackfetch_poll false")
	}
	if p := rep.find("workflows", vWorkflow("sequence 10", durableEngine.name), 0); p != nil && !strings.Contains(p.Note, "the application's path") {
		t.Errorf("the durable sequence point does not say which ack-and-fetch path it ran: %q", p.Note)
	}
	if !slices.ContainsFunc(rep.Skipped, func(s string) bool { return strings.HasPrefix(s, "go-workflows: needs a real Redis") }) {
		t.Errorf("the smoke run does not say why go-workflows was left out: skipped %q", rep.Skipped)
	}
	if rep.Mode != "smoke" || !strings.Contains(out.String(), "NOT performance figures") {
		t.Errorf("smoke run does not say its figures are not performance figures")
	}
	if len(rep.Targets) == 0 || len(rep.Ratios) == 0 {
		t.Errorf("no targets (%d) or ratios (%d) derived", len(rep.Targets), len(rep.Ratios))
	}

	b, err := os.ReadFile(o.Out)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("results.json: %v", err)
	}
	if len(back.Points) != len(rep.Points) || back.Machine.CPUs == 0 || back.Machine.GoVersion == "" {
		t.Errorf("results.json lost points or machine facts: %d points, %+v", len(back.Points), back.Machine)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "results.svg"))
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("results.svg is not well-formed: %v", err)
		}
	}
	if !bytes.Contains(svg, []byte("<polyline")) || !bytes.Contains(svg, []byte("<rect")) {
		t.Errorf("results.svg has no series or bars")
	}
}

func TestMeterWindow(t *testing.T) {
	m := newMeter(50*time.Millisecond, 100*time.Millisecond, 0)
	before := m.from.Add(-time.Millisecond)
	m.observe(before, m.from.Add(time.Millisecond)) // started in the warm-up: dropped
	m.observe(m.from, m.from.Add(2*time.Millisecond))
	m.record(5*time.Millisecond, m.from.Add(3*time.Millisecond)) // queued before, ended inside: counted
	m.record(time.Millisecond, m.to.Add(time.Millisecond))       // ended after: dropped
	if m.count() != 2 {
		t.Fatalf("count %d, want 2", m.count())
	}
	p := m.percentiles()
	if p.N != 2 || p.P50 != 2 || p.Max != 5 {
		t.Fatalf("percentiles %+v", p)
	}
	if r := m.rate(); r < 19.9 || r > 20.1 {
		t.Fatalf("rate %v, want 20/s", r)
	}
}

func TestPayloadStamp(t *testing.T) {
	before := time.Now()
	p := payload(100)
	if len(p) != 100 {
		t.Fatalf("payload length %d", len(p))
	}
	at, err := sentAt(p)
	if err != nil || at.Before(before.Add(-time.Millisecond)) || at.After(time.Now()) {
		t.Fatalf("sentAt = %v, %v (now %v)", at, err, time.Now())
	}
	if _, err := sentAt("nope"); err == nil {
		t.Fatal("sentAt accepted a payload without a stamp")
	}
}

// TestWorkflowsAgainstGoWorkflows runs the workflows scenario with its peer,
// which needs a real Redis (DUROXIDE_REDIS_URL; CI sets it), and checks that every engine, shape
// and concurrency produced a point with completed roots, children and
// activities, and that the ratios and goals were derived from them.
func TestWorkflowsAgainstGoWorkflows(t *testing.T) {
	url := os.Getenv("DUROXIDE_REDIS_URL")
	if url == "" {
		t.Skip("DUROXIDE_REDIS_URL is not set: go-workflows cannot run on miniredis (CI sets it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	o := Options{
		RedisURL: url, Out: filepath.Join(t.TempDir(), "results.json"),
		// long enough that a tree (about 0.3 s under the race detector) completes
		// inside the window on a busy machine
		Duration: 2 * time.Second, Warmup: 100 * time.Millisecond,
		Concurrency: []int{2}, Scenarios: []string{"workflows"},
		SequenceN: []int{5}, WideN: []int{10, 20},
	}
	var out bytes.Buffer
	rep, err := Run(ctx, o, &out, io.Discard)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	for _, sh := range []string{"fan-out 5", "tree 2x3"} {
		for _, en := range engines {
			if (en.fanOutOnly && sh != "fan-out 5") || en.sizedOnly {
				continue
			}
			p := rep.find("workflows", vWorkflow(sh, en.name), 2)
			if p == nil {
				t.Errorf("no point for %s on %s", sh, en.name)
				continue
			}
			if p.Ops == 0 || p.Latency == nil || p.Metrics["activities_per_sec"] == 0 || p.Metrics["orchestrations_per_sec"] < p.PerSec {
				t.Errorf("%s on %s: %d roots, latency %v, metrics %v", sh, en.name, p.Ops, p.Latency, p.Metrics)
			}
		}
	}
	for _, sh := range []string{"sequence 5", "wide 10", "wide 20"} {
		for _, en := range []string{durableEngine.name, durableDefaultsEngine.name, gwEngine.name} {
			p := rep.find("workflows", vWorkflow(sh, en), 2)
			if p == nil {
				t.Errorf("no point for %s on %s", sh, en)
				continue
			}
			if p.Result != "completed" || p.Ops == 0 || p.Metrics["history_events"] < 2*float64(p.Ops)+2 ||
				p.Metrics["alloc_bytes_per_event"] <= 0 || p.Metrics["redis_cpu_us_per_event"] <= 0 {
				t.Errorf("%s on %s: result %q, %d activities, metrics %v", sh, en, p.Result, p.Ops, p.Metrics)
			}
		}
	}
	want := map[string]bool{
		"fan-out 5 orchestrations/s durable / go-workflows":      false,
		"tree 2x3 trees/s durable / go-workflows":                false,
		"fan-out 5 orchestrations/s durable / synthetic":         false,
		"sequence 5 wall time durable / go-workflows":            false,
		"sequence 5 wall time durable defaults / go-workflows":   false,
		"wide 20 / wide 10 alloc_bytes_per_event, durable":       false,
		"wide 20 / wide 10 redis_cpu_us_per_event, go-workflows": false,
	}
	for _, r := range rep.Ratios {
		if _, ok := want[r.Name]; ok && r.Value > 0 {
			want[r.Name] = true
		}
	}
	for name, found := range want {
		if !found {
			t.Errorf("ratio %q missing", name)
		}
	}
	if n := len(rep.Targets); n < 5 {
		t.Errorf("%d goals checked, want the 5 of the workflows scenario: %+v", n, rep.Targets)
	}
}

func TestSizedResult(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		r    sizedResult
		want string
	}{
		{sizedResult{bound: time.Minute}, "completed"},
		{sizedResult{bound: time.Minute, failure: errors.New("workflow history size exceeded 10000 events")}, "failed: workflow history size exceeded 10000 events"},
		{sizedResult{bound: 90 * time.Second, timedOut: true}, "timed out after 1m30s"},
	} {
		if got := tc.r.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.r, got, tc.want)
		}
	}
}

func TestSizedMetricsPerEvent(t *testing.T) {
	t.Parallel()
	k := counts{RedisCmds: 4000, ClientCalls: 3000, ServerCPU: 0.2, ClientCPU: 0.5}
	m := sizedMetrics(2*time.Second, 2000, 1000, 200_000_000, 3_000_000, k)
	for key, want := range map[string]float64{
		"wall_seconds": 2, "history_events": 2000, "alloc_bytes": 200_000_000,
		"alloc_bytes_per_event": 100_000, "mallocs_per_event": 1500, "redis_cpu_us_per_event": 100,
		"client_cpu_us_per_event": 250, "redis_cmds_per_event": 2, "client_calls_per_event": 1.5,
		"alloc_bytes_per_activity": 200_000, "redis_cpu_us_per_op": 200,
	} {
		if got, ok := m[key]; !ok || math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s = %v (present %v), want %v", key, got, ok, want)
		}
	}
	// no history read and no Redis CPU reading (miniredis): no such figures,
	// rather than zeros or infinities
	m = sizedMetrics(time.Second, 0, 10, 1000, 10, counts{})
	for _, key := range []string{"alloc_bytes_per_event", "redis_cpu_us_per_event", "redis_cpu_us_per_op"} {
		if v, ok := m[key]; ok {
			t.Errorf("%s = %v without events or CPU readings", key, v)
		}
	}
}

func TestGrowthComparesLargestWithSmallest(t *testing.T) {
	t.Parallel()
	pt := func(alloc, cpu float64) *Point {
		return &Point{Metrics: map[string]float64{"alloc_bytes_per_event": alloc, "redis_cpu_us_per_event": cpu}}
	}
	got := growth([]int{10000, 1000, 2000}, []*Point{pt(900, 30), pt(100, 20), pt(200, 0)})
	want := []growthRatio{{"alloc_bytes_per_event", 1000, 10000, 9}, {"redis_cpu_us_per_event", 1000, 10000, 1.5}}
	if !slices.Equal(got, want) {
		t.Errorf("growth = %+v, want %+v", got, want)
	}
	if got := growth([]int{1000}, []*Point{pt(1, 1)}); got != nil {
		t.Errorf("one size: %+v", got)
	}
	if got := growth([]int{1000, 1000}, []*Point{pt(1, 1), pt(2, 2)}); got != nil {
		t.Errorf("one size twice: %+v", got)
	}
}

// TestScenarioBoundCoversSizedRoots: the workflows scenario's bound grows
// by a shape timeout and a minute per sized root of the two engines that
// run them, so a run of many slow roots reports each as timed out rather
// than being cut off as hung.
func TestScenarioBoundCoversSizedRoots(t *testing.T) {
	t.Parallel()
	e := &env{opts: Options{SequenceN: []int{200, 1000, 2000}, WideN: []int{1000, 10000}, ShapeLimit: 2 * time.Minute}}
	if got, want := e.bound("workflows"), 20*time.Minute+3*5*3*time.Minute; got != want {
		t.Errorf("workflows bound %v, want %v", got, want)
	}
	if got := e.bound("turns"); got != 20*time.Minute {
		t.Errorf("turns bound %v, want 20m", got)
	}
}

// stallingRun is an engine run whose stop waits for release.
type stallingRun struct {
	engineRun
	release chan struct{}
	err     error
}

func (r *stallingRun) stop() error { <-r.release; return r.err }

// TestStopWithinMovesOnFromAStuckEngine: a sized point waits a bounded time
// for its engine to stop, and says whether it had to move on.
func TestStopWithinMovesOnFromAStuckEngine(t *testing.T) {
	t.Parallel()
	stuck := &stallingRun{release: make(chan struct{})}
	late, err := stopWithin(stuck, 20*time.Millisecond)
	close(stuck.release)
	if !late || err != nil {
		t.Errorf("stuck engine: late %v, err %v; want true, nil", late, err)
	}
	quick := &stallingRun{release: make(chan struct{}), err: errors.New("boom")}
	close(quick.release)
	late, err = stopWithin(quick, time.Minute)
	if late || err == nil || err.Error() != "boom" {
		t.Errorf("engine that stops: late %v, err %v; want false, boom", late, err)
	}
}
