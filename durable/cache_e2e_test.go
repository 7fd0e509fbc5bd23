package durable_test

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The instance cache's end-to-end tests: a runtime keeps the replayed state
// of a running execution between turns; these prove when it may (every turn
// of an undisturbed execution after its first is a hit), when it must not
// (the stored history moved on, the commit did not apply, the execution
// ended) and that a cached run writes the same history as a replayed one.

// turnWatch is an Observer that tells a test when turns are over: a turn
// ends after its engine was cached or closed, so the cache's stats are
// settled once no turn is in progress.
type turnWatch struct {
	mu      sync.Mutex
	active  int
	ended   int
	changed chan struct{} // closed and replaced on every change
}

func newTurnWatch() *turnWatch { return &turnWatch{changed: make(chan struct{})} }

func (w *turnWatch) StartTurn(durable.TurnInfo) func() {
	w.update(func() { w.active++ })
	return func() { w.update(func() { w.active--; w.ended++ }) }
}

func (w *turnWatch) StartActivity(ctx context.Context, _ durable.ActivityInfo) (context.Context, func()) {
	return ctx, func() {}
}

func (w *turnWatch) update(f func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f()
	close(w.changed)
	w.changed = make(chan struct{})
}

// await waits until cond(turns in progress, turns ended) holds.
func (w *turnWatch) await(t *testing.T, what string, cond func(active, ended int) bool) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		w.mu.Lock()
		ok, ch, active, ended := cond(w.active, w.ended), w.changed, w.active, w.ended
		w.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("timed out waiting for %s (%d turns in progress, %d ended)", what, active, ended)
		}
	}
}

// idle waits until no turn is in progress. Called once the last expected
// turn's commit is visible (a status, a history), the stats are final then.
func (w *turnWatch) idle(t *testing.T) {
	t.Helper()
	w.await(t, "no turn in progress", func(active, _ int) bool { return active == 0 })
}

// cacheOptions are a test runtime's options with an explicit cache size
// (so DUROXIDE_INSTANCE_CACHE=off does not turn it off) and w observing.
func cacheOptions(w *turnWatch, entries int) durable.Options {
	return durable.Options{LongPollTimeout: 100 * time.Millisecond, InstanceCacheEntries: entries, Observer: w}
}

func wantCacheStats(t *testing.T, rt *durable.Runtime, want durable.CacheStats) {
	t.Helper()
	if got := rt.CacheStats(); got != want {
		t.Errorf("cache stats\n got %+v\nwant %+v", got, want)
	}
}

// cacheRegistry registers the orchestrations of the cache tests; Step
// counts its runs in runs and upper-cases its input.
func cacheRegistry(runs *counts) *durable.Registry {
	reg := durable.NewRegistry()
	reg.MustAddActivity("Step", func(_ *durable.ActivityContext, in string) (string, error) {
		runs.add(in)
		return strings.ToUpper(in), nil
	})
	// Sequence runs n Steps one after the other, recording its progress in
	// its custom status and KV store as it goes.
	reg.MustAddOrchestration("Sequence", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		n, err := strconv.Atoi(in)
		if err != nil {
			return "", err
		}
		var out []string
		for i := range n {
			v, err := ctx.ScheduleActivity("Step", fmt.Sprintf("%s/%d", ctx.InstanceID(), i)).Get()
			if err != nil {
				return "", err
			}
			out = append(out, v)
			ctx.SetCustomStatus(fmt.Sprint(i))
			ctx.SetValue("last", v)
		}
		return strings.Join(out, "+"), nil
	})
	// Gated runs a Step, waits for event g1, runs a Step, waits for g2,
	// runs a last Step; its custom status names the gate it waits at.
	reg.MustAddOrchestration("Gated", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		var out []string
		for i, gate := range []string{"g1", "g2", ""} {
			v, err := ctx.ScheduleActivity("Step", fmt.Sprintf("%s/%d", ctx.InstanceID(), i)).Get()
			if err != nil {
				return "", err
			}
			out = append(out, v)
			if gate == "" {
				break
			}
			ctx.SetCustomStatus(gate)
			ev, err := ctx.WaitForEvent(gate).Get()
			if err != nil {
				return "", err
			}
			out = append(out, ev)
		}
		return strings.Join(out, "+"), nil
	})
	return reg
}

// gatedOutput is what Gated returns for instance when its gates get the
// event data g1 and g2.
func gatedOutput(instance, g1, g2 string) string {
	return strings.ToUpper(instance+"/0") + "+" + g1 + "+" + strings.ToUpper(instance+"/1") + "+" + g2 + "+" + strings.ToUpper(instance+"/2")
}

func sequenceOutput(instance string, n int) string {
	var out []string
	for i := range n {
		out = append(out, strings.ToUpper(fmt.Sprintf("%s/%d", instance, i)))
	}
	return strings.Join(out, "+")
}

// waitCustomStatus waits until instance's custom status is want.
func waitCustomStatus(t *testing.T, c *durable.Client, instance, want string) {
	t.Helper()
	var seen uint64
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := c.WaitForStatusChange(t.Context(), instance, seen, time.Until(deadline))
		if err != nil {
			t.Fatalf("%s never reached custom status %q: %v", instance, want, err)
		}
		if st.CustomStatus != nil && *st.CustomStatus == want {
			return
		}
		if st.IsTerminal() {
			t.Fatalf("%s ended (%v %q %s) before reaching custom status %q", instance, st.Status, st.Output, st.FailureMessage(), want)
		}
		seen = st.CustomStatusVersion
	}
}

