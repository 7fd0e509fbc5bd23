// Scenario 3, orchestration turns: a synthetic runtime that uses only the
// Provider API, the way duroxide's dispatchers do. Orchestrator dispatchers
// fetch an instance with its history and messages, decide the turn and ack it
// atomically; workers run the activities. Each orchestration fans out M
// activities on its first turn and fans in as their completions arrive,
// growing its history every turn, then completes.
//
// Then the cost of one turn against history length: a fetch returns the
// whole history of the execution, so that cost grows with it by design; the
// sweep shows how fast.

package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

const (
	orchName    = "bench.fanout"
	orchVersion = "1.0.0"
	orchOutput  = `"done"`
)

var pinned = semver.MustParse(duroxide.CurrentDuroxideVersion)

func runTurns(ctx context.Context, e *env) error {
	for _, c := range e.opts.Concurrency {
		if err := e.turns(ctx, c); err != nil {
			return err
		}
	}
	for _, n := range e.opts.Histories {
		if err := e.historyCost(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// synth is the synthetic runtime: c orchestrator dispatchers and c activity
// workers on one provider.
type synth struct {
	p       *redisprovider.Provider
	fanout  int
	size    int
	onDone  func(instance string, started, at time.Time) // an orchestration completed
	turns   *meter                                       // counts turns (window only)
	total   atomic.Int64                                 // every turn, for turns per orchestration
	mu      sync.Mutex
	samples []string // a few completed instances, checked afterwards
}

// start runs the dispatchers and workers; acts counts activities.
func (r *synth) start(ctx context.Context, c int, acts *sink) (stop func() error, failed func() error) {
	orch := startConsumers(ctx, c, r.dispatch)
	stopW, failedW, _ := activityWorkers(r.p, c, false)(ctx, acts)
	stop = func() error {
		err := orch.stop()
		if werr := stopW(); err == nil {
			err = werr
		}
		return err
	}
	failed = func() error {
		if err := orch.failed(); err != nil {
			return err
		}
		return failedW()
	}
	return stop, failed
}

// dispatch is one orchestrator dispatcher: fetch, decide, ack.
func (r *synth) dispatch(ctx context.Context, w int) error {
	for ctx.Err() == nil {
		item, err := r.p.FetchOrchestrationItem(ctx, 0, workerPoll, nil)
		if err != nil {
			return err
		}
		if item == nil {
			continue
		}
		start := time.Now()
		commit, started, completed, err := r.decide(item)
		if err != nil {
			return fmt.Errorf("instance %s: %w", item.Instance, err)
		}
		if err := r.p.AckOrchestrationItem(context.WithoutCancel(ctx), item.LockToken, commit); err != nil {
			return fmt.Errorf("AckOrchestrationItem %s: %w", item.Instance, err)
		}
		at := time.Now()
		r.total.Add(1)
		if r.turns != nil {
			r.turns.observe(start, at)
		}
		if completed {
			r.mu.Lock()
			if len(r.samples) < 10 {
				r.samples = append(r.samples, item.Instance)
			}
			r.mu.Unlock()
			r.onDone(item.Instance, started, at)
		}
	}
	return nil
}

// decide computes one turn, as the orchestration "schedule fanout activities,
// wait for all, complete" would replay to: the first turn records the start
// and schedules the activities, later turns record completions, the last one
// completes the execution.
func (r *synth) decide(item *duroxide.OrchestrationItem) (c duroxide.OrchestrationCommit, started time.Time, completed bool, err error) {
	if item.HistoryError != "" {
		return c, started, false, fmt.Errorf("history cannot be decoded: %s", item.HistoryError)
	}
	c.ExecutionID = item.ExecutionID
	inst, exec := item.Instance, item.ExecutionID
	next := uint64(1)
	if n := len(item.History); n > 0 {
		next = item.History[n-1].EventID + 1
	}
	add := func(src *uint64, k duroxide.EventKind) uint64 {
		id := next
		c.HistoryDelta = append(c.HistoryDelta, duroxide.NewEvent(id, inst, exec, src, k))
		next++
		return id
	}
	var input string
	done := 0
	for _, ev := range item.History {
		switch k := ev.Kind.(type) {
		case duroxide.OrchestrationStartedEvent:
			input = k.Input
		case duroxide.ActivityCompletedEvent:
			done++
		case duroxide.OrchestrationCompletedEvent:
			return c, started, false, fmt.Errorf("fetched after it completed (messages %d)", len(item.Messages))
		}
	}
	for _, msg := range item.Messages {
		switch m := msg.(type) {
		case duroxide.StartOrchestration:
			if input != "" {
				return c, started, false, fmt.Errorf("second StartOrchestration")
			}
			input = m.Input
			add(nil, duroxide.OrchestrationStartedEvent{Name: m.Orchestration, Version: orchVersion, Input: m.Input})
			for range r.fanout {
				in := payload(r.size)
				id := add(nil, duroxide.ActivityScheduledEvent{Name: "bench.noop", Input: in})
				c.WorkerItems = append(c.WorkerItems, duroxide.ActivityExecute{
					Instance: inst, ExecutionID: exec, ID: id, Name: "bench.noop", Input: in})
			}
			c.Metadata = duroxide.ExecutionMetadata{Status: "Running", OrchestrationName: orchName,
				OrchestrationVersion: orchVersion, PinnedDuroxideVersion: pinned}
		case duroxide.ActivityCompleted:
			id := m.ID
			add(&id, duroxide.ActivityCompletedEvent{Result: m.Result})
			done++
		default:
			return c, started, false, fmt.Errorf("unexpected message %T", msg)
		}
	}
	if input == "" {
		return c, started, false, fmt.Errorf("no OrchestrationStarted in history nor StartOrchestration in messages")
	}
	if started, err = sentAt(input); err != nil {
		return c, started, false, err
	}
	if done > r.fanout {
		return c, started, false, fmt.Errorf("%d activity completions for %d activities", done, r.fanout)
	}
	if done == r.fanout {
		add(nil, duroxide.OrchestrationCompletedEvent{Output: orchOutput})
		out := orchOutput
		c.Metadata.Status, c.Metadata.Output = "Completed", &out
		completed = true
	}
	return c, started, completed, nil
}

// verify checks a few completed instances end to end: full history, status.
func (r *synth) verify(ctx context.Context) error {
	r.mu.Lock()
	insts := append([]string(nil), r.samples...)
	r.mu.Unlock()
	want := 2 + 2*r.fanout
	for _, inst := range insts {
		h, err := r.p.Read(ctx, inst)
		if err != nil {
			return fmt.Errorf("Read %s: %w", inst, err)
		}
		if len(h) != want {
			return fmt.Errorf("instance %s: %d history events, want %d", inst, len(h), want)
		}
		info, err := r.p.GetInstanceInfo(ctx, inst)
		if err != nil {
			return fmt.Errorf("GetInstanceInfo %s: %w", inst, err)
		}
		if info.Status != "Completed" || info.Output == nil || *info.Output != orchOutput {
			return fmt.Errorf("instance %s: status %q output %v after its final turn", inst, info.Status, info.Output)
		}
	}
	return nil
}

// orchestrationStarter returns an enqueue of a fresh orchestration per call.
func orchestrationStarter(p *redisprovider.Provider, size int, prefix string) func(ctx context.Context) error {
	var next atomic.Uint64
	return func(ctx context.Context) error {
		return startSynthetic(ctx, p, prefix+strconv.FormatUint(next.Add(1), 10), payload(size))
	}
}

// startSynthetic enqueues the start of a synthetic fan-out orchestration;
// input must carry a payload timestamp.
func startSynthetic(ctx context.Context, p *redisprovider.Provider, instance, input string) error {
	v := orchVersion
	return p.EnqueueForOrchestrator(ctx, duroxide.StartOrchestration{
		Instance: instance, Orchestration: orchName, Version: &v, Input: input,
		ExecutionID: duroxide.InitialExecutionID,
	}, 0)
}

func (e *env) turns(ctx context.Context, c int) error {
	p, done, err := e.provider(ctx, "turns")
	if err != nil {
		return err
	}
	defer done()
	r := &synth{p: p, fanout: e.opts.FanOut, size: e.opts.Payload}
	var acts *sink
	err = e.runFlow(ctx, flow{
		label:   fmt.Sprintf("turns c=%d", c),
		conc:    c,
		enqueue: orchestrationStarter(p, e.opts.Payload, "orch-"),
		consume: func(ctx context.Context, s *sink) (func() error, func() error, error) {
			r.onDone = func(inst string, started, at time.Time) { s.complete(inst, started, at) }
			r.turns = s.m.sibling()
			acts = &sink{m: s.m.sibling(), seen: newSeen()}
			stop, failed := r.start(ctx, c, acts)
			return stop, failed, nil
		},
		record: func(m *meter, s *sink, k counts) {
			pt := Point{Scenario: "turns", Variant: vTurns, Concurrency: c, Unit: "orchestrations",
				LatencyOf: fmt.Sprintf("start (enqueue) to completion (final ack), fan-out %d, %d orchestrations in flight", e.opts.FanOut, c*e.opts.InFlight),
				Metrics: map[string]float64{
					"turns_per_sec":      r.turns.rate(),
					"activities_per_sec": acts.m.rate(),
				},
			}.measured(m, m, k)
			if n := r.turns.count(); n > 0 {
				pt.Metrics["client_calls_per_turn"] = float64(k.ClientCalls) / float64(n)
			}
			pt.Note = fmt.Sprintf("%s turns/s, %s activities/s, %.1f calls/orchestration",
				human(r.turns.rate()), human(acts.m.rate()), pt.Metrics["client_calls_per_op"])
			e.add(pt)
		},
	})
	if err != nil {
		return err
	}
	if err := acts.seen.check("activity"); err != nil {
		return err
	}
	return r.verify(ctx)
}

// historyCost measures turns on instances whose history holds n events:
// fetch (which returns the history) plus an ack appending one event, at
// concurrency 1 so the figure is the cost of a turn and not of queueing. A
// pool of instances takes the turns in rotation and the point stops before
// any history grows by more than a tenth, so "n events" stays true.
func (e *env) historyCost(ctx context.Context, n int) error {
	p, done, err := e.provider(ctx, "history")
	if err != nil {
		return err
	}
	defer done()
	budget := 20000 // events seeded per point: seconds of setup on real Redis
	if e.embedded {
		budget = 200
	}
	pool := min(max(budget/n, 4), 1000)
	growth := max(1, n/10)
	insts, err := e.seedHistories(ctx, p, n, pool)
	if err != nil {
		return err
	}
	data := payload(e.opts.Payload)
	raise := func(ctx context.Context, inst string) error {
		return p.EnqueueForOrchestrator(ctx, duroxide.ExternalRaised{Instance: inst, Name: "bench.e", Data: data}, 0)
	}
	for _, inst := range insts {
		if err := raise(ctx, inst); err != nil {
			return err
		}
	}
	m := newMeter(e.opts.Warmup, e.opts.Duration, int64(pool*growth))
	turn, fetch, ack := m.sibling(), m.sibling(), m.sibling()
	err = e.measure(ctx, fmt.Sprintf("turn cost, %d-event history", n), m, func(ctx context.Context) error {
		return closedLoop(ctx, 1, m, func(ctx context.Context, w int) error {
			t0 := time.Now()
			item, err := p.FetchOrchestrationItem(ctx, 0, workerPoll, nil)
			if err != nil || item == nil {
				return fmt.Errorf("FetchOrchestrationItem with %d instances waiting: item %v, %w", pool, item != nil, err)
			}
			t1 := time.Now()
			h := item.History
			if item.HistoryError != "" || len(h) < n {
				return fmt.Errorf("instance %s: %d history events (want >= %d) %s", item.Instance, len(h), n, item.HistoryError)
			}
			next := h[len(h)-1].EventID + 1
			var delta []duroxide.Event
			for _, msg := range item.Messages {
				x, ok := msg.(duroxide.ExternalRaised)
				if !ok {
					return fmt.Errorf("unexpected message %T", msg)
				}
				delta = append(delta, duroxide.NewEvent(next, item.Instance, item.ExecutionID, nil,
					duroxide.ExternalEventEvent{Name: x.Name, Data: x.Data}))
				next++
			}
			err = p.AckOrchestrationItem(context.WithoutCancel(ctx), item.LockToken,
				duroxide.OrchestrationCommit{ExecutionID: item.ExecutionID, HistoryDelta: delta})
			if err != nil {
				return fmt.Errorf("AckOrchestrationItem: %w", err)
			}
			t2 := time.Now()
			fetch.observe(t0, t1)
			ack.observe(t1, t2)
			turn.observe(t0, t2)
			return raise(context.WithoutCancel(ctx), item.Instance)
		})
	}, func(k counts) {
		pt := Point{Scenario: "turns", Variant: vHistory(n), Concurrency: 1, Unit: "turns",
			LatencyOf: "FetchOrchestrationItem + AckOrchestrationItem appending one event (the rate also includes the EnqueueForOrchestrator that feeds the next turn)",
			Metrics:   map[string]float64{"instances": float64(pool)},
		}.measured(m, turn, k)
		pt.fetchAck(fetch, ack, k)
		e.add(pt)
	})
	return err
}

// seedHistories creates pool running instances with n events each, through
// the API: a start message, then one turn whose delta holds the whole history.
func (e *env) seedHistories(ctx context.Context, p *redisprovider.Provider, n, pool int) ([]string, error) {
	insts := make([]string, pool)
	v := orchVersion
	for i := range insts {
		insts[i] = fmt.Sprintf("hist-%d-%d", n, i)
		err := p.EnqueueForOrchestrator(ctx, duroxide.StartOrchestration{Instance: insts[i], Orchestration: orchName,
			Version: &v, Input: payload(e.opts.Payload), ExecutionID: duroxide.InitialExecutionID}, 0)
		if err != nil {
			return nil, err
		}
	}
	var seeded atomic.Int64
	stop := e.prog.track(fmt.Sprintf("seeding %d instances x %d events", pool, n), 0, seeded.Load)
	defer stop()
	data := payload(e.opts.Payload)
	err := group(ctx, 4, func(ctx context.Context, w int) error {
		for seeded.Load() < int64(pool) {
			item, err := p.FetchOrchestrationItem(ctx, 0, 0, nil)
			if err != nil {
				return err
			}
			if item == nil {
				return nil // the rest are locked by the other seeders
			}
			start, ok := item.Messages[0].(duroxide.StartOrchestration)
			if !ok || len(item.History) > 0 {
				return fmt.Errorf("seeding: unexpected item for %s", item.Instance)
			}
			evs := make([]duroxide.Event, 0, n)
			evs = append(evs, duroxide.NewEvent(1, item.Instance, item.ExecutionID, nil,
				duroxide.OrchestrationStartedEvent{Name: orchName, Version: orchVersion, Input: start.Input}))
			for id := uint64(2); id <= uint64(n); id++ {
				evs = append(evs, duroxide.NewEvent(id, item.Instance, item.ExecutionID, nil,
					duroxide.ExternalEventEvent{Name: "bench.e", Data: data}))
			}
			err = p.AckOrchestrationItem(ctx, item.LockToken, duroxide.OrchestrationCommit{
				ExecutionID: item.ExecutionID, HistoryDelta: evs,
				Metadata: duroxide.ExecutionMetadata{Status: "Running", OrchestrationName: orchName,
					OrchestrationVersion: orchVersion, PinnedDuroxideVersion: pinned},
			})
			if err != nil {
				return fmt.Errorf("seeding %s with %d events: %w", item.Instance, n, err)
			}
			seeded.Add(1)
		}
		return nil
	})
	if err == nil && seeded.Load() != int64(pool) {
		err = fmt.Errorf("seeding: %d of %d instances fetched", seeded.Load(), pool)
	}
	return insts, err
}
