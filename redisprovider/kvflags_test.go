package redisprovider

import (
	"context"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// A record made with the KV flags (kv0, kvd0: store and delta empty since
// it was made) spares every fetch the read of the store, which is then
// handed out empty. A record without them, as one made before they existed,
// is read as before: its store reaches the fetch.
func TestKVStoreIsReadUnlessTheRecordSaysItIsEmpty(t *testing.T) {
	t.Parallel()
	for _, legacy := range []bool{false, true} {
		m, p := newMiniProvider(t)
		ctx := context.Background()
		item := func() *duroxide.OrchestrationItem {
			t.Helper()
			it, err := p.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
			if err != nil || it == nil {
				t.Fatalf("fetch: %v, %v", it, err)
			}
			return it
		}
		start := duroxide.StartOrchestration{Instance: "x", Orchestration: "O", Input: `""`, ExecutionID: 1}
		if err := p.EnqueueForOrchestrator(ctx, start, 0); err != nil {
			t.Fatal(err)
		}
		first := item()
		started := duroxide.NewEvent(1, "x", 1, nil, duroxide.OrchestrationStartedEvent{Name: "O", Input: `""`})
		if err := p.AckOrchestrationItem(ctx, first.LockToken, duroxide.OrchestrationCommit{
			ExecutionID: 1, HistoryDelta: []duroxide.Event{started},
			Metadata: duroxide.ExecutionMetadata{OrchestrationName: "O", Status: "Running"},
		}); err != nil {
			t.Fatal(err)
		}
		ik := p.keys.Instance("x")
		if got := m.HGet(ik, "kv0"); got != "1" {
			t.Fatalf("a new record's kv0 = %q, want 1", got)
		}
		// a store written by a version without the flags
		m.HSet(p.keys.KV("x"), "k", "7:v")
		if legacy {
			m.HDel(ik, "kv0")
			m.HDel(ik, "kvd0")
		}
		if err := p.EnqueueForOrchestrator(ctx, duroxide.ExternalRaised{Instance: "x", Name: "e", Data: `""`}, 0); err != nil {
			t.Fatal(err)
		}
		snap := item().KVSnapshot
		if legacy && snap["k"] != (duroxide.KVEntry{Value: "v", LastUpdatedAtMs: 7}) {
			t.Errorf("a record without the flags: KVSnapshot = %v, want its store", snap)
		}
		if !legacy && len(snap) != 0 {
			t.Errorf("a record whose kv0 says empty: KVSnapshot = %v, want the store unread", snap)
		}
	}
}