func raise(t *testing.T, c *durable.Client, instance, name, data string) {
	t.Helper()
	if err := c.RaiseEvent(t.Context(), instance, name, data); err != nil {
		t.Fatalf("raise %s on %s: %v", name, instance, err)
	}
}

func start(t *testing.T, c *durable.Client, instance, name, input string) {
	t.Helper()
	if err := c.StartOrchestration(t.Context(), instance, name, input); err != nil {
		t.Fatalf("start %s: %v", instance, err)
	}
}

// executionHistories reads every execution of instance.
func executionHistories(t *testing.T, c *durable.Client, instance string) [][]duroxide.Event {
	t.Helper()
	execs, err := c.Admin().ListExecutions(t.Context(), instance)
	if err != nil {
		t.Fatalf("executions of %s: %v", instance, err)
	}
	var out [][]duroxide.Event
	for _, id := range execs {
		h, err := c.Admin().ReadHistoryWithExecutionID(t.Context(), instance, id)
		if err != nil {
			t.Fatalf("history of %s #%d: %v", instance, id, err)
		}
		out = append(out, h)
	}
	return out
}

// timeless is ev without what the clock decides: when it was written, when
// a timer was due, when a KV entry was set.
func timeless(ev duroxide.Event) duroxide.Event {
	ev.TimestampMs = 0
	switch k := ev.Kind.(type) {
	case duroxide.TimerCreatedEvent:
		k.FireAtMs = 0
		ev.Kind = k
	case duroxide.TimerFiredEvent:
		k.FireAtMs = 0
		ev.Kind = k
	case duroxide.KeyValueSetEvent:
		k.LastUpdatedAtMs = 0
		ev.Kind = k
	}
	return ev
}

// wantSameHistories compares two runs' histories of instance event by event,
// ignoring time.
func wantSameHistories(t *testing.T, instance string, got, want [][]duroxide.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d executions, want %d", instance, len(got), len(want))
	}
	for x := range want {
		g, w := got[x], want[x]
		for i := range max(len(g), len(w)) {
			if i >= len(g) || i >= len(w) {
				t.Fatalf("%s #%d: %d events, want %d (first %d agree)", instance, x+1, len(g), len(w), i)
			}
			if a, b := timeless(g[i]), timeless(w[i]); !reflect.DeepEqual(a, b) {
				t.Fatalf("%s #%d: event %d differs\n got %s\nwant %s", instance, x+1, i, describeEvent(a), describeEvent(b))
			}
		}
	}
}

func describeEvent(ev duroxide.Event) string {
	src := "-"
	if ev.SourceEventID != nil {
		src = fmt.Sprint(*ev.SourceEventID)
	}
	return fmt.Sprintf("id=%d src=%s exec=%d %s %+v", ev.EventID, src, ev.ExecutionID, ev.Kind.EventType(), ev.Kind)
}

// TestCacheSequenceHitsEveryTurnAfterTheFirst: one runtime runs a sequence
// of n activities. Its first turn replays (a miss); each of the n turns
// after it resumes the cached code (a hit); the last one completes the
// instance and caches nothing. With the cache off every turn misses, and
// both write the same history.
func TestCacheSequenceHitsEveryTurnAfterTheFirst(t *testing.T) {
	t.Parallel()
	const n = 25
	run := func(opts durable.Options, w *turnWatch) (*durable.Runtime, [][]duroxide.Event) {
		env := durabletest.Start(t, cacheRegistry(newCounts()), durabletest.WithOptions(opts))
		mustComplete(t, env.StartAndWait(t, "seq", "Sequence", fmt.Sprint(n)), sequenceOutput("seq", n))
		// The last turn took its engine out of the cache and will not put
		// it back: the stats are final once the turns before it ended (it
		// may itself stay in progress for a whole long poll).
		w.await(t, "every turn but the last to end", func(_, ended int) bool { return ended >= n })
		return env.Runtime, executionHistories(t, env.Client, "seq")
	}
	w := newTurnWatch()
	uncached, want := run(cacheOptions(w, -1), w)
	wantCacheStats(t, uncached, durable.CacheStats{Misses: n + 1})
	for name, opts := range map[string]func(durable.Options) durable.Options{
		"default": func(o durable.Options) durable.Options { return o },
		// Every turn's ack-and-fetch would otherwise keep the engine
		// uncached for a whole long poll, while the other dispatcher
		// fetches the instance's next message.
		"long poll":      func(o durable.Options) durable.Options { o.LongPollTimeout = time.Minute; return o },
		"one dispatcher": func(o durable.Options) durable.Options { o.OrchestrationConcurrency = 1; return o },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newTurnWatch()
			cached, got := run(opts(cacheOptions(w, 1000)), w)
			wantCacheStats(t, cached, durable.CacheStats{Hits: n, Misses: 1})
			wantSameHistories(t, "seq", got, want)
		})
	}
}

// mixedRegistry registers Mixed, whose execution goes through most of what
// a turn can resume: an activity, KV and custom status, an external event,
// a timer racing an event, a sub-orchestration, a queue message and a
// continue-as-new whose second execution runs one more activity.
func mixedRegistry() *durable.Registry {
	reg := cacheRegistry(newCounts())
	reg.MustAddOrchestration("MixedChild", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		return ctx.ScheduleActivity("Step", "child:"+in).Get()
	})
	reg.MustAddOrchestration("Mixed", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		if strings.HasSuffix(in, "#2") {
			return ctx.ScheduleActivity("Step", in).Get()
		}
		a, err := ctx.ScheduleActivity("Step", in+"/a").Get()
		if err != nil {
			return "", err
		}
		ctx.SetValue("a", a)
		ctx.SetCustomStatus("at-go")
		ev, err := ctx.WaitForEvent("go").Get()
		if err != nil {
			return "", err
		}
		ctx.SetCustomStatus("at-timer")
		if ctx.Select(ctx.Timer(time.Hour), ctx.WaitForEvent("never")) != 0 {
			return "", fmt.Errorf("an event nobody raises won the race")
		}
		child, err := ctx.ScheduleSubOrchestration("MixedChild", a+"|"+ev, durable.WithInstanceID(ctx.InstanceID()+"-child")).Get()
		if err != nil {
			return "", err
		}
		ctx.SetCustomStatus("at-queue")
		q, err := ctx.Dequeue("q").Get()
		if err != nil {
			return "", err
		}
		ctx.ContinueAsNew(in + "|" + child + "|" + q + "#2")
		return "", nil
	})
	return reg
}

