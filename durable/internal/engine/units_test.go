package engine

import (
	"strings"
	"testing"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

func TestLimitsFailTheTurn(t *testing.T) {
	big := strings.Repeat("x", MaxKVValueBytes+1)
	delta := []duroxide.Event{duroxide.NewEvent(2, "i", 1, nil, duroxide.KeyValueSetEvent{Key: "k", Value: big})}
	if msg := limitViolation(delta, nil); !strings.Contains(msg, "KV value for key 'k'") {
		t.Fatalf("message %q", msg)
	}
	snap := map[string]duroxide.KVEntry{}
	for i := range MaxKVKeys {
		snap[string(rune('a'+i%26))+strings.Repeat("k", i)] = duroxide.KVEntry{}
	}
	delta = []duroxide.Event{duroxide.NewEvent(2, "i", 1, nil, duroxide.KeyValueSetEvent{Key: "new"})}
	if msg := limitViolation(delta, snap); msg != "KV key count (101) exceeds limit (100)" {
		t.Fatalf("message %q", msg)
	}
	delta = append(delta, duroxide.NewEvent(3, "i", 1, nil, duroxide.KeyValuesClearedEvent{}))
	if msg := limitViolation(delta, snap); msg != "" {
		t.Fatalf("clearing all keys should satisfy the limit, got %q", msg)
	}
	tr := newTurnOutput("i", 1, newHistoryIndex())
	tr.worker = []duroxide.WorkItem{duroxide.ActivityExecute{}}
	tr.add(duroxide.NewEvent(1, "i", 1, nil, duroxide.KeyValueSetEvent{Key: "k", Value: big}))
	if d := tr.enforceLimits("i", nil); d == nil || len(tr.worker) != 0 || tr.delta[1].Kind.EventType() != "OrchestrationFailed" || tr.delta[1].EventID != 2 {
		t.Fatalf("enforceLimits: %+v %+v", d, tr)
	}
}

func TestDisplayMessageMatchesDuroxide(t *testing.T) {
	msg := "boom"
	cases := map[string]duroxide.ErrorDetails{
		"nondeterministic: boom":          nondeterminism(msg),
		"canceled: stop":                  appFailure(duroxide.AppErrorCancelled, "stop", ""),
		"orchestration panicked: boom":    appFailure(duroxide.AppErrorPanicked, "", msg),
		"boom":                            duroxide.ApplicationFailure(msg),
		"infrastructure:ack_orch: broken": {Infrastructure: &duroxide.InfrastructureError{Operation: "ack_orch", Message: "broken"}},
	}
	for want, d := range cases {
		if got := DisplayMessage(d); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
