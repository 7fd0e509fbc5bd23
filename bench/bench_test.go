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
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

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
	var out bytes.Buffer
	rep, err := Run(ctx, o, &out, io.Discard)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	if t.Failed() || testing.Verbose() {
		t.Log(out.String())
	}

	ops := map[string]int64{}
	for _, p := range rep.Points {
		ops[p.Scenario] += p.Ops
	}
	for _, s := range scenarios {
		if ops[s.name] <= 0 {
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
	}
	var out bytes.Buffer
	rep, err := Run(ctx, o, &out, io.Discard)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	for _, sh := range []string{"fan-out 5", "tree 2x3"} {
		for _, en := range engines {
			if en.fanOutOnly && sh != "fan-out 5" {
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
	want := map[string]bool{
		"fan-out 5 orchestrations/s durable / go-workflows": false,
		"tree 2x3 trees/s durable / go-workflows":           false,
		"fan-out 5 orchestrations/s durable / synthetic":    false,
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
