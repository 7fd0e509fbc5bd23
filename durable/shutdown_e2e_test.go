package durable_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// waitSignal fails the test if ch does not deliver within e2eHangBound.
func waitSignal(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(e2eHangBound):
		t.Fatalf("%s never happened", what)
	}
}

// Shutdown returns by its deadline even when an activity ignores its
// context and a turn is blocked outside the orchestration context.
func TestShutdownReturnsByItsDeadline(t *testing.T) {
	t.Parallel()
	env := startStuck(t, durable.Options{TurnDeadlockTimeout: time.Minute})
	ctx := t.Context()
	if err := env.Client.StartOrchestration(ctx, "deaf", "CallsDeaf", ""); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, env.activityIn, "the activity")
	if err := env.Client.StartOrchestration(ctx, "blocked", "BlocksOutside", ""); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, env.turnIn, "the turn")

	const deadline = 500 * time.Millisecond
	sctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- env.Runtime.Shutdown(sctx) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(e2eHangBound):
		t.Fatalf("Shutdown with a %v deadline had not returned after %v", deadline, e2eHangBound)
	}
	took := time.Since(start)
	t.Logf("Shutdown with a %v deadline returned after %v", deadline, took)
	if took > deadline+time.Second {
		t.Fatalf("Shutdown with a %v deadline took %v", deadline, took)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown returned %v, want the deadline", err)
	}
	var se *durable.ShutdownError
	if !errors.As(err, &se) {
		t.Fatalf("Shutdown returned %T, want a *durable.ShutdownError", err)
	}
	got := map[string]durable.AbandonedWork{}
	for _, w := range se.Abandoned {
		got[w.Instance] = w
	}
	if a := got["deaf"]; len(se.Abandoned) != 2 || a.Kind != durable.WorkActivity || a.Name != "Deaf" || !a.Released ||
		got["blocked"].Kind != durable.WorkOrchestration || got["blocked"].Name != "BlocksOutside" || !got["blocked"].Released {
		t.Fatalf("abandoned %+v, want the activity and the turn, both released", se.Abandoned)
	}
	if logged := env.logs.find(slog.LevelError, "error", err.Error()); len(logged) != 1 {
		t.Fatalf("the abandoned work was logged at Error %d times, want once", len(logged))
	}
	// Both locks were handed back, not left to expire (the lock timeouts
	// are far longer than these fetches wait).
	item, err := env.Provider.FetchWorkItem(ctx, time.Minute, 2*time.Second, nil, duroxide.TagFilter{})
	if err != nil || item == nil {
		t.Fatalf("the abandoned activity is not fetchable: %v %v", item, err)
	}
	turn, err := env.Provider.FetchOrchestrationItem(ctx, time.Minute, 2*time.Second, nil)
	if err != nil || turn == nil || turn.Instance != "blocked" {
		t.Fatalf("the abandoned turn is not fetchable: %+v %v", turn, err)
	}
}
