package chaos

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// scenario is one workload run against a redis-server of the test: a
// provider, the runtime driving it and the checker watching it.
type scenario struct {
	t     *testing.T
	srv   *redisServer
	ns    string
	cfg   Config
	ids   []string
	check *Checker
	p     *redisprovider.Provider
	r     *Runtime
	ctx   context.Context // bounds the run, not the verification

	quiet   chan struct{}  // closed when every instance completed: disturbances stop
	disturb sync.WaitGroup // running disturbances
}

// runScenario starts a runtime on namespace ns of srv and n instances of the
// workload. The run is bounded by 60 s.
func runScenario(t *testing.T, srv *redisServer, ns string, n int, cfg Config) *scenario {
	s := idleScenario(t, srv, ns, n, cfg)
	if err := s.r.StartInstances(s.ctx, s.ids); err != nil {
		t.Fatal(err)
	}
	return s
}

// idleScenario is runScenario without starting the instances.
func idleScenario(t *testing.T, srv *redisServer, ns string, n int, cfg Config) *scenario {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	s := &scenario{t: t, srv: srv, ns: ns, cfg: cfg, ids: instanceIDs(ns, n), check: NewChecker(cfg.LockTimeout), ctx: ctx,
		quiet: make(chan struct{})}
	s.p = newProvider(t, srv, ns)
	s.r = Start(s.p, cfg, s.check)
	t.Cleanup(s.r.Kill)
	return s
}

// waitCompletions waits until n instances completed.
func (s *scenario) waitCompletions(n int) {
	waitFor(s.t, s.ctx, "completions", func() bool { return s.check.Completed() >= n })
}

// crash kills the runtime and its provider at once, as a process crash does,
// and starts a new process (provider and runtime, fault stream seed) on the
// same namespace.
func (s *scenario) crash(seed int64) {
	s.r.Kill()
	_ = s.p.Close()
	s.t.Logf("process crashed after %d completions; %s", s.check.Completed(), s.r.Summary())
	s.cfg.Seed = seed
	s.p = newProvider(s.t, s.srv, s.ns)
	s.r = Start(s.p, s.cfg, s.check)
	s.t.Cleanup(s.r.Kill)
}

// disturbEvery runs fault every interval in the background until every
// instance completed, and returns a function that reports how many times
// it succeeded (valid once await returned).
func (s *scenario) disturbEvery(interval time.Duration, fault func(ctx context.Context) error) func() int {
	var n atomic.Int64
	s.disturb.Add(1)
	go func() {
		defer s.disturb.Done()
		for {
			select {
			case <-s.quiet:
				return
			case <-s.ctx.Done():
				return
			case <-time.After(interval):
			}
			if fault(s.ctx) == nil {
				n.Add(1)
			}
		}
	}()
	return func() int { return int(n.Load()) }
}

// await waits for every instance to complete (logging what Redis holds for
// those that do not) and stops the disturbances; the runtime keeps running.
func (s *scenario) await() {
	s.t.Helper()
	err := s.check.WaitCompleted(s.ctx, s.p, s.ids)
	close(s.quiet)
	s.disturb.Wait()
	if err != nil {
		s.t.Error(err)
		dumpStuck(s.t, s.srv.Client(), s.p.Keys(), s.check, s.ids)
	}
}

// verify stops the runtime and checks every invariant on what is stored,
// with a context of its own.
func (s *scenario) verify() {
	s.t.Helper()
	s.r.Kill()
	s.t.Log(s.r.Summary())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	report(s.t, s.check, s.check.Verify(ctx, s.p, s.ids, s.cfg.FanOut))
	assertDrained(s.t, ctx, s.p, s.cfg.LockTimeout)
}

// finish is await then verify.
func (s *scenario) finish() {
	s.t.Helper()
	s.await()
	s.verify()
}
