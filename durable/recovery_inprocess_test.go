package durable_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// severable stands between a runtime and its provider until Sever: from
// then on every dispatcher call hangs, as if the runtime's process had
// frozen or its network had gone, until the test ends (Release), and then
// fails without reaching the provider, or until Reconnect, and then goes
// through as if the process had woken up. The runtime's goroutines stay
// blocked with their locks held and do not write meanwhile.
type severable struct {
	duroxide.Provider
	released chan struct{}

	mu      sync.Mutex
	cut     chan struct{} // non-nil while severed; closed by Reconnect
	active  int           // calls let through and not yet returned
	drained *sync.Cond    // on mu: signalled when active drops to 0
}

func newSeverable(p duroxide.Provider) *severable {
	s := &severable{Provider: p, released: make(chan struct{})}
	s.drained = sync.NewCond(&s.mu)
	return s
}

// Sever cuts the runtime off and waits for the calls already let through
// to return: a fetch long-polling at that moment may still take a lock, and
// it must be taken before the test moves the clock past every lock.
func (s *severable) Sever() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cut == nil {
		s.cut = make(chan struct{})
	}
	for s.active > 0 {
		s.drained.Wait()
	}
}

// Reconnect ends a Sever: hung calls, and new ones, reach the provider.
func (s *severable) Reconnect() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cut != nil {
		close(s.cut)
		s.cut = nil
	}
}

// Release lets hung calls return (with an error) so the runtime can shut down.
func (s *severable) Release() {
	s.mu.Lock()
	if s.cut == nil {
		s.cut = make(chan struct{})
	}
	s.mu.Unlock()
	close(s.released)
}

// call runs fn while connected; while severed it waits for ctx, Release
// (and returns an error instead) or Reconnect.
func (s *severable) call(ctx context.Context, op string, fn func() error) error {
	s.mu.Lock()
	for s.cut != nil {
		cut := s.cut
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.released:
			return duroxide.Retryable(op, "severed from its provider")
		case <-cut:
		}
		s.mu.Lock()
	}
	s.active++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.active--; s.active == 0 {
			s.drained.Broadcast()
		}
		s.mu.Unlock()
	}()
	return fn()
}

func (s *severable) FetchOrchestrationItem(ctx context.Context, lock, poll time.Duration, f *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	var out *duroxide.OrchestrationItem
	err := s.call(ctx, "fetch_orchestration_item", func() (err error) {
		out, err = s.Provider.FetchOrchestrationItem(ctx, lock, poll, f)
		return err
	})
	return out, err
}

func (s *severable) AckOrchestrationItem(ctx context.Context, token string, c duroxide.OrchestrationCommit) error {
	return s.call(ctx, "ack_orchestration_item", func() error { return s.Provider.AckOrchestrationItem(ctx, token, c) })
}

func (s *severable) AbandonOrchestrationItem(ctx context.Context, token string, delay time.Duration, ignore bool) error {
	return s.call(ctx, "abandon_orchestration_item", func() error { return s.Provider.AbandonOrchestrationItem(ctx, token, delay, ignore) })
}

func (s *severable) RenewOrchestrationItemLock(ctx context.Context, token string, extend time.Duration) error {
	return s.call(ctx, "renew_orchestration_item_lock", func() error { return s.Provider.RenewOrchestrationItemLock(ctx, token, extend) })
}

func (s *severable) FetchWorkItem(ctx context.Context, lock, poll time.Duration, sess *duroxide.SessionFetchConfig, tags duroxide.TagFilter) (*duroxide.LockedWorkItem, error) {
	var out *duroxide.LockedWorkItem
	err := s.call(ctx, "fetch_work_item", func() (err error) {
		out, err = s.Provider.FetchWorkItem(ctx, lock, poll, sess, tags)
		return err
	})
	return out, err
}

