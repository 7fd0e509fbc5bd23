package providertest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Concurrency (duroxide docs/provider-implementation-guide.md checklist
// "Concurrency"; provider_validation named tests
// provider_validation::instance_locking::test_concurrent_instance_fetching,
// provider_validation::atomicity::test_concurrent_ack_prevention,
// provider_validation::lock_expiration::test_concurrent_lock_attempts_respect_expiration,
// provider_validation::instance_locking::test_multi_threaded_lock_contention;
// duroxide src/providers/sqlite.rs): many goroutines on one provider never
// process an instance or item under two valid locks, and every message is
// processed exactly once despite abandons and lock expiries.

// init registers the Concurrency section.
func init() { register("Concurrency", runConcurrency) }

// Sizing of the concurrency tests: each stress test stays well under 10 s on
// miniredis with -race.
const (
	ccGoroutines  = 8                      // concurrent fetchers / dispatchers / workers
	ccInstances   = 20                     // instances of the orchestrator stress
	ccProducers   = 4                      // concurrent producers of the stress tests
	ccPerProducer = 60                     // messages (items) per producer
	ccPoll        = 200 * time.Millisecond // pollTimeout of stress fetches
	ccMargin      = 100 * time.Millisecond // clock allowance of the lock checks
	ccRunLimit    = 60 * time.Second       // a stress run that needs longer has lost work
	ccQuiet       = 10 * time.Second       // no fetch for this long: the rest is stuck or lost
	ccSeedEnv     = "PROVIDERTEST_SEED"    // replays a stress run
)

// runConcurrency runs the concurrency cases.
func runConcurrency(t *testing.T, h Harness) {
	runCases(t, h, []envCase{
		{"ConcurrentInstanceFetching", ccInstanceFetching},
		{"ConcurrentWorkItemFetching", ccWorkItemFetching},
		{"ConcurrentFetchSameInstance", ccFetchSameInstance},
		{"ConcurrentLockAttemptsRespectExpiration", ccOrchExpiration},
		{"ConcurrentWorkLockAttemptsRespectExpiration", ccWorkExpiration},
		{"ConcurrentAckPrevention", ccOrchAckPrevention},
		{"ConcurrentWorkAckPrevention", ccWorkAckPrevention},
		{"MessagesFloodDuringLock", ccFloodDuringLock},
		{"OrchestratorQueueStress", ccOrchStress},
		{"WorkerQueueStress", ccWorkStress},
	})
}

// ---- focused races ----------------------------------------------------------

// ccInstanceFetching proves concurrent fetchers draining many instances get
// each instance exactly once
// (provider_validation::instance_locking::test_concurrent_instance_fetching;
// duroxide docs/provider-implementation-guide.md "Instance locks don't block
// other instances").
func ccInstanceFetching(e *env) {
	want := ccStartMany(e, "cc-fetch", 20)
	got := ccDrain(e, func() (string, error) {
		item, err := e.p.FetchOrchestrationItem(e.ctx, longLock, 0, nil)
		if err != nil || item == nil {
			return "", err
		}
		return item.Instance, nil
	})
	ccWantOnce(e.t, got, want)
	e.noFetch(nil)
}

// ccWorkItemFetching proves concurrent workers draining the worker queue get
// each item exactly once.
func ccWorkItemFetching(e *env) {
	var want []string
	for i := range 20 {
		id := fmt.Sprintf("cc-work-%02d", i)
		e.enqueueWork(activity(id, 1))
		want = append(want, id)
	}
	got := ccDrain(e, func() (string, error) {
		w, err := e.p.FetchWorkItem(e.ctx, longLock, 0, nil, duroxide.DefaultOnly())
		if err != nil || w == nil {
			return "", err
		}
		return w.Item.InstanceID(), nil
	})
	ccWantOnce(e.t, got, want)
	e.noWork(duroxide.AnyTag())
}

// ccStartMany enqueues a StartOrchestration for n instances named prefix-i.
func ccStartMany(e *env, prefix string, n int) []string {
	var ids []string
	for i := range n {
		id := fmt.Sprintf("%s-%02d", prefix, i)
		e.enqueue(startItem(id, "Orch"), 0)
		ids = append(ids, id)
	}
	return ids
}

// ccDrain runs ccGoroutines fetchers that call fetch until it returns ""
// and returns what they got; a fetch error fails the test.
func ccDrain(e *env, fetch func() (string, error)) []string {
	e.t.Helper()
	got := make([][]string, ccGoroutines)
	errs := make([]error, ccGoroutines)
	together(ccGoroutines, func(i int) {
		for {
			id, err := fetch()
			if err != nil || id == "" {
				errs[i] = err
				return
			}
			got[i] = append(got[i], id)
		}
	})
	if err := errors.Join(errs...); err != nil {
		e.t.Fatalf("concurrent fetch: %v", err)
	}
	return slices.Concat(got...)
}

// ccWantOnce asserts got holds every id of want exactly once and nothing
// else.
func ccWantOnce(t *testing.T, got, want []string) {
	t.Helper()
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Fatalf("concurrent fetchers got %v, want each of %v exactly once", g, w)
	}
}

