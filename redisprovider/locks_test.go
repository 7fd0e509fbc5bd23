package redisprovider

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// lockTwo enqueues a start for instances a and b and fetches both, returning
// their items in that order.
func lockTwo(t *testing.T, p *partition) (a, b *duroxide.OrchestrationItem) {
	t.Helper()
	ctx := context.Background()
	for _, inst := range []string{"a", "b"} {
		start := duroxide.StartOrchestration{Instance: inst, Orchestration: "O", Input: `""`, ExecutionID: 1}
		if err := p.EnqueueForOrchestrator(ctx, start, 0); err != nil {
			t.Fatal(err)
		}
	}
	items := make([]*duroxide.OrchestrationItem, 2)
	for i, want := range []string{"a", "b"} {
		item, err := p.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
		if err != nil || item == nil || item.Instance != want {
			t.Fatalf("fetch = %+v, %v; want instance %s", item, err, want)
		}
		items[i] = item
	}
	return items[0], items[1]
}

// The token a fetch hands out names its instance, so ack, renew and abandon
// skip the token map; a token naming another instance must still be refused
// (the stored token decides), and the bare token the fetch was called with
// (what the give-back of a lost reply holds) must still work.
func TestOrchestrationTokenNamesItsInstance(t *testing.T) {
	_, p := newMiniProvider(t)
	ctx := context.Background()
	a, b := lockTwo(t, p)
	bare, inst, ok := strings.Cut(a.LockToken, ":")
	if !ok || inst != "a" {
		t.Fatalf("token %q does not end with ':a'", a.LockToken)
	}
	forged := bare + ":b"
	if err := p.RenewOrchestrationItemLock(ctx, forged, time.Minute); !errors.Is(err, duroxide.ErrLockLost) {
		t.Fatalf("renew with a's token naming b: %v, want ErrLockLost", err)
	}
	if err := p.AbandonOrchestrationItem(ctx, forged, 0, false); !errors.Is(err, duroxide.ErrLockLost) {
		t.Fatalf("abandon with a's token naming b: %v, want ErrLockLost", err)
	}
	if err := p.AckOrchestrationItem(ctx, forged, duroxide.OrchestrationCommit{ExecutionID: 1}); !errors.Is(err, duroxide.ErrLockLost) {
		t.Fatalf("ack with a's token naming b: %v, want ErrLockLost", err)
	}
	if err := p.RenewOrchestrationItemLock(ctx, b.LockToken, time.Minute); err != nil {
		t.Fatalf("b's own lock after the forged calls: %v", err)
	}
	if err := p.RenewOrchestrationItemLock(ctx, bare, time.Minute); err != nil {
		t.Fatalf("renew with the bare token: %v", err)
	}
	if err := p.AbandonOrchestrationItem(ctx, bare, 0, false); err != nil {
		t.Fatalf("abandon with the bare token: %v", err)
	}
	again, err := p.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
	if err != nil || again == nil || again.Instance != "a" || again.AttemptCount != 2 {
		t.Fatalf("refetch after the abandon = %+v, %v; want a, attempt 2", again, err)
	}
	if err := p.AckOrchestrationItem(ctx, a.LockToken, duroxide.OrchestrationCommit{ExecutionID: 1}); !errors.Is(err, duroxide.ErrLockLost) {
		t.Fatalf("ack with the abandoned lock's token: %v, want ErrLockLost", err)
	}
}

// toLegacyTags rewrites the lock of inst as a version before tags moved
// into om's field tg kept it: the tagged messages in the ZSET ot.
func toLegacyTags(t *testing.T, m *miniredis.Miniredis, p *partition, inst string) {
	t.Helper()
	om := p.keys.OrchMessages(inst)
	tg := m.HGet(om, "tg")
	if tg == "" {
		t.Fatalf("the lock of %s has no tg field", inst)
	}
	for _, pair := range strings.Split(tg, ",") {
		seq, vis, ok := strings.Cut(pair, ":")
		at, err := strconv.ParseFloat(vis, 64)
		if !ok || err != nil {
			t.Fatalf("tg entry %q is not seq:visible-at", pair)
		}
		if _, err := m.ZAdd(p.keys.OrchTagged(inst), at, seq); err != nil {
			t.Fatal(err)
		}
	}
	m.HDel(om, "tg")
}

// A lock taken before an upgrade moved the tagged messages from the ZSET ot
// into om's field tg still gives them back when it is abandoned or expires,
// and drops them when it is acked: an upgrade during a turn loses nothing
// and leaves no ot behind.
func TestLockTakenBeforeTagsMovedIntoOmKeepsItsMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, p := newMiniProvider(t)
	a, b := lockTwo(t, p)
	toLegacyTags(t, m, p, "a")
	toLegacyTags(t, m, p, "b")
	if err := p.AbandonOrchestrationItem(ctx, a.LockToken, 0, false); err != nil {
		t.Fatal(err)
	}
	again, err := p.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
	if err != nil || again == nil || again.Instance != "a" || len(again.Messages) != 1 {
		t.Fatalf("refetch of a after abandoning its legacy lock = %+v, %v; want its start back", again, err)
	}
	if err := p.AckOrchestrationItem(ctx, b.LockToken, duroxide.OrchestrationCommit{ExecutionID: 1}); err != nil {
		t.Fatal(err)
	}
	for _, inst := range []string{"a", "b"} {
		if m.Exists(p.keys.OrchTagged(inst)) {
			t.Errorf("ot of %s still exists after its legacy lock was released", inst)
		}
	}
	if n, _ := m.ZMembers(p.keys.OrchPending("b")); len(n) != 0 {
		t.Errorf("b's acked start is pending again: %v", n)
	}
}
