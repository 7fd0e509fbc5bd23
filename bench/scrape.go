// The scrape scenario: what one metrics collection costs Redis. extra/dxotel
// reads GetQueueDepths and GetSystemMetrics once per collection (its test
// proves the "once"), so a scrape here is exactly that pair of calls, timed
// and counted at a small and a large number of stored instances. The issue
// asks for O(1): the same Redis commands per scrape whatever the count
// (asynq #1160: a queue-info script walked every key on every scrape).

package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

const vScrape = "metrics scrape"

// vScrapeAt names the scrape point taken with n instances stored.
func vScrapeAt(n int) string { return fmt.Sprintf("%s, %d instances", vScrape, n) }

// runScrape measures scrapes at each of the scale depths, reusing one
// namespace that grows from one depth to the next.
func runScrape(ctx context.Context, e *env) error {
	p, done, err := e.provider(ctx, "scrape")
	if err != nil {
		return err
	}
	defer done()
	var seq atomic.Int64
	stored := 0
	for _, n := range e.opts.ScaleDepths {
		if n > stored {
			if err := e.fill(ctx, fmt.Sprintf("creating %d instances", n-stored), n-stored, createInstance(p, &seq)); err != nil {
				return err
			}
			stored = n
		}
		if err := checkInstances(ctx, p, n); err != nil {
			return err
		}
		if err := e.measureScrape(ctx, p, n); err != nil {
			return err
		}
	}
	e.compareScrapes()
	return nil
}

// createInstance makes one instance the way a runtime's first turn does:
// start message, fetch, ack with metadata (the only way instances come to
// exist). Each keeps a timer a day out, so the timer index grows with the
// instance count too.
func createInstance(p *redisprovider.Provider, seq *atomic.Int64) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		id := fmt.Sprintf("scrape-%d", seq.Add(1))
		if err := p.EnqueueForOrchestrator(ctx, duroxide.StartOrchestration{Instance: id, Orchestration: "Scrape", Input: "{}"}, 0); err != nil {
			return err
		}
		// Fillers may swap starts, but each enqueues one before it fetches one,
		// so a fetch always has a start to find; the long poll covers the race.
		item, err := p.FetchOrchestrationItem(ctx, time.Minute, 5*time.Second, nil)
		if err != nil {
			return err
		}
		if item == nil {
			return fmt.Errorf("creating %s: no start message to fetch", id)
		}
		timer := duroxide.TimerFired{Instance: item.Instance, ExecutionID: 1, ID: 2, FireAtMs: uint64(time.Now().Add(24 * time.Hour).UnixMilli())}
		return p.AckOrchestrationItem(ctx, item.LockToken, duroxide.OrchestrationCommit{
			ExecutionID: 1,
			HistoryDelta: []duroxide.Event{duroxide.NewEvent(1, item.Instance, 1, nil,
				duroxide.OrchestrationStartedEvent{Name: "Scrape", Version: "1.0.0", Input: "{}"})},
			OrchestratorItems: []duroxide.WorkItem{timer},
			Metadata:          duroxide.ExecutionMetadata{OrchestrationName: "Scrape", OrchestrationVersion: "1.0.0"},
		})
	}
}

// checkInstances makes sure the point is taken at the instance count its
// name claims.
func checkInstances(ctx context.Context, p *redisprovider.Provider, n int) error {
	m, err := p.GetSystemMetrics(ctx)
	if err != nil {
		return err
	}
	if m.TotalInstances != uint64(n) {
		return fmt.Errorf("scrape: %d instances stored, want %d", m.TotalInstances, n)
	}
	return nil
}

// measureScrape runs back-to-back scrapes from one goroutine (a Prometheus
// server scrapes serially) and records their cost.
func (e *env) measureScrape(ctx context.Context, p *redisprovider.Provider, n int) error {
	m := newMeter(e.opts.Warmup, e.opts.Duration, 0)
	lat := m.sibling()
	return e.measure(ctx, fmt.Sprintf("scrape at %d instances", n), m, func(ctx context.Context) error {
		return closedLoop(ctx, 1, m, func(ctx context.Context, _ int) error {
			t0 := time.Now()
			if _, err := p.GetQueueDepths(ctx); err != nil {
				return err
			}
			if _, err := p.GetSystemMetrics(ctx); err != nil {
				return err
			}
			lat.observe(t0, time.Now())
			return nil
		})
	}, func(k counts) {
		pt := Point{Scenario: "scrape", Variant: vScrapeAt(n), Concurrency: 1, Unit: "scrapes",
			LatencyOf: "GetQueueDepths + GetSystemMetrics, what one dxotel collection reads",
			Metrics:   map[string]float64{"instances": float64(n)},
		}.measured(m, lat, k)
		if evals := k.ServerByCmd["evalsha"]; evals > 0 && pt.Ops > 0 {
			pt.Metrics["server_usec_per_scrape"] = k.EvalUsecCall * float64(evals) / float64(pt.Ops)
			pt.Note = fmt.Sprintf("%.1f Redis cmds, %.1f us of Redis per scrape", pt.Metrics["redis_cmds_per_op"], pt.Metrics["server_usec_per_scrape"])
		}
		e.add(pt)
	})
}

// scrapeSlack is the noise allowed in commands per scrape: one stray command
// of the probe in 20 scrapes.
const scrapeSlack = 0.05

// compareScrapes derives the O(1) evidence from the smallest and largest
// depth: commands per scrape must not grow (deterministic), and server time
// is reported alongside (a timing, so a figure, not a pass/fail).
func (e *env) compareScrapes() {
	depths := e.opts.ScaleDepths
	lo, hi := e.report.find("scrape", vScrapeAt(depths[0]), 1), e.report.find("scrape", vScrapeAt(depths[len(depths)-1]), 1)
	if lo == nil || hi == nil || lo == hi {
		return
	}
	cl, ch := lo.Metrics["redis_cmds_per_op"], hi.Metrics["redis_cmds_per_op"]
	e.report.ratio(Ratio{Name: "scrape_redis_cmds_large_vs_small", Concurrency: 1, Value: ch / cl,
		Meaning: fmt.Sprintf("Redis commands per metrics scrape at %d vs %d instances (1 = O(1))", depths[len(depths)-1], depths[0])})
	measured := fmt.Sprintf("%.1f vs %.1f Redis commands per scrape", cl, ch)
	if ul, uh := lo.Metrics["server_usec_per_scrape"], hi.Metrics["server_usec_per_scrape"]; ul > 0 {
		e.report.ratio(Ratio{Name: "scrape_server_usec_large_vs_small", Concurrency: 1, Value: uh / ul,
			Meaning: "Redis server time per scrape, largest vs smallest instance count"})
		measured += fmt.Sprintf(", %.1f vs %.1f us of Redis", ul, uh)
	}
	// redis_cmds_per_op counts every command the scripts run inside Redis, so
	// an equal count means no walk over instances, timers or queue entries;
	// the probe's own commands spread over thousands of scrapes move it by
	// less than scrapeSlack, which a walk would exceed many times over
	e.report.target("a metrics scrape costs O(1) Redis work (10 vs 100,000 instances)", measured, ch <= cl+scrapeSlack)
}