// TestCacheMatchesReplayAcrossFeatures runs Mixed with the cache and
// without it, driving both the same way, and compares every history.
func TestCacheMatchesReplayAcrossFeatures(t *testing.T) {
	t.Parallel()
	run := func(entries int) (*durable.Runtime, [][][]duroxide.Event) {
		w := newTurnWatch()
		env := durabletest.Start(t, mixedRegistry(), durabletest.WithOptions(cacheOptions(w, entries)))
		c := env.Client
		start(t, c, "mixed", "Mixed", "m")
		waitCustomStatus(t, c, "mixed", "at-go")
		raise(t, c, "mixed", "go", "went")
		waitCustomStatus(t, c, "mixed", "at-timer")
		env.Advance(2 * time.Hour)
		waitCustomStatus(t, c, "mixed", "at-queue")
		if err := c.EnqueueEvent(t.Context(), "mixed", "q", "queued"); err != nil {
			t.Fatal(err)
		}
		mustComplete(t, env.Wait(t, "mixed"), "M|CHILD:M/A|WENT|QUEUED#2")
		w.idle(t)
		return env.Runtime, [][][]duroxide.Event{executionHistories(t, c, "mixed"), executionHistories(t, c, "mixed-child")}
	}
	cached, got := run(1000)
	uncached, want := run(-1)
	// Misses: the parent's first turn, its second execution's first turn
	// (the first one ended) and the child's first turn; every other turn
	// (five of the parent's first execution, one of its second, one of
	// the child's) resumes cached code.
	wantCacheStats(t, cached, durable.CacheStats{Hits: 7, Misses: 3})
	wantCacheStats(t, uncached, durable.CacheStats{Misses: 10})
	wantSameHistories(t, "mixed", got[0], want[0])
	wantSameHistories(t, "mixed-child", got[1], want[1])
}

// twoEventsRegistry registers TwoEvents: it subscribes to a and b in its
// first turn, then returns their data.
func twoEventsRegistry() *durable.Registry {
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("TwoEvents", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		fa, fb := ctx.WaitForEvent("a"), ctx.WaitForEvent("b")
		ctx.SetCustomStatus("waiting")
		a, err := fa.Get()
		if err != nil {
			return "", err
		}
		b, err := fb.Get()
		return a + "+" + b, err
	})
	return reg
}

// TestCacheMissesWhenEventsWereAppendedElsewhere: the cached runtime's
// copy ends where its last turn did; an event appended to the stored
// history since (by tooling, here) makes the next turn miss, evict the
// copy and replay, so the code sees the appended event. Resuming the copy
// would have left the code waiting for a forever.
func TestCacheMissesWhenEventsWereAppendedElsewhere(t *testing.T) {
	t.Parallel()
	w := newTurnWatch()
	env := durabletest.Start(t, twoEventsRegistry(), durabletest.WithOptions(cacheOptions(w, 1000)))
	start(t, env.Client, "two", "TwoEvents", "")
	waitCustomStatus(t, env.Client, "two", "waiting")
	w.idle(t)
	if s := env.Runtime.CacheStats(); s.Entries != 1 {
		t.Fatalf("the waiting instance is not cached: %+v", s)
	}
	h, err := env.Provider.Read(t.Context(), "two")
	if err != nil {
		t.Fatal(err)
	}
	last := h[len(h)-1].EventID
	appended := duroxide.NewEvent(last+1, "two", 1, nil, duroxide.ExternalEventEvent{Name: "a", Data: "appended"})
	if err := env.Provider.AppendWithExecution(t.Context(), "two", 1, []duroxide.Event{appended}); err != nil {
		t.Fatal(err)
	}
	raise(t, env.Client, "two", "b", "raised")
	mustComplete(t, env.Wait(t, "two"), "appended+raised")
	w.idle(t)
	wantCacheStats(t, env.Runtime, durable.CacheStats{Misses: 2, Evictions: 1})
}

