package durable_test

import (
	"context"
	"fmt"
	"reflect"
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
	execs, err := c.ListExecutions(t.Context(), instance)
	if err != nil {
		t.Fatalf("executions of %s: %v", instance, err)
	}
	var out [][]duroxide.Event
	for _, id := range execs {
		h, err := c.ReadExecutionHistory(t.Context(), instance, id)
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