// ccFetchSameInstance proves that when several dispatchers fetch the same
// available instance at the same moment exactly one gets it (duroxide
// src/providers/sqlite.rs, "Concurrent Fetch of Same Instance"), round after
// round.
func ccFetchSameInstance(e *env) {
	for round := range 10 {
		id := fmt.Sprintf("cc-same-%d", round)
		e.enqueue(startItem(id, "Orch"), 0)
		won := race(e, ccGoroutines, func() (*duroxide.OrchestrationItem, error) {
			return e.p.FetchOrchestrationItem(e.ctx, longLock, 0, nil)
		})
		if len(won) != 1 || won[0].Instance != id {
			e.t.Fatalf("round %d: %d fetchers got an item, want exactly one with %q", round, len(won), id)
		}
	}
}

// ccOrchExpiration proves that once a lock expired, of several dispatchers
// racing for the instance exactly one gets it (attempt 2), the old holder's ack
// then fails with a lock_token error and the winner's ack commits (duroxide
// src/providers/sqlite.rs;
// provider_validation::lock_expiration::test_concurrent_lock_attempts_respect_expiration).
func ccOrchExpiration(e *env) {
	e.start("cc-exp", nil)
	ccRaise(e, "cc-exp", "m")
	old := e.mustFetch(shortLock)
	e.wait(afterShort)
	won := race(e, ccGoroutines, func() (*duroxide.OrchestrationItem, error) {
		return e.p.FetchOrchestrationItem(e.ctx, longLock, 0, nil)
	})
	if len(won) != 1 || won[0].Instance != "cc-exp" || won[0].AttemptCount != 2 {
		e.t.Fatalf("%d dispatchers reclaimed the expired instance, want exactly one at attempt 2", len(won))
	}
	err := e.p.AckOrchestrationItem(e.ctx, old.LockToken, ccCommit(old, "old"))
	wantPermanent(e.t, err, duroxide.ErrLockLost, "ack_orchestration_item", "lock_token")
	e.ack(won[0].LockToken, ccCommit(won[0], "new"))
	ccWantExternals(e, "cc-exp", "new")
}

// ccWorkExpiration proves the same for the worker queue: exactly one worker
// reclaims an item whose lock expired, the old token's ack fails, and only
// the winner's completion reaches the orchestrator queue.
func ccWorkExpiration(e *env) {
	e.enqueueWork(activity("cc-wexp", 1))
	old := e.mustFetchWork(shortLock, duroxide.DefaultOnly())
	e.wait(afterShort)
	won := race(e, ccGoroutines, func() (*duroxide.LockedWorkItem, error) {
		return e.p.FetchWorkItem(e.ctx, longLock, 0, nil, duroxide.DefaultOnly())
	})
	if len(won) != 1 || won[0].AttemptCount != 2 {
		e.t.Fatalf("%d workers reclaimed the expired item, want exactly one at attempt 2", len(won))
	}
	err := e.p.AckWorkItem(e.ctx, old.LockToken, completed("cc-wexp", 1))
	wantPermanent(e.t, err, duroxide.ErrLockLost, "ack_work_item", "lock_token")
	if err := e.p.AckWorkItem(e.ctx, won[0].LockToken, completed("cc-wexp", 1)); err != nil {
		e.t.Fatalf("AckWorkItem by the reclaimer: %v", err)
	}
	ccWantCompletions(e, map[string]int{"cc-wexp#1": 1})
}

// ccOrchAckPrevention proves that of several concurrent acks with the same
// token exactly one commits; the others fail with a lock_token error and the
// history holds the delta once
// (provider_validation::atomicity::test_concurrent_ack_prevention).
func ccOrchAckPrevention(e *env) {
	e.start("cc-ack", nil)
	ccRaise(e, "cc-ack", "m")
	item := e.mustFetch(longLock)
	errs := make([]error, ccGoroutines)
	together(ccGoroutines, func(i int) {
		errs[i] = e.p.AckOrchestrationItem(e.ctx, item.LockToken, ccCommit(item, "m"))
	})
	ccWantOneSuccess(e.t, errs, "ack_orchestration_item")
	ccWantExternals(e, "cc-ack", "m")
	e.noFetch(nil)
}

