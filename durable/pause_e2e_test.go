package durable_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// pauseRegistry registers "Gate" (returns the event "go"), "Sleeper" (an
// hour's timer), "Ping" (one activity: the barrier) and the activity "Echo".
func pauseRegistry() *durable.Registry {
	reg := durable.NewRegistry()
	reg.MustAddActivity("Echo", func(_ *durable.ActivityContext, in string) (string, error) { return in, nil })
	reg.MustAddOrchestration("Gate", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.WaitForEvent("go").Get()
	})
	reg.MustAddOrchestration("Sleeper", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if _, err := ctx.Timer(time.Hour).Get(); err != nil {
			return "", err
		}
		return "woke", nil
	})
	reg.MustAddOrchestration("Ping", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		return ctx.ScheduleActivity("Echo", in).Get()
	})
	return reg
}

// pauseBarrier runs a "Ping" instance to completion. Its start is younger
// than any message held for a paused instance, and the dispatchers fetch
// the oldest visible message first: were the paused instance fetchable,
// its turn would have run before the barrier's three turns.
func pauseBarrier(t *testing.T, env *durabletest.Env, id string) {
	t.Helper()
	if st := env.StartAndWait(t, id, "Ping", "x"); st.Status != durable.StatusCompleted {
		t.Fatalf("barrier %s: %v", id, st.Status)
	}
}

// waitHeld waits until n messages or more wait for instance, failing at
// once if it ends while paused.
func waitHeld(t *testing.T, c *durable.Client, instance string, n uint64) duroxide.PauseState {
	t.Helper()
	var st duroxide.PauseState
	durabletest.Eventually(t, fmt.Sprintf("%d messages held for %s", n, instance), func() (bool, error) {
		var err error
		if st, err = c.PauseState(context.Background(), instance); err != nil {
			return false, err
		}
		if s, err := c.Status(context.Background(), instance); err == nil && s.IsTerminal() {
			t.Fatalf("%s ended (%v) while paused", instance, s.Status)
		}
		return st.Held >= n, nil
	})
	return st
}

// countKind counts the events of kind K in instance's stored history.
func countKind[K any](t *testing.T, env *durabletest.Env, instance string) int {
	t.Helper()
	h, err := env.Provider.Read(context.Background(), instance)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range h {
		if _, ok := ev.Kind.(K); ok {
			n++
		}
	}
	return n
}

// historyHas reports whether instance's stored history holds an event of
// kind K.
func historyHas[K any](t *testing.T, env *durabletest.Env, instance string) bool {
	t.Helper()
	return countKind[K](t, env, instance) > 0
}

// A raised event reaches a paused instance's queue but no turn runs until
// it is resumed; then it is delivered. Bad input gets typed errors.
func TestPauseHoldsRaisedEvent(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, pauseRegistry())
	ctx := context.Background()
	if err := env.Client.PauseInstance(ctx, "nope"); !errors.Is(err, durable.ErrNotFound) {
		t.Fatalf("pause of an unknown instance: %v, want ErrNotFound", err)
	}
	if err := env.Client.ResumeInstance(ctx, ""); !errors.Is(err, duroxide.ErrInvalidInput) {
		t.Fatalf("resume of an empty id: %v, want ErrInvalidInput", err)
	}
	if err := env.Client.StartOrchestration(ctx, "g", "Gate", ""); err != nil {
		t.Fatal(err)
	}
	env.WaitForEventSubscription(t, "g", "go")
	if err := env.Client.PauseInstance(ctx, "g"); err != nil {
		t.Fatal(err)
	}
	if st, err := env.Client.Status(ctx, "g"); err != nil || st.Status != durable.StatusRunning || !st.Paused {
		t.Fatalf("status %+v %v, want Running and paused", st, err)
	}
	if err := env.Client.RaiseEvent(ctx, "g", "go", `"yes"`); err != nil {
		t.Fatal(err)
	}
	waitHeld(t, env.Client, "g", 1)
	pauseBarrier(t, env, "barrier-g")
	if historyHas[duroxide.ExternalEventEvent](t, env, "g") {
		t.Fatal("the event was delivered to a paused instance")
	}
	if err := env.Client.ResumeInstance(ctx, "g"); err != nil {
		t.Fatal(err)
	}
	st := env.Wait(t, "g")
	if st.Status != durable.StatusCompleted || st.Output != `"yes"` || st.Paused {
		t.Fatalf("after resume: %+v, want Completed with the event's data", st)
	}
}

// A turn running when the instance is paused commits; the activity it
// scheduled runs, but its result waits until resume.
func TestPauseTurnInFlightCommits(t *testing.T) {
	t.Parallel()
	reg := pauseRegistry()
	entered, proceed := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	// it blocks in its second turn: the first creates the instance's
	// record, before which there is nothing to pause (ErrNotFound)
	reg.MustAddOrchestration("Slow", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if _, err := ctx.ScheduleActivity("Echo", "a").Get(); err != nil {
			return "", err
		}
		if first.CompareAndSwap(false, true) {
			close(entered)
			<-proceed
		}
		return ctx.ScheduleActivity("Echo", "done").Get()
	})
	env := durabletest.Start(t, reg)
	ctx := context.Background()
	if err := env.Client.StartOrchestration(ctx, "s", "Slow", ""); err != nil {
		t.Fatal(err)
	}
	<-entered
	if err := env.Client.PauseInstance(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	close(proceed)
	waitHeld(t, env.Client, "s", 1) // the activity's result
	pauseBarrier(t, env, "barrier-s")
	if n := countKind[duroxide.ActivityScheduledEvent](t, env, "s"); n != 2 {
		t.Fatalf("%d activities scheduled, want 2: the turn in flight did not commit", n)
	}
	if n := countKind[duroxide.ActivityCompletedEvent](t, env, "s"); n != 1 {
		t.Fatalf("%d activity results delivered, want 1: the second went to a paused instance", n)
	}
	if st, err := env.Client.Status(ctx, "s"); err != nil || !st.Paused || st.Status != durable.StatusRunning {
		t.Fatalf("status %+v %v, want Running and paused", st, err)
	}
	if err := env.Client.ResumeInstance(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if st := env.Wait(t, "s"); st.Status != durable.StatusCompleted || st.Output != "done" {
		t.Fatalf("after resume: %+v", st)
	}
}

// A timer that fires while its instance is paused is kept and delivered
// after resume.
func TestPauseKeepsFiredTimer(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, pauseRegistry())
	ctx := context.Background()
	if err := env.Client.StartOrchestration(ctx, "t", "Sleeper", ""); err != nil {
		t.Fatal(err)
	}
	env.WaitForTimer(t, "t")
	if err := env.Client.PauseInstance(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	env.Advance(2 * time.Hour)
	pauseBarrier(t, env, "barrier-t")
	if historyHas[duroxide.TimerFiredEvent](t, env, "t") {
		t.Fatal("a timer fired into a paused instance")
	}
	if st := waitHeld(t, env.Client, "t", 1); !st.Paused {
		t.Fatalf("pause state %+v", st)
	}
	if err := env.Client.ResumeInstance(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if st := env.Wait(t, "t"); st.Status != durable.StatusCompleted || st.Output != "woke" {
		t.Fatalf("after resume: %+v", st)
	}
}
