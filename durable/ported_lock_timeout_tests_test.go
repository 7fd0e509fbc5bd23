package durable_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/lock_timeout_tests.rs. duroxide's activities
// sleep longer than their lock and rely on the renewal happening in time;
// these activities block until the provider has renewed their lock enough
// times to outlive the lock they were fetched with, so the renewal is
// observed, not assumed.

// TestLockTimeoutDefaults mirrors default_lock_timeouts and
// orchestrator_lock_renewal_buffer_defaults.
func TestLockTimeoutDefaults(t *testing.T) {
	t.Parallel()
	o := durable.EffectiveOptions(durable.Options{})
	t.Run("default_lock_timeouts", func(t *testing.T) {
		if o.OrchestratorLockTimeout != 5*time.Second || o.WorkerLockTimeout != 30*time.Second || o.WorkerLockRenewalBuffer != 5*time.Second {
			t.Fatalf("defaults: orchestrator lock %v, worker lock %v, worker buffer %v; want 5s, 30s, 5s",
				o.OrchestratorLockTimeout, o.WorkerLockTimeout, o.WorkerLockRenewalBuffer)
		}
	})
	t.Run("orchestrator_lock_renewal_buffer_defaults", func(t *testing.T) {
		if o.OrchestratorLockRenewalBuffer != 2*time.Second {
			t.Fatalf("orchestrator renewal buffer %v, want 2s", o.OrchestratorLockRenewalBuffer)
		}
		if c := durable.EffectiveOptions(durable.Options{OrchestratorLockRenewalBuffer: 5 * time.Second}); c.OrchestratorLockRenewalBuffer != 5*time.Second {
			t.Fatalf("custom orchestrator renewal buffer became %v", c.OrchestratorLockRenewalBuffer)
		}
	})
}

// TestCustomLockTimeoutConfiguration mirrors custom_lock_timeout_configuration:
// set lock timeouts survive the defaults.
func TestCustomLockTimeoutConfiguration(t *testing.T) {
	t.Parallel()
	for _, c := range [][2]time.Duration{{10 * time.Second, 120 * time.Second}, {time.Second, 5 * time.Second}} {
		o := durable.EffectiveOptions(durable.Options{OrchestratorLockTimeout: c[0], WorkerLockTimeout: c[1]})
		if o.OrchestratorLockTimeout != c[0] || o.WorkerLockTimeout != c[1] {
			t.Errorf("set %v/%v, effective %v/%v", c[0], c[1], o.OrchestratorLockTimeout, o.WorkerLockTimeout)
		}
	}
}

// renewCounter passes calls to the provider and counts the successful
// worker lock renewals of each lock token, signalling changes.
type renewCounter struct {
	duroxide.Provider
	mu      sync.Mutex
	renews  map[string]int
	changed chan struct{}
}

func newRenewCounter() *renewCounter {
	return &renewCounter{renews: map[string]int{}, changed: make(chan struct{})}
}

func (p *renewCounter) RenewWorkItemLock(ctx context.Context, token string, extendFor time.Duration) error {
	err := p.Provider.RenewWorkItemLock(ctx, token, extendFor)
	if err == nil {
		p.mu.Lock()
		p.renews[token]++
		close(p.changed)
		p.changed = make(chan struct{})
		p.mu.Unlock()
	}
	return err
}

// waitUntil blocks until ok holds for the counts of renewals per token, or
// ctx ends.
func (p *renewCounter) waitUntil(ctx context.Context, ok func(map[string]int) bool) error {
	for {
		p.mu.Lock()
		done, ch := ok(p.renews), p.changed
		p.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (p *renewCounter) total() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.renews {
		n += c
	}
	return n
}

// renewEnv starts an Env whose runtime's worker lock renewals are counted.
func renewEnv(t *testing.T, reg *durable.Registry, o durable.Options) (*durabletest.Env, *renewCounter) {
	rc := newRenewCounter()
	o.LongPollTimeout = 100 * time.Millisecond
	env := durabletest.Start(t, reg, durabletest.WithOptions(o), durabletest.WithAckFetch(false),
		durabletest.WithProviderWrapper(func(p duroxide.Provider) duroxide.Provider { rc.Provider = p; return rc }))
	return env, rc
}

// oneActivity is an orchestration returning what activity name returns for "data".
func oneActivity(name string) durable.OrchestrationFunc {
	return func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.ScheduleActivity(name, "data").Get()
	}
}

