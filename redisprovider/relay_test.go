package redisprovider

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	dxredis "github.com/duroxide-go/duroxide-redis"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// relayBundle is a partitioned namespace on miniredis whose relay loops
// never start: the test drives drains itself.
type relayBundle struct {
	pp     *Provider
	client redis.UniversalClient
	ctx    context.Context
}

func newRelayBundle(t *testing.T, partitions int) *relayBundle {
	t.Helper()
	m := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
	t.Cleanup(func() { client.Close() })
	return openRelayBundle(t, client, "relay", partitions)
}

func openRelayBundle(t *testing.T, client redis.UniversalClient, namespace string, partitions int) *relayBundle {
	t.Helper()
	pp, err := New(context.Background(), Options{Client: client, Namespace: namespace, Partitions: partitions})
	if err != nil {
		t.Fatal(err)
	}
	pp.relay.once.Do(func() {}) // no loops: drains run when the test says
	t.Cleanup(func() { pp.Close() })
	return &relayBundle{pp: pp, client: client, ctx: context.Background()}
}

// instanceIn returns an instance id of partition k.
func (b *relayBundle) instanceIn(k int, name string) string {
	for i := 0; ; i++ {
		id := fmt.Sprintf("%s-%d", name, i)
		if b.pp.PartitionOf(id) == k {
			return id
		}
	}
}

// sendTurn commits a first turn of a new instance in partition from that
// sends one event to each of targets.
func (b *relayBundle) sendTurn(t *testing.T, from int, targets []string) {
	t.Helper()
	var items []duroxide.WorkItem
	for i, target := range targets {
		items = append(items, duroxide.ExternalRaised{Instance: target, Name: "ev", Data: fmt.Sprint(i)})
	}
	b.send(t, from, items)
}

// send commits a first turn of a new instance in partition from that sends
// items.
func (b *relayBundle) send(t *testing.T, from int, items []duroxide.WorkItem) {
	t.Helper()
	root := b.instanceIn(from, "sender")
	start := duroxide.StartOrchestration{Instance: root, Orchestration: "O", Input: `""`, ExecutionID: 1}
	if err := b.pp.EnqueueForOrchestrator(b.ctx, start, 0); err != nil {
		t.Fatal(err)
	}
	item, err := b.pp.FetchOrchestrationItem(b.ctx, time.Minute, 0, nil)
	if err != nil || item == nil || item.Instance != root {
		t.Fatalf("fetch = %+v, %v; want instance %s", item, err, root)
	}
	commit := duroxide.OrchestrationCommit{
		ExecutionID: 1,
		HistoryDelta: []duroxide.Event{duroxide.NewEvent(1, root, 1, nil,
			duroxide.OrchestrationStartedEvent{Name: "O", Version: "1.0.0", Input: `""`})},
		Metadata: duroxide.ExecutionMetadata{Status: "Running", OrchestrationName: "O", OrchestrationVersion: "1.0.0"},
	}
	commit.OrchestratorItems = items
	if err := b.pp.AckOrchestrationItem(b.ctx, item.LockToken, commit); err != nil {
		t.Fatal(err)
	}
}

