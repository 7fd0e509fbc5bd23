package durable_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// More ports of duroxide's tests/session_e2e_tests.rs. Rust's
// schedule_activity_on_session(name, input, id) is ScheduleActivity with
// WithSession(id).

func sessionOpts(o durable.Options) durabletest.Option {
	o.LongPollTimeout = 100 * time.Millisecond
	return durabletest.WithOptions(o)
}

// TestSessionActivitiesMore mirrors the single-runtime session tests, one
// subtest each.
func TestSessionActivitiesMore(t *testing.T) {
	t.Parallel()
	type doubleInput struct {
		Value int `json:"value"`
	}
	var sawSession atomic.Bool
	cases := []struct {
		name string
		opts durable.Options
		orch durable.OrchestrationFunc
		want string
	}{
		{"test_session_activity_typed", durable.Options{}, func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			n, err := durable.ScheduleActivity[int](ctx, "Double", doubleInput{21}, durable.WithSession("typed-sess")).Get()
			return strconv.Itoa(n), err
		}, "42"},
		{"test_ephemeral_session_still_works", durable.Options{WorkerConcurrency: 1}, func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleActivity("Echo", "ephemeral-val", durable.WithSession("eph-sess")).Get()
		}, "ephemeral-val"},
		{"test_session_with_worker_node_id_activity_context_has_session_id", durable.Options{WorkerConcurrency: 2, WorkerNodeID: "k8s-pod-name"},
			func(ctx *durable.OrchestrationContext, _ string) (string, error) {
				_, err := ctx.ScheduleActivity("CheckSess", "", durable.WithSession("my-session")).Get()
				return "done", err
			}, "done"},
		{"test_session_fan_out_mixed_with_regular", durable.Options{}, func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			r, err := joined(ctx, ctx.ScheduleActivity("SessionWork", "a", durable.WithSession("s1")), ctx.ScheduleActivity("RegularWork", "b"),
				ctx.ScheduleActivity("SessionWork", "c", durable.WithSession("s2")), ctx.ScheduleActivity("RegularWork", "d"))
			return strings.ReplaceAll(r, ",", "|"), err
		}, "sess:a|reg:b|sess:c|reg:d"},
		{"test_fan_out_multiple_per_session_mixed", durable.Options{WorkerConcurrency: 4, WorkerNodeID: "mix-pod"}, func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			s1, s2 := durable.WithSession("session-1"), durable.WithSession("session-2")
			r, err := joined(ctx, ctx.ScheduleActivity("Tag", "s1-a", s1), ctx.ScheduleActivity("Tag", "s1-b", s1),
				ctx.ScheduleActivity("Tag", "s2-a", s2), ctx.ScheduleActivity("Tag", "s2-b", s2),
				ctx.ScheduleActivity("Tag", "no-sess-a"), ctx.ScheduleActivity("Tag", "no-sess-b"))
			return strings.ReplaceAll(r, ",", "|"), err
		}, "tag:s1-a|tag:s1-b|tag:s2-a|tag:s2-b|tag:no-sess-a|tag:no-sess-b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			reg := durable.NewRegistry().
				MustAddActivity("Double", durable.Activity(func(_ *durable.ActivityContext, in doubleInput) (int, error) { return in.Value * 2, nil })).
				MustAddActivity("Echo", func(_ *durable.ActivityContext, in string) (string, error) { return in, nil }).
				MustAddActivity("CheckSess", func(ctx *durable.ActivityContext, _ string) (string, error) {
					if s, ok := ctx.SessionID(); ok && s == "my-session" {
						sawSession.Store(true)
					}
					return "ok", nil
				}).
				MustAddActivity("SessionWork", prefixActivity("sess")).
				MustAddActivity("RegularWork", prefixActivity("reg")).
				MustAddActivity("Tag", prefixActivity("tag")).
				MustAddOrchestration("O", c.orch)
			env := durabletest.Start(t, reg, sessionOpts(c.opts))
			mustComplete(t, env.StartAndWait(t, "sess-"+c.name, "O", ""), c.want)
			if strings.Contains(c.name, "activity_context_has_session_id") && !sawSession.Load() {
				t.Error("ActivityContext.SessionID was not the session id under a WorkerNodeID")
			}
		})
	}
}