// ccWorkAckPrevention proves that of several concurrent AckWorkItem calls
// with the same token exactly one succeeds and exactly one completion is
// delivered.
func ccWorkAckPrevention(e *env) {
	e.enqueueWork(activity("cc-wack", 1))
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	errs := make([]error, ccGoroutines)
	together(ccGoroutines, func(i int) {
		errs[i] = e.p.AckWorkItem(e.ctx, w.LockToken, completed("cc-wack", 1))
	})
	ccWantOneSuccess(e.t, errs, "ack_work_item")
	ccWantCompletions(e, map[string]int{"cc-wack#1": 1})
}

// ccWantOneSuccess asserts exactly one error is nil and the others are
// permanent lock_token errors of op.
func ccWantOneSuccess(t *testing.T, errs []error, op string) {
	t.Helper()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else if p := permanentProblem(err, duroxide.ErrLockLost, op, "lock_token"); p != "" {
			t.Fatalf("losing concurrent %s: %s", op, p)
		}
	}
	if ok != 1 {
		t.Fatalf("%d concurrent %s calls with one token succeeded, want exactly 1", ok, op)
	}
}

// ccFloodDuringLock proves messages enqueued concurrently while an instance is
// locked are invisible to other dispatchers, survive the ack of the fetched
// batch, and all arrive in the next batch, each once and in enqueue order per
// producer (duroxide src/providers/sqlite.rs).
func ccFloodDuringLock(e *env) {
	e.start("cc-flood", nil)
	ccRaise(e, "cc-flood", "first")
	item := e.mustFetch(longLock)
	errs := make([]error, ccGoroutines+1)
	stolen := make(chan string, 1)
	together(ccGoroutines+1, func(i int) {
		if i == ccGoroutines { // a rival dispatcher during the flood
			errs[i] = ccRival(e, stolen)
			return
		}
		for n := range 10 {
			data := fmt.Sprintf("p%d-%02d", i, n)
			errs[i] = errors.Join(errs[i], e.p.EnqueueForOrchestrator(e.ctx,
				duroxide.ExternalRaised{Instance: "cc-flood", Name: "ev", Data: data}, 0))
		}
	})
	if err := errors.Join(errs...); err != nil {
		e.t.Fatal(err)
	}
	if len(stolen) > 0 {
		e.t.Fatalf("a rival dispatcher fetched %q while it was locked", <-stolen)
	}
	e.ack(item.LockToken, ccCommit(item, "first"))
	ccWantExternals(e, "cc-flood", "first")
	next := e.mustFetch(longLock)
	ccWantFlood(e.t, next)
}

// ccRival fetches repeatedly while the flood runs; any item it gets is
// reported on stolen.
func ccRival(e *env, stolen chan<- string) error {
	for range 20 {
		item, err := e.p.FetchOrchestrationItem(e.ctx, longLock, 0, nil)
		if err != nil {
			return err
		}
		if item != nil {
			stolen <- item.Instance
			return nil
		}
		time.Sleep(2 * time.Millisecond) // sleep: spreads the rival's 20 tries over the flood; any moment may be the one a lock leaks
	}
	return nil
}

// ccWantFlood asserts the batch holds the ccGoroutines x 10 flood messages,
// each once, every producer's in its order.
func ccWantFlood(t *testing.T, item *duroxide.OrchestrationItem) {
	t.Helper()
	last := map[string]string{}
	for _, m := range item.Messages {
		x, ok := m.(duroxide.ExternalRaised)
		if !ok {
			t.Fatalf("batch holds %T, want only the flood's ExternalRaised", m)
		}
		p := x.Data[:strings.Index(x.Data, "-")]
		if x.Data <= last[p] {
			t.Fatalf("message %q after %q: a producer's messages are out of enqueue order or repeated", x.Data, last[p])
		}
		last[p] = x.Data
	}
	if len(item.Messages) != ccGoroutines*10 {
		t.Fatalf("batch after the ack holds %d messages, want %d", len(item.Messages), ccGoroutines*10)
	}
}

// ccRaise enqueues an ExternalRaised carrying data for instance.
func ccRaise(e *env, instance, data string) {
	e.t.Helper()
	e.enqueue(duroxide.ExternalRaised{Instance: instance, Name: "ev", Data: data}, 0)
}