// TestLockTimeoutShortWorkCompletes mirrors orchestration_with_custom_timeout_completes,
// very_short_lock_timeout_works and short_activity_no_renewal_needed: quick
// work completes under long and very short locks, without a renewal.
func TestLockTimeoutShortWorkCompletes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		opts durable.Options
	}{
		{"orchestration_with_custom_timeout_completes", durable.Options{OrchestratorLockTimeout: time.Minute, WorkerLockTimeout: time.Minute}},
		{"very_short_lock_timeout_works", durable.Options{OrchestratorLockTimeout: time.Second, WorkerLockTimeout: time.Second}},
		{"short_activity_no_renewal_needed", durable.Options{WorkerLockTimeout: 3 * time.Second, WorkerLockRenewalBuffer: time.Second}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			reg := durable.NewRegistry().
				MustAddActivity("TestActivity", prefixedActivity("processed")).
				MustAddOrchestration("TestOrch", oneActivity("TestActivity"))
			env, rc := renewEnv(t, reg, c.opts)
			mustComplete(t, env.StartAndWait(t, "inst-"+c.name, "TestOrch", ""), "processed: data")
			if n := rc.total(); n != 0 {
				t.Fatalf("%d worker lock renewals for an activity that returns at once", n)
			}
		})
	}
}

// TestLockRenewalKeepsLongActivity mirrors long_running_activity_with_lock_renewal,
// lock_renewal_short_timeout and custom_renewal_buffer: an activity running
// past its lock completes, because its lock is renewed every renewal
// interval (half the timeout under 15s, so the buffer is ignored there).
func TestLockRenewalKeepsLongActivity(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name              string
		lock, buffer      time.Duration
		interval          time.Duration
		renewalsToOutlive int
	}{
		// 3s lock: renewed every 2s; two renewals take the activity to 4s.
		{"long_running_activity_with_lock_renewal", 3 * time.Second, time.Second, 2 * time.Second, 2},
		// 2s lock: renewed every 1s, so three renewals outlive it.
		{"lock_renewal_short_timeout", 2 * time.Second, time.Second, time.Second, 3},
		// 5s lock, 2s buffer: renewed every 3s (duroxide: half of 5 rounded up).
		{"custom_renewal_buffer", 5 * time.Second, 2 * time.Second, 3 * time.Second, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := durable.RenewalInterval(c.lock, c.buffer); got != c.interval {
				t.Fatalf("renewal interval of a %v lock with a %v buffer = %v, want %v", c.lock, c.buffer, got, c.interval)
			}
			var rc *renewCounter
			reg := durable.NewRegistry().
				MustAddActivity("LongActivity", func(ctx *durable.ActivityContext, in string) (string, error) {
					started := time.Now()
					if err := rc.waitUntil(ctx, func(m map[string]int) bool { return len(m) == 1 && maxCount(m) >= c.renewalsToOutlive }); err != nil {
						return "", err
					}
					if ran := time.Since(started); ran <= c.lock {
						return "", fmt.Errorf("ran %v, not past the %v lock", ran, c.lock)
					}
					return "completed: " + in, nil
				}).
				MustAddOrchestration("TestOrch", oneActivity("LongActivity"))
			var env *durabletest.Env
			env, rc = renewEnv(t, reg, durable.Options{WorkerLockTimeout: c.lock, WorkerLockRenewalBuffer: c.buffer})
			mustComplete(t, env.StartAndWait(t, "inst-"+c.name, "TestOrch", ""), "completed: data")
		})
	}
}

func maxCount(m map[string]int) int {
	n := 0
	for _, c := range m {
		n = max(n, c)
	}
	return n
}

// TestConcurrentActivitiesWithRenewal mirrors concurrent_activities_with_renewal:
// three activities running at once each have their own lock renewed past
// its timeout.
func TestConcurrentActivitiesWithRenewal(t *testing.T) {
	t.Parallel()
	var rc *renewCounter
	reg := durable.NewRegistry().
		MustAddActivity("LongActivity", func(ctx *durable.ActivityContext, in string) (string, error) {
			// Every one of three locks renewed three times (1s apart on a 2s lock).
			err := rc.waitUntil(ctx, func(m map[string]int) bool {
				n := 0
				for _, c := range m {
					if c >= 3 {
						n++
					}
				}
				return n == 3
			})
			return "completed-" + in, err
		}).
		MustAddOrchestration("TestOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			fs := []durable.Future[string]{ctx.ScheduleActivity("LongActivity", "task1"), ctx.ScheduleActivity("LongActivity", "task2"), ctx.ScheduleActivity("LongActivity", "task3")}
			var out []string
			for _, f := range fs {
				r, err := f.Get()
				if err != nil {
					return "", err
				}
				out = append(out, r)
			}
			return fmt.Sprintf("%s, %s, %s", out[0], out[1], out[2]), nil
		})
	var env *durabletest.Env
	env, rc = renewEnv(t, reg, durable.Options{WorkerLockTimeout: 2 * time.Second, WorkerLockRenewalBuffer: time.Second, WorkerConcurrency: 3})
	mustComplete(t, env.StartAndWait(t, "inst-concurrent-renewal", "TestOrch", ""), "completed-task1, completed-task2, completed-task3")
}
