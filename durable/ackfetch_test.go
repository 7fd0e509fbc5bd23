package durable_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// ackFault is what ackCounter does to the first ack-and-fetch calls.
type ackFault int

const (
	faultNone      ackFault = iota
	faultFetchHalf          // ack, then report the fetch half failed
	faultLostReply          // ack, then report a retryable error: applied, caller cannot tell
	faultNotSent            // report a retryable error, nothing applied
)

// ackCounter passes calls to the Redis provider, counting acks and
// ack-and-fetches, and keeps the optional interfaces visible; the first
// faults ack-and-fetch calls of each queue get fault instead of a reply.
type ackCounter struct {
	duroxide.Provider
	fault                        ackFault
	faultsLeft                   atomic.Int32
	orchAcks, orchAckFetches     atomic.Int32
	workAcks, workAckFetches     atomic.Int32
	orchFaults, workFaults, hits atomic.Int32
	// workAcked, when not nil, is signalled at every plain work ack: a
	// worker retries a failed ack a moment after the instance may already
	// have completed
	workAcked chan struct{}
}

func (c *ackCounter) AckOrchestrationItem(ctx context.Context, token string, commit duroxide.OrchestrationCommit) error {
	c.orchAcks.Add(1)
	return c.Provider.AckOrchestrationItem(ctx, token, commit)
}

func (c *ackCounter) AckWorkItem(ctx context.Context, token string, completion duroxide.WorkItem) error {
	defer func() {
		select {
		case c.workAcked <- struct{}{}:
		default:
		}
	}()
	c.workAcks.Add(1)
	return c.Provider.AckWorkItem(ctx, token, completion)
}

func (c *ackCounter) AckOrchestrationItemAndFetch(ctx context.Context, token string, commit duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	c.orchAckFetches.Add(1)
	if c.takeFault(&c.orchFaults) {
		return nil, c.inject("ack_orchestration_item", func() error { return c.Provider.AckOrchestrationItem(ctx, token, commit) })
	}
	return c.Provider.(duroxide.OrchestrationAckFetcher).AckOrchestrationItemAndFetch(ctx, token, commit, lockTimeout, pollTimeout, filter)
}

func (c *ackCounter) AckWorkItemAndFetch(ctx context.Context, token string, completion duroxide.WorkItem,
	lockTimeout, pollTimeout time.Duration, session *duroxide.SessionFetchConfig, tags duroxide.TagFilter) (*duroxide.LockedWorkItem, error) {
	c.workAckFetches.Add(1)
	if c.takeFault(&c.workFaults) {
		return nil, c.inject("ack_work_item", func() error { return c.Provider.AckWorkItem(ctx, token, completion) })
	}
	return c.Provider.(duroxide.WorkAckFetcher).AckWorkItemAndFetch(ctx, token, completion, lockTimeout, pollTimeout, session, tags)
}

// awaitWorkAcks waits (10 s at most) until n plain work acks were made.
func (c *ackCounter) awaitWorkAcks(t *testing.T, n int32) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for c.workAcks.Load() < n {
		select {
		case <-c.workAcked:
		case <-deadline:
			return // the caller's check reports the count
		}
	}
}

// takeFault reports whether this call of a queue gets the fault: the first
// faultsLeft calls of each queue do.
func (c *ackCounter) takeFault(n *atomic.Int32) bool {
	return c.fault != faultNone && n.Add(1) <= c.faultsLeft.Load()
}

// inject applies the fault to one call whose ack is ack.
func (c *ackCounter) inject(op string, ack func() error) error {
	c.hits.Add(1)
	if c.fault == faultNotSent {
		return duroxide.Retryable(op, "connection reset before the request was sent")
	}
	if err := ack(); err != nil {
		return err
	}
	if c.fault == faultFetchHalf {
		return &duroxide.FetchAfterAckError{Err: duroxide.Retryable("fetch", "connection reset after the ack")}
	}
	return duroxide.Retryable(op, "connection reset before the reply")
}

