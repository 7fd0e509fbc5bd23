// The measurement machinery every scenario shares: one measurement window
// with its latency recorder (meter), one closed-loop driver, a pool of
// long-running consumers, a paced producer and the timestamped payloads that
// carry an item's enqueue time through Redis to whoever receives it.
//
// Keeping a single implementation matters more than elegance here: two
// scenarios compared in a ratio must count operations and cut windows the
// same way, or the ratio measures the harness.

package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Percentiles summarises a latency sample in milliseconds.
type Percentiles struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// meter counts the operations that complete inside one measurement window and
// records their latencies. The window starts after a warm-up, so connection
// dials, script loads and empty caches do not count; operations that straddle
// either edge are dropped rather than pro-rated, the usual closed-loop rule.
// Safe for concurrent use.
type meter struct {
	from, to time.Time
	limit    int64 // stop counting at this many operations (0: none)

	n    atomic.Int64
	last atomic.Int64 // end of the last counted operation, ns after from

	mu      sync.Mutex
	samples []time.Duration
}

// newMeter opens a window that starts after warm and lasts dur.
func newMeter(warm, dur time.Duration, limit int64) *meter {
	from := time.Now().Add(warm)
	return &meter{from: from, to: from.Add(dur), limit: limit}
}

// observe counts an operation that ran from start to end (both inside the
// window) and records its duration.
func (m *meter) observe(start, end time.Time) {
	if start.Before(m.from) {
		return
	}
	m.record(end.Sub(start), end)
}

// record counts an operation that completed at end, with latency d (which may
// have started before the window: a queued item's wait is part of its
// latency).
func (m *meter) record(d time.Duration, end time.Time) {
	if end.Before(m.from) || end.After(m.to) {
		return
	}
	if m.limit > 0 && m.n.Load() >= m.limit {
		return
	}
	m.n.Add(1)
	if at := int64(end.Sub(m.from)); at > m.last.Load() {
		m.last.Store(at) // racy max is fine: only used to time a capped window
	}
	m.mu.Lock()
	m.samples = append(m.samples, d)
	m.mu.Unlock()
}

// done reports that the window is over or the operation cap reached.
func (m *meter) done() bool {
	return time.Now().After(m.to) || (m.limit > 0 && m.n.Load() >= m.limit)
}

// count is the number of operations counted so far.
func (m *meter) count() int64 { return m.n.Load() }

// seconds is the length of the window, or of its used part when the cap
// stopped it early.
func (m *meter) seconds() float64 {
	if m.limit > 0 && m.n.Load() >= m.limit {
		if s := time.Duration(m.last.Load()).Seconds(); s > 0 {
			return s
		}
	}
	return m.to.Sub(m.from).Seconds()
}

// rate is operations per second over the window.
func (m *meter) rate() float64 {
	if s := m.seconds(); s > 0 {
		return float64(m.count()) / s
	}
	return 0
}