// TestCacheMissesWhenAnotherRuntimeRanTheInstance: runtime A caches an
// instance waiting at its first gate, then freezes; runtime B runs it to
// the second gate and stops; A comes back and must not resume its copy:
// its next turn misses, evicts and replays B's history.
func TestCacheMissesWhenAnotherRuntimeRanTheInstance(t *testing.T) {
	t.Parallel()
	runs := newCounts()
	wa, wb := newTurnWatch(), newTurnWatch()
	var cut *severable
	env := durabletest.Start(t, cacheRegistry(runs), durabletest.WithOptions(cacheOptions(wa, 1000)),
		durabletest.WithProviderWrapper(func(p duroxide.Provider) duroxide.Provider {
			cut = newSeverable(p)
			return cut
		}))
	t.Cleanup(cut.Release)
	c := durable.NewClient(env.Provider)
	start(t, c, "moved", "Gated", "")
	waitCustomStatus(t, c, "moved", "g1")
	wa.idle(t)
	wantCacheStats(t, env.Runtime, durable.CacheStats{Hits: 1, Misses: 1, Entries: 1, Bytes: env.Runtime.CacheStats().Bytes})

	cut.Sever()
	b := env.NewRuntime(t, cacheRegistry(runs), cacheOptions(wb, 1000))
	raise(t, c, "moved", "g1", "one")
	waitCustomStatus(t, c, "moved", "g2")
	wb.idle(t)
	shutdown(t, b)
	wantCacheStats(t, b, durable.CacheStats{Hits: 1, Misses: 1})

	before := env.Runtime.CacheStats()
	cut.Reconnect()
	raise(t, c, "moved", "g2", "two")
	mustComplete(t, env.Wait(t, "moved"), gatedOutput("moved", "one", "two"))
	wa.idle(t)
	// The g2 turn misses and evicts the copy B made stale; the last turn
	// resumes what the g2 turn cached.
	wantCacheStats(t, env.Runtime, durable.CacheStats{Hits: before.Hits + 1, Misses: before.Misses + 1, Evictions: 1})
	runs.wantEach(t, 1, 3, 1)
}

func shutdown(t *testing.T, rt *durable.Runtime) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

// ackFaults passes calls to the provider, except the orchestration acks of
// the target-th turn (the target-th lock token acked), which fault decides:
// call counts that turn's ack calls from 1, ack applies the commit.
type ackFaults struct {
	duroxide.Provider
	target   int
	fault    func(call int, ack func() error) (err error, faulted bool)
	injected chan struct{} // closed at the first fault

	mu     sync.Mutex
	tokens map[string]int // token -> turn number
	calls  int            // ack calls of the target turn
	once   sync.Once
}

func newAckFaults(p duroxide.Provider, target int, fault func(int, func() error) (error, bool)) *ackFaults {
	return &ackFaults{Provider: p, target: target, fault: fault, injected: make(chan struct{}), tokens: map[string]int{}}
}

func (f *ackFaults) inject(token string, ack func() error) (error, bool) {
	f.mu.Lock()
	turn, ok := f.tokens[token]
	if !ok {
		turn = len(f.tokens) + 1
		f.tokens[token] = turn
	}
	if turn == f.target {
		f.calls++
	}
	call := f.calls
	f.mu.Unlock()
	if turn != f.target {
		return nil, false
	}
	err, faulted := f.fault(call, ack)
	if faulted {
		f.once.Do(func() { close(f.injected) })
	}
	return err, faulted
}

func (f *ackFaults) AckOrchestrationItem(ctx context.Context, token string, c duroxide.OrchestrationCommit) error {
	if err, faulted := f.inject(token, func() error { return f.Provider.AckOrchestrationItem(ctx, token, c) }); faulted {
		return err
	}
	return f.Provider.AckOrchestrationItem(ctx, token, c)
}

func (f *ackFaults) AckOrchestrationItemAndFetch(ctx context.Context, token string, c duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	if err, faulted := f.inject(token, func() error { return f.Provider.AckOrchestrationItem(ctx, token, c) }); faulted {
		return nil, err
	}
	return f.Provider.(duroxide.OrchestrationAckFetcher).AckOrchestrationItemAndFetch(ctx, token, c, lockTimeout, pollTimeout, filter)
}

// TestCacheTurnWhoseAckFailsIsNotCached: a three-activity Sequence whose
// second turn (a hit) does not commit as the runtime asked. Its engine,
// which ran a turn the store may not have, must not be cached: the
// instance's next turn misses and replays, and the result is right.
func TestCacheTurnWhoseAckFailsIsNotCached(t *testing.T) {
	t.Parallel()
	const n = 3
	for _, tc := range []struct {
		name  string
		fault func(call int, ack func() error) (error, bool)
		// redo is how the test gets the dropped turn redone: nothing, or
		// the clock moved past a lock or an abandon delay.
		redo time.Duration
		want durable.CacheStats
	}{{
		// The lock was taken over: nothing applied, the turn is dropped
		// and redone once the lock expires.
		name: "lock lost",
		fault: func(call int, _ func() error) (error, bool) {
			return fmt.Errorf("injected: %w", duroxide.ErrLockLost), call == 1
		},
		redo: 6 * time.Second, // past the 5s lock
		want: durable.CacheStats{Hits: n, Misses: 2},
	}, {
		// Storage keeps failing: nothing applied, the batch is abandoned
		// after the retries and redone after the abandon delay.
		name: "retryable, not applied",
		fault: func(int, func() error) (error, bool) {
			return duroxide.Retryable("ack_orchestration_item", "connection reset"), true
		},
		redo: 2 * time.Second,
		want: durable.CacheStats{Hits: n, Misses: 2},
	}, {
		// The commit applied but its reply was lost: the runtime cannot
		// tell, its re-ack finds the lock gone and it drops the turn. The
		// instance moved on without a cached copy: the next turn misses.
		name: "retryable, applied",
		fault: func(call int, ack func() error) (error, bool) {
			if call != 1 {
				return nil, false
			}
			if err := ack(); err != nil {
				return err, true
			}
			return duroxide.Retryable("ack_orchestration_item", "connection reset after the reply was sent"), true
		},
		want: durable.CacheStats{Hits: n - 1, Misses: 2},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runs, w := newCounts(), newTurnWatch()
			var f *ackFaults
			env := durabletest.Start(t, cacheRegistry(runs), durabletest.WithOptions(cacheOptions(w, 1000)),
				durabletest.WithProviderWrapper(func(p duroxide.Provider) duroxide.Provider {
					f = newAckFaults(p, 2, tc.fault)
					return f
				}))
			start(t, env.Client, "seq", "Sequence", fmt.Sprint(n))
			select {
			case <-f.injected:
			case <-time.After(30 * time.Second):
				t.Fatal("the second turn never acked")
			}
			w.await(t, "the faulted turn to end", func(active, ended int) bool { return ended >= 2 })
			if s := env.Runtime.CacheStats(); s.Entries != 0 {
				t.Fatalf("a turn whose ack failed was cached: %+v", s)
			}
			if tc.redo > 0 {
				env.Advance(tc.redo)
			}
			mustComplete(t, env.Wait(t, "seq"), sequenceOutput("seq", n))
			w.idle(t)
			wantCacheStats(t, env.Runtime, tc.want)
			runs.wantEach(t, 1, n, 1)
			h, err := env.Provider.Read(t.Context(), "seq")
			if err != nil {
				t.Fatal(err)
			}
			if got := len(h); got != 2+4*n { // started, n x (scheduled, completed, status, kv), completed
				t.Fatalf("history has %d events, want %d: the dropped turn left a trace or was lost", got, 2+4*n)
			}
		})
	}
}