// fanOutEnv starts an Env whose runtime sees the provider through c, and a
// registry whose activity counts its runs per (instance, input).
func fanOutEnv(t *testing.T, c *ackCounter, runs *counts, opts ...durabletest.Option) *durabletest.Env {
	reg := durable.NewRegistry()
	reg.MustAddActivity("Inc", durable.Activity(func(ac *durable.ActivityContext, n int) (int, error) {
		runs.add(fmt.Sprint(ac.InstanceID(), "/", n))
		return n + 1, nil
	}))
	reg.MustAddOrchestration("Fan", durable.Orchestration(func(ctx *durable.OrchestrationContext, _ int) (int, error) {
		fs := make([]durable.Awaitable, 5)
		for i := range fs {
			fs[i] = durable.ScheduleActivity[int](ctx, "Inc", i)
		}
		ctx.Join(fs...)
		return 5, nil
	}))
	opts = append([]durabletest.Option{durabletest.WithOptions(ackFetchOptions)}, opts...)
	return durabletest.Start(t, reg, append(opts, durabletest.WithProviderWrapper(func(p duroxide.Provider) duroxide.Provider {
		c.Provider = p
		return c
	}))...)
}

// ackFetchOptions turn on the orchestrator's ack-and-fetch, which is opt-in.
var ackFetchOptions = durable.Options{LongPollTimeout: 100 * time.Millisecond}

// runFans starts n fan-out instances and waits for each to complete.
func runFans(t *testing.T, env *durabletest.Env, n int) {
	t.Helper()
	for i := range n {
		if err := env.Client.StartOrchestration(t.Context(), fmt.Sprint("fan-", i), "Fan", "0"); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		mustComplete(t, env.Wait(t, fmt.Sprint("fan-", i)), "5")
	}
}

// counts is a concurrent multiset of strings.
type counts struct {
	mu sync.Mutex
	m  map[string]int
}

func newCounts() *counts { return &counts{m: map[string]int{}} }

func (c *counts) add(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[key]++
}

func (c *counts) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.m {
		n += v
	}
	return n
}

// wantEach checks that instances*perInstance keys were counted, each want times.
func (c *counts) wantEach(t *testing.T, instances, perInstance, want int) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) != instances*perInstance {
		t.Errorf("%d distinct activities ran, want %d", len(c.m), instances*perInstance)
	}
	for k, v := range c.m {
		if v != want {
			t.Errorf("activity %s ran %d times, want %d", k, v, want)
		}
	}
}

func TestAckFetchCarriesEveryAckWhileRunning(t *testing.T) {
	t.Parallel()
	c, runs := &ackCounter{}, newCounts()
	env := fanOutEnv(t, c, runs, durabletest.WithAckFetch(true))
	runFans(t, env, 10)
	// Read before cleanup: a stopping runtime acks plainly by design.
	orch, orchAF, work, workAF := c.orchAcks.Load(), c.orchAckFetches.Load(), c.workAcks.Load(), c.workAckFetches.Load()
	if orch != 0 || work != 0 {
		t.Errorf("plain acks while running: %d orchestration, %d work; want every ack through ack-and-fetch", orch, work)
	}
	if orchAF < 10*2 || workAF != 50 {
		t.Errorf("ack-and-fetch calls: %d orchestration (want >= 20: two turns or more each), %d work (want 50)", orchAF, workAF)
	}
	runs.wantEach(t, 10, 5, 1)
}

func TestAckFetchHiddenByWithoutAckFetch(t *testing.T) {
	t.Parallel()
	c, runs := &ackCounter{}, newCounts()
	env := fanOutEnv(t, c, runs, durabletest.WithAckFetch(false))
	runFans(t, env, 5)
	if n := c.orchAckFetches.Load() + c.workAckFetches.Load(); n != 0 {
		t.Errorf("%d ack-and-fetch calls through a provider that hides them", n)
	}
	if c.orchAcks.Load() < 5*2 || c.workAcks.Load() != 25 {
		t.Errorf("plain acks: %d orchestration (want >= 10: two turns or more each), %d work (want 25)", c.orchAcks.Load(), c.workAcks.Load())
	}
	runs.wantEach(t, 5, 5, 1)
}

// runFaulty runs four fan-outs while the first three ack-and-fetch calls of
// each queue get fault.
func runFaulty(t *testing.T, fault ackFault) (*ackCounter, *counts) {
	c, runs := &ackCounter{fault: fault, workAcked: make(chan struct{}, 64)}, newCounts()
	c.faultsLeft.Store(3)
	runFans(t, fanOutEnv(t, c, runs, durabletest.WithAckFetch(true)), 4)
	if c.hits.Load() != 6 {
		t.Fatalf("%d faults injected, want 3 per queue", c.hits.Load())
	}
	return c, runs
}