// ccCommit is the turn recording data as ExternalEvent events after the
// fetched history, one per element.
func ccCommit(item *duroxide.OrchestrationItem, data ...string) duroxide.OrchestrationCommit {
	next := uint64(1)
	if n := len(item.History); n > 0 {
		next = item.History[n-1].EventID + 1
	}
	c := duroxide.OrchestrationCommit{ExecutionID: item.ExecutionID}
	for i, d := range data {
		c.HistoryDelta = append(c.HistoryDelta, event(next+uint64(i), item.Instance, item.ExecutionID,
			duroxide.ExternalEventEvent{Name: "ev", Data: d}))
	}
	return c
}

// ccWantExternals asserts the history of instance is OrchestrationStarted
// followed by ExternalEvent events carrying data, with event ids 1..n.
func ccWantExternals(e *env, instance string, data ...string) {
	e.t.Helper()
	if got := ccExternals(e.t, e.read(instance, 0)); !slices.Equal(got, data) {
		e.t.Fatalf("history of %q carries %v, want %v", instance, got, data)
	}
}

// ccExternals checks that hist is OrchestrationStarted then ExternalEvent
// events with event ids 1..n and returns their data.
func ccExternals(t *testing.T, hist []duroxide.Event) []string {
	t.Helper()
	out := []string{}
	for i, ev := range hist {
		if ev.EventID != uint64(i+1) {
			t.Fatalf("event at position %d has id %d, want %d", i, ev.EventID, i+1)
		}
		if i == 0 {
			if _, ok := ev.Kind.(duroxide.OrchestrationStartedEvent); !ok {
				t.Fatalf("first event is %T, want OrchestrationStarted", ev.Kind)
			}
			continue
		}
		x, ok := ev.Kind.(duroxide.ExternalEventEvent)
		if !ok {
			t.Fatalf("event %d is %T, want ExternalEvent", ev.EventID, ev.Kind)
		}
		out = append(out, x.Data)
	}
	if len(hist) == 0 {
		t.Fatal("history is empty, want OrchestrationStarted first")
	}
	return out
}

// ccWantCompletions drains the orchestrator queue (acking every batch with
// an empty commit) and asserts it held exactly want ActivityCompleted
// messages per "<instance>#<id>" and nothing else.
func ccWantCompletions(e *env, want map[string]int) {
	e.t.Helper()
	got := map[string]int{}
	for {
		item := e.fetch(longLock, nil)
		if item == nil {
			break
		}
		for _, m := range item.Messages {
			c, ok := m.(duroxide.ActivityCompleted)
			if !ok {
				e.t.Fatalf("orchestrator queue holds %T, want only ActivityCompleted", m)
			}
			got[fmt.Sprintf("%s#%d", c.Instance, c.ID)]++
		}
		e.ack(item.LockToken, duroxide.OrchestrationCommit{ExecutionID: item.ExecutionID})
	}
	for k, n := range want {
		if got[k] != n {
			e.t.Errorf("completion %s delivered %d times, want %d", k, got[k], n)
		}
	}
	for k, n := range got {
		if want[k] == 0 {
			e.t.Errorf("unexpected completion %s delivered %d times", k, n)
		}
	}
}

// ---- randomized stress --------------------------------------------------------

// ccSeed returns the seed of a stress run (PROVIDERTEST_SEED when set, else the
// clock) and logs it so a failure can be replayed.
func ccSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(ccSeedEnv); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", ccSeedEnv, s, err)
		}
		seed = v
	}
	t.Logf("stress seed %d (replay with %s=%d)", seed, ccSeedEnv, seed)
	return seed
}

// ccMsg is one message (orchestrator stress) or item (worker stress) a
// producer sends.
type ccMsg struct {
	key      string // unique payload, the message's identity
	owner    string // what a fetch locks to get it: its instance, or the item itself
	instance string
	id       uint64        // worker stress: activity id
	producer int           // producer index
	seq      int           // position in the producer's enqueue order
	delay    time.Duration // orchestrator stress: enqueue delay
	pause    time.Duration // producer's pause after sending it
}

// ccPlan lays out each producer's messages from the seed; mk fills in the key,
// owner, instance and id of message seq of producer p.
func ccPlan(seed uint64, mk func(rng *rand.Rand, m *ccMsg)) [][]ccMsg {
	plan := make([][]ccMsg, ccProducers)
	for p := range plan {
		rng := rand.New(rand.NewPCG(seed, uint64(p)))
		for seq := range ccPerProducer {
			m := ccMsg{producer: p, seq: seq}
			mk(rng, &m)
			m.pause = time.Duration(rng.IntN(10)) * time.Millisecond
			plan[p] = append(plan[p], m)
		}
	}
	return plan
}