// terminalRegistry registers Terminal: it waits for event go, then ends as
// its input says.
func terminalRegistry() *durable.Registry {
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Terminal", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		if in == "next" {
			return "continued", nil
		}
		ctx.SetCustomStatus("waiting")
		v, err := ctx.WaitForEvent("go").Get()
		if err != nil {
			return "", err
		}
		switch in {
		case "complete":
			return "done:" + v, nil
		case "fail":
			return "", fmt.Errorf("failed:%s", v)
		case "panic":
			panic("panicked:" + v)
		case "continue":
			ctx.ContinueAsNew("next")
			return "", nil
		}
		return "", fmt.Errorf("unknown input %q", in)
	})
	return reg
}

// TestCacheTerminalTurnsLeaveNoEntry: whatever ends an execution whose code
// is cached (completion, failure, panic, continue-as-new, nondeterminism,
// cancellation), the ending turn resumes the cached code and caches
// nothing afterwards.
func TestCacheTerminalTurnsLeaveNoEntry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, input string
		end         func(t *testing.T, env *durabletest.Env)
		check       func(t *testing.T, st durable.OrchestrationStatus)
		misses      uint64
	}{
		{"completed", "complete", raiseGo, func(t *testing.T, st durable.OrchestrationStatus) { mustComplete(t, st, "done:go!") }, 1},
		{"failed", "fail", raiseGo, wantFailure("failed:go!"), 1},
		{"panicked", "panic", raiseGo, wantFailure("panicked:go!"), 1},
		// The continue-as-new message's turn starts the next execution:
		// nothing of the ended one is cached for it, so it misses.
		{"continued as new", "continue", raiseGo, func(t *testing.T, st durable.OrchestrationStatus) { mustComplete(t, st, "continued") }, 2},
		{"nondeterminism", "complete", func(t *testing.T, env *durabletest.Env) {
			// A completion of an activity the execution never scheduled.
			if err := env.Provider.EnqueueForOrchestrator(t.Context(), duroxide.ActivityCompleted{Instance: "end", ExecutionID: 1, ID: 99, Result: "x"}, 0); err != nil {
				t.Fatal(err)
			}
		}, wantFailure("no matching schedule for completion id=99"), 1},
		{"cancelled", "complete", func(t *testing.T, env *durabletest.Env) {
			if err := env.Client.CancelInstance(t.Context(), "end", "stop"); err != nil {
				t.Fatal(err)
			}
		}, wantFailure("stop"), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newTurnWatch()
			env := durabletest.Start(t, terminalRegistry(), durabletest.WithOptions(cacheOptions(w, 1000)))
			start(t, env.Client, "end", "Terminal", tc.input)
			waitCustomStatus(t, env.Client, "end", "waiting")
			w.idle(t)
			if s := env.Runtime.CacheStats(); s.Entries != 1 {
				t.Fatalf("the waiting instance is not cached: %+v", s)
			}
			tc.end(t, env)
			tc.check(t, env.Wait(t, "end"))
			w.idle(t)
			wantCacheStats(t, env.Runtime, durable.CacheStats{Hits: 1, Misses: tc.misses})
		})
	}
}

func raiseGo(t *testing.T, env *durabletest.Env) { raise(t, env.Client, "end", "go", "go!") }

func wantFailure(contains string) func(*testing.T, durable.OrchestrationStatus) {
	return func(t *testing.T, st durable.OrchestrationStatus) {
		t.Helper()
		if st.Status != durable.StatusFailed || !strings.Contains(st.FailureMessage(), contains) {
			t.Fatalf("status %v %q, want a failure containing %q", st.Status, st.FailureMessage(), contains)
		}
	}
}

