package redisprovider

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// TestInstanceActivityAndRuntimes: a session item fetched by an owner is
// shown locked, on its first attempt, held by that owner, and the owner's
// session is listed among the runtimes; a plain item waits ready with no
// attempt; the instance without items has none.
func TestInstanceActivityAndRuntimes(t *testing.T) {
	t.Parallel()
	_, p := newMiniProvider(t)
	ctx := context.Background()
	sid, tag := "s-1", "gpu"
	for _, it := range []duroxide.ActivityExecute{
		{Instance: "i-1", ExecutionID: 1, ID: 2, Name: "A", Input: "x", SessionID: &sid},
		{Instance: "i-1", ExecutionID: 1, ID: 3, Name: "B", Input: "y", Tag: &tag},
	} {
		if err := p.EnqueueForWorker(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	locked, err := p.FetchWorkItem(ctx, time.Minute, 0, &duroxide.SessionFetchConfig{OwnerID: "node-7", LockTimeout: time.Minute}, duroxide.TagFilter{})
	if err != nil || locked == nil {
		t.Fatalf("fetch: %v %v", locked, err)
	}
	ia, err := p.InstanceActivity(ctx, "i-1")
	if err != nil {
		t.Fatal(err)
	}
	if ia.Total != 2 || len(ia.Items) != 2 {
		t.Fatalf("items: %+v", ia)
	}
	a, b := ia.Items[0], ia.Items[1]
	if a.ActivityID != 2 || a.State != "locked" || a.Attempts != 1 || a.SessionOwner != "node-7" || a.Session != sid || a.LockedUntil <= ia.Now {
		t.Errorf("the fetched session item: %+v (now %d)", a, ia.Now)
	}
	if b.ActivityID != 3 || b.State != "ready" || b.Attempts != 0 || b.Tag != "gpu" || b.LockedUntil != 0 || b.SessionOwner != "" {
		t.Errorf("the waiting tagged item: %+v", b)
	}
	if none, err := p.InstanceActivity(ctx, "i-2"); err != nil || none.Total != 0 || len(none.Items) != 0 {
		t.Errorf("an instance without items: %+v %v", none, err)
	}
	rt, err := p.Runtimes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rt.ClaimedSessions != 1 || len(rt.Sessions) != 1 || rt.Sessions[0].Owner != "node-7" || rt.Sessions[0].Session != sid || rt.LockedActivities != 1 {
		t.Errorf("runtimes: %+v", rt)
	}
	if _, err := p.InstanceActivity(ctx, ""); err == nil {
		t.Error("an empty instance id was accepted")
	}
}

func TestFilterText(t *testing.T) {
	t.Parallel()
	for enc, want := range map[string]string{"*": "any", "": "none", "1.0.0,2.0.0;3.0.0,": "1.0.0..2.0.0, 3.0.0.."} {
		if got := filterText(enc); got != want {
			t.Errorf("filterText(%q) = %q, want %q", enc, got, want)
		}
	}
}

// TestPartitionedRuntimesMerge: sessions held in two partitions are listed
// together, latest expiry first, and counted once each.
func TestPartitionedRuntimesMerge(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	ctx := context.Background()
	pp, err := New(ctx, Options{URL: "redis://" + m.Addr() + "/0", Namespace: "rt", Partitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pp.Close() })
	// one instance per partition, each with a session item an owner takes
	ids := map[int]string{}
	for i := 0; len(ids) < 2; i++ {
		id := fmt.Sprintf("i-%d", i)
		if _, ok := ids[pp.PartitionOf(id)]; !ok {
			ids[pp.PartitionOf(id)] = id
		}
	}
	for part, id := range ids {
		sid := "s-" + id
		if err := pp.EnqueueForWorker(ctx, duroxide.ActivityExecute{Instance: id, ExecutionID: 1, ID: 2, Name: "A", SessionID: &sid}); err != nil {
			t.Fatal(err)
		}
		owner := fmt.Sprintf("node-%d", part)
		lock := time.Duration(part+1) * time.Minute
		if it, err := pp.parts[part].FetchWorkItem(ctx, time.Minute, 0, &duroxide.SessionFetchConfig{OwnerID: owner, LockTimeout: lock}, duroxide.TagFilter{}); err != nil || it == nil {
			t.Fatalf("fetch in partition %d: %v %v", part, it, err)
		}
	}
	rt, err := pp.Runtimes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rt.ClaimedSessions != 2 || len(rt.Sessions) != 2 || rt.Sessions[0].Owner != "node-1" || rt.Sessions[1].Owner != "node-0" || rt.LockedActivities != 2 {
		t.Errorf("merged runtimes: %+v", rt)
	}
	for _, id := range ids {
		if ia, err := pp.InstanceActivity(ctx, id); err != nil || len(ia.Items) != 1 || ia.Items[0].State != "locked" {
			t.Errorf("%s: %+v %v", id, ia, err)
		}
	}
}