// ccHold is one successful fetch and what its holder did with it.
type ccHold struct {
	key     string       // what the fetch locked: instance or item
	msgs    []string     // keys of the fetched messages, in batch order
	seen    []string     // orchestrator stress: data of the fetched history's ExternalEvent events
	fetchAt [2]time.Time // fetch call started, returned
	opAt    [2]time.Time // ack / abandon call started, returned
	op      string       // "ack", "abandon" or "late ack" (after sleeping past the lock)
	ok      bool         // the ack / abandon succeeded
}

// commits reports whether the hold's messages were committed.
func (h *ccHold) commits() bool { return h.ok && h.op != "abandon" }

// ccLease is a fetched unit of work: its record and how to finish it.
type ccLease struct {
	hold             *ccHold
	ackOp, abandonOp string
	ack              func() error
	abandon          func(delay time.Duration, ignoreAttempt bool) error
}

// ccStress is one randomized stress run.
type ccStress struct {
	e     *env
	seed  uint64
	plan  [][]ccMsg
	byKey map[string]ccMsg
	send  func(m ccMsg) error
	fetch func(ctx context.Context) (*ccLease, error) // nil lease: no work

	mu     sync.Mutex
	holds  []*ccHold
	acked  map[string]int // commits per message key
	active time.Time      // last activity
}

// newCCStress plans a run; send and fetch are set by the caller.
func newCCStress(e *env, mk func(rng *rand.Rand, m *ccMsg)) *ccStress {
	s := &ccStress{e: e, seed: ccSeed(e.t), byKey: map[string]ccMsg{}, acked: map[string]int{}}
	s.plan = ccPlan(s.seed, mk)
	for _, msgs := range s.plan {
		for _, m := range msgs {
			s.byKey[m.key] = m
		}
	}
	return s
}

// record stores a finished hold.
func (s *ccStress) record(h *ccHold) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holds = append(s.holds, h)
	s.active = time.Now()
	if h.commits() {
		for _, k := range h.msgs {
			s.acked[k]++
		}
	}
}

// committed returns how many distinct messages are committed.
func (s *ccStress) committed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.acked)
}

// run starts the dispatchers, lets the producers send their plan
// concurrently, and stops once every message is committed, or when nothing
// was fetched for ccQuiet (work is stuck or lost), the run limit passed, or
// the test failed. verify then reports what went wrong.
func (s *ccStress) run() {
	t := s.e.t
	ctx, cancel := context.WithCancel(s.e.ctx)
	defer cancel()
	var dispatchers sync.WaitGroup
	for i := range ccGoroutines {
		dispatchers.Add(1)
		rng := rand.New(rand.NewPCG(s.seed, uint64(1000+i)))
		go func() {
			defer dispatchers.Done()
			s.dispatch(ctx, rng)
		}()
	}
	together(len(s.plan), func(p int) { s.produce(s.plan[p]) })
	s.touch()
	deadline := time.Now().Add(ccRunLimit)
	for s.committed() < len(s.byKey) && time.Now().Before(deadline) && s.quiet() < ccQuiet && !t.Failed() {
		time.Sleep(20 * time.Millisecond) // sleep: the poll interval of a wait on several ends (all committed, quiet, the limit, a failure)
	}
	cancel()
	dispatchers.Wait()
	t.Logf("%d messages; fetches: %s", len(s.byKey), s.summary())
}

// touch records activity now.
func (s *ccStress) touch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active = time.Now()
}

// quiet is the time since the last activity (a finished hold, or the
// producers' end).
func (s *ccStress) quiet() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Since(s.active)
}

// summary counts the holds by outcome, to show what a run exercised.
func (s *ccStress) summary() string {
	n := map[string]int{}
	for _, h := range s.holds {
		n[fmt.Sprintf("%s ok=%v", h.op, h.ok)]++
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(n)) {
		parts = append(parts, fmt.Sprintf("%s: %d", k, n[k]))
	}
	return strings.Join(parts, ", ")
}

// produce sends one producer's messages in order.
func (s *ccStress) produce(msgs []ccMsg) {
	for _, m := range msgs {
		if err := s.send(m); err != nil {
			s.e.t.Errorf("enqueue %s: %v", m.key, err)
			return
		}
		time.Sleep(m.pause) // sleep: the plan's pacing, so sends interleave with fetches, acks and abandons
	}
}

