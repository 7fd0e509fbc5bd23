package redisprovider

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// noterOf is what the pending-note tests need of a provider: either layout.
type noterOf interface {
	duroxide.Provider
	duroxide.PendingStartNoter
}

// fetchStart enqueues a start of instance and fetches it.
func fetchStart(t *testing.T, p noterOf, instance string) *duroxide.OrchestrationItem {
	t.Helper()
	ctx := context.Background()
	v := "2.0.0"
	if err := p.EnqueueForOrchestrator(ctx, duroxide.StartOrchestration{Instance: instance, Orchestration: "Ghost", Version: &v, Input: `""`, ExecutionID: 1}, 0); err != nil {
		t.Fatal(err)
	}
	item, err := p.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
	if err != nil || item == nil || item.Instance != instance {
		t.Fatalf("fetch of %s: %+v %v", instance, item, err)
	}
	return item
}

func ghostNote(attempt uint32) duroxide.PendingStart {
	return duroxide.PendingStart{Orchestration: "Ghost", Version: "2.0.0", Attempt: attempt, MaxAttempts: 10, Reason: "is not registered in the runtimes that fetched it"}
}

// testPendingNoteLifecycle: a note is written with the abandon, replaced by
// the next, read back and listed, and gone once the instance is created;
// a lost lock writes nothing.
func testPendingNoteLifecycle(t *testing.T, p noterOf) {
	ctx := context.Background()
	if n, err := p.PendingStart(ctx, "ghost"); err != nil || n != nil {
		t.Fatalf("a note before any abandon: %+v %v", n, err)
	}
	item := fetchStart(t, p, "ghost")
	if err := p.AbandonOrchestrationItemWithNote(ctx, item.LockToken, 0, false, ghostNote(1)); err != nil {
		t.Fatal(err)
	}
	n, err := p.PendingStart(ctx, "ghost")
	if err != nil || n == nil {
		t.Fatalf("note: %+v %v", n, err)
	}
	if want := "pending start: orchestration Ghost (version 2.0.0) is not registered in the runtimes that fetched it (attempt 1 of 10)"; n.Message() != want || n.Instance != "ghost" || n.NotedAtMs == 0 {
		t.Fatalf("note %+v says %q, want %q", n, n.Message(), want)
	}
	// the lock is gone with the abandon: a second abandon with it fails and
	// writes nothing
	if err := p.AbandonOrchestrationItemWithNote(ctx, item.LockToken, 0, false, ghostNote(7)); !errors.Is(err, duroxide.ErrLockLost) {
		t.Fatalf("abandon with a released lock: %v, want ErrLockLost", err)
	}
	if n, _ := p.PendingStart(ctx, "ghost"); n == nil || n.Attempt != 1 {
		t.Fatalf("a refused abandon changed the note: %+v", n)
	}
	item, err = p.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
	if err != nil || item == nil || item.AttemptCount != 2 {
		t.Fatalf("refetch: %+v %v", item, err)
	}
	if err := p.AbandonOrchestrationItemWithNote(ctx, item.LockToken, 0, false, ghostNote(2)); err != nil {
		t.Fatal(err)
	}
	if list, err := p.ListPendingStarts(ctx, 5); err != nil || len(list) != 1 || list[0].Attempt != 2 || list[0].Instance != "ghost" {
		t.Fatalf("listed %+v %v, want ghost's attempt 2 only", list, err)
	}
	if _, err := p.ListPendingStarts(ctx, 0); !errors.Is(err, duroxide.ErrInvalidInput) {
		t.Fatalf("limit 0: %v", err)
	}
	// the first ack creates the instance and removes the note
	item, err = p.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
	if err != nil || item == nil {
		t.Fatalf("refetch: %+v %v", item, err)
	}
	if err := p.AckOrchestrationItem(ctx, item.LockToken, firstTurn("ghost")); err != nil {
		t.Fatal(err)
	}
	if n, err := p.PendingStart(ctx, "ghost"); err != nil || n != nil {
		t.Fatalf("a created instance keeps its note: %+v %v", n, err)
	}
	if list, err := p.ListPendingStarts(ctx, 5); err != nil || len(list) != 0 {
		t.Fatalf("listed after creation: %+v %v", list, err)
	}
	// an instance with a record is abandoned without a note
	if err := p.EnqueueForOrchestrator(ctx, duroxide.ExternalRaised{Instance: "ghost", Name: "e", Data: "1"}, 0); err != nil {
		t.Fatal(err)
	}
	item, err = p.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
	if err != nil || item == nil {
		t.Fatalf("fetch of the event: %+v %v", item, err)
	}
	if err := p.AbandonOrchestrationItemWithNote(ctx, item.LockToken, time.Hour, false, ghostNote(1)); err != nil {
		t.Fatal(err)
	}
	if n, err := p.PendingStart(ctx, "ghost"); err != nil || n != nil {
		t.Fatalf("a note on an instance with a record: %+v %v", n, err)
	}
}

func TestPendingStartNoteLifecycle(t *testing.T) {
	t.Parallel()
	_, p := newMiniProvider(t)
	testPendingNoteLifecycle(t, p)
}

func TestPartitionedPendingStartNotesLiveInTheInstancesPartition(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	pp, err := New(context.Background(), Options{URL: "redis://" + m.Addr() + "/0", Namespace: "pend", Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pp.Close() })
	testPendingNoteLifecycle(t, pp)
	// notes of instances in different partitions are listed together,
	// each written where its instance lives
	ctx := context.Background()
	var ids []string
	for i := 0; len(ids) < 3; i++ {
		id := "g" + string(rune('a'+i))
		if len(ids) > 0 && pp.PartitionOf(id) == pp.PartitionOf(ids[len(ids)-1]) {
			continue
		}
		ids = append(ids, id)
		item := fetchStart(t, pp, id)
		if err := pp.AbandonOrchestrationItemWithNote(ctx, item.LockToken, time.Hour, false, ghostNote(1)); err != nil {
			t.Fatal(err)
		}
		if !m.Exists(pp.parts[pp.PartitionOf(id)].keys.PendingStart(id)) {
			t.Fatalf("%s's note is not in its partition %d", id, pp.PartitionOf(id))
		}
	}
	list, err := pp.ListPendingStarts(ctx, 10)
	if err != nil || len(list) != 3 {
		t.Fatalf("listed %+v %v, want %v", list, err, ids)
	}
	if list, _ := pp.ListPendingStarts(ctx, 2); len(list) != 2 {
		t.Fatalf("limit 2 listed %d", len(list))
	}
}