func (s *severable) AckWorkItem(ctx context.Context, token string, completion duroxide.WorkItem) error {
	return s.call(ctx, "ack_work_item", func() error { return s.Provider.AckWorkItem(ctx, token, completion) })
}

func (s *severable) AbandonWorkItem(ctx context.Context, token string, delay time.Duration, ignore bool) error {
	return s.call(ctx, "abandon_work_item", func() error { return s.Provider.AbandonWorkItem(ctx, token, delay, ignore) })
}

func (s *severable) RenewWorkItemLock(ctx context.Context, token string, extend time.Duration) error {
	return s.call(ctx, "renew_work_item_lock", func() error { return s.Provider.RenewWorkItemLock(ctx, token, extend) })
}

func (s *severable) EnqueueForWorker(ctx context.Context, item duroxide.WorkItem) error {
	return s.call(ctx, "enqueue_for_worker", func() error { return s.Provider.EnqueueForWorker(ctx, item) })
}

// runCounter counts Step executions across runtimes.
type runCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *runCounter) ran(in string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[in]++
}

func (c *runCounter) runs(in string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[in]
}

// TestRecoveryAfterRuntimeFreezesInProcess: a runtime whose goroutines hang
// mid-activity or mid-turn with their locks held (cut off from the provider
// by severable) is replaced by a new runtime, which finishes every instance
// once the locks expire. The clock is moved past the lock timeouts, so this
// needs no real waits and runs on miniredis.
func TestRecoveryAfterRuntimeFreezesInProcess(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"activity", "turn"} {
		t.Run("mid-"+mode, func(t *testing.T) {
			t.Parallel()
			testRecoveryInProcess(t, mode)
		})
	}
}

func testRecoveryInProcess(t *testing.T, mode string) {
	var counter runCounter
	held := make(chan string, 64)
	var cut *severable
	hold := func(what string) {
		held <- what
		<-cut.released
	}
	dying := recoveryHooks{ran: counter.ran}
	if mode == "activity" {
		dying.holdActivity = func(_ *durable.ActivityContext, in string) { hold(in) }
	} else {
		dying.holdTurn = hold
	}
	opts := durable.Options{LongPollTimeout: 100 * time.Millisecond, OrchestrationConcurrency: 2, WorkerConcurrency: 3,
		Logger: slog.New(slog.DiscardHandler)} // the frozen runtime's failing calls are expected
	env := durabletest.Start(t, recoveryRegistry(dying), durabletest.WithOptions(opts),
		durabletest.WithProviderWrapper(func(p duroxide.Provider) duroxide.Provider {
			cut = newSeverable(p)
			return cut
		}))
	t.Cleanup(cut.Release) // runs before the Env's cleanup: the frozen runtime can then stop
	client := durable.NewClient(env.Provider)
	ids := recoveryInstances(6)
	startRecoveryInstances(t, client, ids)

	inFlight := awaitHeld(t, held, map[string]int{"activity": opts.WorkerConcurrency, "turn": opts.OrchestrationConcurrency}[mode])
	cut.Sever()
	env.Advance(time.Hour) // past every lock the frozen runtime holds
	env.NewRuntime(t, recoveryRegistry(recoveryHooks{ran: counter.ran}), opts)
	checkRecovered(t, client, ids, counter.runs)
	if mode == "activity" {
		for _, in := range inFlight {
			if n := counter.runs(in); n < 2 {
				t.Errorf("activity %s was in flight when its runtime froze but ran %d times", in, n)
			}
		}
	}
}

// awaitHeld waits until n hooks are holding work and returns what they hold.
func awaitHeld(t *testing.T, held <-chan string, n int) []string {
	t.Helper()
	var out []string
	timeout := time.After(30 * time.Second)
	for len(out) < n {
		select {
		case w := <-held:
			out = append(out, w)
		case <-timeout:
			t.Fatalf("only %d of %d pieces of work got in flight: %v", len(out), n, out)
		}
	}
	return out
}
