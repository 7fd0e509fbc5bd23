// Scenario pipeline: the provider's script calls one round trip each (the
// default) against Options.AutoPipeline, where concurrent calls share
// go-redis autopipeliner batches, on the activity round trip and on the
// durable runtime's fan-out, variant after variant at each concurrency and
// repeated, so the variants meet the machine in the same state.

package main

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// transport is one way the provider sends its script calls.
type transport struct {
	name         string
	autoPipeline bool // Options.AutoPipeline
	// ap, when set, configures the autopipeliner of a client of the
	// transport's own (the provider takes the client's)
	ap *redis.AutoPipelineOptions
}

var transports = []transport{
	{name: "one call per round trip"},
	{name: "autopipeline", autoPipeline: true},
	{name: "autopipeline 2 batches", autoPipeline: true, ap: &redis.AutoPipelineOptions{Unordered: true, MaxConcurrentBatches: 2}},
	{name: "autopipeline full duplex", autoPipeline: true, ap: &redis.AutoPipelineOptions{FullDuplex: true}},
}

// client is the client the provider gets: the run's hooked client, or one
// of the transport's own configured with its autopipeline options.
func (t transport) client(e *env) (redis.UniversalClient, func()) {
	if t.ap == nil {
		return e.main, func() {}
	}
	o := *e.clientOpts
	o.AutoPipelineOptions = t.ap
	c := redis.NewClient(&o)
	c.AddHook(e.calls)
	return c, func() { c.Close() }
}

// point names a point of scenario's variant: itself, or while the
// pipeline scenario runs t, a point of that scenario.
func (t transport) point(scenario, variant string) (string, string) {
	if t.name == "" {
		return scenario, variant
	}
	return "pipeline", variant + ", " + t.name
}

// pipelineRepeats is how many times each concurrency runs every variant.
const pipelineRepeats = 3

func init() {
	scenarios = append(scenarios, scenario{"pipeline",
		"activity round trips and durable fan-outs with script calls one per round trip vs autopipelined, alternating", runPipelining})
}

func runPipelining(ctx context.Context, e *env) error {
	defer func() { e.transport = transport{} }()
	fan := e.shapes()[0]
	for _, c := range e.opts.Concurrency {
		for range pipelineRepeats {
			for _, t := range transports {
				e.transport = t
				if err := e.roundTrip(ctx, c); err != nil {
					return fmt.Errorf("%s: %w", t.name, err)
				}
				if err := e.workflowPoint(ctx, fan, durableEngine, c); err != nil {
					return fmt.Errorf("%s: %w", t.name, err)
				}
			}
		}
	}
	return nil
}
