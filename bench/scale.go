// Scenario 5, scale: fetch+ack latency with few vs very many queued items,
// for orchestration instances (each with a pending StartOrchestration), for
// activities, and for a session-aware worker while other owners hold that
// many sessions, each with a ready item it must never walk over. Every
// indexed structure a fetch touches is a sorted set or hash, so the cost
// should stay flat; this is the check. The queue is kept at its depth during
// a point: each fetched item is replaced by a new one (enqueued outside the
// timed part), and c extra items cover those in flight, so even 10 queued
// means 10 waiting at every moment.

package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// scaleKind is one kind of queue the scale scenario fills.
type scaleKind struct {
	name string
	// enqueue adds one item that take can fetch
	enqueue func(p *redisprovider.Provider, size int) func(ctx context.Context) error
	// background, when set, builds the depth instead of enqueue: n items
	// take's fetch must pass over without looking at them
	background func(p *redisprovider.Provider, size int) func(ctx context.Context, e *env, n int) error
	// take fetches one item and acks it; it fails when nothing is there
	take func(ctx context.Context, p *redisprovider.Provider) (fetched time.Time, err error)
}

// sessionOwner is the measured worker of the session kind; bgTag tags the
// other owners' sessions, so the measured fetch reads their tag queue.
const (
	sessionOwner = "bench-me"
	bgTag        = "bg"
)

var scaleKinds = []scaleKind{
	{
		name: "orchestrator",
		enqueue: func(p *redisprovider.Provider, size int) func(ctx context.Context) error {
			return orchestrationStarter(p, size, "scale-")
		},
		take: func(ctx context.Context, p *redisprovider.Provider) (time.Time, error) {
			item, err := p.FetchOrchestrationItem(ctx, 0, workerPoll, nil)
			if err != nil || item == nil {
				return time.Time{}, fmt.Errorf("FetchOrchestrationItem on a full queue: item %v, %w", item != nil, err)
			}
			at := time.Now()
			start, ok := item.Messages[0].(duroxide.StartOrchestration)
			if !ok {
				return at, fmt.Errorf("unexpected message %T", item.Messages[0])
			}
			// a one-turn orchestration: started and completed in the same ack
			inst, x := item.Instance, item.ExecutionID
			out := orchOutput
			return at, p.AckOrchestrationItem(context.WithoutCancel(ctx), item.LockToken, duroxide.OrchestrationCommit{
				ExecutionID: x,
				HistoryDelta: []duroxide.Event{
					duroxide.NewEvent(1, inst, x, nil, duroxide.OrchestrationStartedEvent{Name: orchName, Version: orchVersion, Input: start.Input}),
					duroxide.NewEvent(2, inst, x, nil, duroxide.OrchestrationCompletedEvent{Output: out}),
				},
				Metadata: duroxide.ExecutionMetadata{Status: "Completed", Output: &out, OrchestrationName: orchName,
					OrchestrationVersion: orchVersion, PinnedDuroxideVersion: pinned},
			})
		},
	},
	{
		name: "worker",
		enqueue: func(p *redisprovider.Provider, size int) func(ctx context.Context) error {
			return activityProducer(p, size, 5)
		},
		take: func(ctx context.Context, p *redisprovider.Provider) (time.Time, error) {
			return takeActivity(ctx, p, nil, duroxide.DefaultOnly(), nil)
		},
	},
	{
		name: "worker with sessions",
		enqueue: func(p *redisprovider.Provider, size int) func(ctx context.Context) error {
			var next atomic.Uint64
			return func(ctx context.Context) error {
				id := next.Add(1)
				s := "mine-" + strconv.FormatUint(id%64, 10)
				return p.EnqueueForWorker(ctx, duroxide.ActivityExecute{Instance: "act-" + s, ExecutionID: 1, ID: id,
					Name: "bench.noop", Input: payload(size), SessionID: &s})
			}
		},
		background: otherOwnersSessions,
		take: func(ctx context.Context, p *redisprovider.Provider) (time.Time, error) {
			cfg := &duroxide.SessionFetchConfig{OwnerID: sessionOwner, LockTimeout: time.Hour}
			return takeActivity(ctx, p, cfg, duroxide.DefaultAndTags(bgTag), func(act duroxide.ActivityExecute) error {
				if act.SessionID == nil || !strings.HasPrefix(*act.SessionID, "mine-") {
					return fmt.Errorf("owner %s was given activity %s/%d of another owner's session", sessionOwner, act.Instance, act.ID)
				}
				return nil
			})
		},
	},
}

// waiting describes what a point of depth has queued.
func (k scaleKind) waiting(depth int) string {
	if k.background != nil {
		return fmt.Sprintf("%d sessions of other owners waiting, each with a ready item tagged %q, and the worker's own session items", depth, bgTag)
	}
	return fmt.Sprintf("%d %s items waiting", depth, k.name)
}

// takeActivity fetches one activity, checks it with accept (when set) and
// acks it.
func takeActivity(ctx context.Context, p *redisprovider.Provider, session *duroxide.SessionFetchConfig, tags duroxide.TagFilter,
	accept func(duroxide.ActivityExecute) error) (time.Time, error) {
	item, err := p.FetchWorkItem(ctx, 0, workerPoll, session, tags)
	if err != nil || item == nil {
		return time.Time{}, fmt.Errorf("FetchWorkItem on a full queue: item %v, %w", item != nil, err)
	}
	at := time.Now()
	act := item.Item.(duroxide.ActivityExecute)
	if accept != nil {
		if err := accept(act); err != nil {
			return at, err
		}
	}
	return at, p.AckWorkItem(context.WithoutCancel(ctx), item.LockToken, okCompletion(act))
}