func TestAckFetchFailedFetchHalfKeepsTheAck(t *testing.T) {
	t.Parallel()
	// The ack is durable: nothing is re-acked or rerun, and the slots go
	// back to plain fetches for the next work.
	c, runs := runFaulty(t, faultFetchHalf)
	if c.orchAcks.Load() != 0 || c.workAcks.Load() != 0 {
		t.Errorf("plain acks after a failed fetch half: %d orchestration, %d work; want none (the ack applied)",
			c.orchAcks.Load(), c.workAcks.Load())
	}
	runs.wantEach(t, 4, 5, 1)
}

func TestAckFetchLostReplyIsSettledByPlainAck(t *testing.T) {
	t.Parallel()
	// The ack applied but the caller got a retryable error: the plain
	// re-ack finds the lock gone, so the turn is not redone twice and no
	// activity runs again.
	c, runs := runFaulty(t, faultLostReply)
	c.awaitWorkAcks(t, 3)
	if c.workAcks.Load() != 3 {
		t.Errorf("%d plain work acks, want 3: one per lost reply, each finding the lock gone", c.workAcks.Load())
	}
	if c.orchAcks.Load() != 3 {
		t.Errorf("%d plain orchestration acks, want 3: one per lost reply, each finding the lock gone", c.orchAcks.Load())
	}
	runs.wantEach(t, 4, 5, 1)
}

func TestAckFetchUnsentAckIsRetriedPlainly(t *testing.T) {
	t.Parallel()
	// Nothing applied: the plain retries commit the turn and the
	// activity's result, so no activity runs again (a worker used to
	// abandon, and the activity ran twice).
	c, runs := runFaulty(t, faultNotSent)
	c.awaitWorkAcks(t, 3)
	if c.orchAcks.Load() != 3 || c.workAcks.Load() != 3 {
		t.Errorf("%d plain orchestration and %d plain work acks, want 3 each (one retry per unsent ack)", c.orchAcks.Load(), c.workAcks.Load())
	}
	runs.wantEach(t, 4, 5, 1)
}

// sessionRecorder records the session config of every worker
// ack-and-fetch, and signals stopped once a fetch ends by the runtime's
// shutdown.
type sessionRecorder struct {
	*ackCounter
	mu       sync.Mutex
	sessions []*duroxide.SessionFetchConfig
	stopOnce sync.Once
	stopped  chan struct{}
}

func (s *sessionRecorder) AckWorkItemAndFetch(ctx context.Context, token string, completion duroxide.WorkItem,
	lockTimeout, pollTimeout time.Duration, session *duroxide.SessionFetchConfig, tags duroxide.TagFilter) (*duroxide.LockedWorkItem, error) {
	s.mu.Lock()
	s.sessions = append(s.sessions, session)
	s.mu.Unlock()
	return s.ackCounter.AckWorkItemAndFetch(ctx, token, completion, lockTimeout, pollTimeout, session, tags)
}

func (s *sessionRecorder) FetchWorkItem(ctx context.Context, lockTimeout, pollTimeout time.Duration,
	session *duroxide.SessionFetchConfig, tags duroxide.TagFilter) (*duroxide.LockedWorkItem, error) {
	item, err := s.ackCounter.FetchWorkItem(ctx, lockTimeout, pollTimeout, session, tags)
	if ctx.Err() != nil {
		s.stopOnce.Do(func() { close(s.stopped) })
	}
	return item, err
}

func newSessionRecorder() *sessionRecorder {
	return &sessionRecorder{ackCounter: &ackCounter{}, stopped: make(chan struct{})}
}

func (s *sessionRecorder) wrap(p duroxide.Provider) duroxide.Provider {
	s.Provider = p
	return s
}

