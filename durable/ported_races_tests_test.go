package durable_test

import (
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// Ports of duroxide's tests/races_tests.rs. Where the Rust tests let a 20ms sleep
// decide the race, these ports fix the order (the event raised only after the timer
// fired, or a timer far longer than the test), so the winner is certain.

// TestWaitExternalCompletes mirrors wait_external_completes_fs.
func TestWaitExternalCompletes(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("WaitExternal", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		v, err := ctx.WaitForEvent("Only").Get()
		return "only=" + v, err
	})
	h := newHarness(t, reg)
	h.start("inst-wait-1", "WaitExternal", "")
	h.awaitEvent("inst-wait-1", "ExternalSubscribed")
	h.raise("inst-wait-1", "Only", "payload")
	h.wantCompleted("inst-wait-1", "only=payload")
	hist := h.execHistory("inst-wait-1", 1)
	want := []string{"OrchestrationStarted", "ExternalSubscribed", "ExternalEvent", "OrchestrationCompleted"}
	if len(hist) != len(want) {
		t.Fatalf("%d events, want %v", len(hist), want)
	}
	for i, w := range want {
		if got := hist[i].Kind.EventType(); got != w {
			t.Errorf("event #%d is %s, want %s", i+1, got, w)
		}
	}
}

// raceTimerEvent races a timer of the given length against the Race event.
func raceTimerEvent(d time.Duration) durable.OrchestrationFunc {
	return func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if ctx.Select(ctx.Timer(d), ctx.WaitForEvent("Race")) == 0 {
			return "timer", nil
		}
		return "external", nil
	}
}

// TestRaceExternalVsTimerOrdering mirrors race_external_vs_timer_ordering_fs: the
// timer fires first, and an event raised afterwards changes nothing.
func TestRaceExternalVsTimerOrdering(t *testing.T) {
	t.Parallel()
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("RaceOrchestration", raceTimerEvent(10*msec)))
	h.start("inst-race-order-1", "RaceOrchestration", "")
	h.wantCompleted("inst-race-order-1", "timer")
	h.raise("inst-race-order-1", "Race", "ok")
	h.awaitIdle()
	hist := h.execHistory("inst-race-order-1", 1)
	if countEvents(hist, "ExternalEvent") != 0 || hist[len(hist)-1].Kind.EventType() != "OrchestrationCompleted" {
		t.Errorf("an event raised after completion reached history (last event %s)", hist[len(hist)-1].Kind.EventType())
	}
}

// TestRaceEventVsTimerEventWins mirrors race_event_vs_timer_event_wins_fs.
func TestRaceEventVsTimerEventWins(t *testing.T) {
	t.Parallel()
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("RaceOrchestration", raceTimerEvent(time.Minute)))
	h.start("inst-race-evt", "RaceOrchestration", "")
	h.awaitEvent("inst-race-evt", "ExternalSubscribed")
	h.raise("inst-race-evt", "Race", "ok")
	h.wantCompleted("inst-race-evt", "external")
	if n := countEvents(h.history("inst-race-evt"), "TimerFired"); n != 0 {
		t.Errorf("%d TimerFired, want none", n)
	}
}
