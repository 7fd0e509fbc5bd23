// The durable side of the workflows scenario: the same orchestrations as
// gwpeer's, written against this module's runtime (package durable), on a
// provider of a fresh namespace.

package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// Orchestration and activity names of the durable side.
const (
	wfFanOut   = "bench.wf.fanout"
	wfTree     = "bench.wf.tree"
	wfSequence = "bench.wf.sequence"
	wfEcho     = "bench.wf.echo"
)

var durableEngine = engine{name: "durable", ackFetch: true, start: startDurable}

// durableDefaultsEngine is the durable runtime with its default dispatchers
// and workers (two each), as an application that sets neither runs it; the
// sized shapes only, whose one root at a time is what two slots serve.
var durableDefaultsEngine = engine{name: "durable defaults", sizedOnly: true, ackFetch: true, start: startDurableDefaults}

// treeInput is the input of the tree orchestration (gwpeer.TreeInput's twin).
type treeInput struct {
	Depth   int    `json:"depth"`
	Width   int    `json:"width"`
	Payload string `json:"payload"`
}

// fanOutInput is the input of the fan-out orchestration.
type fanOutInput struct {
	Activities int    `json:"activities"`
	Payload    string `json:"payload"`
}

// sequenceInput is the input of the sequence orchestration
// (gwpeer.SequenceInput's twin).
type sequenceInput struct {
	Activities int    `json:"activities"`
	Payload    string `json:"payload"`
}

// sequenceOrchestration awaits in.Activities echo activities one after
// another: one activity per turn, on a history that grows by two events a
// turn.
func sequenceOrchestration(ctx *durable.OrchestrationContext, in sequenceInput) (string, error) {
	for range in.Activities {
		if _, err := ctx.ScheduleActivity(wfEcho, in.Payload).Get(); err != nil {
			return "", err
		}
	}
	return "done", nil
}

// fanOutOrchestration schedules in.Activities echo activities together and
// completes when all have returned.
func fanOutOrchestration(ctx *durable.OrchestrationContext, in fanOutInput) (string, error) {
	fs := make([]durable.Future[string], in.Activities)
	for i := range fs {
		fs[i] = ctx.ScheduleActivity(wfEcho, in.Payload)
	}
	return joinAll(ctx, fs)
}

// treeOrchestration starts in.Width children one level shallower and waits
// for them; a leaf runs one echo activity.
func treeOrchestration(ctx *durable.OrchestrationContext, in treeInput) (string, error) {
	if in.Depth == 0 {
		if _, err := ctx.ScheduleActivity(wfEcho, in.Payload).Get(); err != nil {
			return "", err
		}
		return "done", nil
	}
	child := treeInput{Depth: in.Depth - 1, Width: in.Width, Payload: in.Payload}
	fs := make([]durable.Future[string], in.Width)
	for i := range fs {
		fs[i] = durable.ScheduleSubOrchestration[string](ctx, wfTree, child)
	}
	return joinAll(ctx, fs)
}

// joinAll waits for every future, then fails with the first error.
func joinAll(ctx *durable.OrchestrationContext, fs []durable.Future[string]) (string, error) {
	all := make([]durable.Awaitable, len(fs))
	for i, f := range fs {
		all[i] = f
	}
	ctx.Join(all...)
	for _, f := range fs {
		if _, err := f.Get(); err != nil {
			return "", err
		}
	}
	return "done", nil
}

func echo(_ *durable.ActivityContext, in string) (string, error) { return in, nil }

// benchRegistry registers the durable side's orchestrations and activity.
func benchRegistry() *durable.Registry {
	return durable.NewRegistry().
		MustAddOrchestration(wfFanOut, durable.Orchestration(fanOutOrchestration)).
		MustAddOrchestration(wfTree, durable.Orchestration(treeOrchestration)).
		MustAddOrchestration(wfSequence, durable.Orchestration(sequenceOrchestration)).
		MustAddOrchestration(wfParent, durable.Orchestration(parentOrchestration)).
		MustAddActivity(wfEcho, echo)
}

type durableRun struct {
	rt     *durable.Runtime
	client *durable.Client
	done   func() // closes the provider and deletes its namespace
	fan    int
	tree   treeInput
}

// startDurable runs a runtime with c orchestration dispatchers and c
// activity workers, the synthetic runtime's shape in the turns scenario.
func startDurable(ctx context.Context, e *env, c int, ev engineEvents) (engineRun, error) {
	p, done, err := e.provider(ctx, "workflows")
	if err != nil {
		return nil, err
	}
	return e.durableOn(p, done, c, ev)
}

// startDurableDefaults runs a runtime with the default concurrency
// (Options' zero values).
func startDurableDefaults(ctx context.Context, e *env, _ int, ev engineEvents) (engineRun, error) {
	return startDurable(ctx, e, 0, ev)
}

// durableOn runs the durable side on p, whose namespace done closes and
// deletes, with c dispatchers and c workers (0: the runtime's defaults).
func (e *env) durableOn(p observable, done func(), c int, ev engineEvents) (*durableRun, error) {
	obs := newObserved(p, ev, !e.opts.AckFetchNoPoll)
	rt, err := durable.NewRuntime(obs, benchRegistry(), durable.Options{
		OrchestrationConcurrency: c,
		WorkerConcurrency:        c,
		// the pace at which a stopped point's dispatchers notice the stop
		LongPollTimeout: workerPoll,
		DisableAckFetch: e.opts.NoAckFetch,
		Logger:          slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("engine", "durable"),
	})
	if err != nil {
		done()
		return nil, err
	}
	return &durableRun{rt: rt, client: durable.NewClient(obs), done: done, fan: e.opts.FanOut,
		tree: treeInput{Depth: e.opts.TreeDepth, Width: e.opts.TreeWidth}}, nil
}

func (r *durableRun) startFanOut(ctx context.Context, id, payload string) error {
	return r.client.StartOrchestrationJSON(ctx, id, wfFanOut, fanOutInput{Activities: r.fan, Payload: payload})
}

func (r *durableRun) startTree(ctx context.Context, id, payload string) error {
	in := r.tree
	in.Payload = payload
	return r.client.StartOrchestrationJSON(ctx, id, wfTree, in)
}

func (r *durableRun) startSequence(ctx context.Context, id, payload string, n int) error {
	return r.client.StartOrchestrationJSON(ctx, id, wfSequence, sequenceInput{Activities: n, Payload: payload})
}

func (r *durableRun) startWide(ctx context.Context, id, payload string, n int) error {
	return r.client.StartOrchestrationJSON(ctx, id, wfFanOut, fanOutInput{Activities: n, Payload: payload})
}

func (r *durableRun) historyLength(ctx context.Context, id string) (int, error) {
	h, err := r.client.Provider().Read(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("durable history of %s: %w", id, err)
	}
	return len(h), nil
}

func (r *durableRun) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := r.rt.Shutdown(ctx)
	r.done()
	if err != nil {
		return fmt.Errorf("durable runtime shutdown: %w", err)
	}
	return nil
}