// runGated starts ids as Gated instances and drives each through both
// gates, checking at each gate that every instance waits there (wait runs
// between the phases, e.g. to check the cache), then checks every result.
func runGated(t *testing.T, c *durable.Client, ids []string, wait func(gate string)) {
	t.Helper()
	for _, id := range ids {
		start(t, c, id, "Gated", "")
	}
	for _, gate := range []string{"g1", "g2"} {
		for _, id := range ids {
			waitCustomStatus(t, c, id, gate)
		}
		wait(gate)
		for _, id := range ids {
			raise(t, c, id, gate, id+"@"+gate)
		}
	}
	for _, id := range ids {
		st, err := c.WaitForOrchestration(t.Context(), id, 30*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		mustComplete(t, st, gatedOutput(id, id+"@g1", id+"@g2"))
	}
}

func gatedIDs(prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return ids
}

// runGatedWith runs ids through Gated (see runGated) on a runtime whose
// options tweak adjusts, hands the cache's stats at each gate to atGate,
// checks every activity ran once and returns the stats once every turn
// has ended.
func runGatedWith(t *testing.T, ids []string, tweak func(*durable.Options), atGate func(gate string, s durable.CacheStats)) durable.CacheStats {
	t.Helper()
	runs, w := newCounts(), newTurnWatch()
	o := cacheOptions(w, 1000)
	tweak(&o)
	env := durabletest.Start(t, cacheRegistry(runs), durabletest.WithOptions(o))
	runGated(t, env.Client, ids, func(gate string) {
		w.idle(t)
		atGate(gate, env.Runtime.CacheStats())
	})
	w.idle(t)
	runs.wantEach(t, len(ids), 3, 1)
	return env.Runtime.CacheStats()
}

// TestCacheBoundsEvictAndEveryInstanceStillCompletes: five instances wait
// at gates on a runtime that caches two. The bound holds at every gate,
// evictions are counted, the evicted instances' turns replay, and every
// instance completes with the right result.
func TestCacheBoundsEvictAndEveryInstanceStillCompletes(t *testing.T) {
	t.Parallel()
	const n = 5
	for name, bound := range map[string]durable.Options{
		"entries": {InstanceCacheEntries: 2},
		// Room for two waiting Gated instances, not three (an estimated
		// 830 bytes each at their first gate, 1,300 at the second).
		"bytes": {InstanceCacheBytes: 2000},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := runGatedWith(t, gatedIDs("bound", n), func(o *durable.Options) {
				if bound.InstanceCacheEntries != 0 {
					o.InstanceCacheEntries = bound.InstanceCacheEntries
				}
				o.InstanceCacheBytes = bound.InstanceCacheBytes
			}, func(gate string, s durable.CacheStats) {
				if s.Entries < 1 || s.Entries > 2 || (bound.InstanceCacheBytes > 0 && s.Bytes > bound.InstanceCacheBytes) {
					t.Fatalf("at %s: %+v, want 1 or 2 entries (byte bound %d)", gate, s, bound.InstanceCacheBytes)
				}
			})
			// Each instance has six turns (six takes); the first five
			// leave its engine cached (five puts), the last ends it. An
			// engine put is later taken by a hit or evicted.
			const takes, puts = 6 * n, 5 * n
			if s.Hits+s.Misses != takes || s.Hits+s.Evictions != puts || s.Entries != 0 || s.Bytes != 0 {
				t.Errorf("stats %+v: want %d takes (hits+misses) and %d puts (hits+evictions), nothing left", s, takes, puts)
			}
			// At each gate at least three instances were evicted: their
			// gate turns miss, as does every instance's first turn.
			if s.Misses < n+3+3 {
				t.Errorf("stats %+v: want at least %d misses", s, n+6)
			}
		})
	}
}

// TestCacheOffRuntimeNeverHits: with either bound negative nothing is
// cached and every turn replays.
func TestCacheOffRuntimeNeverHits(t *testing.T) {
	t.Parallel()
	for name, off := range map[string]func(*durable.Options){
		"entries": func(o *durable.Options) { o.InstanceCacheEntries = -1 },
		"bytes":   func(o *durable.Options) { o.InstanceCacheBytes = -1 },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ids := gatedIDs("off", 3)
			s := runGatedWith(t, ids, off, func(gate string, s durable.CacheStats) {
				if s.Entries != 0 || s.Hits != 0 {
					t.Fatalf("at %s a runtime without a cache cached: %+v", gate, s)
				}
			})
			if want := (durable.CacheStats{Misses: uint64(6 * len(ids))}); s != want {
				t.Errorf("cache stats\n got %+v\nwant %+v", s, want)
			}
		})
	}
}

// TestCacheEnvSwitchTurnsItOff proves DUROXIDE_INSTANCE_CACHE=off reaches
// the runtimes of the suite (Env's, and the ported tests' harness), and
// leaves alone the tests that size the cache themselves.
func TestCacheEnvSwitchTurnsItOff(t *testing.T) {
	t.Setenv(durabletest.EnvInstanceCache, "off")
	for name, tc := range map[string]struct {
		entries int
		hits    bool
	}{"default": {0, false}, "sized by the test": {1000, true}} {
		t.Run(name, func(t *testing.T) {
			w := newTurnWatch()
			env := durabletest.Start(t, cacheRegistry(newCounts()), durabletest.WithOptions(cacheOptions(w, tc.entries)))
			mustComplete(t, env.StartAndWait(t, "seq", "Sequence", "3"), sequenceOutput("seq", 3))
			w.await(t, "every turn but the last to end", func(_, ended int) bool { return ended >= 3 })
			if s := env.Runtime.CacheStats(); (s.Hits == 3) != tc.hits || s.Hits+s.Misses != 4 {
				t.Errorf("with %s=off: %+v, hits %v", durabletest.EnvInstanceCache, s, tc.hits)
			}
		})
	}
	h := newHarness(t, cacheRegistry(newCounts()))
	h.start("seq", "Sequence", "3")
	h.wantCompleted("seq", sequenceOutput("seq", 3))
	if s := h.rt.CacheStats(); s.Hits != 0 || s.Misses == 0 {
		t.Errorf("harness with %s=off: %+v", durabletest.EnvInstanceCache, s)
	}
}

