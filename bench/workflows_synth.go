// The synthetic dispatcher of the turns scenario as a third engine of the
// workflows scenario, for the fan-out only (it has no sub-orchestrations).
// Measured right next to the durable runtime, their ratio is what running
// orchestration code through the replay engine costs on top of the
// provider, without the drift a shared machine adds between two scenarios
// run minutes apart.

package main

import (
	"context"
	"errors"
	"time"

	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

var synthEngine = engine{name: "synthetic", fanOutOnly: true, start: startSynth}

type synthRun struct {
	r      *synth
	p      *redisprovider.Provider
	stopFn func() error // stops the dispatchers and workers
	done   func() error // deletes the namespace, checks activities ran once
}

func startSynth(ctx context.Context, e *env, c int, ev engineEvents) (engineRun, error) {
	p, done, err := e.provider(ctx, "workflows")
	if err != nil {
		return nil, err
	}
	r := &synth{p: p, fanout: e.opts.FanOut, size: e.opts.Payload,
		onDone: func(inst string, _, at time.Time) { ev.finished(inst, true, nil, at) }}
	// a sink of its own for the exactly-once check of activities; the
	// point's counts come through ev
	acts := &sink{m: newMeter(0, 24*time.Hour, 0), seen: newSeen(), each: ev.activity}
	// a failure of its dispatchers shows in stop (and leaves roots unfinished
	// for the drain to name)
	stop, _ := r.start(ctx, c, acts)
	return &synthRun{r: r, p: p, stopFn: stop, done: func() error {
		done()
		return acts.seen.check("activity")
	}}, nil
}

func (s *synthRun) startFanOut(ctx context.Context, id, payload string) error {
	return startSynthetic(ctx, s.p, id, payload)
}

func (s *synthRun) startTree(context.Context, string, string) error { return errSynthShape }

// errSynthShape is the synthetic dispatcher's answer to the shapes it has
// no orchestration for (runWorkflows gives it only the fan-out).
var errSynthShape = errors.New("the synthetic dispatcher runs only the fan-out shape")

func (s *synthRun) startSequence(context.Context, string, string, int) error { return errSynthShape }
func (s *synthRun) startWide(context.Context, string, string, int) error     { return errSynthShape }
func (s *synthRun) historyLength(context.Context, string) (int, error)       { return 0, errSynthShape }

func (s *synthRun) stop() error {
	err := s.stopFn()
	if stopped(err) {
		err = s.r.verify(context.Background())
	}
	if derr := s.done(); err == nil {
		err = derr
	}
	return err
}
