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
		{"ceiling", vTrivial}, {"ceiling", vSmall}, {"roundtrip", vRoundTrip}, {"roundtrip", "script alone: ack_work"},
		{"latency", vLatency}, {"latency", vIdleWork}, {"latency", vIdleOrch},
		{"peer", vAsynqRT}, {"peer", vAsynqLatTun}, {"peer", vIdleAsynq},
		{"turns", vTurns}, {"turns", vHistory(10)}, {"turns", vHistory(1000)},
		{"scale", vScale("orchestrator", 200)}, {"scale", vScale("worker", 10)}, {"scale", vScale("worker with sessions", 200)},
	} {
		if rep.find(v.scenario, v.variant, 0) == nil {
			t.Errorf("no point for %s / %s", v.scenario, v.variant)
		}
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
