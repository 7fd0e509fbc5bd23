package redisprovider

import (
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// An abandoned turn ends its instance's stickiness: the owner that handed
// it back (it cannot run the instance's version, or it failed) must not be
// offered it first again. Otherwise a runtime without the instance's new
// version, its sticky owner, takes every attempt for itself, each bounced
// by the unregistered backoff, until the instance is poisoned while a
// runtime that has the version waits (TestRollingDeploymentVersionUpgrade
// failed so under load).
func TestAbandonEndsStickiness(t *testing.T) {
	t.Parallel()
	b := newPigBundle(t)
	route := duroxide.StickyRoute{Owner: "old", Wait: time.Minute, TTL: time.Hour}
	owned := duroxide.WithStickyRoute(b.ctx, route)
	turn := b.started(t, "i")
	started := duroxide.NewEvent(1, "i", 1, nil, duroxide.OrchestrationStartedEvent{Name: "O", Input: `""`})
	if err := b.p.AckOrchestrationItem(owned, turn.LockToken, duroxide.OrchestrationCommit{
		ExecutionID: 1, HistoryDelta: []duroxide.Event{started},
		Metadata: duroxide.ExecutionMetadata{OrchestrationName: "O", Status: "Running"},
	}); err != nil {
		t.Fatal(err)
	}
	if err := b.p.EnqueueForOrchestrator(b.ctx, duroxide.ExternalRaised{Instance: "i", Name: "e", Data: `""`}, 0); err != nil {
		t.Fatal(err)
	}
	item, err := b.p.FetchOrchestrationItem(owned, time.Minute, 0, nil)
	if err != nil || item == nil {
		t.Fatalf("the owner's fetch: %v, %v", item, err)
	}
	if err := b.p.AbandonOrchestrationItem(owned, item.LockToken, 0, false); err != nil {
		t.Fatal(err)
	}
	other, err := b.p.FetchOrchestrationItem(duroxide.WithStickyRoute(b.ctx, duroxide.StickyRoute{Owner: "new", Wait: time.Minute, TTL: time.Hour}), time.Minute, 0, nil)
	if err != nil || other == nil || other.Instance != "i" {
		t.Fatalf("another runtime's fetch after the owner abandoned: %+v, %v; want instance i at once, not after the owner's wait", other, err)
	}
}
