package redisprovider

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The checked enqueue refuses what its requirement forbids and writes
// nothing then, applies a request id once, knows a waiting start as an
// existing instance, and forgets the waiting start when the instance's
// record is made (no key is left behind for it).
func TestCheckedEnqueue(t *testing.T) {
	t.Parallel()
	m, p := newMiniProvider(t)
	ctx := context.Background()
	start := duroxide.StartOrchestration{Instance: "c", Orchestration: "O", Input: `""`, ExecutionID: 1}
	raise := duroxide.ExternalRaised{Instance: "c", Name: "go", Data: `"x"`}
	absent := duroxide.CheckedEnqueue{Require: duroxide.RequireAbsent, RequestID: "r1"}
	present := duroxide.CheckedEnqueue{Require: duroxide.RequirePresent}

	err := p.EnqueueForOrchestratorChecked(ctx, raise, present)
	if !errors.Is(err, duroxide.ErrNotFound) || !strings.Contains(err.Error(), "instance c") {
		t.Fatalf("raise to an unknown instance = %v, want ErrNotFound naming it", err)
	}
	for range 2 { // the repeat finds its request id: nil, nothing more
		if err := p.EnqueueForOrchestratorChecked(ctx, start, absent); err != nil {
			t.Fatal(err)
		}
	}
	again := absent
	again.RequestID = "r2"
	if err := p.EnqueueForOrchestratorChecked(ctx, start, again); !errors.Is(err, duroxide.ErrAlreadyExists) {
		t.Fatalf("a second start while the first waits = %v, want ErrAlreadyExists", err)
	}
	if err := p.EnqueueForOrchestratorChecked(ctx, raise, present); err != nil {
		t.Fatalf("raise to an instance whose start waits = %v", err)
	}
	item, err := p.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
	if err != nil || item == nil || len(item.Messages) != 2 {
		t.Fatalf("fetch = %+v, %v; want the one start and the raise", item, err)
	}
	if err := p.AckOrchestrationItem(ctx, item.LockToken, started("c")); err != nil {
		t.Fatal(err)
	}
	if m.Exists(p.keys.OrchMessages("c")) {
		t.Errorf("the instance's message hash outlives its start (its waiting-start mark was not cleared)")
	}
	again.RequestID = "r3"
	if err := p.EnqueueForOrchestratorChecked(ctx, start, again); !errors.Is(err, duroxide.ErrAlreadyExists) {
		t.Fatalf("start of a created instance = %v, want ErrAlreadyExists", err)
	}
	long := duroxide.CheckedEnqueue{RequestID: strings.Repeat("x", 201)}
	if err := p.EnqueueForOrchestratorChecked(ctx, raise, long); !errors.Is(err, duroxide.ErrInvalidInput) {
		t.Fatalf("a 201-byte request id = %v, want ErrInvalidInput", err)
	}
	if ttl := m.TTL(p.keys.Request("r1")); ttl <= 0 || ttl > duroxide.RequestIDLifetime {
		t.Fatalf("request id r1 lives %v, want at most %v", ttl, duroxide.RequestIDLifetime)
	}
}
