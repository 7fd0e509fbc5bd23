package durable_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// renewWatch reports each successful lock renewal per token, for tests
// that wait until a lock has been renewed.
type renewWatch struct {
	mu    sync.Mutex
	chans map[string]chan struct{}
}

func (w *renewWatch) ch(token string) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.chans == nil {
		w.chans = map[string]chan struct{}{}
	}
	c, ok := w.chans[token]
	if !ok {
		c = make(chan struct{}, 100)
		w.chans[token] = c
	}
	return c
}

func (w *renewWatch) renewed(token string, err error) {
	if err == nil {
		w.ch(token) <- struct{}{}
	}
}

// slowAcks holds the first orchestration ack and the first activity ack
// until the unit's lock has been renewed three times during the ack (one
// second apart with a 2s lock, so the lock outlives the timeout it had when
// the ack began), as an ack writing a large value into a busy Redis takes
// long. An ack whose lock is not renewed is let go after the lock timeout
// and a second, when the lock has expired. lostAcks counts acks that
// failed on the lock.
type slowAcks struct {
	*redisprovider.Provider
	lock           time.Duration
	watch          renewWatch
	orchHeld, work atomic.Bool
	heldAcks       chan error
	lostAcks       atomic.Int32
}

func (s *slowAcks) hold(first *atomic.Bool, token string) bool {
	if first.Swap(true) {
		return false
	}
	renewals := s.watch.ch(token)
	for range 3 {
		select {
		case <-renewals:
		case <-time.After(s.lock + time.Second):
			return true
		}
	}
	return true
}

// done records the outcome of an ack; one that was held reports on
// heldAcks once it has returned.
func (s *slowAcks) done(held bool, err error) error {
	if errors.Is(err, duroxide.ErrLockLost) {
		s.lostAcks.Add(1)
	}
	if held {
		s.heldAcks <- err
	}
	return err
}

func (s *slowAcks) RenewOrchestrationItemLock(ctx context.Context, token string, d time.Duration) error {
	err := s.Provider.RenewOrchestrationItemLock(ctx, token, d)
	s.watch.renewed(token, err)
	return err
}

func (s *slowAcks) RenewWorkItemLock(ctx context.Context, token string, d time.Duration) error {
	err := s.Provider.RenewWorkItemLock(ctx, token, d)
	s.watch.renewed(token, err)
	return err
}

func (s *slowAcks) AckOrchestrationItem(ctx context.Context, token string, c duroxide.OrchestrationCommit) error {
	held := s.hold(&s.orchHeld, token)
	return s.done(held, s.Provider.AckOrchestrationItem(ctx, token, c))
}

func (s *slowAcks) AckOrchestrationItemAndFetch(ctx context.Context, token string, c duroxide.OrchestrationCommit,
	lock, poll time.Duration, f *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	held := s.hold(&s.orchHeld, token)
	it, err := s.Provider.AckOrchestrationItemAndFetch(ctx, token, c, lock, poll, f)
	return it, s.done(held, err)
}

func (s *slowAcks) AckOrchestrationItemAndFetchLazy(ctx context.Context, token string, c duroxide.OrchestrationCommit,
	lock, poll time.Duration, f *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	held := s.hold(&s.orchHeld, token)
	it, err := s.Provider.AckOrchestrationItemAndFetchLazy(ctx, token, c, lock, poll, f)
	return it, s.done(held, err)
}

func (s *slowAcks) AckWorkItem(ctx context.Context, token string, c duroxide.WorkItem) error {
	held := s.hold(&s.work, token)
	return s.done(held, s.Provider.AckWorkItem(ctx, token, c))
}

func (s *slowAcks) AckWorkItemAndFetch(ctx context.Context, token string, c duroxide.WorkItem,
	lock, poll time.Duration, sess *duroxide.SessionFetchConfig, tags duroxide.TagFilter) (*duroxide.LockedWorkItem, error) {
	held := s.hold(&s.work, token)
	it, err := s.Provider.AckWorkItemAndFetch(ctx, token, c, lock, poll, sess, tags)
	return it, s.done(held, err)
}

