// Package durabletest runs a durable.Runtime on an embedded miniredis for
// tests, the way httptest runs an HTTP server: one call gives a running
// runtime and client, cleaned up when the test ends, and a clock the test
// can move forward so durable timers fire without real sleeps.
//
//	env := durabletest.Start(t, reg)
//	st := env.StartAndWait(t, "order-1", "ProcessOrder", `{"id":1}`)
//	if st.Status != durable.StatusCompleted { ... }
package durabletest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// DefaultWaitTimeout bounds StartAndWait and Wait.
const DefaultWaitTimeout = 30 * time.Second

// Env is a running runtime on an embedded Redis.
type Env struct {
	Runtime  *durable.Runtime
	Client   *durable.Client
	Provider *redisprovider.Provider
	Redis    *miniredis.Miniredis

	rdb    *redis.Client
	mu     sync.Mutex
	offset time.Duration
	stop   chan struct{}
	done   chan struct{}
}

// Option adjusts the environment.
type Option func(*config)

type config struct {
	opts durable.Options
	wrap func(duroxide.Provider) duroxide.Provider
}

// WithOptions sets the runtime options (Clock is always the environment's).
func WithOptions(o durable.Options) Option { return func(c *config) { c.opts = o } }

// WithProviderWrapper puts wrap between the runtime and the Redis provider,
// for fault injection: the runtime and its client see wrap's result, while
// Env.Provider stays the real provider.
func WithProviderWrapper(wrap func(duroxide.Provider) duroxide.Provider) Option {
	return func(c *config) { c.wrap = wrap }
}

// Start starts miniredis, the Redis provider and a runtime for reg, and
// registers their shutdown with t.Cleanup. Unless WithOptions says
// otherwise, fetches poll for 100ms so shutdown is quick.
func Start(t testing.TB, reg *durable.Registry, options ...Option) *Env {
	t.Helper()
	cfg := config{opts: durable.Options{LongPollTimeout: 100 * time.Millisecond}}
	for _, o := range options {
		o(&cfg)
	}
	m := miniredis.RunT(t)
	e := &Env{Redis: m, stop: make(chan struct{}), done: make(chan struct{})}
	e.syncClock()
	go e.tickClock()
	e.rdb = redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
	p, err := redisprovider.New(context.Background(), redisprovider.Options{Client: e.rdb, Namespace: "durabletest"})
	if err != nil {
		t.Fatalf("durabletest: provider: %v", err)
	}
	e.Provider = p
	cfg.opts.Clock = e.Now
	var rp duroxide.Provider = p
	if cfg.wrap != nil {
		rp = cfg.wrap(p)
	}
	rt, err := durable.NewRuntime(rp, reg, cfg.opts)
	if err != nil {
		t.Fatalf("durabletest: runtime: %v", err)
	}
	e.Runtime, e.Client = rt, rt.Client()
	t.Cleanup(func() { e.close(t) })
	return e
}

// ShutdownGrace is how long cleanup lets in-flight activities finish before
// their contexts are cancelled and their work is handed back.
const ShutdownGrace = time.Second

func (e *Env) close(t testing.TB) {
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	if err := e.Runtime.Shutdown(ctx); err != nil {
		// Activities still running at the end of a test are normal (they
		// block until cancelled); the runtime has stopped all the same.
		t.Logf("durabletest: runtime shutdown: %v", err)
	}
	_ = e.Provider.Close()
	_ = e.rdb.Close()
	close(e.stop)
	<-e.done
}

// Now is the environment's clock: real time plus every Advance so far. The
// runtime (timer fire times, UtcNow) and Redis (TIME, which the provider
// uses for visibility and locks) both follow it.
func (e *Env) Now() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return time.Now().Add(e.offset)
}

// Advance moves the clock forward by d: timers due by then fire, delayed
// messages become visible and locks held longer than that expire. It wakes
// the runtime's blocked fetchers so they look again at once.
func (e *Env) Advance(d time.Duration) {
	e.mu.Lock()
	e.offset += d
	e.mu.Unlock()
	e.syncClock()
	e.wakeFetchers()
}

// syncClock sets Redis's clock to Now. miniredis's clock stands still once
// set, so tickClock keeps it moving with real time.
func (e *Env) syncClock() { e.Redis.SetTime(e.Now()) }

func (e *Env) tickClock() {
	defer close(e.done)
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
			e.syncClock()
		}
	}
}

// wakeFetchers sets the wake-up marker of every key a fetcher registered to
// be woken on, through the server so blocked BZPOPMINs return: each
// fetcher then runs its fetch script against the new time.
func (e *Env) wakeFetchers() {
	ctx := context.Background()
	keys, err := e.rdb.ZRange(ctx, e.Provider.Keys().WakeDue(), 0, -1).Result()
	if err != nil {
		return
	}
	for _, k := range keys {
		e.rdb.ZAdd(ctx, k, redis.Z{Score: 0, Member: "w"})
	}
}

// StartAndWait starts instance with a raw input and waits until it is
// terminal; it fails the test on any error or timeout.
func (e *Env) StartAndWait(t testing.TB, instance, name, input string, opts ...durable.OrchestrationOption) durable.OrchestrationStatus {
	t.Helper()
	if err := e.Client.StartOrchestration(context.Background(), instance, name, input, opts...); err != nil {
		t.Fatalf("durabletest: start %s: %v", instance, err)
	}
	return e.Wait(t, instance)
}

// Wait waits until instance is terminal and fails the test on timeout.
func (e *Env) Wait(t testing.TB, instance string) durable.OrchestrationStatus {
	t.Helper()
	st, err := e.Client.WaitForOrchestration(context.Background(), instance, DefaultWaitTimeout)
	if err != nil {
		t.Fatalf("durabletest: wait for %s: %v", instance, err)
	}
	return st
}
