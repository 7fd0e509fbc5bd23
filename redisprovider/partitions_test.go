package redisprovider

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// startIn enqueues n starts of new instances in every partition of pp.
func startIn(t *testing.T, b *relayBundle, n int) {
	t.Helper()
	for k := range b.pp.Partitions() {
		for i := range n {
			id := b.instanceIn(k, fmt.Sprint("w", i, "-"))
			start := duroxide.StartOrchestration{Instance: id, Orchestration: "O", Input: `""`, ExecutionID: 1}
			if err := b.pp.EnqueueForOrchestrator(b.ctx, start, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestPartitionedFetchesServeEveryPartition: with work waiting in every
// partition, successive fetches (plain, and racing long polls) take from
// each in turn, none waiting behind another's backlog.
func TestPartitionedFetchesServeEveryPartition(t *testing.T) {
	t.Parallel()
	for _, poll := range []time.Duration{0, time.Second} {
		t.Run(fmt.Sprint("poll=", poll), func(t *testing.T) {
			t.Parallel()
			b := newRelayBundle(t, 4)
			startIn(t, b, 8)
			served := map[int]int{}
			for range 16 {
				item, err := b.pp.FetchOrchestrationItem(b.ctx, time.Minute, poll, nil)
				if err != nil || item == nil {
					t.Fatalf("fetch: %v, %v", item, err)
				}
				served[b.pp.PartitionOf(item.Instance)]++
			}
			for k := range 4 { // the race starts at the next partition each time
				if served[k] != 4 {
					t.Fatalf("16 fetches over 4 busy partitions served %v, want 4 from each", served)
				}
			}
		})
	}
}

// TestPartitionedAckAndFetchRotates: a dispatcher that keeps acking and
// fetching stays in its partition for at most maxStreak turns, then fetches
// across partitions, so a busy partition cannot hold it forever.
func TestPartitionedAckAndFetchRotates(t *testing.T) {
	t.Parallel()
	b := newRelayBundle(t, 2)
	startIn(t, b, 3*maxStreak)
	item, err := b.pp.FetchOrchestrationItem(b.ctx, time.Minute, 0, nil)
	if err != nil || item == nil {
		t.Fatalf("fetch: %v, %v", item, err)
	}
	run, longest, parts := 1, 1, map[int]bool{}
	last := b.pp.PartitionOf(item.Instance)
	for range 3 * maxStreak {
		commit := firstTurn(item.Instance)
		item, err = b.pp.AckOrchestrationItemAndFetch(b.ctx, item.LockToken, commit, time.Minute, 0, nil)
		if err != nil || item == nil {
			t.Fatalf("ack-and-fetch: %v, %v", item, err)
		}
		k := b.pp.PartitionOf(item.Instance)
		parts[k] = true
		if k == last {
			run++
		} else {
			run = 1
		}
		longest, last = max(longest, run), k
	}
	if len(parts) != 2 || longest > maxStreak+1 {
		t.Fatalf("ack-and-fetches served partitions %v, the longest run in one was %d (at most %d allowed)", parts, longest, maxStreak+1)
	}
}

// firstTurn is a minimal first turn of instance.
func firstTurn(instance string) duroxide.OrchestrationCommit {
	return duroxide.OrchestrationCommit{
		ExecutionID: 1,
		HistoryDelta: []duroxide.Event{duroxide.NewEvent(1, instance, 1, nil,
			duroxide.OrchestrationStartedEvent{Name: "O", Version: "1.0.0", Input: `""`})},
		Metadata: duroxide.ExecutionMetadata{Status: "Running", OrchestrationName: "O", OrchestrationVersion: "1.0.0"},
	}
}

// TestPartitionedIdleFetcherCostsNoScripts: an idle fetcher long-polling 4
// partitions runs each partition's script once, then none while nothing
// changes, however many polls it makes; and work enqueued in any partition
// reaches it promptly.
func TestPartitionedIdleFetcherCostsNoScripts(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	var scripts scriptCounter
	client := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
	client.AddHook(&scripts)
	t.Cleanup(func() { client.Close() })
	b := openRelayBundle(t, client, "idle", 4)
	for range 2 { // the first poll learns every partition is empty
		if item, err := b.pp.FetchOrchestrationItem(b.ctx, time.Minute, 50*time.Millisecond, nil); item != nil || err != nil {
			t.Fatalf("fetch on an empty namespace: %v, %v", item, err)
		}
	}
	// on a loaded machine a partition's first script may still be on its
	// way when those polls end: counting starts once every poller has run
	// it and found nothing
	waitPollers(t, b.pp.parts[0], "every partition's poller to find nothing", func() bool {
		for _, p := range b.pp.parts {
			for _, d := range demandsOf(p) {
				if !d.pollers[p.part].asleep() {
					return false
				}
			}
		}
		return true
	})
	before := scripts.n.Load()
	for range 5 {
		if item, err := b.pp.FetchOrchestrationItem(b.ctx, time.Minute, 50*time.Millisecond, nil); item != nil || err != nil {
			t.Fatalf("fetch on an empty namespace: %v, %v", item, err)
		}
	}
	if n := scripts.n.Load() - before; n != 0 {
		t.Fatalf("5 idle polls over 4 partitions ran %d scripts, want 0", n)
	}
	target := b.instanceIn(3, "late")
	got := make(chan string, 1)
	go func() {
		item, err := b.pp.FetchOrchestrationItem(b.ctx, time.Minute, 10*time.Second, nil)
		if err != nil || item == nil {
			got <- fmt.Sprint(item, err)
			return
		}
		got <- item.Instance
	}()
	start := duroxide.StartOrchestration{Instance: target, Orchestration: "O", Input: `""`, ExecutionID: 1}
	if err := b.pp.EnqueueForOrchestrator(context.Background(), start, 0); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != target {
			t.Fatalf("the parked fetch returned %s, want %s", s, target)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("work in partition 3 did not wake the fetcher parked over 4 partitions")
	}
}

// TestNewOpensANamespaceWithItsCount: New opens a namespace of any
// partition count (a provider of one partition once refused a namespace of
// several), and a namespace keeps the count it was created with.
func TestNewOpensANamespaceWithItsCount(t *testing.T) {
	t.Parallel()
	b := newRelayBundle(t, 3)
	pp3, err := New(b.ctx, Options{Client: b.client, Namespace: "relay"})
	if err != nil || pp3.Partitions() != 3 {
		t.Fatalf("New on a 3-partition namespace: %v, %v; want its 3 partitions", pp3, err)
	}
	defer pp3.Close()
	_, err = New(b.ctx, Options{Client: b.client, Namespace: "relay", Partitions: 5})
	if !errors.Is(err, duroxide.ErrInvalidInput) {
		t.Fatalf("New asking 5 of a 3-partition namespace: %v, want ErrInvalidInput", err)
	}
	old, err := openPartition(b.ctx, Options{Client: b.client, Namespace: "legacy"})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if err := old.EnqueueForOrchestrator(b.ctx, duroxide.StartOrchestration{Instance: "x", Orchestration: "O", ExecutionID: 1}, 0); err != nil {
		t.Fatal(err)
	}
	pp, err := New(b.ctx, Options{Client: b.client, Namespace: "legacy", Partitions: 4})
	if !errors.Is(err, duroxide.ErrInvalidInput) {
		t.Fatalf("New asking 4 of a namespace holding data from before partitions: %v, want ErrInvalidInput", err)
	}
	if pp, err = New(b.ctx, Options{Client: b.client, Namespace: "legacy"}); err != nil || pp.Partitions() != 1 {
		t.Fatalf("New on an old namespace: %v partitions, %v", pp, err)
	}
	defer pp.Close()
	if item, err := pp.FetchOrchestrationItem(b.ctx, time.Minute, 0, nil); err != nil || item == nil || item.Instance != "x" {
		t.Fatalf("the old namespace's message through New: %v, %v", item, err)
	}
}

// TestOpenOnlyLeavesANewNamespaceUncreated: a tool that opens a namespace
// before its applications create it reads one partition and writes nothing,
// so the applications still create it with the count they ask for.
func TestOpenOnlyLeavesANewNamespaceUncreated(t *testing.T) {
	t.Parallel()
	b := newRelayBundle(t, 1)
	look, err := New(b.ctx, Options{Client: b.client, Namespace: "fresh", OpenOnly: true})
	if err != nil || look.Partitions() != 1 {
		t.Fatalf("OpenOnly on a new namespace: %v partitions, %v", look, err)
	}
	defer look.Close()
	if n := b.client.Exists(b.ctx, look.Keys().Meta()).Val(); n != 0 {
		t.Fatal("OpenOnly recorded a layout")
	}
	app, err := New(b.ctx, Options{Client: b.client, Namespace: "fresh", Partitions: 4})
	if err != nil || app.Partitions() != 4 {
		t.Fatalf("creating the namespace after the look: %v partitions, %v", app, err)
	}
	defer app.Close()
	_, err = New(b.ctx, Options{Client: b.client, Namespace: "fresh", Partitions: 4, OpenOnly: true})
	if !errors.Is(err, duroxide.ErrInvalidInput) {
		t.Fatalf("Partitions with OpenOnly: %v, want ErrInvalidInput", err)
	}
	again, err := New(b.ctx, Options{Client: b.client, Namespace: "fresh", OpenOnly: true})
	if err != nil || again.Partitions() != 4 {
		t.Fatalf("OpenOnly on the created namespace: %v partitions, %v", again, err)
	}
	again.Close()
}

// failingScript is a go-redis hook that fails every EVALSHA of one script
// (by hash) with err once armed.
type failingScript struct {
	sha   atomic.Pointer[string]
	err   error
	calls atomic.Int64
}

func (f *failingScript) DialHook(next redis.DialHook) redis.DialHook { return next }

func (f *failingScript) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if sha := f.sha.Load(); sha != nil {
			if a := cmd.Args(); len(a) > 1 && cmd.Name() == "evalsha" && a[1] == *sha {
				f.calls.Add(1)
				cmd.SetErr(f.err)
				return f.err
			}
		}
		return next(ctx, cmd)
	}
}

func (f *failingScript) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestCrossPartitionDeletionRefusedWhenAStatusReadFails: a deletion over
// several partitions checks every instance's status first; a read that
// fails refuses the deletion with its error (it used to count as "not
// running"), and nothing is deleted.
func TestCrossPartitionDeletionRefusedWhenAStatusReadFails(t *testing.T) {
	t.Parallel()
	b := newRelayBundle(t, 4)
	a, c := b.instanceIn(0, "a"), b.instanceIn(1, "c")
	for _, id := range []string{a, c} {
		if err := b.pp.EnqueueForOrchestrator(b.ctx, startItem(id), 0); err != nil {
			t.Fatal(err)
		}
	}
	hook := &failingScript{err: errors.New("injected: connection reset")}
	b.client.AddHook(hook)
	sha := b.pp.base.scripts[scriptGetInstanceInfo].Hash()
	hook.sha.Store(&sha)
	_, err := b.pp.DeleteInstancesAtomic(b.ctx, []string{a, c}, false)
	if !errors.Is(err, hook.err) || hook.calls.Load() == 0 {
		t.Fatalf("deletion with a failing status read: %v (%d reads failed), want the read's error", err, hook.calls.Load())
	}
	hook.sha.Store(nil)
	for _, id := range []string{a, c} {
		if d, err := b.pp.of(id).GetQueueDepths(b.ctx); err != nil || d.OrchestratorQueue != 1 {
			t.Fatalf("partition of %s after the refused deletion: %+v, %v; want its start still queued", id, d, err)
		}
	}
}

// TestPartitionedOwnersBothWake: two session owners each wait over two
// partitions and a plain item lands in each. Each partition's marker wakes
// one poller; when both wake the same owner's pollers, one of them finds
// that owner's only caller served by the other partition, and the other
// owner sleeps until its next refresh with the item waiting
// (TestClusterPartitioned's SessionOwnersBothWokenByPlainWork on CI). The
// two partitions' pops are lined up (popBarrier) so that both markers are
// handed out at once, as on a loaded machine.
func TestPartitionedOwnersBothWake(t *testing.T) {
	t.Parallel()
	const rounds = 50
	b := newRelayBundle(t, 2)
	newPopBarrier(b.pp)
	for round := range rounds {
		got := make(chan *duroxide.LockedWorkItem, 2)
		for _, owner := range []string{"o1", "o2"} {
			go func() {
				it, err := b.pp.FetchWorkItem(b.ctx, time.Minute, 5*time.Second, sessionOwner(owner), duroxide.DefaultOnly())
				if err != nil {
					t.Error(err)
				}
				got <- it
			}()
		}
		for k := range 2 {
			h := b.pp.parts[k].hub
			waitSleeping(t, b.pp.parts[k], 2)
			h.mu.Lock()
			h.next = 0 // both partitions offer their marker to the same owner first
			h.mu.Unlock()
		}
		for k := range 2 {
			act := duroxide.ActivityExecute{Instance: b.instanceIn(k, fmt.Sprint("owners-", round)), ExecutionID: 1, ID: 1, Name: "a", Input: "x"}
			if err := b.pp.EnqueueForWorker(b.ctx, act); err != nil {
				t.Fatal(err)
			}
		}
		for range 2 {
			it := <-got
			if it == nil {
				t.Fatalf("round %d: a session owner's long poll returned nothing while a plain item waited for it", round)
			}
			if err := b.pp.AckWorkItem(b.ctx, it.LockToken, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// popBarrier is a hook for the blocking clients of a Provider's
// partitions: a BZPOPMIN that popped a marker returns only once one has in
// every partition (or after a second), so their markers are handed out
// together.
type popBarrier struct {
	ctl     map[string]bool // control keys: their pops are not lined up
	n       int
	mu      sync.Mutex
	arrived int
	release chan struct{}
}

func newPopBarrier(pp *Provider) *popBarrier {
	b := &popBarrier{ctl: map[string]bool{}, n: len(pp.parts), release: make(chan struct{})}
	hooked := map[redis.UniversalClient]bool{}
	for _, p := range pp.parts {
		b.ctl[p.hub.ctl] = true
		if !hooked[p.blocking] {
			hooked[p.blocking] = true
			p.blocking.AddHook(afterHook(b.after))
		}
	}
	return b
}

// after lines up a BZPOPMIN that popped a marker (see popBarrier).
func (b *popBarrier) after(cmd redis.Cmder, err error) {
	if cmd.Name() != "bzpopmin" || err != nil || b.ctl[poppedKey(cmd.(onceCmd).Val())] {
		return
	}
	b.mu.Lock()
	b.arrived++
	release := b.release
	if b.arrived == b.n {
		close(b.release)
		b.arrived, b.release = 0, make(chan struct{})
	}
	b.mu.Unlock()
	select {
	case <-release:
	case <-time.After(time.Second):
	}
}
