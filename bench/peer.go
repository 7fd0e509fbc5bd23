// Scenario 6, peer: asynq on the same Redis, in the same run, at the same
// concurrency, measured by the same flow code as scenarios 2 and 4. Its tasks
// are no-ops with the same payload size. asynq is configured as shipped,
// except where said: latency is measured with its default poll interval and
// with a tuned one, since its dequeue loop polls instead of blocking.

package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/bench/peer/asynqpeer"
)

func runPeer(ctx context.Context, e *env) error {
	rdb := e.peerClient(0)
	defer rdb.Close()
	var n atomic.Int64
	// a fresh queue per point: asynq's per-queue stats and lists start empty
	newPeer := func() (*asynqpeer.Peer, func()) {
		p := asynqpeer.New(rdb, fmt.Sprintf("bench-%s-%d", e.runID, n.Add(1)))
		return p, func() {
			e.cleanup(p.KeyPattern())
			if err := p.Forget(context.Background()); err != nil {
				fmt.Fprintf(e.out, "warning: asynq cleanup: %v\n", err)
			}
		}
	}
	for _, c := range e.opts.Concurrency {
		p, done := newPeer()
		err := e.runFlow(ctx, flow{
			label:   fmt.Sprintf("asynq roundtrip c=%d", c),
			conc:    c,
			enqueue: func(ctx context.Context) error { return p.Enqueue(ctx, payload(e.opts.Payload)) },
			consume: asynqServer(p, c, e.opts.AsynqPoll),
			record: func(m *meter, s *sink, k counts) {
				pt := Point{Scenario: "peer", Variant: vAsynqRT, Concurrency: c, Unit: "tasks",
					LatencyOf: fmt.Sprintf("enqueue start to handler call, %d tasks in flight", c*e.opts.InFlight),
				}.measured(m, m, k)
				pt.Note = fmt.Sprintf("asynq %s, poll %v; ", asynqpeer.Version(), e.opts.AsynqPoll) + callsNote(k, pt.Ops)
				e.add(pt)
			},
		})
		done()
		if err != nil {
			return err
		}
	}
	for _, v := range []struct {
		variant string
		poll    time.Duration
	}{{vAsynqLatDef, 0}, {vAsynqLatTun, e.opts.AsynqPoll}} {
		pollName := "1s (asynq default)"
		if v.poll > 0 {
			pollName = v.poll.String()
		} else if e.opts.Duration < 3*time.Second {
			// a window shorter than a few of asynq's 1s sleeps would show
			// luck, not asynq
			e.skip("asynq latency with its default 1s poll: needs -duration >= 3s")
			continue
		}
		for _, c := range e.opts.Concurrency {
			p, done := newPeer()
			err := e.runFlow(ctx, flow{
				label:   fmt.Sprintf("asynq latency poll=%s c=%d", pollName, c),
				rate:    e.opts.Rate,
				enqueue: func(ctx context.Context) error { return p.Enqueue(ctx, payload(e.opts.Payload)) },
				consume: asynqServer(p, c, v.poll),
				record: func(m *meter, s *sink, k counts) {
					pt := Point{Scenario: "peer", Variant: v.variant, Concurrency: c, Unit: "tasks",
						LatencyOf: fmt.Sprintf("enqueue start to handler call, %.0f tasks/s, TaskCheckInterval %s", e.opts.Rate, pollName),
					}.measured(m, m, k)
					pt.Note = "poll " + pollName + "; " + callsNote(k, pt.Ops)
					e.add(pt)
				},
			})
			done()
			if err != nil {
				return err
			}
		}
	}
	return e.idleAsynq(ctx, newPeer)
}

// peerClient returns a pool like the provider's (same options, its own
// connections, extra more of them) counted by the same hook, for a peer.
func (e *env) peerClient(extra int) *redis.Client {
	ro := *e.clientOpts
	if ro.PoolSize == 0 {
		ro.PoolSize = e.main.Options().PoolSize // go-redis's default
	}
	ro.PoolSize += extra
	rdb := redis.NewClient(&ro)
	rdb.AddHook(e.calls)
	return rdb
}

// asynqServer adapts an asynq server to a flow's consumer side: the handler
// reports each task when called. asynq acknowledges (its Done script) after
// the handler returns, so the peer's round trip ends one script earlier than
// ours, a small advantage that favours asynq.
func asynqServer(p *asynqpeer.Peer, c int, poll time.Duration) func(ctx context.Context, s *sink) (func() error, func() error, error) {
	return func(ctx context.Context, s *sink) (func() error, func() error, error) {
		var bad atomic.Value // first malformed payload
		stop, err := p.Serve(c, poll, func(id, payload string) {
			at := time.Now()
			sent, err := sentAt(payload)
			if err != nil {
				bad.CompareAndSwap(nil, err)
				return
			}
			s.complete(id, sent, at)
		})
		if err != nil {
			return nil, nil, err
		}
		failed := func() error {
			if err, ok := bad.Load().(error); ok {
				return err
			}
			return nil
		}
		return func() error { stop(); return failed() }, failed, nil
	}
}

// idleAsynq counts what an idle asynq server (default settings) sends, for
// comparison with an idle blocked fetcher of ours.
func (e *env) idleAsynq(ctx context.Context, newPeer func() (*asynqpeer.Peer, func())) error {
	p, done := newPeer()
	defer done()
	stop, err := p.Serve(8, 0, func(id, payload string) {})
	if err != nil {
		return err
	}
	defer stop()
	m := newMeter(500*time.Millisecond, max(e.opts.IdleWindow/2, 100*time.Millisecond), 0)
	return e.idlePoint(ctx, Point{Scenario: "peer", Variant: vIdleAsynq, Concurrency: 8}, time.Second, m, nil, nil)
}
