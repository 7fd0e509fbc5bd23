package durable_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/session_e2e_tests.rs. The Rust concurrency tests let
// sleeps overlap; these use overlapProbe, which waits (boundedly) for a partner.

func echoActivity(prefix string) durable.ActivityFunc {
	return func(_ *durable.ActivityContext, in string) (string, error) { return prefix + in, nil }
}

// overlapProbe measures how many activities run at once: each call waits until
// another call is in flight with it or a second has passed.
type overlapProbe struct {
	mu       sync.Mutex
	inFlight int
	max      int
	together chan struct{} // closed once two calls were in flight at once
}

func (p *overlapProbe) activity(prefix string) durable.ActivityFunc {
	return func(_ *durable.ActivityContext, in string) (string, error) {
		p.mu.Lock()
		if p.together == nil {
			p.together = make(chan struct{})
		}
		together := p.together
		p.inFlight++
		if p.inFlight == 2 && p.max < 2 {
			close(p.together)
		}
		p.max = max(p.max, p.inFlight)
		p.mu.Unlock()
		select {
		case <-together:
		case <-time.After(time.Second):
		}
		p.mu.Lock()
		p.inFlight--
		p.mu.Unlock()
		return prefix + in, nil
	}
}

func (p *overlapProbe) maxInFlight() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.max
}

// sessionPair runs two activities of one session side by side.
func sessionPair(ctx *durable.OrchestrationContext, _ string) (string, error) {
	f1 := ctx.ScheduleActivity("SlowTask", "a", durable.WithSession("same-session"))
	f2 := ctx.ScheduleActivity("FastTask", "b", durable.WithSession("same-session"))
	ctx.Join(f1, f2)
	return joinOutputs("|", f1, f2)
}

// TestSessionActivityBasicE2e mirrors test_session_activity_basic_e2e.
func TestSessionActivityBasicE2e(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Echo", echoActivity("echo:")).
		MustAddOrchestration("SessionOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			r1, err := ctx.ScheduleActivity("Echo", "hello", durable.WithSession("my-session-1")).Get()
			if err != nil {
				return "", err
			}
			r2, err := ctx.ScheduleActivity("Echo", "world", durable.WithSession("my-session-1")).Get()
			return r1 + "|" + r2, err
		})
	h := newHarness(t, reg)
	h.start("test-session-basic", "SessionOrch", "")
	h.wantCompleted("test-session-basic", "echo:hello|echo:world")
	for _, e := range h.history("test-session-basic") {
		if k, ok := e.Kind.(duroxide.ActivityScheduledEvent); ok && (k.SessionID == nil || *k.SessionID != "my-session-1") {
			t.Errorf("ActivityScheduled %d has session %v, want my-session-1", e.EventID, k.SessionID)
		}
	}
}

// TestSessionIDVisibleInActivityContext mirrors test_session_id_visible_in_activity_context.
func TestSessionIDVisibleInActivityContext(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("CheckSession", func(ctx *durable.ActivityContext, _ string) (string, error) {
			s, ok := ctx.SessionID()
			return fmt.Sprint(s, ok), nil
		}).
		MustAddOrchestration("CheckSessionOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleActivity("CheckSession", "input", durable.WithSession("ctx-test-session")).Get()
		})
	h := newHarness(t, reg)
	h.start("test-ctx-session", "CheckSessionOrch", "")
	h.wantCompleted("test-ctx-session", "ctx-test-sessiontrue")
}

// TestMixedSessionAndRegularActivities mirrors test_mixed_session_and_regular_activities.
func TestMixedSessionAndRegularActivities(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Check", func(ctx *durable.ActivityContext, _ string) (string, error) {
			_, ok := ctx.SessionID()
			return fmt.Sprint(ok), nil
		}).
		MustAddOrchestration("Mixed", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			a, b := ctx.ScheduleActivity("Check", "s", durable.WithSession("s1")), ctx.ScheduleActivity("Check", "r")
			ctx.Join(a, b)
			return joinOutputs(",", a, b)
		})
	h := newHarness(t, reg)
	h.start("test-mixed-session", "Mixed", "")
	h.wantCompleted("test-mixed-session", "true,false")
}

// TestMultipleSessionsInOrchestration mirrors test_multiple_sessions_in_orchestration.
func TestMultipleSessionsInOrchestration(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Who", func(ctx *durable.ActivityContext, _ string) (string, error) {
			s, _ := ctx.SessionID()
			return s, nil
		}).
		MustAddOrchestration("Multi", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			var fs []durable.Future[string]
			for _, s := range []string{"s-a", "s-b", "s-c"} {
				fs = append(fs, ctx.ScheduleActivity("Who", "", durable.WithSession(s)))
			}
			ctx.Join(fs[0], fs[1], fs[2])
			return joinOutputs(",", fs...)
		})
	h := newHarness(t, reg)
	h.start("test-multi-session", "Multi", "")
	h.wantCompleted("test-multi-session", "s-a,s-b,s-c")
}

// TestSessionWithWorkerNodeIDCompletes mirrors test_session_with_worker_node_id_completes.
func TestSessionWithWorkerNodeIDCompletes(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Echo", echoActivity("echo:")).
		MustAddOrchestration("NodeOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleActivity("Echo", "x", durable.WithSession("node-session")).Get()
		})
	h := newHarnessWith(t, reg, durable.Options{WorkerNodeID: "my-node"})
	h.start("test-node-session", "NodeOrch", "")
	h.wantCompleted("test-node-session", "echo:x")
}

