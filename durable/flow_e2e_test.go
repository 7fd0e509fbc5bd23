package durable_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// With one worker, a turn that schedules three "Lo" activities and then
// three "Hi" ones gets the "Hi" ones run first once "Hi" has the higher
// priority, each priority in the order scheduled; the history is what it
// would be without priorities (the events record the scheduling order).
func TestActivityPriorityRunsHigherFirst(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var ran []string
	reg := durable.NewRegistry()
	for _, name := range []string{"Lo", "Hi"} {
		reg.MustAddActivity(name, func(_ *durable.ActivityContext, in string) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			ran = append(ran, name+in)
			return in, nil
		})
	}
	reg.MustAddOrchestration("Fan", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		var fs []durable.Future[string]
		for _, a := range []string{"Lo1", "Lo2", "Lo3", "Hi1", "Hi2", "Hi3"} {
			fs = append(fs, ctx.ScheduleActivity(a[:2], a[2:]))
		}
		for _, f := range fs {
			if _, err := f.Get(); err != nil {
				return "", err
			}
		}
		return "done", nil
	})
	env := durabletest.Start(t, reg, durabletest.WithOptions(durable.Options{WorkerConcurrency: 1, LongPollTimeout: 100 * time.Millisecond}))
	ctx := context.Background()
	if err := env.Client.SetActivityPriority(ctx, "Hi", 4); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.SetActivityPriority(ctx, "Hi", duroxide.MaxPriority+1); !errors.Is(err, duroxide.ErrInvalidInput) {
		t.Fatalf("priority above the maximum: %v, want ErrInvalidInput", err)
	}
	if st := env.StartAndWait(t, "fan", "Fan", ""); st.Status != durable.StatusCompleted {
		t.Fatalf("status %v", st.Status)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"Hi1", "Hi2", "Hi3", "Lo1", "Lo2", "Lo3"}; !slices.Equal(ran, want) {
		t.Fatalf("activities ran %v, want %v", ran, want)
	}
}

// Pausing an orchestration name holds its running instances and its new
// starts, shows in their status and in the settings, and lets other names
// run; resuming delivers what was held.
func TestPauseOrchestrationNameHoldsItsInstances(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, pauseRegistry())
	ctx := context.Background()
	if err := env.Client.PauseOrchestrationName(ctx, ""); !errors.Is(err, duroxide.ErrInvalidInput) {
		t.Fatalf("pause of an empty name: %v, want ErrInvalidInput", err)
	}
	if err := env.Client.StartOrchestration(ctx, "g1", "Gate", ""); err != nil {
		t.Fatal(err)
	}
	env.WaitForEventSubscription(t, "g1", "go")
	if err := env.Client.PauseOrchestrationName(ctx, "Gate"); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.RaiseEvent(ctx, "g1", "go", `"one"`); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.StartOrchestration(ctx, "g2", "Gate", ""); err != nil {
		t.Fatal(err)
	}
	st := waitHeld(t, env.Client, "g1", 1)
	if !st.Paused || !st.NamePaused {
		t.Fatalf("pause state of g1 %+v, want held by its name", st)
	}
	pauseBarrier(t, env, "barrier-name") // another name runs, younger than what is held
	if historyHas[duroxide.ExternalEventEvent](t, env, "g1") {
		t.Fatal("the event was delivered to an instance of a paused name")
	}
	if h, err := env.Provider.Read(ctx, "g2"); err != nil || len(h) != 0 {
		t.Fatalf("a start of a paused name ran: %d events, %v", len(h), err)
	}
	if s, err := env.Client.Status(ctx, "g1"); err != nil || s.Status != durable.StatusRunning || !s.Paused {
		t.Fatalf("status of g1 %+v %v, want Running and paused", s, err)
	}
	fs, err := env.Client.FlowSettings(ctx)
	if err != nil || fs.PausedNames["Gate"].SinceMs == 0 {
		t.Fatalf("settings %+v %v, want Gate paused", fs, err)
	}
	if err := env.Client.ResumeOrchestrationName(ctx, "Gate"); err != nil {
		t.Fatal(err)
	}
	if s := env.Wait(t, "g1"); s.Status != durable.StatusCompleted || s.Output != `"one"` {
		t.Fatalf("g1 after resume: %+v", s)
	}
	env.WaitForEventSubscription(t, "g2", "go")
	if err := env.Client.RaiseEvent(ctx, "g2", "go", `"two"`); err != nil {
		t.Fatal(err)
	}
	if s := env.Wait(t, "g2"); s.Status != durable.StatusCompleted {
		t.Fatalf("g2 after resume: %+v", s)
	}
}