// TestSessionIdleTimeoutMustExceedWorkerRenewalInterval mirrors
// test_session_idle_timeout_must_exceed_worker_renewal_interval: a session
// idle timeout not above the worker lock renewal interval (25s for a 30s
// lock renewed 5s early) is refused, as a session could expire while its
// activity still runs. duroxide panics; NewRuntime returns an invalid-input
// error.
func TestSessionIdleTimeoutMustExceedWorkerRenewalInterval(t *testing.T) {
	t.Parallel()
	p := newTestProvider(t)
	_, err := durable.NewRuntime(p, durable.NewRegistry(), durable.Options{SessionIdleTimeout: 25 * time.Second,
		WorkerLockTimeout: 30 * time.Second, WorkerLockRenewalBuffer: 5 * time.Second})
	if !errors.Is(err, durable.ErrInvalidInput) || !strings.Contains(err.Error(), "SessionIdleTimeout") {
		t.Fatalf("NewRuntime: %v, want an invalid-input error naming SessionIdleTimeout", err)
	}
	rt, err := durable.NewRuntime(p, durable.NewRegistry(), durable.Options{SessionIdleTimeout: 26 * time.Second,
		WorkerLockTimeout: 30 * time.Second, WorkerLockRenewalBuffer: 5 * time.Second, LongPollTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("NewRuntime with 26s idle: %v", err)
	}
	shutdownRuntime(t, rt)
}

// sessionlessPolls passes calls to the provider and counts the
// session-less work fetches that found nothing: what a worker slot of a
// runtime at its session cap does.
type sessionlessPolls struct {
	duroxide.Provider
	empty atomic.Int32
}

func (p *sessionlessPolls) FetchWorkItem(ctx context.Context, lock, poll time.Duration, s *duroxide.SessionFetchConfig, tags duroxide.TagFilter) (*duroxide.LockedWorkItem, error) {
	it, err := p.Provider.FetchWorkItem(ctx, lock, poll, s, tags)
	if s == nil && it == nil && err == nil {
		p.empty.Add(1)
	}
	return it, err
}

// TestSessionCapBlocksThenUnblocks mirrors test_session_cap_blocks_then_unblocks
// and test_same_session_shares_one_slot: with MaxSessionsPerRuntime 1, a
// second session's activity waits (the free slot polls for session-less
// work only) until the first session's activity ends, while two activities
// of one session both run under the cap.
func TestSessionCapBlocksThenUnblocks(t *testing.T) {
	t.Parallel()
	t.Run("test_session_cap_blocks_then_unblocks", func(t *testing.T) {
		t.Parallel()
		var mu sync.Mutex
		var log []string
		started := make(chan string, 2)
		release := map[string]chan struct{}{"A": make(chan struct{}), "B": make(chan struct{})}
		polls := &sessionlessPolls{}
		reg := durable.NewRegistry().
			MustAddActivity("Tracked", func(ctx *durable.ActivityContext, in string) (string, error) {
				mu.Lock()
				log = append(log, in+"-started")
				mu.Unlock()
				started <- in
				select {
				case <-release[in]:
				case <-ctx.Done():
					return "", ctx.Err()
				}
				return "result-" + in, nil
			}).
			MustAddOrchestration("BlockUnblock", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
				r, err := joined(ctx, ctx.ScheduleActivity("Tracked", "A", durable.WithSession("session-A")),
					ctx.ScheduleActivity("Tracked", "B", durable.WithSession("session-B")))
				return strings.ReplaceAll(r, ",", "|"), err
			})
		env := durabletest.Start(t, reg, sessionOpts(durable.Options{WorkerConcurrency: 2, MaxSessionsPerRuntime: 1, OrchestrationConcurrency: 1}),
			durabletest.WithAckFetch(false), durabletest.WithProviderWrapper(func(p duroxide.Provider) duroxide.Provider { polls.Provider = p; return polls }))
		if err := env.Client.StartOrchestration(t.Context(), "test-block-unblock", "BlockUnblock", ""); err != nil {
			t.Fatal(err)
		}
		first := <-started
		second := map[string]string{"A": "B", "B": "A"}[first]
		// The free slot had its chances: it polled for session-less work twice.
		base := polls.empty.Load()
		durabletest.Eventually(t, "the free slot polling for session-less work twice", func() (bool, error) {
			return polls.empty.Load() >= base+2, nil
		})
		select {
		case s := <-started:
			t.Fatalf("%s started while %s held the only session slot", s, first)
		default:
		}
		close(release[first])
		if s := <-started; s != second {
			t.Fatalf("started %s, want %s", s, second)
		}
		close(release[second])
		mustComplete(t, env.Wait(t, "test-block-unblock"), "result-A|result-B")
	})
	t.Run("test_same_session_shares_one_slot", func(t *testing.T) {
		t.Parallel()
		var ran atomic.Int32
		reg := durable.NewRegistry().
			MustAddActivity("SlowSame", func(*durable.ActivityContext, string) (string, error) { ran.Add(1); return "ok", nil }).
			MustAddOrchestration("SameSessionFanOut", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
				r, err := joined(ctx, ctx.ScheduleActivity("SlowSame", "a", durable.WithSession("shared-session")),
					ctx.ScheduleActivity("SlowSame", "b", durable.WithSession("shared-session")))
				return strings.ReplaceAll(r, ",", "|"), err
			})
		env := durabletest.Start(t, reg, sessionOpts(durable.Options{WorkerConcurrency: 2, MaxSessionsPerRuntime: 1, OrchestrationConcurrency: 1}))
		mustComplete(t, env.StartAndWait(t, "test-same-session-slot", "SameSessionFanOut", ""), "ok|ok")
		if ran.Load() != 2 {
			t.Fatalf("%d runs, want 2", ran.Load())
		}
	})
}

