// Scenario levers: the activity round trip of runRoundTrip under each
// throughput lever of the provider, measured back to back at each
// concurrency and repeated, so the variants are compared on a machine in the
// same state: scripts called with EVALSHA or as Redis functions (FCALL), and
// workers that ack then fetch in two calls or in one
// (duroxide.WorkAckFetcher).

package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// leverRepeats is how many times each concurrency runs every variant: the
// machine is shared, so one run proves little.
const leverRepeats = 2

// lever is one variant of the round trip.
type lever struct {
	name     string
	evalsha  bool // Options.ForceEvalsha
	ackFetch bool // workers ack and fetch in one call
}

var levers = []lever{
	{"evalsha, ack then fetch", true, false},
	{"evalsha, ack-and-fetch", true, true},
	{"functions, ack then fetch", false, false},
	{"functions, ack-and-fetch", false, true},
}

func init() {
	scenarios = append(scenarios, scenario{"levers",
		"activity round trips under each provider lever (EVALSHA / FCALL, ack-and-fetch), back to back", runLevers})
}

func runLevers(ctx context.Context, e *env) error {
	for _, c := range e.opts.Concurrency {
		for range leverRepeats {
			for _, l := range levers {
				if err := e.leverRoundTrip(ctx, c, l); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (e *env) leverRoundTrip(ctx context.Context, c int, l lever) error {
	p, err := redisprovider.New(ctx, redisprovider.Options{Client: e.main, Namespace: e.namespace("levers"), ForceEvalsha: l.evalsha})
	if err != nil {
		return err
	}
	defer func() {
		p.Close()
		e.cleanup(p.Keys().Prefix() + "*")
	}()
	consume := activityWorkers(p, c, false)
	if l.ackFetch {
		consume = ackFetchWorkers(p, c)
	}
	variant := "round trip: " + l.name
	return e.runFlow(ctx, flow{
		label:   fmt.Sprintf("levers %s c=%d", l.name, c),
		conc:    c,
		enqueue: activityProducer(p, e.opts.Payload, e.opts.FanOut),
		consume: consume,
		record: func(m *meter, s *sink, k counts) {
			pt := Point{Scenario: "levers", Variant: variant, Concurrency: c, Unit: "round trips",
				LatencyOf: fmt.Sprintf("enqueue start to ack done, %d items in flight", c*e.opts.InFlight),
			}.measured(m, m, k)
			pt.Note = callsNote(k, pt.Ops)
			e.add(pt)
		},
	})
}

// ackFetchWorkers starts c workers that long-poll for an item only when they
// hold none, and otherwise ack the one they hold and take the next in one
// call. A worker that is told to stop still acks what it holds (with the
// plain ack), so the drain's counts stay exact.
func ackFetchWorkers(p *redisprovider.Provider, c int) func(ctx context.Context, s *sink) (func() error, func() error, error) {
	return func(ctx context.Context, s *sink) (func() error, func() error, error) {
		cs := startConsumers(ctx, c, func(ctx context.Context, w int) error {
			var item *duroxide.LockedWorkItem
			var err error
			for item != nil || ctx.Err() == nil {
				if item == nil {
					if item, err = p.FetchWorkItem(ctx, 0, workerPoll, nil, duroxide.DefaultOnly()); err != nil {
						return err
					}
					continue
				}
				if item, err = finishActivity(ctx, p, s, item); err != nil {
					return err
				}
			}
			return nil
		})
		return cs.stop, cs.failed, nil
	}
}

// finishActivity completes item and returns the next one the same call
// fetched (none once ctx is done).
func finishActivity(ctx context.Context, p *redisprovider.Provider, s *sink, item *duroxide.LockedWorkItem) (*duroxide.LockedWorkItem, error) {
	act, ok := item.Item.(duroxide.ActivityExecute)
	if !ok {
		return nil, fmt.Errorf("fetch returned a %T", item.Item)
	}
	sent, err := sentAt(act.Input)
	if err != nil {
		return nil, err
	}
	id := act.Instance + "#" + strconv.FormatUint(act.ID, 10)
	var next *duroxide.LockedWorkItem
	if ctx.Err() != nil {
		err = p.AckWorkItem(context.WithoutCancel(ctx), item.LockToken, okCompletion(act))
	} else {
		next, err = p.AckWorkItemAndFetch(context.WithoutCancel(ctx), item.LockToken, okCompletion(act), 0, 0, nil, duroxide.DefaultOnly())
	}
	if err != nil {
		return nil, fmt.Errorf("ack: %w", err)
	}
	s.complete(id, sent, time.Now())
	return next, nil
}
