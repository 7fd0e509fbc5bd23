package main

import (
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

func TestRelTime(t *testing.T) {
	now := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	cases := map[time.Duration]string{
		0:                              "just now",
		-500 * time.Millisecond:        "just now",
		-45 * time.Second:              "45s ago",
		-(90 * time.Second):            "1m30s ago",
		-(3*time.Hour + 5*time.Minute): "3h5m ago",
		-(50 * time.Hour):              "2d2h ago",
		10 * time.Second:               "in 10s",
	}
	for d, want := range cases {
		if got := relTime(now.Add(d), now); got != want {
			t.Errorf("relTime(now%+v) = %q, want %q", d, got, want)
		}
	}
	if got := relTime(time.Time{}, now); got != "-" {
		t.Errorf("unset time = %q", got)
	}
}

func TestAbbreviate(t *testing.T) {
	if got := abbreviate("short", 10); got != "short" {
		t.Errorf("got %q", got)
	}
	if got := abbreviate("ééééééééééé", 5); got != "éééé…" {
		t.Errorf("runes: got %q", got)
	}
	if got := abbreviate("a\tb\nc", 10); got != "a b c" {
		t.Errorf("control characters: got %q", got)
	}
}

func TestEventFieldsSplitNameFromPayload(t *testing.T) {
	src := uint64(2)
	e := duroxide.Event{EventID: 3, SourceEventID: &src, InstanceID: "i", ExecutionID: 1,
		Kind: duroxide.ExternalEventEvent{Name: "approve", Data: `{"by":"ada"}`}}
	name, payload, err := eventFields(e)
	if err != nil || name != "approve" || payload != `data={"by":"ada"}` {
		t.Fatalf("got %q %q %v", name, payload, err)
	}
	e.Kind = duroxide.OrchestrationStartedEvent{Name: "Greet", Version: "1.0.0", Input: "in"}
	if name, payload, _ := eventFields(e); name != "Greet" || payload != "version=1.0.0 input=in" {
		t.Fatalf("unset optional fields must not show: got %q %q", name, payload)
	}
	e.Kind = duroxide.TimerCreatedEvent{FireAtMs: 1795518561691}
	if name, payload, _ := eventFields(e); name != "" || payload != "fire_at=2026-11-24T11:09:21Z" {
		t.Fatalf("timer: got %q %q", name, payload)
	}
}

func TestExitCodesFollowErrorKinds(t *testing.T) {
	cases := []struct {
		err  error
		code int
	}{
		{nil, exitOK},
		{duroxide.Errorf("x", duroxide.ErrInvalidInput, "bad"), exitInvalid},
		{duroxide.Errorf("x", duroxide.ErrNotFound, "gone"), exitNotFound},
		{duroxide.Errorf("x", duroxide.ErrConflict, "busy"), exitConflict},
		{duroxide.Retryable("x", "refused"), exitUnavailable},
		{&duroxide.ProviderError{Operation: "x", Message: "down", Retryable: true}, exitUnavailable},
		{duroxide.Permanent("x", "odd"), exitFailure},
	}
	for _, c := range cases {
		if got := exitCode(c.err); got != c.code {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.code)
		}
	}
}
