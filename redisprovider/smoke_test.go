package redisprovider

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/uuid"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

func newTestProvider(t *testing.T) *Provider {
	t.Helper()
	url := os.Getenv("DUROXIDE_REDIS_URL")
	if url == "" {
		m := miniredis.RunT(t)
		url = "redis://" + m.Addr()
	}
	p, err := New(context.Background(), Options{URL: url, Namespace: "smoke-" + uuid.NewString()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func TestSmokeTurn(t *testing.T) {
	ctx := context.Background()
	p := newTestProvider(t)
	if err := p.EnqueueForOrchestrator(ctx, duroxide.StartOrchestration{Instance: "i1", Orchestration: "O", Input: "1", ExecutionID: 1}, 0); err != nil {
		t.Fatal(err)
	}
	item, err := p.FetchOrchestrationItem(ctx, time.Second, 0, nil)
	if err != nil || item == nil {
		t.Fatalf("fetch: %v %v", item, err)
	}
	t.Logf("item %+v", item)
	ev := duroxide.NewEvent(1, "i1", 1, nil, duroxide.OrchestrationStartedEvent{Name: "O", Version: "1.0.0", Input: "1"})
	ev2 := duroxide.NewEvent(2, "i1", 1, nil, duroxide.ActivityScheduledEvent{Name: "A", Input: "x"})
	err = p.AckOrchestrationItem(ctx, item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID:  1,
		HistoryDelta: []duroxide.Event{ev, ev2},
		WorkerItems:  []duroxide.WorkItem{duroxide.ActivityExecute{Instance: "i1", ExecutionID: 1, ID: 2, Name: "A", Input: "x"}},
		Metadata:     duroxide.ExecutionMetadata{OrchestrationName: "O", OrchestrationVersion: "1.0.0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.FetchWorkItem(ctx, time.Second, 0, nil, duroxide.DefaultOnly())
	if err != nil || w == nil {
		t.Fatalf("fetch work: %v %v", w, err)
	}
	if err := p.AckWorkItem(ctx, w.LockToken, duroxide.ActivityCompleted{Instance: "i1", ExecutionID: 1, ID: 2, Result: "r"}); err != nil {
		t.Fatal(err)
	}
	item, err = p.FetchOrchestrationItem(ctx, time.Second, 0, nil)
	if err != nil || item == nil {
		t.Fatalf("fetch2: %v %v", item, err)
	}
	if len(item.History) != 2 || len(item.Messages) != 1 {
		t.Fatalf("history %d messages %d", len(item.History), len(item.Messages))
	}
	out := "done"
	err = p.AckOrchestrationItem(ctx, item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID:  1,
		HistoryDelta: []duroxide.Event{duroxide.NewEvent(3, "i1", 1, nil, duroxide.ActivityCompletedEvent{Result: "r"}), duroxide.NewEvent(4, "i1", 1, nil, duroxide.OrchestrationCompletedEvent{Output: out})},
		Metadata:     duroxide.ExecutionMetadata{Status: "Completed", Output: &out},
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := p.Read(ctx, "i1")
	if err != nil || len(h) != 4 {
		t.Fatalf("read %d %v", len(h), err)
	}
	m, err := p.GetSystemMetrics(ctx)
	t.Logf("metrics %+v %v", m, err)
	d, err := p.GetQueueDepths(ctx)
	t.Logf("depths %+v %v", d, err)
	info, err := p.GetInstanceInfo(ctx, "i1")
	t.Logf("info %+v %v", info, err)
	res, err := p.DeleteInstance(ctx, "i1", false)
	t.Logf("delete %+v %v", res, err)
	start := time.Now()
	item, err = p.FetchOrchestrationItem(ctx, time.Second, 300*time.Millisecond, nil)
	t.Logf("empty poll %v %v after %v", item, err, time.Since(start))
}