// TestMultiWorkerSessions mirrors test_multi_worker_complex_orchestration and
// test_multi_worker_heterogeneous_config: two runtimes with different node
// ids and session settings share the work of sessions across a
// continue-as-new, every session activity running once.
func TestMultiWorkerSessions(t *testing.T) {
	t.Parallel()
	build := func(counter *atomic.Int32) *durable.Registry {
		return durable.NewRegistry().
			MustAddActivity("SessionWork", func(ctx *durable.ActivityContext, in string) (string, error) {
				if _, ok := ctx.SessionID(); !ok {
					return "", errors.New("SessionWork ran without a session")
				}
				counter.Add(1)
				return "session-result:" + in, nil
			}).
			MustAddActivity("PlainWork", prefixActivity("plain-result")).
			MustAddOrchestration("MultiWorkerOrch", func(ctx *durable.OrchestrationContext, in string) (string, error) {
				prev, isSecond := strings.CutPrefix(in, "1|")
				if !isSecond {
					alpha, beta := durable.WithSession("sess-alpha"), durable.WithSession("sess-beta")
					r, err := joined(ctx, ctx.ScheduleActivity("SessionWork", "a", alpha), ctx.ScheduleActivity("SessionWork", "b", alpha),
						ctx.ScheduleActivity("SessionWork", "c", beta), ctx.ScheduleActivity("PlainWork", "d"))
					if err != nil {
						return "", err
					}
					ctx.ContinueAsNew("1|" + strings.ReplaceAll(r, ",", ";"))
					return "", nil
				}
				r1, err := ctx.ScheduleActivity("SessionWork", "e", durable.WithSession("sess-alpha")).Get()
				if err != nil {
					return "", err
				}
				r2, err := ctx.ScheduleActivity("SessionWork", "f", durable.WithSession("sess-beta")).Get()
				return prev + ";" + r1 + ";" + r2, err
			}).
			MustAddOrchestration("HeteroOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
				r, err := joined(ctx, ctx.ScheduleActivity("SessionWork", "1", durable.WithSession("sess-X")),
					ctx.ScheduleActivity("SessionWork", "2", durable.WithSession("sess-Y")), ctx.ScheduleActivity("SessionWork", "3", durable.WithSession("sess-Z")))
				return strings.ReplaceAll(r, ",", "|"), err
			})
	}
	cases := []struct {
		name           string
		a, b           durable.Options
		orch, want     string
		sessionActions int32
	}{
		{"test_multi_worker_complex_orchestration",
			durable.Options{WorkerConcurrency: 2, OrchestrationConcurrency: 2, WorkerNodeID: "node-A", MaxSessionsPerRuntime: 4},
			durable.Options{WorkerConcurrency: 2, OrchestrationConcurrency: 2, WorkerNodeID: "node-B", MaxSessionsPerRuntime: 4},
			"MultiWorkerOrch", "session-result:a;session-result:b;session-result:c;plain-result:d;session-result:e;session-result:f", 5},
		{"test_multi_worker_heterogeneous_config",
			durable.Options{WorkerConcurrency: 2, OrchestrationConcurrency: 2, WorkerNodeID: "constrained-node", MaxSessionsPerRuntime: 1,
				SessionLockTimeout: 5 * time.Second, SessionLockRenewalBuffer: time.Second, SessionIdleTimeout: 30 * time.Second},
			durable.Options{WorkerConcurrency: 2, OrchestrationConcurrency: 2, WorkerNodeID: "unconstrained-node", MaxSessionsPerRuntime: 10,
				SessionLockTimeout: 30 * time.Second, SessionLockRenewalBuffer: 5 * time.Second, SessionIdleTimeout: time.Minute},
			"HeteroOrch", "session-result:1|session-result:2|session-result:3", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var na, nb atomic.Int32
			env := durabletest.Start(t, build(&na), sessionOpts(c.a))
			c.b.LongPollTimeout = 100 * time.Millisecond
			env.NewRuntime(t, build(&nb), c.b)
			mustComplete(t, env.StartAndWait(t, "multi-"+c.name, c.orch, "0|"), c.want)
			if n := na.Load() + nb.Load(); n != c.sessionActions {
				t.Fatalf("session activities ran %d times (A %d, B %d), want %d", n, na.Load(), nb.Load(), c.sessionActions)
			}
		})
	}
}
