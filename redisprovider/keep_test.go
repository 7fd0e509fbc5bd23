package redisprovider

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// An ack-and-fetch keeps aside the instance its ack makes ready instead of
// filing it (U.keep, lua/lib_util.lua): its fetch still takes the instance
// with the oldest visible message, whether that is the kept one or one
// already ready, and the one not taken is fetched next. The kept instance
// is the one the turn released with a message that arrived meanwhile, or an
// instance the turn sent a message to before (its order then comes from the
// new message's seq).
func TestAckFetchTakesTheOldestOfKeptAndReady(t *testing.T) {
	t.Parallel()
	event := func(inst string) duroxide.WorkItem {
		return duroxide.ExternalRaised{Instance: inst, Name: "e", Data: `"d"`}
	}
	start := func(inst string) duroxide.WorkItem {
		return duroxide.StartOrchestration{Instance: inst, Orchestration: "O", Input: `""`, ExecutionID: duroxide.InitialExecutionID}
	}
	cases := []struct {
		name    string
		during  []duroxide.WorkItem // enqueued while x's turn runs, in order
		sent    []duroxide.WorkItem // the turn's orchestrator items
		fetched []string            // the ack-and-fetch's instance, then the next fetches'
	}{
		{"released instance older", []duroxide.WorkItem{event("x"), start("y")}, nil, []string{"x", "y"}},
		{"ready instance older", []duroxide.WorkItem{start("y"), event("x")}, nil, []string{"y", "x"}},
		{"instance sent to, ready one older", []duroxide.WorkItem{start("y")}, []duroxide.WorkItem{start("z")}, []string{"y", "z"}},
		{"instance sent to, alone", nil, []duroxide.WorkItem{start("z")}, []string{"z"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := newPigBundle(t)
			x := b.started(t, "x")
			for _, it := range c.during {
				if err := b.p.EnqueueForOrchestrator(b.ctx, it, 0); err != nil {
					t.Fatal(err)
				}
			}
			started := duroxide.NewEvent(1, "x", 1, nil, duroxide.OrchestrationStartedEvent{Name: "O", Input: `""`})
			next, err := b.p.AckOrchestrationItemAndFetch(b.ctx, x.LockToken, duroxide.OrchestrationCommit{
				ExecutionID: 1, HistoryDelta: []duroxide.Event{started}, OrchestratorItems: c.sent,
				Metadata: duroxide.ExecutionMetadata{OrchestrationName: "O", Status: "Running"},
			}, time.Minute, 0, nil)
			got := []string{}
			for err == nil && next != nil {
				got = append(got, next.Instance)
				next, err = b.p.FetchOrchestrationItem(b.ctx, time.Minute, 0, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.fetched) {
				t.Fatalf("fetched %v, want %v", got, c.fetched)
			}
			for i := range got {
				if got[i] != c.fetched[i] {
					t.Fatalf("fetched %v, want %v", got, c.fetched)
				}
			}
		})
	}
}

// An ack-and-fetch whose ack fails returns before its fetch and before it
// files anything it kept aside. Nothing of the keeping may outlive the call:
// a function library keeps its chunk's locals from call to call (Redis
// Functions, the real server's path), so a flag left on there would keep
// the next script's ready instance aside, unfiled: no other process
// would find it, and no parked fetcher would be woken for it.
func TestFailedAckFetchKeepsNothingAsideForTheNextCall(t *testing.T) {
	t.Parallel()
	for name, o := range testServers(t) {
		t.Run(name, func(t *testing.T) {
			rdb := redis.NewClient(o)
			t.Cleanup(func() { rdb.Close() })
			ns := fmt.Sprintf("keep-%d", time.Now().UnixNano())
			p, err := openPartition(context.Background(), Options{Client: rdb, Namespace: ns})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close(); dropKeys(rdb, p.keys.Prefix()) })
			ctx := context.Background()
			_, err = p.AckOrchestrationItemAndFetch(ctx, "no-such-token:x", duroxide.OrchestrationCommit{ExecutionID: 1}, time.Minute, 0, nil)
			if !errors.Is(err, duroxide.ErrLockLost) {
				t.Fatalf("ack-and-fetch with an unknown token: %v, want ErrLockLost", err)
			}
			start := duroxide.StartOrchestration{Instance: "n", Orchestration: "O", Input: `""`, ExecutionID: duroxide.InitialExecutionID}
			if err := p.EnqueueForOrchestrator(ctx, start, 0); err != nil {
				t.Fatal(err)
			}
			// filed ready, where a fetcher of another process finds it
			if err := rdb.ZScore(ctx, p.keys.OrchReady(""), "n").Err(); err != nil {
				t.Fatalf("the enqueued instance is not filed ready: %v", err)
			}
			item, err := p.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
			if err != nil || item == nil || item.Instance != "n" {
				t.Fatalf("fetch after the failed ack-and-fetch = %+v, %v; want instance n", item, err)
			}
		})
	}
}
