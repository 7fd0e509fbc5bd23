package durable_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

func greet(ctx *durable.ActivityContext, name string) (string, error) {
	if ctx.OrchestrationName() != "Hello" || ctx.OrchestrationVersion() != durable.DefaultVersion {
		return "", errors.New("activity sees orchestration " + ctx.OrchestrationName() + "@" + ctx.OrchestrationVersion())
	}
	return "Hello, " + name + "!", nil
}

func TestE2EHelloWorld(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2EHelloWorld)
}

func testE2EHelloWorld(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry()
	reg.MustAddActivity("Greet", durable.Activity(greet))
	reg.MustAddOrchestration("Hello", durable.Orchestration(func(ctx *durable.OrchestrationContext, name string) (string, error) {
		return durable.ScheduleActivity[string](ctx, "Greet", name).Get()
	}))
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend))
	st := env.StartAndWait(t, "hello-1", "Hello", `"World"`)
	if st.Status != durable.StatusCompleted {
		t.Fatalf("status %v: %s", st.Status, st.FailureMessage())
	}
	if st.Output != `"Hello, World!"` {
		t.Fatalf("output %q", st.Output)
	}
	hist, err := env.Provider.Read(t.Context(), "hello-1")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"OrchestrationStarted", "ActivityScheduled", "ActivityCompleted", "OrchestrationCompleted"}
	assertKinds(t, hist, want)
	if src := hist[2].SourceEventID; src == nil || *src != 2 {
		t.Fatalf("ActivityCompleted source %v, want 2", src)
	}
}

func assertKinds(t *testing.T, hist []duroxide.Event, want []string) {
	t.Helper()
	var got []string
	for i, ev := range hist {
		got = append(got, ev.Kind.EventType())
		if ev.EventID != uint64(i+1) {
			t.Errorf("event %d has id %d", i, ev.EventID)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("history kinds\n got %v\nwant %v", got, want)
	}
}

func TestE2ETimerFastForward(t *testing.T) {
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Sleepy", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if _, err := ctx.Timer(time.Hour).Get(); err != nil {
			return "", err
		}
		return "woke", nil
	})
	env := durabletest.Start(t, reg)
	if err := env.Client.StartOrchestration(t.Context(), "sleepy", "Sleepy", ""); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, env, "sleepy", 2)
	start := time.Now()
	env.Advance(2 * time.Hour)
	st := env.Wait(t, "sleepy")
	if st.Status != durable.StatusCompleted || st.Output != "woke" {
		t.Fatalf("status %v output %q %s", st.Status, st.Output, st.FailureMessage())
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("timer took %v of real time after advancing", time.Since(start))
	}
}

// waitRunning waits until the instance's history has at least n events.
func waitRunning(t *testing.T, env *durabletest.Env, instance string, n int) {
	t.Helper()
	durabletest.Eventually(t, fmt.Sprintf("%s reaching %d events", instance, n), func() (bool, error) {
		h, err := env.Provider.Read(t.Context(), instance)
		return len(h) >= n, err
	})
}
