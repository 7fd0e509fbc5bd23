package durable_test

import (
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/reliability_tests.rs: duplicate messages (a
// crash between taking a message and acking it redelivers it) are recorded
// once for completions, while every raised event is kept (duroxide's
// unconditional materialization; only the first is delivered).

// enqueueTwice enqueues item twice in one step, as a redelivery after a
// crash leaves it: both are in the instance's queue when a dispatcher next
// takes it (one after the other, the first could complete the instance and
// the second be dropped as late).
func enqueueTwice(t *testing.T, env *durabletest.Env, item duroxide.WorkItem) {
	t.Helper()
	var b duroxide.BatchEnqueuer = env.Provider
	if err := b.EnqueueForOrchestratorBatch(t.Context(), []duroxide.WorkItem{item, item}, 0); err != nil {
		t.Fatal(err)
	}
}

// firstEventID is the id of instance's first event of type eventType.
func firstEventID(t *testing.T, env *durabletest.Env, instance, eventType string) (uint64, duroxide.EventKind) {
	t.Helper()
	for _, e := range read(t, env, instance) {
		if e.Kind.EventType() == eventType {
			return e.EventID, e.Kind
		}
	}
	t.Fatalf("no %s in %s", eventType, instance)
	return 0, nil
}

// TestDuplicateExternalEventsAreKept mirrors external_duplicate_workitems_dedup
// and crash_after_dequeue_before_append_completion.
func TestDuplicateExternalEventsAreKept(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"external_duplicate_workitems_dedup", "crash_after_dequeue_before_append_completion"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := durabletest.Start(t, durable.NewRegistry().MustAddOrchestration("WaitEvt", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
				return ctx.WaitForEvent("Evt").Get()
			}))
			if err := env.Client.StartOrchestration(t.Context(), "inst-dup-ext", "WaitEvt", ""); err != nil {
				t.Fatal(err)
			}
			env.WaitForEventSubscription(t, "inst-dup-ext", "Evt")
			enqueueTwice(t, env, duroxide.ExternalRaised{Instance: "inst-dup-ext", Name: "Evt", Data: "ok"})
			mustComplete(t, env.Wait(t, "inst-dup-ext"), "ok")
			if n := countEvents(read(t, env, "inst-dup-ext"), "ExternalEvent"); n != 2 {
				t.Fatalf("%d ExternalEvent, want both kept", n)
			}
		})
	}
}

// TestDuplicateTimerFiredDeduped mirrors timer_duplicate_workitems_dedup and
// crash_after_append_before_ack_timer: a timer fired twice is recorded once.
func TestDuplicateTimerFiredDeduped(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"timer_duplicate_workitems_dedup", "crash_after_append_before_ack_timer"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// An hour-long timer, clock held: only the injected firings arrive.
			env := durabletest.Start(t, durable.NewRegistry().MustAddOrchestration("OneTimer", timerOrchestration("t", time.Hour)),
				durabletest.WithTimeSkipping(false))
			if err := env.Client.StartOrchestration(t.Context(), "inst-dup-timer", "OneTimer", ""); err != nil {
				t.Fatal(err)
			}
			env.WaitForTimer(t, "inst-dup-timer")
			id, k := firstEventID(t, env, "inst-dup-timer", "TimerCreated")
			enqueueTwice(t, env, duroxide.TimerFired{Instance: "inst-dup-timer", ExecutionID: 1, ID: id, FireAtMs: k.(duroxide.TimerCreatedEvent).FireAtMs})
			mustComplete(t, env.Wait(t, "inst-dup-timer"), "t")
			if n := countEvents(read(t, env, "inst-dup-timer"), "TimerFired"); n != 1 {
				t.Fatalf("%d TimerFired, want 1", n)
			}
		})
	}
}

// TestDuplicateActivityCompletionDeduped mirrors activity_duplicate_completion_workitems_dedup:
// two completions of one activity (and the worker's own, later) are
// recorded once.
func TestDuplicateActivityCompletionDeduped(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}, 1), make(chan struct{})
	env := durabletest.Start(t, durable.NewRegistry().
		MustAddActivity("SlowEcho", func(ctx *durable.ActivityContext, in string) (string, error) {
			started <- struct{}{}
			select {
			case <-release:
				return in, nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}).
		MustAddOrchestration("OneSlowAct", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleActivity("SlowEcho", "x").Get()
		}))
	defer close(release)
	if err := env.Client.StartOrchestration(t.Context(), "inst-act-dup", "OneSlowAct", ""); err != nil {
		t.Fatal(err)
	}
	<-started
	id, _ := firstEventID(t, env, "inst-act-dup", "ActivityScheduled")
	enqueueTwice(t, env, duroxide.ActivityCompleted{Instance: "inst-act-dup", ExecutionID: 1, ID: id, Result: "x"})
	mustComplete(t, env.Wait(t, "inst-act-dup"), "x")
	if n := countEvents(read(t, env, "inst-act-dup"), "ActivityCompleted"); n != 1 {
		t.Fatalf("%d ActivityCompleted, want 1", n)
	}
}
