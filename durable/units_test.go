package durable

import (
	"errors"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

func TestRetryPolicyDelays(t *testing.T) {
	t.Parallel()
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

// TestBackoffFieldsDefaultOneByOne: each zero Backoff field takes duroxide's
// default on its own (Base 100ms, Multiplier 2, Max 30s), so setting only Base
// keeps doubling instead of collapsing to 0 after the first retry (the old code
// defaulted only when all three were zero: Base 200ms gave 200ms, 0, 0).
func TestBackoffFieldsDefaultOneByOne(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	cases := []struct {
		name string
		b    Backoff
		want []time.Duration // delays after attempts 1, 2, 3, ...
	}{
		{"exponential base only", Backoff{Kind: BackoffExponential, Base: 200 * ms}, []time.Duration{200 * ms, 400 * ms, 800 * ms}},
		{"exponential multiplier only", Backoff{Kind: BackoffExponential, Multiplier: 3}, []time.Duration{100 * ms, 300 * ms, 900 * ms}},
		{"exponential max only", Backoff{Kind: BackoffExponential, Max: 250 * ms}, []time.Duration{100 * ms, 200 * ms, 250 * ms}},
		{"exponential base and multiplier", Backoff{Base: 10 * time.Second, Multiplier: 2}, []time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second, 30 * time.Second}},
		{"exponential base above default max", Backoff{Base: time.Minute}, []time.Duration{time.Minute, time.Minute}},
		{"exponential all zero", Backoff{}, []time.Duration{100 * ms, 200 * ms, 400 * ms}},
		{"linear base only", Backoff{Kind: BackoffLinear, Base: 10 * time.Second}, []time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second, 30 * time.Second}},
		{"linear max only", Backoff{Kind: BackoffLinear, Max: 250 * ms}, []time.Duration{100 * ms, 200 * ms, 250 * ms}},
		{"linear all zero", Backoff{Kind: BackoffLinear}, []time.Duration{100 * ms, 200 * ms, 300 * ms}},
		{"fixed zero", Backoff{Kind: BackoffFixed}, []time.Duration{100 * ms, 100 * ms}},
		{"fixed base", Backoff{Kind: BackoffFixed, Base: time.Hour}, []time.Duration{time.Hour, time.Hour}},
		{"none", Backoff{Kind: BackoffNone, Base: time.Second}, []time.Duration{0, 0}},
		{"exponential negative multiplier", Backoff{Multiplier: -2}, []time.Duration{100 * ms, 0, 400 * ms}},
	}
	for _, c := range cases {
		p := RetryPolicy{MaxAttempts: 10, Backoff: c.b}
		for i, want := range c.want {
			if got := p.DelayForAttempt(uint32(i + 1)); got != want {
				t.Errorf("%s: delay after attempt %d = %v, want %v", c.name, i+1, got, want)
			}
		}
	}
}

func TestRegistryRejectsBadInput(t *testing.T) {
	t.Parallel()
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
