package durable

import (
	"errors"
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