// TestCacheChaosRuntimeKilledHoldingCachedInstances: runtime A holds every
// instance cached at its first gate when it freezes abruptly, some of its
// turns and activities in flight with their locks held (half the
// instances were just released from the gate). Runtime B takes over past
// the locks and runs every instance to its second gate, then stops. A
// comes back with copies B made stale, alone, and finishes every
// instance. Each must complete exactly once with the right result and a
// well-formed history; activities run at least once, and exactly once
// where nothing of theirs was in flight at the freeze.
func TestCacheChaosRuntimeKilledHoldingCachedInstances(t *testing.T) {
	t.Parallel()
	const n = 8
	runs := newCounts()
	wa, wb := newTurnWatch(), newTurnWatch()
	opts := func(w *turnWatch) durable.Options {
		o := cacheOptions(w, 1000)
		o.OrchestrationConcurrency, o.WorkerConcurrency = 2, 2
		o.Logger = slog.New(slog.DiscardHandler) // the frozen runtime's failing calls are expected
		return o
	}
	var cut *severable
	env := durabletest.Start(t, cacheRegistry(runs), durabletest.WithOptions(opts(wa)),
		durabletest.WithProviderWrapper(func(p duroxide.Provider) duroxide.Provider {
			cut = newSeverable(p)
			return cut
		}))
	t.Cleanup(cut.Release) // if the test fails before A reconnects
	a, c := env.Runtime, durable.NewClient(env.Provider)
	ids := gatedIDs("chaos", n)
	early, late := ids[:n/2], ids[n/2:]
	for _, id := range ids {
		start(t, c, id, "Gated", "")
	}
	for _, id := range ids {
		waitCustomStatus(t, c, id, "g1")
	}
	wa.idle(t)
	if s := a.CacheStats(); s.Entries != n {
		t.Fatalf("runtime A holds %d instances, want all %d: %+v", s.Entries, n, s)
	}

	for _, id := range early {
		raise(t, c, id, "g1", id+"@g1")
	}
	cut.Sever()
	for _, id := range late {
		raise(t, c, id, "g1", id+"@g1")
	}
	env.Advance(time.Hour) // past every lock A holds
	b := env.NewRuntime(t, cacheRegistry(runs), opts(wb))
	for _, id := range ids {
		waitCustomStatus(t, c, id, "g2")
	}
	wb.idle(t)
	shutdown(t, b)
	if s := b.CacheStats(); s.Entries != 0 {
		t.Errorf("runtime B kept cached instances after shutting down: %+v", s)
	}

	before := a.CacheStats()
	cut.Reconnect()
	for _, id := range ids {
		raise(t, c, id, "g2", id+"@g2")
	}
	for _, id := range ids {
		st, err := c.WaitForOrchestration(t.Context(), id, 30*time.Second)
		if err != nil {
			t.Fatalf("%s did not finish: %v", id, err)
		}
		mustComplete(t, st, gatedOutput(id, id+"@g1", id+"@g2"))
		hist := executionHistories(t, c, id)
		if len(hist) != 1 {
			t.Fatalf("%s: %d executions, want 1", id, len(hist))
		}
		if problems := gatedHistoryProblems(hist[0]); len(problems) > 0 {
			t.Errorf("%s: history is malformed: %s", id, strings.Join(problems, "; "))
		}
	}
	wa.idle(t)

	// After A came back, each instance had two turns there (its g2 turn
	// and its last): the late instances' g2 turns found copies B had made
	// stale, so they missed and evicted them.
	after := a.CacheStats()
	hits, misses, evicted := after.Hits-before.Hits, after.Misses-before.Misses, after.Evictions-before.Evictions
	t.Logf("runtime A held %d entries when it came back: %d hits, %d misses, %d evictions since", before.Entries, hits, misses, evicted)
	if hits+misses != 2*n || misses < uint64(len(late)) || evicted < uint64(len(late)) || evicted > uint64(before.Entries) || after.Entries != 0 {
		t.Errorf("runtime A after coming back: %d hits, %d misses, %d evictions (of %d entries held), %d left; want %d turns, at least %d stale misses",
			hits, misses, evicted, before.Entries, after.Entries, 2*n, len(late))
	}
	runs.mu.Lock()
	defer runs.mu.Unlock()
	for _, id := range ids {
		for i := range 3 {
			in := fmt.Sprintf("%s/%d", id, i)
			got, atMost := runs.m[in], 1
			if i == 1 && slices.Contains(early, id) {
				atMost = 2 // its activity may have run on A before the freeze, its result unacked
			}
			if got < 1 || got > atMost {
				t.Errorf("activity %s ran %d times, want 1..%d", in, got, atMost)
			}
		}
	}
}

// gatedHistoryProblems lists what is wrong with a finished Gated history:
// a well-formed execution of three activities that completed once, and
// each gate's event recorded exactly once.
func gatedHistoryProblems(hist []duroxide.Event) []string {
	out := executionProblems(hist, 3, "ExternalSubscribed", "ExternalEvent", "CustomStatusUpdated")
	events := map[string]int{}
	for _, ev := range hist {
		if k, ok := ev.Kind.(duroxide.ExternalEventEvent); ok {
			events[k.Name]++
		}
	}
	if events["g1"] != 1 || events["g2"] != 1 {
		out = append(out, fmt.Sprintf("gate events recorded %v, want each once", events))
	}
	return out
}

