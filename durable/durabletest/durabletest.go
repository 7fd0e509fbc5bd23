// Package durabletest runs a durable.Runtime for tests, the way httptest
// runs an HTTP server: one call gives a running runtime and client, cleaned
// up when the test ends. By default it runs on an embedded miniredis whose
// clock moves without real sleeps: while the test waits through the Env
// (Wait, StartAndWait, WaitForEventSubscription, WaitForTimer) and nothing
// can run but a timer is pending, the clock skips to that timer, as in
// Temporal's test environment (WithTimeSkipping), and Advance moves it by
// hand. WithBackend and Each run
// the same test on a real Redis or Redis Cluster named by the environment
// (see Backends).
//
//	env := durabletest.Start(t, reg)
//	charge := env.MockActivity("ChargeCard", durable.Activity(fakeCharge))
//	st := env.StartAndWait(t, "order-1", "ProcessOrder", `{"id":1}`) // its day-long timer fires at once
//	if st.Status != durable.StatusCompleted || charge.Calls() != 1 { ... }
//
// An external event raised before the orchestration subscribes to it is
// kept in history but never delivered (duroxide's rule), so a test raises
// it after WaitForEventSubscription; WaitForTimer returns once a timer is
// created, for tests that Advance past it.
package durabletest

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/internal/redistest"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// DefaultWaitTimeout bounds StartAndWait and Wait.
const DefaultWaitTimeout = 30 * time.Second

// Env is a running runtime on a Redis backend.
type Env struct {
	Runtime *durable.Runtime
	Client  *durable.Client
	// Provider is the namespace's provider: one partition unless the
	// Backend says more.
	Provider *redisprovider.Provider
	// Backend is the server the Env runs on.
	Backend Backend
	// Redis is the embedded server on the Miniredis backend, nil on real
	// servers.
	Redis *miniredis.Miniredis

	t      testing.TB
	plain  bool              // runtimes get the provider without ack-and-fetch
	noSkip bool              // Wait does not skip time (WithTimeSkipping(false))
	reg    *durable.Registry // the Env's runtime's copy of the test's registry
	rtp    duroxide.Provider // what the Env's runtime sees of Provider (wrapped, plain)
	rdb    redis.UniversalClient
	mu     sync.Mutex
	offset time.Duration
	skipMu sync.Mutex // one time skip at a time
	// holds are the running waits' checks of the state they wait for; no
	// skip while one reports it (skipTo). Guarded by skipMu.
	holds map[*func() bool]func() bool
	// skipChecks counts the idle checks of time skipping, for tests that
	// must know skipping had its chance.
	skipChecks atomic.Int64
	stop       chan struct{}
	done       chan struct{}
	// runtimes are the Env's runtimes, whose schedulers Advance wakes.
	runtimes []*durable.Runtime
}

// Option adjusts the environment.
type Option func(*config)

type config struct {
	opts    durable.Options
	wrap    func(duroxide.Provider) duroxide.Provider
	plain   bool // hide the provider's ack-and-fetch calls
	noSkip  bool // no time skipping in Wait
	backend Backend
}

// WithOptions sets the runtime options. Without a Clock in o the runtime
// reads the environment's (Now); with one, the runtime reads o.Clock, say a
// frozen instant that makes timer fire times and UTCNow readings known in
// advance, while Redis, Advance and time skipping keep the environment's
// clock.
func WithOptions(o durable.Options) Option { return func(c *config) { c.opts = o } }

// WithProviderWrapper puts wrap between the runtime and the Redis provider,
// for fault injection: the runtime and its client see wrap's result, while
// Env.Provider stays the real provider.
func WithProviderWrapper(wrap func(duroxide.Provider) duroxide.Provider) Option {
	return func(c *config) { c.wrap = wrap }
}

// Start connects to the backend (a new embedded miniredis unless
// WithBackend says otherwise), creates a Redis provider in a fresh namespace
// and a runtime for reg, and registers their shutdown (and the namespace's
// deletion) with t.Cleanup. Unless WithOptions says otherwise, fetches poll
// for 100ms so shutdown is quick.
//
// The runtime runs on a copy of reg (durable.Registry.Clone), so that
// MockActivity changes this Env only and reg can be shared by parallel
// tests; register everything on reg before Start.
func Start(t testing.TB, reg *durable.Registry, options ...Option) *Env {
	t.Helper()
	cfg := config{opts: durable.Options{LongPollTimeout: 100 * time.Millisecond}, backend: Miniredis(), plain: ackFetchOff()}
	for _, o := range options {
		o(&cfg)
	}
	e := &Env{t: t, Backend: cfg.backend, noSkip: cfg.noSkip, reg: reg.Clone(), stop: make(chan struct{}), done: make(chan struct{})}
	e.rdb, e.Redis = cfg.backend.connect(t)
	if e.Redis != nil {
		e.syncClock()
		go e.tickClock()
	} else {
		close(e.done)
	}
	p, err := redisprovider.New(context.Background(), redisprovider.Options{
		Client: e.rdb, Namespace: "durabletest-" + uuid.NewString(), Partitions: max(cfg.backend.Partitions, 1)})
	if err != nil {
		e.closeClock()
		_ = e.rdb.Close()
		t.Fatalf("durabletest: provider on %s: %v", cfg.backend.Name, err)
	}
	e.Provider, e.plain, e.rtp = p, cfg.plain, cfg.runtimeProvider(p)
	e.Runtime = e.newRuntime(e.rtp, e.reg, cfg.opts)
	e.Client = e.Runtime.Client()
	t.Cleanup(func() { e.close(t) })
	return e
}