// otherOwnersSessions makes n sessions, tagged bgTag, that a new owner
// claims (locks held for an hour), then queues one more item in each: ready
// work only that owner may take. Each call uses a new owner, so its claims
// cannot pick up the ready items an earlier call left.
func otherOwnersSessions(p *redisprovider.Provider, size int) func(ctx context.Context, e *env, n int) error {
	var round atomic.Int64
	return func(ctx context.Context, e *env, n int) error {
		r := round.Add(1)
		cfg := &duroxide.SessionFetchConfig{OwnerID: fmt.Sprintf("bench-other-%d", r), LockTimeout: time.Hour}
		item := func(next *atomic.Uint64, id uint64) func(ctx context.Context) error {
			return func(ctx context.Context) error {
				s, tag := fmt.Sprintf("other-%d-%d", r, next.Add(1)), bgTag
				return p.EnqueueForWorker(ctx, duroxide.ActivityExecute{Instance: "bg-" + s, ExecutionID: 1, ID: id,
					Name: "bench.noop", Input: payload(size), SessionID: &s, Tag: &tag})
			}
		}
		var first, second atomic.Uint64
		claim := func(ctx context.Context) error {
			it, err := p.FetchWorkItem(ctx, time.Hour, 0, cfg, duroxide.TagsOnly(bgTag))
			if err == nil && it == nil {
				err = errors.New("no session left to claim")
			}
			return err
		}
		steps := []struct {
			label string
			run   func(ctx context.Context) error
		}{
			{"queueing the first item of %d sessions", item(&first, 1)},
			{"claiming %d sessions for another owner", claim},
			{"queueing a ready item in each of %d sessions", item(&second, 2)},
		}
		for _, st := range steps {
			if err := e.fill(ctx, fmt.Sprintf(st.label, n), n, st.run); err != nil {
				return err
			}
		}
		return nil
	}
}

func runScale(ctx context.Context, e *env) error {
	for _, kind := range scaleKinds {
		if err := e.scale(ctx, kind); err != nil {
			return err
		}
	}
	return nil
}

func (e *env) scale(ctx context.Context, kind scaleKind) error {
	p, done, err := e.provider(ctx, "scale")
	if err != nil {
		return err
	}
	defer done()
	enqueue := kind.enqueue(p, e.opts.Payload)
	background := func(ctx context.Context, e *env, n int) error {
		return e.fill(ctx, fmt.Sprintf("queueing %d %s items", n, kind.name), n, enqueue)
	}
	if kind.background != nil {
		background = kind.background(p, e.opts.Payload)
	}
	queued, own := 0, 0
	for _, depth := range e.opts.ScaleDepths {
		if depth > queued {
			if err := background(ctx, e, depth-queued); err != nil {
				return err
			}
			queued = depth
		}
		for _, c := range e.opts.Concurrency {
			if c > own {
				if err := e.fill(ctx, fmt.Sprintf("queueing %d %s items", c-own, kind.name), c-own, enqueue); err != nil {
					return err
				}
				own = c
			}
			m := newMeter(e.opts.Warmup, e.opts.Duration, 0)
			fa, fetch, ack := m.sibling(), m.sibling(), m.sibling()
			err := e.measure(ctx, fmt.Sprintf("scale %s depth=%d c=%d", kind.name, depth, c), m, func(ctx context.Context) error {
				return closedLoop(ctx, c, m, func(ctx context.Context, w int) error {
					t0 := time.Now()
					t1, err := kind.take(ctx, p)
					if err != nil {
						return err
					}
					t2 := time.Now()
					fa.observe(t0, t2)
					fetch.observe(t0, t1)
					ack.observe(t1, t2)
					return enqueue(context.WithoutCancel(ctx)) // keeps the depth
				})
			}, func(k counts) {
				pt := Point{Scenario: "scale", Variant: vScale(kind.name, depth), Concurrency: c, Unit: "fetch+acks",
					LatencyOf: fmt.Sprintf("fetch + ack with %s (the rate also includes the enqueue that keeps the depth)", kind.waiting(depth)),
					Metrics:   map[string]float64{"queued": float64(depth)},
				}.measured(m, fa, k)
				pt.fetchAck(fetch, ack, k)
				e.add(pt)
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// fill runs enqueue n times from 16 goroutines (setup, not measured).
func (e *env) fill(ctx context.Context, label string, n int, enqueue func(ctx context.Context) error) error {
	var left, doneN atomic.Int64
	left.Store(int64(n))
	stop := e.prog.track(label, 0, doneN.Load)
	defer stop()
	start := time.Now()
	err := group(ctx, 16, func(ctx context.Context, w int) error {
		for left.Add(-1) >= 0 {
			if err := enqueue(ctx); err != nil {
				return fmt.Errorf("%s: %w", label, err)
			}
			doneN.Add(1)
		}
		return nil
	})
	if err == nil && n >= 10000 {
		fmt.Fprintf(e.out, "   (%s: %s/s)\n", label, strconv.FormatFloat(float64(n)/time.Since(start).Seconds(), 'f', 0, 64))
	}
	return err
}