func TestAckFetchPassesTheSlotsSessionConfig(t *testing.T) {
	t.Parallel()
	rec, workers := newSessionRecorder(), newCounts()
	reg := durable.NewRegistry()
	reg.MustAddActivity("Echo", func(ac *durable.ActivityContext, in string) (string, error) {
		workers.add(ac.WorkerID())
		return in, nil
	})
	reg.MustAddOrchestration("Sessions", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		for i := range 6 {
			if _, err := ctx.ScheduleActivity("Echo", "x", durable.WithSession(fmt.Sprint("s-", i%2))).Get(); err != nil {
				return "", err
			}
		}
		return "done", nil
	})
	opts := durable.Options{LongPollTimeout: 100 * time.Millisecond, SessionLockTimeout: 7 * time.Second, WorkerConcurrency: 2}
	env := durabletest.Start(t, reg, durabletest.WithOptions(opts), durabletest.WithAckFetch(true),
		durabletest.WithProviderWrapper(rec.wrap))
	mustComplete(t, env.StartAndWait(t, "sess", "Sessions", ""), "done")
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.sessions) != 6 {
		t.Fatalf("%d worker ack-and-fetch calls, want 6", len(rec.sessions))
	}
	for _, s := range rec.sessions {
		// Without a node id a slot's owner is its worker id.
		if s == nil || s.LockTimeout != opts.SessionLockTimeout || workers.m[s.OwnerID] == 0 {
			t.Errorf("ack-and-fetch session config %+v, want a slot's owner (one of %v) and lock timeout %v", s, workers.m, opts.SessionLockTimeout)
		}
	}
}

func TestAckFetchNotUsedByAStoppingWorker(t *testing.T) {
	t.Parallel()
	// The activity finishes after Shutdown began: its completion is acked
	// plainly, so the stopping slot takes no new work.
	rec := newSessionRecorder()
	reg := durable.NewRegistry()
	started := make(chan struct{})
	reg.MustAddActivity("Wait", func(*durable.ActivityContext, string) (string, error) {
		close(started)
		<-rec.stopped
		return "late", nil
	})
	reg.MustAddOrchestration("One", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.ScheduleActivity("Wait", "").Get()
	})
	opts := durable.Options{LongPollTimeout: 5 * time.Second, WorkerConcurrency: 2}
	env := durabletest.Start(t, reg, durabletest.WithOptions(opts), durabletest.WithAckFetch(true),
		durabletest.WithProviderWrapper(rec.wrap))
	if err := env.Client.StartOrchestration(t.Context(), "one", "One", ""); err != nil {
		t.Fatal(err)
	}
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := env.Runtime.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if rec.workAckFetches.Load() != 0 || rec.workAcks.Load() != 1 {
		t.Errorf("stopping worker: %d ack-and-fetch, %d plain acks; want 0 and 1", rec.workAckFetches.Load(), rec.workAcks.Load())
	}
}

// TestPlainPathRepresentative runs a representative set of the suite with
// the provider's ack-and-fetch calls hidden, so both dispatcher paths stay
// covered by an ordinary test run (the rest of the suite runs on
// ack-and-fetch; DUROXIDE_ACK_FETCH=off runs all of it on the plain path).
func TestPlainPathRepresentative(t *testing.T) {
	t.Setenv(durabletest.EnvAckFetch, "off")
	for name, test := range map[string]func(*testing.T){
		"FanOutFanIn":         TestE2EFanOutFanIn,
		"ExternalEvent":       TestE2EExternalEvent,
		"SubOrchestration":    TestE2ESubOrchestration,
		"ContinueAsNew":       TestE2EContinueAsNew,
		"Retry":               TestE2ERetry,
		"SessionBasic":        TestSessionActivityBasicE2e,
		"SessionTwoSlots":     TestTwoSlotsServeSameSessionConcurrently,
		"SessionFanOut":       TestSessionFanOutFanIn,
		"SessionCap":          TestMaxSessionsPerRuntimeEnforced,
		"CancelParentToChild": TestCancelParentDownPropagatesToChild,
		"CancelActivity":      TestActivityReceivesCancellationSignal,
		"PoisonActivity":      TestE2eActivityItemPoisonFailsOrchestration,
		"PoisonOrchestration": TestE2eOrchestrationItemPoisonFailsOrchestration,
		"RecoveryRestart":     TestRecoveryAcrossRestart,
		"AckPathIsPlain":      testAckPathIsPlain,
	} {
		t.Run(name, test)
	}
}

// testAckPathIsPlain proves the environment switch took effect for the
// runs beside it.
func testAckPathIsPlain(t *testing.T) {
	c, runs := &ackCounter{}, newCounts()
	runFans(t, fanOutEnv(t, c, runs), 2)
	if n := c.orchAckFetches.Load() + c.workAckFetches.Load(); n != 0 || c.workAcks.Load() != 10 {
		t.Errorf("with %s=off: %d ack-and-fetch calls, %d plain work acks; want 0 and 10", durabletest.EnvAckFetch, n, c.workAcks.Load())
	}
}
