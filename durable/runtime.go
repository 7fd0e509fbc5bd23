package durable

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Runtime runs orchestrations and activities from a Registry against a
// provider: OrchestrationConcurrency dispatcher goroutines take orchestration
// turns, WorkerConcurrency goroutines run activities, and a session manager
// keeps this runtime's sessions alive. Create it with NewRuntime and stop it
// with Shutdown.
type Runtime struct {
	p       duroxide.Provider
	reg     *Registry
	opts    Options
	id      string
	client  *Client
	filter  duroxide.DispatcherCapabilityFilter
	support duroxide.SemverRange
	outage  outage // logs a storage outage in a few lines

	ctx    context.Context // cancelled by Shutdown: stops fetching
	stop   context.CancelFunc
	work   context.Context // cancelled when the shutdown deadline passes
	abort  context.CancelFunc
	wg     sync.WaitGroup
	closed sync.Once

	cache *instanceCache

	execs    *executionIDs // the executions parentExecution answers with
	sessions *sessionTracker
	inflight inflightSet // the turns and activities running, for Shutdown

	schedWake chan struct{}                // WakeScheduler's signal
	schedHook atomic.Pointer[scheduleHook] // tests' stops between claim and confirm
}

// NewRuntime validates the options and starts the dispatchers. The registry
// must not change afterwards.
func NewRuntime(p duroxide.Provider, reg *Registry, opts Options) (*Runtime, error) {
	rt, err := newRuntime(p, reg, opts)
	if err != nil {
		return nil, err
	}
	rt.startDispatchers()
	return rt, nil
}

// newRuntime builds a runtime without starting its goroutines.
func newRuntime(p duroxide.Provider, reg *Registry, opts Options) (*Runtime, error) {
	const op = "new_runtime"
	if p == nil || reg == nil {
		return nil, invalidInput(op, "provider and registry are required")
	}
	opts = opts.withDefaults()
	if err := opts.WorkerTagFilter.Validate(); err != nil {
		return nil, invalidInput(op, "worker tag filter: %v", err)
	}
	// A session's idle clock is reset by its activities' lock renewals; an
	// idle timeout not above the renewal interval could expire a session
	// whose activity is still running (duroxide refuses it at startup too).
	if renew := renewalInterval(opts.WorkerLockTimeout, opts.WorkerLockRenewalBuffer); opts.SessionIdleTimeout <= renew {
		return nil, invalidInput(op, "SessionIdleTimeout %v must exceed the worker lock renewal interval %v (from WorkerLockTimeout %v and WorkerLockRenewalBuffer %v)",
			opts.SessionIdleTimeout, renew, opts.WorkerLockTimeout, opts.WorkerLockRenewalBuffer)
	}
	support, err := supportedRange(opts.SupportedReplayVersions)
	if err != nil {
		return nil, invalidInput(op, "%v", err)
	}
	rt := &Runtime{
		p: p, reg: reg, opts: opts, id: randomID(), client: &Client{p: p, maxPayload: opts.maxPayloadBytes},
		support: support, filter: duroxide.DispatcherCapabilityFilter{SupportedDuroxideVersions: []duroxide.SemverRange{support}},
		execs: newExecutionIDs(maxRememberedExecutions), sessions: newSessionTracker(), schedWake: make(chan struct{}, 1),
		cache: newInstanceCache(opts.InstanceCacheEntries, opts.InstanceCacheBytes, opts.OrchestratorLockTimeout),
	}
	rt.client.wake = rt.WakeScheduler
	base := stickyContext(context.Background(), p, rt.id, opts, rt.cache.enabled())
	rt.ctx, rt.stop = context.WithCancel(base)
	rt.work, rt.abort = context.WithCancel(base)
	return rt, nil
}

// supportedRange is the runtime's replay range: the configured one, or
// every version up to this build's duroxide version.
func supportedRange(r *duroxide.SemverRange) (duroxide.SemverRange, error) {
	if r != nil {
		if r.Min == nil || r.Max == nil {
			return duroxide.SemverRange{}, errors.New("SupportedReplayVersions needs both bounds")
		}
		return *r, nil
	}
	max, err := semver.NewVersion(duroxide.CurrentDuroxideVersion)
	if err != nil {
		return duroxide.SemverRange{}, err
	}
	return duroxide.SemverRange{Min: semver.MustParse("0.0.0"), Max: max}, nil
}

func randomID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Client returns a client on the runtime's provider.
func (r *Runtime) Client() *Client { return r.client }

// ID is the random id of this runtime, part of its worker ids.
func (r *Runtime) ID() string { return r.id }