// TestTwoSlotsServeSameSessionConcurrently mirrors
// test_two_slots_serve_same_session_concurrently: with a stable node id all worker
// slots share the session owner, so both activities run at once.
func TestTwoSlotsServeSameSessionConcurrently(t *testing.T) {
	t.Parallel()
	p := &overlapProbe{}
	reg := durable.NewRegistry().
		MustAddActivity("SlowTask", p.activity("slow:")).
		MustAddActivity("FastTask", p.activity("fast:")).
		MustAddOrchestration("ConcurrentSessionOrch", sessionPair)
	h := newHarnessWith(t, reg, durable.Options{WorkerConcurrency: 2, WorkerNodeID: "my-node"})
	h.start("test-concurrent-session", "ConcurrentSessionOrch", "")
	h.wantCompleted("test-concurrent-session", "slow:a|fast:b")
	if got := p.maxInFlight(); got != 2 {
		t.Errorf("at most %d activities of the session ran at once, want 2", got)
	}
}

// TestSessionFanOutFanIn mirrors test_session_fan_out_fan_in.
func TestSessionFanOutFanIn(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Echo", echoActivity("")).
		MustAddOrchestration("Fan", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			var fs []durable.Future[string]
			var all []durable.Awaitable
			for i := 0; i < 5; i++ {
				f := ctx.ScheduleActivity("Echo", fmt.Sprint(i), durable.WithSession(fmt.Sprint("s", i%2)))
				fs, all = append(fs, f), append(all, f)
			}
			ctx.Join(all...)
			return joinOutputs(",", fs...)
		})
	h := newHarness(t, reg)
	h.start("test-session-fan", "Fan", "")
	h.wantCompleted("test-session-fan", "0,1,2,3,4")
}

// TestSessionSurvivesContinueAsNew mirrors test_session_survives_continue_as_new.
func TestSessionSurvivesContinueAsNew(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	reg := durable.NewRegistry().
		MustAddActivity("Where", func(ctx *durable.ActivityContext, _ string) (string, error) {
			calls.Add(1)
			s, _ := ctx.SessionID()
			return s, nil
		}).
		MustAddOrchestration("CanSession", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			s, err := ctx.ScheduleActivity("Where", "", durable.WithSession("sticky")).Get()
			if err != nil {
				return "", err
			}
			if input == "" {
				ctx.ContinueAsNew("second")
			}
			return input + ":" + s, nil
		})
	h := newHarnessWith(t, reg, durable.Options{WorkerNodeID: "node-1"})
	h.start("test-session-can", "CanSession", "")
	h.wantCompleted("test-session-can", "second:sticky")
	if calls.Load() != 2 {
		t.Errorf("%d activity runs, want one per execution", calls.Load())
	}
}

// twoSessions runs one SlowSession activity on each of two sessions side by side.
func twoSessions(ctx *durable.OrchestrationContext, _ string) (string, error) {
	f1 := ctx.ScheduleActivity("SlowSession", "a", durable.WithSession("session-A"))
	f2 := ctx.ScheduleActivity("SlowSession", "b", durable.WithSession("session-B"))
	ctx.Join(f1, f2)
	return joinOutputs("|", f1, f2)
}

// TestSessionWorkerNodeIDMultipleSessionsParallel mirrors
// test_session_worker_node_id_multiple_sessions_parallel: different sessions run
// side by side.
func TestSessionWorkerNodeIDMultipleSessionsParallel(t *testing.T) {
	t.Parallel()
	p := &overlapProbe{}
	reg := durable.NewRegistry().
		MustAddActivity("SlowSession", p.activity("")).
		MustAddOrchestration("TwoSessions", twoSessions)
	h := newHarnessWith(t, reg, durable.Options{WorkerConcurrency: 2, WorkerNodeID: "node-a"})
	h.start("test-parallel-sessions", "TwoSessions", "")
	h.wantCompleted("test-parallel-sessions", "a|b")
	if got := p.maxInFlight(); got != 2 {
		t.Errorf("at most %d sessions' activities ran at once, want 2", got)
	}
}

// TestSessionContinueAsNewVersionedUpgrade mirrors
// test_session_continue_as_new_versioned_upgrade: the session carries over a
// continue-as-new into a newer version.
func TestSessionContinueAsNewVersionedUpgrade(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Where", func(ctx *durable.ActivityContext, _ string) (string, error) {
			s, _ := ctx.SessionID()
			return s + "@" + ctx.OrchestrationVersion(), nil
		}).
		MustAddOrchestration("Up", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			if _, err := ctx.ScheduleActivity("Where", "", durable.WithSession("sticky")).Get(); err != nil {
				return "", err
			}
			ctx.ContinueAsNew("upgraded", durable.WithVersion("2.0.0"))
			return "", nil
		}).
		MustAddOrchestrationVersion("Up", "2.0.0", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			r, err := ctx.ScheduleActivity("Where", "", durable.WithSession("sticky")).Get()
			return input + ":" + r, err
		})
	h := newHarnessWith(t, reg, durable.Options{WorkerNodeID: "node-1"})
	if err := h.client.StartOrchestration(h.ctx, "session-upgrade", "Up", "", durable.WithVersion("1.0.0")); err != nil {
		t.Fatal(err)
	}
	h.wantCompleted("session-upgrade", "upgraded:sticky@2.0.0")
}