// TestE2ELockIsKeptAliveDuringASlowAck: a turn or an activity whose ack
// takes longer than the lock timeout (a large value written into a busy
// Redis) keeps its lock, on the plain ack and on ack-and-fetch: the ack
// applies the first time, instead of failing on an expired lock and the
// work being redone after the lock times out.
func TestE2ELockIsKeptAliveDuringASlowAck(t *testing.T) {
	t.Parallel()
	for _, ackFetch := range []bool{true, false} {
		t.Run(fmt.Sprintf("ackfetch=%v", ackFetch), func(t *testing.T) {
			t.Parallel()
			const lock = 2 * time.Second // renewed every second
			reg := durable.NewRegistry()
			reg.MustAddActivity("Echo", func(_ *durable.ActivityContext, in string) (string, error) { return in, nil })
			reg.MustAddOrchestration("Twice", func(ctx *durable.OrchestrationContext, in string) (string, error) {
				return ctx.ScheduleActivity("Echo", in+in).Get()
			})
			var slow *slowAcks
			env := durabletest.Start(t, reg, durabletest.WithAckFetch(ackFetch),
				durabletest.WithOptions(durable.Options{LongPollTimeout: 100 * time.Millisecond,
					OrchestratorLockTimeout: lock, WorkerLockTimeout: lock}),
				durabletest.WithProviderWrapper(func(p duroxide.Provider) duroxide.Provider {
					slow = &slowAcks{Provider: p.(*redisprovider.Provider), lock: lock, heldAcks: make(chan error, 2)}
					return slow
				}))
			mustComplete(t, env.StartAndWait(t, "slow", "Twice", "ab"), "abab")
			for range 2 { // a turn's and an activity's; each is let go within seconds
				if err := <-slow.heldAcks; err != nil {
					t.Errorf("a held ack failed: %v", err)
				}
			}
			if n := slow.lostAcks.Load(); n != 0 {
				t.Fatalf("%d acks failed on an expired lock", n)
			}
		})
	}
}

// flakyRenewals fails the first activity lock renewal with a retryable
// error, as a renewal does whose reply is late while Redis writes a large
// value, and reports each renewal that applied.
type flakyRenewals struct {
	*redisprovider.Provider
	failed atomic.Bool
	ok     chan struct{}
}

func (f *flakyRenewals) RenewWorkItemLock(ctx context.Context, token string, d time.Duration) error {
	if !f.failed.Swap(true) {
		return duroxide.Retryable("renew_work_item_lock", "i/o timeout")
	}
	err := f.Provider.RenewWorkItemLock(ctx, token, d)
	if err == nil {
		select {
		case f.ok <- struct{}{}:
		default:
		}
	}
	return err
}

// TestE2EATransientRenewalFailureKeepsTheActivity: one renewal that fails
// with a retryable error (a timeout: the lock may well still be held) does
// not cancel the running activity; the renewal is retried, and the
// activity finishes and is acked.
func TestE2EATransientRenewalFailureKeepsTheActivity(t *testing.T) {
	t.Parallel()
	flaky := &flakyRenewals{ok: make(chan struct{}, 1)}
	cancelled := make(chan struct{})
	reg := durable.NewRegistry()
	reg.MustAddActivity("UntilRenewed", func(ctx *durable.ActivityContext, _ string) (string, error) {
		select {
		case <-flaky.ok:
			return "renewed", nil
		case <-ctx.Done():
			close(cancelled)
			return "", ctx.Err()
		}
	})
	reg.MustAddOrchestration("O", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.ScheduleActivity("UntilRenewed", "").Get()
	})
	env := durabletest.Start(t, reg,
		durabletest.WithOptions(durable.Options{LongPollTimeout: 100 * time.Millisecond, WorkerLockTimeout: 2 * time.Second}),
		durabletest.WithProviderWrapper(func(p duroxide.Provider) duroxide.Provider {
			flaky.Provider = p.(*redisprovider.Provider)
			return flaky
		}))
	if err := env.Client.StartOrchestration(t.Context(), "r", "O", ""); err != nil {
		t.Fatal(err)
	}
	done := make(chan durable.OrchestrationStatus, 1)
	go func() {
		st, _ := env.Client.WaitForOrchestration(context.Background(), "r", durabletest.DefaultWaitTimeout)
		done <- st
	}()
	select {
	case <-cancelled:
		t.Fatal("the activity was cancelled after one failed renewal")
	case st := <-done:
		mustComplete(t, st, "renewed")
	}
}