// percentiles summarises the recorded latencies (nil when none).
func (m *meter) percentiles() *Percentiles {
	m.mu.Lock()
	s := append([]time.Duration(nil), m.samples...)
	m.mu.Unlock()
	if len(s) == 0 {
		return nil
	}
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	at := func(q float64) float64 {
		i := int(q*float64(len(s))+0.5) - 1
		i = max(0, min(i, len(s)-1))
		return ms(s[i])
	}
	return &Percentiles{
		N:    len(s),
		Mean: ms(sum / time.Duration(len(s))),
		P50:  at(0.50),
		P90:  at(0.90),
		P99:  at(0.99),
		Max:  ms(s[len(s)-1]),
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// errStop ends a closed loop or consumer without being a failure.
var errStop = errors.New("stop")

// stopped reports whether err only says that the run is over.
func stopped(err error) bool {
	return err == nil || errors.Is(err, errStop) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// closedLoop runs op back to back in conc goroutines until m's window ends or
// its cap is reached, timing every call into m. Worker w is passed to op so it
// can keep per-goroutine state. The context op receives is cancelled at the
// end of the window, so an op blocked on back-pressure returns; the first real
// error stops every goroutine and is returned.
func closedLoop(ctx context.Context, conc int, m *meter, op func(ctx context.Context, w int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		t := time.NewTimer(time.Until(m.to))
		defer t.Stop()
		select {
		case <-t.C:
			cancel()
		case <-ctx.Done():
		}
	}()
	return group(ctx, conc, func(ctx context.Context, w int) error {
		for !m.done() {
			start := time.Now()
			if err := op(ctx, w); err != nil {
				if ctx.Err() != nil && stopped(err) {
					return nil
				}
				return err
			}
			m.observe(start, time.Now())
		}
		cancel() // the cap was reached: release goroutines blocked in op
		return nil
	})
}

// group runs n copies of f and returns the first error that is not a plain
// stop; that error cancels the others.
func group(ctx context.Context, n int, f func(ctx context.Context, w int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(ctx, w); !stopped(err) {
				once.Do(func() { first = err; cancel() })
			}
		}()
	}
	wg.Wait()
	return first
}

// consumers runs n long-lived goroutines (dispatchers, workers) in the
// background until stop is called; stop returns their first real error.
type consumers struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

func startConsumers(ctx context.Context, n int, f func(ctx context.Context, w int) error) *consumers {
	ctx, cancel := context.WithCancel(ctx)
	c := &consumers{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.err = group(ctx, n, f)
	}()
	return c
}

// failed returns the consumers' error if they already stopped on one.
func (c *consumers) failed() error {
	select {
	case <-c.done:
		if c.err != nil {
			return c.err
		}
		return errors.New("consumers stopped early")
	default:
		return nil
	}
}

func (c *consumers) stop() error {
	c.cancel()
	<-c.done
	return c.err
}

// waitFor polls cond until it holds, the consumers fail or timeout passes; it
// names what it waited for in the error, so a hang in the provider reads as a
// precise report rather than a stuck benchmark.
func waitFor(ctx context.Context, failed func() error, timeout time.Duration, what string, cond func() (bool, string)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return nil
		}
		if failed != nil {
			if err := failed(); err != nil {
				return err
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not done after %v (%s)", what, timeout, state)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (%s)", what, ctx.Err(), state)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// tickets bounds the items in flight between producers and consumers: a
// producer takes one before it enqueues, the consumer returns it when the item
// is done. Without it a closed-loop producer buries the consumers under an
// ever-growing backlog, and the measure becomes the backlog's cost.
type tickets chan struct{}

func (t tickets) take(ctx context.Context) error {
	select {
	case t <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (t tickets) give() {
	select {
	case <-t:
	default: // more gives than takes would be a double delivery: counted elsewhere
	}
}

// paced calls send at a steady rate until m's window ends; a late tick is sent
// at once rather than skipped, so the offered load stays what was asked.
func paced(ctx context.Context, rate float64, m *meter, send func(ctx context.Context) error) error {
	interval := time.Duration(float64(time.Second) / rate)
	next := time.Now()
	for time.Now().Before(m.to) {
		if d := time.Until(next); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := send(ctx); err != nil {
			return err
		}
		next = next.Add(interval)
	}
	return nil
}

// base is the origin of payload timestamps. A monotonic offset from it, not
// wall-clock time, so a clock step during a run cannot produce negative
// latencies; producer and consumer share the process, hence the clock.
var base = time.Now()

// stampLen is the length of the timestamp prefix of a payload.
const stampLen = 16

// payload returns size bytes (at least stampLen) that start with the time
// now, in hex: valid in a JSON string, a task payload or an orchestration
// input alike.
func payload(size int) string {
	stamp := fmt.Sprintf("%016x", int64(time.Since(base)))
	if size <= stampLen {
		return stamp
	}
	return stamp + strings.Repeat("x", size-stampLen)
}

// sentAt reads the timestamp a payload carries.
func sentAt(p string) (time.Time, error) {
	if len(p) < stampLen {
		return time.Time{}, fmt.Errorf("payload %q carries no timestamp", p)
	}
	ns, err := strconv.ParseInt(p[:stampLen], 16, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("payload %q carries no timestamp: %w", p[:stampLen], err)
	}
	return base.Add(time.Duration(ns)), nil
}

// seen detects double deliveries and losses: every item id must be completed
// exactly once.
type seen struct {
	mu  sync.Mutex
	ids map[string]struct{}
	dup []string
}

func newSeen() *seen { return &seen{ids: make(map[string]struct{})} }

// add records id and reports false when it was already there.
func (s *seen) add(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.ids[id]; ok {
		if len(s.dup) < 5 {
			s.dup = append(s.dup, id)
		}
		return false
	}
	s.ids[id] = struct{}{}
	return true
}

// check returns an error when an id was delivered twice.
func (s *seen) check(what string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.dup) > 0 {
		return fmt.Errorf("%s delivered twice (with no lock expiry, a provider bug): %s", what, strings.Join(s.dup, ", "))
	}
	return nil
}

// sibling returns a meter with the same window, for the other side of a
// producer/consumer point (producers time their loop on it, consumers count
// on the original).
func (m *meter) sibling() *meter { return &meter{from: m.from, to: m.to} }

// sink is where consumers report finished items: it counts them once, gives
// their ticket back and records their latency from the payload's timestamp.
type sink struct {
	t    tickets // nil when the producer is paced
	m    *meter
	seen *seen
	n    atomic.Int64
	each func(at time.Time) // optional: told of every counted completion
}

// complete reports item id, sent at sent, done at at. A second report of the
// same id is a double delivery: remembered for the check, not counted.
func (s *sink) complete(id string, sent, at time.Time) {
	if !s.seen.add(id) {
		return
	}
	s.n.Add(1)
	s.t.give()
	s.m.record(at.Sub(sent), at)
	if s.each != nil {
		s.each(at)
	}
}

// flow describes a producer/consumer point: the shape of the activity round
// trip, the dispatch-latency run and their asynq counterparts alike, so ours
// and the peer's are measured by the same code.
type flow struct {
	label  string
	conc   int           // producers in a closed loop, each holding a ticket per item
	rate   float64       // > 0: a single producer paced at this rate instead
	window time.Duration // measured window (0: -duration)
	// inflight is the tickets per producer (0: -inflight)
	inflight int
	// enqueue sends one item whose payload carries its send time. It gets a
	// context that is not cancelled at the window's end: an enqueue cut off
	// mid-flight could not be known to have happened or not, and the exact
	// count is what catches lost or doubled items.
	enqueue func(ctx context.Context) error
	// consume starts the consumers, which report to s; stop ends them and
	// returns their error, failed reports one while they run.
	consume func(ctx context.Context, s *sink) (stop func() error, failed func() error, err error)
	record  func(m *meter, s *sink, k counts)
}

// runFlow measures one producer/consumer point, then drains: every enqueued
// item must complete exactly once, or the point fails with the counts.
func (e *env) runFlow(ctx context.Context, f flow) error {
	window := e.opts.Duration
	if f.window > 0 {
		window = f.window
	}
	m := newMeter(e.opts.Warmup, window, 0)
	s := &sink{m: m, seen: newSeen()}
	if f.rate <= 0 {
		per := e.opts.InFlight
		if f.inflight > 0 {
			per = f.inflight
		}
		s.t = make(tickets, f.conc*per)
	}
	stopConsumers, failed, err := f.consume(ctx, s)
	if err != nil {
		return err
	}
	var enq atomic.Int64
	send := func(ctx context.Context) error {
		if err := f.enqueue(context.WithoutCancel(ctx)); err != nil {
			return fmt.Errorf("enqueue: %w", err)
		}
		enq.Add(1)
		return nil
	}
	err = e.measure(ctx, f.label, m, func(ctx context.Context) error {
		var err error
		if f.rate > 0 {
			err = paced(ctx, f.rate, m, send)
		} else {
			err = closedLoop(ctx, f.conc, m.sibling(), func(ctx context.Context, w int) error {
				if err := s.t.take(ctx); err != nil {
					return err
				}
				return send(ctx)
			})
		}
		if err != nil {
			return err
		}
		return waitFor(ctx, failed, 30*time.Second, f.label+": draining", func() (bool, string) {
			return s.n.Load() >= enq.Load(), fmt.Sprintf("%d of %d enqueued items completed", s.n.Load(), enq.Load())
		})
	}, func(k counts) { f.record(m, s, k) })
	if stopErr := stopConsumers(); err == nil && !stopped(stopErr) {
		err = stopErr
	}
	if err == nil {
		err = s.seen.check(f.label + ": item")
	}
	if err == nil && s.n.Load() != enq.Load() {
		err = fmt.Errorf("%s: %d items enqueued but %d completed", f.label, enq.Load(), s.n.Load())
	}
	return err
}
