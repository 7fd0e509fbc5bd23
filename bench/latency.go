// Scenario 4, dispatch latency: at a low, steady rate (500/s by default, far
// below any ceiling) every item finds its fetcher already blocked in a long
// poll, so what is measured is the wake-up path itself: enqueue start to
// FetchWorkItem return. Then the other side of long polling: what a blocked
// fetcher with no work costs Redis per idle second.

package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

func runLatency(ctx context.Context, e *env) error {
	for _, c := range e.opts.Concurrency {
		if err := e.dispatchLatency(ctx, c); err != nil {
			return err
		}
	}
	poll := e.opts.IdlePoll
	if err := e.idleFetcher(ctx, vIdleWork, func(ctx context.Context, p *redisprovider.Provider) (bool, error) {
		item, err := p.FetchWorkItem(ctx, 0, poll, nil, duroxide.DefaultOnly())
		return item != nil, err
	}); err != nil {
		return err
	}
	return e.idleFetcher(ctx, vIdleOrch, func(ctx context.Context, p *redisprovider.Provider) (bool, error) {
		item, err := p.FetchOrchestrationItem(ctx, 0, poll, nil)
		return item != nil, err
	})
}

func (e *env) dispatchLatency(ctx context.Context, c int) error {
	p, done, err := e.provider(ctx, "latency")
	if err != nil {
		return err
	}
	defer done()
	return e.runFlow(ctx, flow{
		label:   fmt.Sprintf("latency c=%d", c),
		rate:    e.opts.Rate,
		enqueue: activityProducer(p, e.opts.Payload, e.opts.FanOut),
		consume: activityWorkers(p, c, true),
		record: func(m *meter, s *sink, k counts) {
			pt := Point{Scenario: "latency", Variant: vLatency, Concurrency: c, Unit: "items",
				LatencyOf: fmt.Sprintf("enqueue start to FetchWorkItem return, %.0f items/s, %d blocked workers", e.opts.Rate, c),
			}.measured(m, m, k)
			pt.Note = callsNote(k, pt.Ops, "fetch_work_item", "bzpopmin")
			e.add(pt)
		},
	})
}

// idleFetcher watches one fetcher poll an empty namespace back to back, as an
// idle dispatcher does, and counts the Redis commands it causes.
func (e *env) idleFetcher(ctx context.Context, variant string, fetch func(ctx context.Context, p *redisprovider.Provider) (bool, error)) error {
	p, done, err := e.provider(ctx, "idle")
	if err != nil {
		return err
	}
	defer done()
	poll := e.opts.IdlePoll
	// the window opens once the fetcher has run its first script and parked
	m := newMeter(min(poll, 500*time.Millisecond), e.opts.IdleWindow, 0)
	cs := startConsumers(ctx, 1, func(ctx context.Context, w int) error {
		for ctx.Err() == nil {
			start := time.Now()
			got, err := fetch(ctx, p)
			if err != nil {
				return err
			}
			if got {
				return fmt.Errorf("%s: work in an empty namespace", variant)
			}
			m.observe(start, time.Now())
		}
		return nil
	})
	err = e.idlePoint(ctx, Point{Scenario: "latency", Variant: variant, Concurrency: 1}, poll, m, m, cs.failed)
	if stopErr := cs.stop(); err == nil && !stopped(stopErr) {
		err = stopErr
	}
	return err
}

// idlePoint waits out m's window while a client idles (failed, when set,
// reports it breaking down) and adds pt with what the client sent: its rate is
// Redis calls per idle second, the figure that matters. polls, when set,
// counted the client's fetches.
func (e *env) idlePoint(ctx context.Context, pt Point, poll time.Duration, m, polls *meter, failed func() error) error {
	return e.measure(ctx, pt.Variant, m, func(ctx context.Context) error {
		select {
		case <-time.After(time.Until(m.to)):
			if failed == nil {
				return nil
			}
			return failed()
		case <-ctx.Done():
			return ctx.Err()
		}
	}, func(k counts) {
		pt.Unit, pt.Ops, pt.Seconds, pt.Counts = "calls", k.ClientCalls, k.Seconds, &k
		pt.Metrics = idleMetrics(k, poll)
		if polls != nil {
			pt.Metrics["polls"] = float64(polls.count())
		}
		pt.Note = idleNote(k, poll)
		e.add(pt)
	})
}

// idleMetrics turns an idle window's counts into rates.
func idleMetrics(k counts, poll time.Duration) map[string]float64 {
	perSec := float64(k.ClientCalls) / k.Seconds
	return map[string]float64{
		"client_calls_per_sec":          perSec,
		"client_calls_per_poll_timeout": perSec * poll.Seconds(),
		"redis_cmds_per_sec":            float64(k.RedisCmds) / k.Seconds,
		"poll_timeout_sec":              poll.Seconds(),
	}
}

// idleNote lists what an idle client sent, command by command.
func idleNote(k counts, poll time.Duration) string {
	s := fmt.Sprintf("%d calls in %.1fs (poll %v):", k.ClientCalls, k.Seconds, poll)
	for _, name := range slices.Sorted(maps.Keys(k.ByCall)) {
		s += fmt.Sprintf(" %s %d", name, k.ByCall[name])
	}
	if !k.BZPopKnown {
		s += " (BZPOPMIN uncountable here)"
	}
	return s
}