// queued returns how many orchestrator messages are visible in partition k.
func (b *relayBundle) queued(t *testing.T, k int) int {
	t.Helper()
	d, err := b.pp.parts[k].GetQueueDepths(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return d.OrchestratorQueue
}

func (b *relayBundle) outbox(t *testing.T, k int) int64 {
	t.Helper()
	n, err := b.client.ZCard(b.ctx, b.pp.PartitionKeys(k).Outbox()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// dieAt makes the relay fail at the n-th step named step (1-based) once,
// as a process dying there would, and counts the steps.
func dieAt(r *relay, step string, n int) {
	var mu sync.Mutex
	seen, died := 0, false
	r.fault = func(s string) error {
		mu.Lock()
		defer mu.Unlock()
		if s != step || died {
			return nil
		}
		seen++
		if seen == n {
			died = true
			return errors.New("killed at " + step)
		}
		return nil
	}
}

// TestRelayKilledMidBatchDeliversEachMessageOnce: a relay that dies after
// delivering to one target partition, and one that dies after delivering
// to all of them but before trimming the outbox, leave their batch in the
// outbox; the next drain delivers it again, and every target applies each
// message once (nothing lost, nothing doubled).
func TestRelayKilledMidBatchDeliversEachMessageOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ step string }{{"deliver"}, {"trim"}} {
		t.Run(tc.step, func(t *testing.T) {
			t.Parallel()
			b := newRelayBundle(t, 4)
			targets := []string{b.instanceIn(1, "t"), b.instanceIn(2, "t"), b.instanceIn(1, "u"), b.instanceIn(3, "t")}
			b.sendTurn(t, 0, targets)
			if n := b.outbox(t, 0); n != 4 {
				t.Fatalf("outbox of partition 0 holds %d messages after the ack, want 4", n)
			}
			if got := b.queued(t, 1) + b.queued(t, 2) + b.queued(t, 3); got != 0 {
				t.Fatalf("%d messages delivered before any relay ran", got)
			}
			dieAt(b.pp.relay, tc.step, 2)
			if tc.step == "trim" {
				dieAt(b.pp.relay, tc.step, 1)
			}
			if err := b.pp.relay.drain(b.ctx, 0); err == nil {
				t.Fatal("the first drain did not die")
			}
			if n := b.outbox(t, 0); n != 4 {
				t.Fatalf("outbox holds %d after a drain that died, want all 4 still", n)
			}
			if err := b.pp.relay.drain(b.ctx, 0); err != nil {
				t.Fatal(err)
			}
			if err := b.pp.relay.drain(b.ctx, 0); err != nil { // an idle drain changes nothing
				t.Fatal(err)
			}
			want := map[int]int{1: 2, 2: 1, 3: 1}
			for k, n := range want {
				if got := b.queued(t, k); got != n {
					t.Errorf("partition %d holds %d messages, want %d (each once)", k, got, n)
				}
			}
			if n := b.outbox(t, 0); n != 0 {
				t.Errorf("outbox holds %d after the relay finished, want 0", n)
			}
		})
	}
}

// TestRelaysRacingOnOneOutboxApplyEachMessageOnce: several processes
// draining the same outbox at once (each has its own provider), over more
// than one drain batch, deliver every message once and in the order it was
// sent.
func TestRelaysRacingOnOneOutboxApplyEachMessageOnce(t *testing.T) {
	t.Parallel()
	b := newRelayBundle(t, 3)
	others := []*relayBundle{openRelayBundle(t, b.client, "relay", 0), openRelayBundle(t, b.client, "relay", 0)}
	targets := []string{b.instanceIn(1, "t"), b.instanceIn(2, "t")}
	var items []duroxide.WorkItem
	for _, target := range targets {
		items = append(items, duroxide.StartOrchestration{Instance: target, Orchestration: "O", Input: `""`, ExecutionID: 1})
	}
	for i := range 300 {
		items = append(items, duroxide.ExternalRaised{Instance: targets[i%2], Name: "ev", Data: fmt.Sprint(i)})
	}
	b.send(t, 0, items)
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for _, x := range append(others, b) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- x.pp.relay.drain(x.ctx, 0)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := b.outbox(t, 0); n != 0 {
		t.Fatalf("outbox holds %d, want 0", n)
	}
	for k, target := range targets {
		item, err := b.pp.parts[k+1].FetchOrchestrationItem(b.ctx, time.Minute, 0, nil)
		if err != nil || item == nil || item.Instance != target {
			t.Fatalf("fetch in partition %d = %+v, %v; want %s", k+1, item, err, target)
		}
		if len(item.Messages) != 151 {
			t.Fatalf("%s received %d messages, want 151 (each once)", target, len(item.Messages))
		}
		for i, m := range item.Messages[1:] {
			if ev, ok := m.(duroxide.ExternalRaised); !ok || ev.Data != fmt.Sprint(2*i+k) {
				t.Fatalf("%s message %d = %+v, want event %d (in the order sent)", target, i+1, m, 2*i+k)
			}
		}
	}
}

// TestAckSendsToOtherPartitionsOnlyThroughTheOutbox: a turn's message for
// an instance of its own partition is enqueued by the ack itself; one for
// another partition waits in the outbox until a drain, which the ack asks
// the relay for.
func TestAckSendsToOtherPartitionsOnlyThroughTheOutbox(t *testing.T) {
	t.Parallel()
	b := newRelayBundle(t, 4)
	local, remote := b.instanceIn(0, "local"), b.instanceIn(2, "remote")
	b.sendTurn(t, 0, []string{local, remote})
	if got := b.queued(t, 0); got != 1 {
		t.Fatalf("partition 0 holds %d visible messages, want the local one", got)
	}
	if got := b.queued(t, 2); got != 0 {
		t.Fatalf("partition 2 holds %d messages before the relay ran", got)
	}
	select {
	case <-b.pp.relay.kicks[0]:
	default:
		t.Fatal("the ack did not ask for a drain of its partition's outbox")
	}
	if err := b.pp.relay.drain(b.ctx, 0); err != nil {
		t.Fatal(err)
	}
	if got := b.queued(t, 2); got != 1 {
		t.Fatalf("partition 2 holds %d messages after the drain, want 1", got)
	}
}

// TestPartitionTagsSpreadOverEqualSlotRanges: partition i's tag hashes into
// the i-th equal slice of the slot space, for the counts a Cluster uses.
func TestPartitionTagsSpreadOverEqualSlotRanges(t *testing.T) {
	t.Parallel()
	for _, p := range []int{2, 3, 12, 64} {
		for i, tag := range dxredis.PartitionTags("ns", p) {
			s := int(dxredis.Slot("{" + tag + "}:x"))
			if s < i*dxredis.ClusterSlots/p || s >= (i+1)*dxredis.ClusterSlots/p {
				t.Errorf("P=%d partition %d tag %q has slot %d, outside its slice", p, i, tag, s)
			}
		}
	}
}