// NewRuntime starts another runtime for reg on the Env's provider and clock
// (another node of the same deployment), shut down when the test ends,
// before the Env's own runtime.
func (e *Env) NewRuntime(t testing.TB, reg *durable.Registry, opts durable.Options) *durable.Runtime {
	t.Helper()
	var p duroxide.Provider = e.Provider
	if e.plain {
		p = plain(p)
	}
	rt := e.newRuntime(p, reg, opts)
	t.Cleanup(func() { shutdown(t, rt) })
	return rt
}

// Restart shuts the Env's runtime down and starts a new one for reg with
// opts (as WithOptions) in its place, on the same provider and clock: a
// process restart, or a deployment of new code. Env.Runtime and Env.Client
// are the new runtime's; like Start, it runs on a copy of reg, so mocks of
// the old registry do not carry over.
func (e *Env) Restart(t testing.TB, reg *durable.Registry, opts durable.Options) {
	t.Helper()
	shutdown(t, e.Runtime)
	e.reg = reg.Clone()
	e.Runtime = e.newRuntime(e.rtp, e.reg, opts)
	e.Client = e.Runtime.Client()
}

func (e *Env) newRuntime(p duroxide.Provider, reg *durable.Registry, opts durable.Options) *durable.Runtime {
	e.t.Helper()
	opts = EnvOptions(opts)
	if opts.Clock == nil {
		opts.Clock = e.Now
	}
	rt, err := durable.NewRuntime(p, reg, opts)
	if err != nil {
		e.t.Fatalf("durabletest: runtime: %v", err)
	}
	e.mu.Lock()
	e.runtimes = append(e.runtimes, rt)
	e.mu.Unlock()
	return rt
}

// ShutdownGrace is how long cleanup lets in-flight activities finish before
// their contexts are cancelled and their work is handed back.
const ShutdownGrace = time.Second

func shutdown(t testing.TB, rt *durable.Runtime) {
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		// Activities still running at the end of a test are normal (they
		// block until cancelled); the runtime has stopped all the same.
		t.Logf("durabletest: runtime shutdown: %v", err)
	}
}

func (e *Env) close(t testing.TB) {
	shutdown(t, e.Runtime)
	// Closed before the keys go: a fetch the provider still has waiting
	// would write its registration again after the deletion.
	_ = e.Provider.Close()
	if e.Redis == nil { // a shared server keeps only what other tests wrote
		prefixes := []string{e.Provider.Keys().Prefix()}
		for i := range e.Provider.Partitions() {
			prefixes = append(prefixes, e.Provider.PartitionKeys(i).Prefix())
		}
		for _, prefix := range slices.Compact(prefixes) {
			if err := redistest.DropPrefix(context.Background(), e.rdb, prefix); err != nil {
				t.Logf("durabletest: deleting namespace %s: %v", prefix, err)
			}
		}
	}
	_ = e.rdb.Close()
	e.closeClock()
}

func (e *Env) closeClock() {
	close(e.stop)
	<-e.done
}

// StartAndWait starts instance with a raw input and waits until it is
// terminal, skipping time as Wait does; it fails the test on any error or
// timeout.
func (e *Env) StartAndWait(t testing.TB, instance, name, input string, opts ...durable.OrchestrationOption) durable.OrchestrationStatus {
	t.Helper()
	if err := e.Client.StartOrchestration(context.Background(), instance, name, input, opts...); err != nil {
		t.Fatalf("durabletest: start %s: %v", instance, err)
	}
	return e.Wait(t, instance)
}

// Wait waits until instance is terminal and fails the test on timeout.
// While it waits, time skips ahead whenever nothing can run but a timer is
// pending (see WithTimeSkipping), so durable timers fire without Advance.
func (e *Env) Wait(t testing.TB, instance string) durable.OrchestrationStatus {
	t.Helper()
	var (
		st  durable.OrchestrationStatus
		err error
	)
	e.waitSkipping(func() {
		st, err = e.Client.WaitForOrchestration(context.Background(), instance, DefaultWaitTimeout)
	})
	if err != nil {
		t.Fatalf("durabletest: wait for %s: %v", instance, err)
	}
	return st
}
