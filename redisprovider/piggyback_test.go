package redisprovider

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// pigBundle is a provider on miniredis whose fetch scripts are counted.
type pigBundle struct {
	p          *partition
	ctx        context.Context
	orchFetch  *scriptCounter
	workFetch  *scriptCounter
	blockedPop *popCounter
}

// popCounter counts the BZPOPMIN calls that returned a marker.
type popCounter struct{ scriptCounter }

func (c *popCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if cmd.Name() == "bzpopmin" && err == nil {
			c.n.Add(1)
		}
		return err
	}
}

func newPigBundle(t *testing.T) *pigBundle {
	t.Helper()
	m := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
	t.Cleanup(func() { client.Close() })
	b := &pigBundle{ctx: context.Background(), orchFetch: &scriptCounter{}, workFetch: &scriptCounter{}, blockedPop: &popCounter{}}
	p, err := openPartition(b.ctx, Options{Client: client, ForceEvalsha: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	b.p = p
	b.orchFetch.sha = p.scripts[scriptFetchOrchestrationItem].Hash()
	b.workFetch.sha = p.scripts[scriptFetchWorkItem].Hash()
	client.AddHook(b.orchFetch)
	client.AddHook(b.workFetch)
	p.blocking.AddHook(b.blockedPop)
	return b
}

// started locks instance i's first turn.
func (b *pigBundle) started(t *testing.T, i string) *duroxide.OrchestrationItem {
	t.Helper()
	start := duroxide.StartOrchestration{Instance: i, Orchestration: "O", Input: `""`, ExecutionID: duroxide.InitialExecutionID}
	if err := b.p.EnqueueForOrchestrator(b.ctx, start, 0); err != nil {
		t.Fatal(err)
	}
	item, err := b.p.FetchOrchestrationItem(b.ctx, time.Minute, 0, nil)
	if err != nil || item == nil {
		t.Fatalf("fetch: %v, %v", item, err)
	}
	return item
}

// park starts a long poll with fetch and waits until it sleeps.
func park[T any](t *testing.T, p *partition, fetch func() (*T, error)) <-chan *T {
	t.Helper()
	got := make(chan *T, 1)
	go func() {
		item, err := fetch()
		if err != nil {
			t.Error(err)
		}
		got <- item
	}()
	waitSleeping(t, p, 1)
	return got
}

// A turn's ack that schedules an activity hands it to a worker parked in
// this process inside its own script, and an activity's ack hands the
// instance its completion made ready to a parked dispatcher: neither parked
// caller runs a fetch script or is woken by a blocked call. Without the
// piggyback each handoff costs a BZPOPMIN and a fetch script of its own.
func TestAckHandsWorkToAParkedCaller(t *testing.T) {
	t.Parallel()
	b := newPigBundle(t)
	turn := b.started(t, "i")
	worker := park(t, b.p, func() (*duroxide.LockedWorkItem, error) {
		return b.p.FetchWorkItem(b.ctx, time.Minute, 30*time.Second, nil, duroxide.DefaultOnly())
	})
	// the worker's poller ran its script once, found nothing and sleeps
	work0, pops0 := b.workFetch.n.Load(), b.blockedPop.n.Load()
	started := duroxide.NewEvent(1, "i", 1, nil, duroxide.OrchestrationStartedEvent{Name: "O", Input: `""`})
	scheduled := duroxide.NewEvent(2, "i", 1, nil, duroxide.ActivityScheduledEvent{Name: "A", Input: `"x"`})
	act := duroxide.ActivityExecute{Instance: "i", ExecutionID: 1, ID: 2, Name: "A", Input: `"x"`}
	next, err := b.p.AckOrchestrationItemAndFetch(b.ctx, turn.LockToken, duroxide.OrchestrationCommit{
		ExecutionID: 1, HistoryDelta: []duroxide.Event{started, scheduled}, WorkerItems: []duroxide.WorkItem{act},
		Metadata: duroxide.ExecutionMetadata{OrchestrationName: "O", Status: "Running"},
	}, time.Minute, 0, nil)
	if err != nil || next != nil {
		t.Fatalf("ack-and-fetch of the turn: %v, %v; want nothing fetched", next, err)
	}
	w := <-worker
	if w == nil || w.Item.InstanceID() != "i" {
		t.Fatalf("the parked worker got %v, want the activity", w)
	}
	if n, pops := b.workFetch.n.Load()-work0, b.blockedPop.n.Load()-pops0; n != 0 || pops != 0 {
		t.Fatalf("the handoff cost %d fetch_work_item scripts and %d popped markers, want 0 and 0", n, pops)
	}

	dispatcher := park(t, b.p, func() (*duroxide.OrchestrationItem, error) {
		return b.p.FetchOrchestrationItem(b.ctx, time.Minute, 30*time.Second, nil)
	})
	orch0, pops0 := b.orchFetch.n.Load(), b.blockedPop.n.Load()
	done := duroxide.ActivityCompleted{Instance: "i", ExecutionID: 1, ID: 2, Result: `"ok"`}
	if again, err := b.p.AckWorkItemAndFetch(b.ctx, w.LockToken, done, time.Minute, 0, nil, duroxide.DefaultOnly()); err != nil || again != nil {
		t.Fatalf("ack-and-fetch of the activity: %v, %v; want nothing fetched", again, err)
	}
	d := <-dispatcher
	if d == nil || d.Instance != "i" || len(d.Messages) != 1 {
		t.Fatalf("the parked dispatcher got %+v, want instance i with the completion", d)
	}
	if n, pops := b.orchFetch.n.Load()-orch0, b.blockedPop.n.Load()-pops0; n != 0 || pops != 0 {
		t.Fatalf("the handoff cost %d fetch_orchestration_item scripts and %d popped markers, want 0 and 0", n, pops)
	}
}

// An activity's ack whose completion goes to an instance locked by a turn
// in flight makes nothing ready, so its script runs no fetch for the
// dispatcher parked in this process (the fetch could not find anything,
// and its idle bookkeeping was most of the script's commands in a fan-in):
// its reply's piggybacked part is nil, and the dispatcher stays parked
// until the instance is released with the completion, which then reaches it.
func TestAckSkipsAPiggybackThatCannotFind(t *testing.T) {
	t.Parallel()
	b := newPigBundle(t)
	sha, replies := b.p.scripts[scriptAckFetchWorkItem].Hash(), make(chan any, 1)
	b.p.rdb.AddHook(afterHook(func(cmd redis.Cmder, err error) {
		if a := cmd.Args(); err == nil && len(a) > 1 && cmd.Name() == "evalsha" && a[1] == sha {
			replies <- cmd.(interface{ Val() any }).Val()
		}
	}))
	turn := b.started(t, "i") // the instance stays locked by this turn
	act := duroxide.ActivityExecute{Instance: "i", ExecutionID: 1, ID: 2, Name: "A", Input: `"x"`}
	if err := b.p.EnqueueForWorker(b.ctx, act); err != nil {
		t.Fatal(err)
	}
	w, err := b.p.FetchWorkItem(b.ctx, time.Minute, 0, nil, duroxide.DefaultOnly())
	if err != nil || w == nil {
		t.Fatalf("fetch of the activity: %v, %v", w, err)
	}
	dispatcher := park(t, b.p, func() (*duroxide.OrchestrationItem, error) {
		return b.p.FetchOrchestrationItem(b.ctx, time.Minute, 30*time.Second, nil)
	})
	done := duroxide.ActivityCompleted{Instance: "i", ExecutionID: 1, ID: 2, Result: `"ok"`}
	if again, err := b.p.AckWorkItemAndFetch(b.ctx, w.LockToken, done, time.Minute, 0, nil, duroxide.DefaultOnly()); err != nil || again != nil {
		t.Fatalf("ack-and-fetch of the activity: %v, %v; want nothing fetched", again, err)
	}
	parts, ok := (<-replies).([]any)
	if !ok || len(parts) != 2 {
		t.Fatalf("ack_fetch_work_item replied %v, want its own part and the piggybacked one", parts)
	}
	if parts[1] != nil {
		t.Fatalf("the piggybacked fetch ran (reply %v) for an instance the ack left locked", parts[1])
	}
	waitSleeping(t, b.p, 1) // put back in line, its poller still clean
	started := duroxide.NewEvent(1, "i", 1, nil, duroxide.OrchestrationStartedEvent{Name: "O", Input: `""`})
	if err := b.p.AckOrchestrationItem(b.ctx, turn.LockToken, duroxide.OrchestrationCommit{
		ExecutionID: 1, HistoryDelta: []duroxide.Event{started},
		Metadata: duroxide.ExecutionMetadata{OrchestrationName: "O", Status: "Running"},
	}); err != nil {
		t.Fatal(err)
	}
	if d := <-dispatcher; d == nil || d.Instance != "i" || len(d.Messages) != 1 {
		t.Fatalf("the parked dispatcher got %+v, want instance i with the completion", d)
	}
}