// dispatch fetches and finishes leases until ctx ends.
func (s *ccStress) dispatch(ctx context.Context, rng *rand.Rand) {
	for {
		start := time.Now()
		l, err := s.fetch(ctx)
		end := time.Now()
		if err != nil {
			if ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
				s.e.t.Errorf("fetch: %v", err)
			}
			return
		}
		if l == nil {
			if ctx.Err() != nil {
				return
			}
			continue
		}
		l.hold.fetchAt = [2]time.Time{start, end}
		s.checkBatch(l.hold)
		ccFinish(s.e.t, rng, l)
		s.record(l.hold)
	}
}

// checkBatch checks a fetched batch: only messages that were sent, to what was
// locked, none twice, each producer's in its enqueue order (duroxide.Provider
// docs "Order").
func (s *ccStress) checkBatch(h *ccHold) {
	last := map[int]int{}
	for _, k := range h.msgs {
		m, ok := s.byKey[k]
		switch {
		case !ok:
			s.e.t.Errorf("fetch of %s returned message %q that no producer sent", h.key, k)
		case m.owner != h.key:
			s.e.t.Errorf("fetch of %s returned message %q of %s", h.key, k, m.owner)
		case m.seq < last[m.producer]:
			s.e.t.Errorf("batch of %s: %q is repeated or out of enqueue order", h.key, k)
		}
		last[m.producer] = m.seq + 1
	}
}

// ccFinish does what a random dispatcher would with a lease: abandon it
// (with or without delay and ignoreAttempt), sleep past its lock and ack
// (which must fail), or ack it; a failed call must be a lock_token error.
func ccFinish(t *testing.T, rng *rand.Rand, l *ccLease) {
	h := l.hold
	op := l.ackOp
	var err error
	switch n := rng.IntN(100); {
	case n < 12:
		var delay time.Duration
		if rng.IntN(2) == 0 {
			delay = time.Duration(1+rng.IntN(100)) * time.Millisecond
		}
		ignore := rng.IntN(2) == 0
		h.op, op = "abandon", l.abandonOp
		h.opAt[0] = time.Now()
		err = l.abandon(delay, ignore)
	case n < 20:
		// sleep: the lease's lock must expire on the provider's clock;
		// Advance would expire every other dispatcher's lease with it
		time.Sleep(afterShort)
		h.op = "late ack"
		h.opAt[0] = time.Now()
		if err = l.ack(); err == nil {
			t.Errorf("%s of %s succeeded after its lock expired; an expired lock must fail", op, h.key)
		}
	default:
		time.Sleep(time.Duration(rng.IntN(10)) * time.Millisecond) // sleep: a random hold, as work takes, so the dispatchers' leases overlap
		h.op = "ack"
		h.opAt[0] = time.Now()
		err = l.ack()
	}
	h.opAt[1] = time.Now()
	h.ok = err == nil
	if err != nil {
		if p := permanentProblem(err, duroxide.ErrLockLost, op, "lock_token"); p != "" {
			t.Errorf("%s of %s: %s", h.op, h.key, p)
		}
	}
}

