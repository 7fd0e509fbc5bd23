package durable

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Get on a Select loser returns a cancellation error at once instead of
// stalling the instance, and records nothing: the history is the one the
// same code writes without that Get.
func TestCancelledFutureGetReturnsCancellation(t *testing.T) {
	t.Parallel()
	orch := func(awaitLoser bool) OrchestrationFunc {
		return func(ctx *OrchestrationContext, _ string) (string, error) {
			act := ctx.ScheduleActivity("A", "")
			if ctx.Select(act, ctx.Timer(time.Second)) == 0 {
				return "won", nil
			}
			if !awaitLoser {
				return "lost", nil
			}
			_, err := act.Get()
			var ce *CancelledError
			if !errors.Is(err, ErrCancelled) || !errors.As(err, &ce) || ce.What != "activity" {
				return "", fmt.Errorf("Get on a cancelled future returned %v", err)
			}
			return "lost", nil
		}
	}
	h := []duroxide.Event{
		duroxide.NewEvent(1, "inst", 1, nil, duroxide.OrchestrationStartedEvent{Name: "O", Version: "1.0.0"}),
		duroxide.NewEvent(2, "inst", 1, nil, duroxide.ActivityScheduledEvent{Name: "A"}),
		duroxide.NewEvent(3, "inst", 1, nil, duroxide.TimerCreatedEvent{FireAtMs: 1}),
	}
	fired := duroxide.TimerFired{Instance: "inst", ExecutionID: 1, ID: 3, FireAtMs: 1}
	run := func(awaitLoser bool) duroxide.OrchestrationCommit {
		reg := NewRegistry().MustAddOrchestrationVersion("O", "1.0.0", orch(awaitLoser))
		item := duroxide.OrchestrationItem{Instance: "inst", OrchestrationName: "O", Version: "1.0.0", ExecutionID: 1,
			History: h, Messages: []duroxide.WorkItem{fired}, LockToken: "t", AttemptCount: 1}
		out, err := RunTurn(reg, item, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return out.Commit
	}
	plain, awaited := run(false), run(true)
	if awaited.Metadata.Status != "Completed" || awaited.Metadata.Output == nil || *awaited.Metadata.Output != "lost" {
		t.Fatalf("metadata %+v: Get on a cancelled future did not return", awaited.Metadata)
	}
	if got, want := eventKinds(awaited.HistoryDelta), eventKinds(plain.HistoryDelta); got != want {
		t.Fatalf("history with the Get %s, without it %s", got, want)
	}
	if got := eventKinds(awaited.HistoryDelta); got != "TimerFired<3 ActivityCancelRequested<2 OrchestrationCompleted" {
		t.Fatalf("history %s", got)
	}
}

// eventKinds renders events as their types, with their sources.
func eventKinds(evs []duroxide.Event) string {
	var parts []string
	for _, ev := range evs {
		p := ev.Kind.EventType()
		if ev.SourceEventID != nil {
			p += fmt.Sprintf("<%d", *ev.SourceEventID)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}
