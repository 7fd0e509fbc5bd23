package redisprovider

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// A lazy fetch reads nothing of the history: with the history list of a
// 1,000-event execution replaced by a string, which every list command
// refuses (WRONGTYPE), the lazy fetch and the lazy ack-and-fetch still
// answer, with the cursor of the 1,000 events, while a plain fetch fails.
// On miniredis and, with DUROXIDE_REDIS_URL, on that server through
// functions and through EVALSHA.
func TestLazyFetchReadsNoHistory(t *testing.T) {
	m := miniredis.RunT(t)
	clients := map[string]redis.UniversalClient{"miniredis": redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1})}
	if url := os.Getenv("DUROXIDE_REDIS_URL"); url != "" {
		opts, err := redis.ParseURL(url)
		if err != nil {
			t.Fatal(err)
		}
		opts.MaxRetries = -1
		clients["redis"] = redis.NewClient(opts)
	}
	for name, c := range clients {
		t.Cleanup(func() { c.Close() })
		for _, evalsha := range []bool{false, true} {
			if name == "miniredis" && !evalsha {
				continue // miniredis has no functions: both are EVALSHA
			}
			t.Run(fmt.Sprintf("%s/evalsha=%v", name, evalsha), func(t *testing.T) {
				t.Parallel()
				p := newOn(t, c, evalsha)
				t.Cleanup(func() { dropKeys(c, p.keys.Prefix()) })
				lazyReadsNoHistory(t, p)
			})
		}
	}
}

// dropKeys deletes the keys of a test's namespace on a shared server.
func dropKeys(c redis.UniversalClient, prefix string) {
	ctx := context.Background()
	iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		c.Del(ctx, iter.Val())
	}
}

func lazyReadsNoHistory(t *testing.T, p *partition) {
	const inst, n = "big", 1000
	ctx := context.Background()
	enqueue := func(item duroxide.WorkItem) {
		t.Helper()
		if err := p.EnqueueForOrchestrator(ctx, item, 0); err != nil {
			t.Fatal(err)
		}
	}
	enqueue(duroxide.StartOrchestration{Instance: inst, Orchestration: "O", Input: `"x"`, ExecutionID: 1})
	item, err := p.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
	if err != nil || item == nil {
		t.Fatalf("FetchOrchestrationItem = %v, %v", item, err)
	}
	events := make([]duroxide.Event, n)
	events[0] = duroxide.NewEvent(1, inst, 1, nil, duroxide.OrchestrationStartedEvent{Name: "O", Version: "1.0.0", Input: `"x"`})
	for i := 1; i < n; i++ {
		events[i] = duroxide.NewEvent(uint64(i+1), inst, 1, nil, duroxide.ExternalEventEvent{Name: "e", Data: fmt.Sprint(i)})
	}
	if err := p.AckOrchestrationItem(ctx, item.LockToken, duroxide.OrchestrationCommit{ExecutionID: 1, HistoryDelta: events,
		Metadata: duroxide.ExecutionMetadata{OrchestrationName: "O", OrchestrationVersion: "1.0.0"}}); err != nil {
		t.Fatal(err)
	}
	hk := p.keys.History(inst, 1)
	if err := p.rdb.Set(ctx, hk, "not a list", 0).Err(); err != nil {
		t.Fatal(err)
	}
	wantCursor := func(what string, item *duroxide.OrchestrationItem, err error) {
		t.Helper()
		if err != nil || item == nil || item.Instance != inst {
			t.Fatalf("%s = %v, %v; want instance %s", what, item, err, inst)
		}
		if c := item.Cursor; c == nil || c.ExecutionID != 1 || c.LastEventID != n || item.History != nil || item.OrchestrationName != "O" {
			t.Fatalf("%s: cursor %+v, %d events, name %q; want execution 1 ending at event %d, no events, O", what, c, len(item.History), item.OrchestrationName, n)
		}
	}
	enqueue(duroxide.ExternalRaised{Instance: inst, Name: "e", Data: `"1"`})
	item, err = p.FetchOrchestrationItemLazy(ctx, time.Minute, 0, nil)
	wantCursor("FetchOrchestrationItemLazy", item, err)
	enqueue(duroxide.ExternalRaised{Instance: inst, Name: "e", Data: `"2"`})
	item, err = p.AckOrchestrationItemAndFetchLazy(ctx, item.LockToken, duroxide.OrchestrationCommit{ExecutionID: 1}, time.Minute, 0, nil)
	wantCursor("AckOrchestrationItemAndFetchLazy", item, err)
	// the trap works: a fetch that reads the history fails on it (after its
	// first writes, so it comes last)
	if err := p.AbandonOrchestrationItem(ctx, item.LockToken, 0, true); err != nil {
		t.Fatal(err)
	}
	if _, err := p.FetchOrchestrationItem(ctx, time.Minute, 0, nil); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Fatalf("plain FetchOrchestrationItem on the replaced history = %v; want WRONGTYPE", err)
	}
}
