package redisprovider

import (
	"context"
	"testing"
	"time"

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