// TestCacheTimersSetByCachedTurnsFireWhenDue: a cached turn's ack-and-fetch
// polls only briefly; the timer the turn set must still wake a fetcher when
// it is due, not after the provider's periodic refresh (10 s). Real time:
// the clock is not moved, so no wake-up is forced.
func TestCacheTimersSetByCachedTurnsFireWhenDue(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("Timers", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		for range 3 {
			if _, err := ctx.Timer(20 * time.Millisecond).Get(); err != nil {
				return "", err
			}
		}
		return "fired", nil
	})
	w := newTurnWatch()
	env := durabletest.Start(t, reg, durabletest.WithOptions(cacheOptions(w, 1000)))
	start(t, env.Client, "timers", "Timers", "")
	st, err := env.Client.WaitForOrchestration(t.Context(), "timers", 8*time.Second)
	if err != nil {
		t.Fatalf("three 20ms timers did not fire within 8s: %v", err)
	}
	mustComplete(t, st, "fired")
	w.await(t, "every turn but the last to end", func(_, ended int) bool { return ended >= 3 })
	wantCacheStats(t, env.Runtime, durable.CacheStats{Hits: 3, Misses: 1})
}

// slowAckFetch passes calls to the provider, but an orchestration
// ack-and-fetch of a turn that does not end its instance returns only once
// another one has begun: as if its fetch half long-polled for longer than
// the next turn of the instance takes to be fetched, by the other
// dispatcher, and to run. released counts the calls let go that way;
// timedOut the ones let go after the bound instead.
type slowAckFetch struct {
	duroxide.Provider
	mu       sync.Mutex
	begun    int
	changed  chan struct{} // closed and replaced as a call begins or a held one ends
	held     int           // calls held after their ack (nothing fetched)
	released int
	timedOut int
}

// ring wakes whoever waits on changed. The caller holds s.mu.
func (s *slowAckFetch) ring() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// awaitHeld waits until every held call has been let go (or timed out): the
// last one ends after the turn it held for, in its own goroutine.
func (s *slowAckFetch) awaitHeld(t *testing.T) {
	t.Helper()
	bound := time.After(30 * time.Second)
	for {
		s.mu.Lock()
		done, wait := s.released+s.timedOut >= s.held, s.changed
		s.mu.Unlock()
		if done {
			return
		}
		select {
		case <-wait:
		case <-bound:
			t.Fatalf("%d of %d held calls ended", s.released+s.timedOut, s.held)
		}
	}
}

// AckOrchestrationItemAndFetch is the combined call the runtime looks for
// first; the runtime calls the reporting one below when it has an engine to
// cache.
func (s *slowAckFetch) AckOrchestrationItemAndFetch(ctx context.Context, token string, c duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return s.AckOrchestrationItemAndFetchReporting(ctx, token, c, lockTimeout, pollTimeout, filter, false, nil)
}

func (s *slowAckFetch) AckOrchestrationItemAndFetchReporting(ctx context.Context, token string, c duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter, lazy bool, applied func()) (*duroxide.OrchestrationItem, error) {
	s.mu.Lock()
	s.begun++
	mine := s.begun
	s.ring()
	s.mu.Unlock()
	item, err := s.Provider.(duroxide.OrchestrationAckReporter).AckOrchestrationItemAndFetchReporting(ctx, token, c, lockTimeout, pollTimeout, filter, lazy, applied)
	if c.Metadata.Status != "" || err != nil || item != nil { // "": the instance goes on
		return item, err
	}
	bound := time.After(20 * time.Second)
	s.mu.Lock()
	s.held++
	s.mu.Unlock()
	for {
		s.mu.Lock()
		if s.begun > mine {
			s.released++
			s.ring()
			s.mu.Unlock()
			return nil, nil
		}
		wait := s.changed
		s.mu.Unlock()
		select {
		case <-wait:
		case <-bound:
			s.mu.Lock()
			s.timedOut++
			s.ring()
			s.mu.Unlock()
			return nil, nil
		}
	}
}

// TestCacheTurnDoesNotWaitForTheAckFetchPoll: a sequence's turns alternate
// between two dispatchers, each turn's ack-and-fetch still in its fetch
// half's poll when the instance's next message arrives. The engine must be
// cached as soon as the commit applied, not when that call returns: the
// other dispatcher's take of the instance waited for the call (up to the
// cache's wait bound, the lock timeout, then replayed: a miss), which made
// a sequence of 1,000 activities on the application's path twice as slow
// as with ack-and-fetch given no poll.
func TestCacheTurnDoesNotWaitForTheAckFetchPoll(t *testing.T) {
	t.Parallel()
	const n = 3
	w := newTurnWatch()
	opts := cacheOptions(w, 1000)
	opts.OrchestrationConcurrency = 2
	slow := &slowAckFetch{changed: make(chan struct{})}
	env := durabletest.Start(t, cacheRegistry(newCounts()), durabletest.WithOptions(opts),
		durabletest.WithAckFetch(true), // the ack-and-fetch path is what it tests
		durabletest.WithProviderWrapper(func(p duroxide.Provider) duroxide.Provider {
			slow.Provider = p
			return slow
		}))
	mustComplete(t, env.StartAndWait(t, "seq", "Sequence", fmt.Sprint(n)), sequenceOutput("seq", n))
	w.await(t, "every turn but the last to end", func(_, ended int) bool { return ended >= n })
	wantCacheStats(t, env.Runtime, durable.CacheStats{Hits: n, Misses: 1})
	slow.awaitHeld(t)
	slow.mu.Lock()
	defer slow.mu.Unlock()
	// How many turns' calls are held depends on which dispatcher's request
	// is the oldest when the activity's ack readies the instance (its
	// piggybacked fetch serves that one); the cache must have hit whatever
	// the mix, and at least one held call proves the case was run.
	if slow.held == 0 || slow.timedOut > 0 || slow.released != slow.held {
		t.Errorf("%d calls held, %d let go by the next turn, %d by the bound: want at least one, all by the next turn",
			slow.held, slow.released, slow.timedOut)
	}
}