// Shutdown stops fetching new work and waits for in-flight turns and
// activities to finish. When ctx ends first, in-flight activities see their
// context cancelled and what has not finished is handed back: each
// unfinished turn and activity is abandoned without counting an attempt
// (fetched again, here or elsewhere), or, when the abandon fails, its lock
// is left to expire. Shutdown then returns as soon as the abandons are
// answered (at most handBackTimeout, 250ms, after ctx's end), with a
// *ShutdownError listing that work (also logged at Error), which errors.Is
// classifies as ctx's error (context.DeadlineExceeded for a deadline). It
// does not wait for the goroutines of that work: code that ignores its
// context (an activity, or orchestration code blocked outside its context)
// cannot be stopped, and runs on after Shutdown returns, its outcome
// dropped.
func (r *Runtime) Shutdown(ctx context.Context) error {
	r.closed.Do(r.stop)
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(done)
	}()
	defer r.cache.stop()
	select {
	case <-done:
		r.abort()
		return nil
	case <-ctx.Done():
	}
	r.abort()
	err := &ShutdownError{Err: ctx.Err(), Abandoned: r.handBack()}
	if len(err.Abandoned) > 0 {
		r.opts.Logger.Error("durable: shutdown ended before in-flight work; handed it back", "error", err.Error())
	}
	return err
}

// CacheStats reports the instance cache's hits, misses, evictions and size.
func (r *Runtime) CacheStats() CacheStats { return r.cache.snapshot() }

func (r *Runtime) startDispatchers() {
	// duroxide declares its capability at startup; Debug here, since a plain
	// run logs nothing at Info.
	r.opts.Logger.Debug("durable: runtime started", "runtime", r.id,
		"supported_replay_versions", ">="+r.support.Min.String()+" <="+r.support.Max.String(),
		"orchestration_concurrency", r.opts.OrchestrationConcurrency, "worker_concurrency", r.opts.WorkerConcurrency)
	for i := 0; i < r.opts.OrchestrationConcurrency; i++ {
		r.goLoop(func() { r.orchestrationLoop(i) })
	}
	for i := 0; i < r.opts.WorkerConcurrency; i++ {
		r.goLoop(func() { r.workerLoop(i) })
	}
	r.goLoop(r.sessionManager)
	r.goLoop(r.schedulerLoop)
}

func (r *Runtime) goLoop(fn func()) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		fn()
	}()
}

// backoff waits after a failed fetch: retryable errors back off
// exponentially (200ms doubling to 3s, as duroxide), permanent ones 100ms.
// It reports false when the runtime is stopping.
func (r *Runtime) backoff(err error, consecutive *int) bool {
	d := 100 * time.Millisecond
	if duroxide.IsRetryable(err) {
		*consecutive++
		d = min(100*time.Millisecond<<min(*consecutive, 5), 3*time.Second)
		r.outage.failed(r.opts.Logger, err)
	} else {
		*consecutive = 0
		r.opts.Logger.Warn("durable: fetch failed", "error", err, "backoff", d)
	}
	return r.sleep(d)
}

// sleep waits d unless the runtime stops first.
func (r *Runtime) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// renewalInterval is duroxide's lock renewal period: timeout minus buffer
// for long locks, half the timeout (at least 1s) for short ones.
func renewalInterval(lockTimeout, buffer time.Duration) time.Duration {
	if lockTimeout >= 15*time.Second {
		return max(lockTimeout-min(buffer, lockTimeout), time.Second)
	}
	half := time.Duration(math.Ceil(lockTimeout.Seconds()*0.5)) * time.Second
	return max(half, time.Second)
}

// startRenewal calls renew every interval on its own goroutine until the
// returned stop is called or the lock is lost (then onLost runs). stop waits
// for the goroutine, so no renewal outlives the work it protects.
//
// A retryable failure does not mean the lock is lost: a renewal whose reply
// came too late (Redis busy writing a large value for longer than the
// client's read timeout) may well have applied, and the lock still has time
// left. It is retried, soon and then less often, for as long as the lock
// taken lockTimeout after the last renewal that applied can still be held;
// a lost lock, a permanent error, or retries that outlast that deadline
// end the renewal.
func startRenewal(parent context.Context, interval, lockTimeout time.Duration, renew func(context.Context) error, onLost func(error)) (stop func()) {
	ctx, cancel := context.WithCancel(parent)
	done := make(chan struct{})
	go func() {
		defer close(done)
		held := time.Now().Add(lockTimeout) // the fetch took it just before
		t := time.NewTimer(interval)
		defer t.Stop()
		retry := renewalRetryDelay
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			err := renew(ctx)
			switch {
			case err == nil:
				held = time.Now().Add(lockTimeout)
				retry = renewalRetryDelay
				t.Reset(interval)
				continue
			case ctx.Err() != nil:
				return
			case duroxide.IsRetryable(err) && !isLockLost(err) && time.Until(held) > retry:
				t.Reset(retry)
				retry = min(retry*2, interval)
				continue
			}
			onLost(err)
			return
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// renewalRetryDelay is the first wait before a renewal that failed
// transiently is tried again; it doubles up to the renewal interval.
const renewalRetryDelay = 100 * time.Millisecond

// rememberExecution records the execution a turn of instance ran and
// whether the turn ended the instance, for parentExecution.
func (r *Runtime) rememberExecution(instance string, id uint64, ended bool) {
	r.execs.remember(instance, id, ended)
}

// parentExecution is the execution id a child's completion is addressed to:
// the one this runtime last ran for the parent, else the first (duroxide's
// get_execution_id_for_instance).
func (r *Runtime) parentExecution(instance string) uint64 { return r.execs.lookup(instance) }