// verify runs the checks every stress run shares: lock exclusivity, every
// message committed exactly once, nothing redelivered after its commit.
func (s *ccStress) verify() {
	var problems []string
	byKey := map[string][]*ccHold{}
	for _, h := range s.holds {
		byKey[h.key] = append(byKey[h.key], h)
	}
	for _, hs := range byKey {
		for _, a := range hs {
			problems = append(problems, ccCheckAlone(a)...)
			for _, b := range hs {
				if a != b {
					problems = append(problems, ccCheckPair(a, b)...)
				}
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.byKey)) {
		if n := s.acked[k]; n != 1 {
			problems = append(problems, fmt.Sprintf("message %s committed %d times, want exactly once (lost, or a failed commit that was kept)", k, n))
		}
	}
	ccReport(s.e.t, problems)
}

// ccReport fails the test with the first problems found.
func ccReport(t *testing.T, problems []string) {
	t.Helper()
	for i, p := range problems {
		if i == 10 {
			t.Errorf("... and %d more problems", len(problems)-10)
			break
		}
		t.Error(p)
	}
	if len(problems) > 0 {
		t.FailNow()
	}
}

// ccCheckAlone checks one hold against its own lock (duroxide.Provider docs:
// ack with an expired lock fails; a valid lock's ack and abandon succeed).
// Times are client times; the lock was taken by the
// server between fetchAt[0] and fetchAt[1], so it surely lasted until
// fetchAt[0]+shortLock and surely ended by fetchAt[1]+shortLock (ccMargin
// absorbs clock rounding).
func ccCheckAlone(a *ccHold) []string {
	var out []string
	if !a.ok && a.opAt[1].Before(a.fetchAt[0].Add(shortLock-ccMargin)) {
		out = append(out, fmt.Sprintf("%s of %s failed %v after its fetch started, while its lock was surely valid",
			a.op, a.key, a.opAt[1].Sub(a.fetchAt[0])))
	}
	if a.ok && a.op != "abandon" && a.opAt[0].After(a.fetchAt[1].Add(shortLock+ccMargin)) {
		out = append(out, fmt.Sprintf("%s of %s succeeded %v after its fetch returned, with its lock surely expired",
			a.op, a.key, a.opAt[0].Sub(a.fetchAt[1])))
	}
	return out
}

// ccCheckPair checks that b, fetched surely after a, did not take what a surely
// still held (a's lock valid and not released: two holders), and that a did not
// ack or abandon successfully after b had taken it (duroxide
// src/providers/sqlite.rs).
func ccCheckPair(a, b *ccHold) []string {
	if b.fetchAt[0].Before(a.fetchAt[1]) {
		return nil // order unknown or b first: checked as the pair (b, a)
	}
	var out []string
	held := a.fetchAt[0].Add(shortLock - ccMargin)
	if a.ok && a.opAt[0].Before(held) {
		held = a.opAt[0]
	}
	if b.fetchAt[1].Before(held) {
		out = append(out, fmt.Sprintf("two holders of %s: a fetch returned %v after another one while that lock was valid and unreleased",
			a.key, b.fetchAt[1].Sub(a.fetchAt[1])))
	}
	if a.ok && a.opAt[0].After(b.fetchAt[1]) {
		out = append(out, fmt.Sprintf("%s of %s succeeded after another fetch had taken it", a.op, a.key))
	}
	return out
}

// checkRedelivery asserts no committed message was fetched again after its
// commit returned.
func (s *ccStress) checkRedelivery() {
	var problems []string
	for _, a := range s.holds {
		if !a.commits() {
			continue
		}
		for _, b := range s.holds {
			if b.key != a.key || !b.fetchAt[0].After(a.opAt[1]) {
				continue
			}
			for _, k := range b.msgs {
				if slices.Contains(a.msgs, k) {
					problems = append(problems, fmt.Sprintf("message %s fetched again after its commit", k))
				}
			}
		}
	}
	ccReport(s.e.t, problems)
}

// ccOrchStress is the randomized orchestrator-queue stress: producers send
// unique ExternalRaised messages to ccInstances started instances while
// dispatchers fetch with a short lock and randomly abandon, let the lock
// expire before acking, or ack the batch as ExternalEvent events. Every
// message must be committed exactly once, no instance held by two valid
// locks, no ack of a lost lock succeed, and each instance's final history
// hold exactly the committed batches, each right after the history its
// holder fetched.
func ccOrchStress(e *env) {
	s := newCCStress(e, func(rng *rand.Rand, m *ccMsg) {
		m.instance = ccInstance(rng.IntN(ccInstances))
		m.owner = m.instance
		m.key = fmt.Sprintf("%s/p%d/%03d", m.instance, m.producer, m.seq)
		if rng.IntN(10) == 0 {
			m.delay = time.Duration(1+rng.IntN(150)) * time.Millisecond
		}
	})
	for i := range ccInstances {
		e.start(ccInstance(i), nil)
	}
	s.send = func(m ccMsg) error {
		return e.p.EnqueueForOrchestrator(e.ctx, duroxide.ExternalRaised{Instance: m.instance, Name: "ev", Data: m.key}, m.delay)
	}
	s.fetch = s.orchLease
	s.run()
	s.verify()
	s.checkRedelivery()
	s.checkHistories()
	e.noFetch(nil)
}

// ccInstance names instance i of the orchestrator stress.
func ccInstance(i int) string { return fmt.Sprintf("cc-i%02d", i) }

// orchLease fetches an orchestration item as a lease whose ack records the
// batch as ExternalEvent events after the fetched history.
func (s *ccStress) orchLease(ctx context.Context) (*ccLease, error) {
	p := s.e.p
	item, err := p.FetchOrchestrationItem(ctx, shortLock, ccPoll, nil)
	if err != nil || item == nil {
		return nil, err
	}
	if item.HistoryError != "" {
		return nil, fmt.Errorf("history of %s: %s", item.Instance, item.HistoryError)
	}
	h := &ccHold{key: item.Instance, seen: []string{}}
	for _, m := range item.Messages {
		x, ok := m.(duroxide.ExternalRaised)
		if !ok {
			return nil, fmt.Errorf("fetched %T for %s, want only ExternalRaised", m, item.Instance)
		}
		h.msgs = append(h.msgs, x.Data)
	}
	for _, ev := range item.History {
		if x, ok := ev.Kind.(duroxide.ExternalEventEvent); ok {
			h.seen = append(h.seen, x.Data)
		}
	}
	commit := ccCommit(item, h.msgs...)
	return &ccLease{
		hold: h, ackOp: "ack_orchestration_item", abandonOp: "abandon_orchestration_item",
		ack: func() error { return p.AckOrchestrationItem(s.e.ctx, item.LockToken, commit) },
		abandon: func(d time.Duration, ignore bool) error {
			return p.AbandonOrchestrationItem(s.e.ctx, item.LockToken, d, ignore)
		},
	}, nil
}

// checkHistories asserts each instance's final history holds exactly the
// messages sent to it, each committed batch right after the history its
// holder fetched, and every fetched history a prefix of the final one.
func (s *ccStress) checkHistories() {
	t := s.e.t
	sent := map[string][]string{}
	for k, m := range s.byKey {
		sent[m.instance] = append(sent[m.instance], k)
	}
	final := map[string][]string{}
	for i := range ccInstances {
		inst := ccInstance(i)
		final[inst] = ccExternals(t, s.e.read(inst, 0))
		got, want := slices.Sorted(slices.Values(final[inst])), slices.Sorted(slices.Values(sent[inst]))
		if !slices.Equal(got, want) {
			t.Errorf("history of %s holds %d messages, want exactly the %d sent to it", inst, len(got), len(want))
		}
	}
	var problems []string
	for _, h := range s.holds {
		f := final[h.key]
		if len(h.seen) > len(f) || !slices.Equal(f[:len(h.seen)], h.seen) {
			problems = append(problems, fmt.Sprintf("a fetch of %s saw a history that is not a prefix of the final one", h.key))
			continue
		}
		if end := len(h.seen) + len(h.msgs); h.commits() && (end > len(f) || !slices.Equal(f[len(h.seen):end], h.msgs)) {
			problems = append(problems, fmt.Sprintf("committed batch %v of %s is not right after the history its holder fetched", h.msgs, h.key))
		}
	}
	ccReport(t, problems)
}

// ccWorkStress is the randomized worker-queue stress: producers enqueue
// unique activities while workers fetch with a short lock and randomly
// abandon, let the lock expire before acking, or ack with an
// ActivityCompleted. Every item must be completed exactly once (counted by
// draining the orchestrator queue), no item held by two valid locks, and no
// ack of a lost lock succeed.
func ccWorkStress(e *env) {
	s := newCCStress(e, func(rng *rand.Rand, m *ccMsg) {
		m.instance = fmt.Sprintf("cc-w%d", rng.IntN(5))
		m.id = uint64(m.producer*1000 + m.seq + 1)
		m.key = fmt.Sprintf("%s#%d", m.instance, m.id)
		m.owner = m.key
	})
	s.send = func(m ccMsg) error {
		return e.p.EnqueueForWorker(e.ctx, duroxide.ActivityExecute{
			Instance: m.instance, ExecutionID: 1, ID: m.id, Name: "Act", Input: strconv.Quote(m.key)})
	}
	s.fetch = s.workLease
	s.run()
	s.verify()
	s.checkRedelivery()
	want := map[string]int{}
	for k := range s.byKey {
		want[k] = 1
	}
	ccWantCompletions(e, want)
	e.noWork(duroxide.AnyTag())
}

// workLease fetches a worker item as a lease whose ack completes it.
func (s *ccStress) workLease(ctx context.Context) (*ccLease, error) {
	p := s.e.p
	w, err := p.FetchWorkItem(ctx, shortLock, ccPoll, nil, duroxide.DefaultOnly())
	if err != nil || w == nil {
		return nil, err
	}
	a, ok := w.Item.(duroxide.ActivityExecute)
	if !ok {
		return nil, fmt.Errorf("fetched %T, want ActivityExecute", w.Item)
	}
	key := fmt.Sprintf("%s#%d", a.Instance, a.ID)
	done := duroxide.ActivityCompleted{Instance: a.Instance, ExecutionID: a.ExecutionID, ID: a.ID, Result: `"ok"`}
	return &ccLease{
		hold: &ccHold{key: key, msgs: []string{key}}, ackOp: "ack_work_item", abandonOp: "abandon_work_item",
		ack: func() error { return p.AckWorkItem(s.e.ctx, w.LockToken, done) },
		abandon: func(d time.Duration, ignore bool) error {
			return p.AbandonWorkItem(s.e.ctx, w.LockToken, d, ignore)
		},
	}, nil
}
