package durable_test

import (
	"strings"
	"testing"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Through the dispatcher (RunTurn), not the bare engine: the turn must reach the
// engine's corruption check although the history names no orchestration.

// TestHistoryCorruptionMissingStartedEvent mirrors history_corruption.rs
// missing_started_event.
func TestHistoryCorruptionMissingStartedEvent(t *testing.T) {
	t.Parallel()
	delta := replayTurn(t, waitThenDone("E", "e"), []duroxide.Event{ev(1, 0, duroxide.ActivityScheduledEvent{Name: "Task", Input: "input"})})
	if got := turnOutcome(t, delta); !strings.HasPrefix(got, "nondeterminism:") || !strings.Contains(got, "OrchestrationStarted") {
		t.Errorf("outcome %q (delta %s), want a nondeterminism failure naming OrchestrationStarted", got, kinds(delta))
	}
}
