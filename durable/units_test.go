package durable

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

func TestRetryPolicyDelays(t *testing.T) {
	cases := []struct {
		p       RetryPolicy
		attempt uint32
		want    time.Duration
	}{
		{RetryPolicy{}, 1, 100 * time.Millisecond},
		{RetryPolicy{}, 3, 400 * time.Millisecond},
		{RetryPolicy{}, 20, 30 * time.Second},
		{RetryPolicy{Backoff: Backoff{Kind: BackoffNone}}, 4, 0},
		{RetryPolicy{Backoff: Backoff{Kind: BackoffFixed, Base: time.Second}}, 7, time.Second},
		{RetryPolicy{Backoff: Backoff{Kind: BackoffLinear, Base: time.Second, Max: 3 * time.Second}}, 2, 2 * time.Second},
		{RetryPolicy{Backoff: Backoff{Kind: BackoffLinear, Base: time.Second, Max: 3 * time.Second}}, 9, 3 * time.Second},
		{RetryPolicy{Backoff: Backoff{Base: time.Second, Multiplier: 3, Max: time.Hour}}, 3, 9 * time.Second},
	}
	for _, c := range cases {
		if got := c.p.DelayForAttempt(c.attempt); got != c.want {
			t.Errorf("%+v attempt %d: %v, want %v", c.p, c.attempt, got, c.want)
		}
	}
	if (RetryPolicy{}).attempts() != 3 {
		t.Error("zero policy should make 3 attempts")
	}
}

func TestRegistryRejectsBadInput(t *testing.T) {
	r := NewRegistry()
	noop := func(*OrchestrationContext, string) (string, error) { return "", nil }
	act := func(*ActivityContext, string) (string, error) { return "", nil }
	for _, err := range []error{
		r.AddOrchestrationVersion("O", "not-semver", noop),
		r.AddOrchestration("", noop),
		r.AddActivity("__duroxide_syscall:new_guid", act),
		r.AddActivity("A", nil),
	} {
		if !errors.Is(err, duroxide.ErrInvalidInput) {
			t.Errorf("got %v, want ErrInvalidInput", err)
		}
	}
	if err := r.AddOrchestration("O", noop); err != nil {
		t.Fatal(err)
	}
	if err := r.AddOrchestrationVersion("O", "1.0.0", noop); !errors.Is(err, duroxide.ErrConflict) {
		t.Errorf("duplicate version: %v", err)
	}
	if err := r.AddOrchestrationVersion("O", "1.10.0", noop); err != nil {
		t.Fatal(err)
	}
	if err := r.AddOrchestrationVersion("O", "1.9.0", noop); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := r.resolve("O", ""); v.String() != "1.10.0" {
		t.Errorf("latest is %s, want 1.10.0 (semver order)", v)
	}
	if _, _, ok := r.resolve("O", "2.0.0"); ok {
		t.Error("resolved an unregistered version")
	}
}

func TestLimitsFailTheTurn(t *testing.T) {
	big := strings.Repeat("x", maxKVValueBytes+1)
	delta := []duroxide.Event{duroxide.NewEvent(2, "i", 1, nil, duroxide.KeyValueSetEvent{Key: "k", Value: big})}
	if msg := limitViolation(delta, nil); !strings.Contains(msg, "KV value for key 'k'") {
		t.Fatalf("message %q", msg)
	}
	snap := map[string]duroxide.KVEntry{}
	for i := range maxKVKeys {
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
		if got := displayMessage(d); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
