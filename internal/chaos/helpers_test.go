package chaos

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	dxredis "github.com/duroxide-go/duroxide-redis"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// waitFor polls cond every 20 ms until it holds or ctx ends.
func waitFor(t testing.TB, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// assertDrained checks, once every lock a vanished dispatcher held has
// expired, that no message or activity is left in any queue.
func assertDrained(t testing.TB, ctx context.Context, p duroxide.Provider, lock time.Duration) {
	t.Helper()
	time.Sleep(lock + 100*time.Millisecond) // sleep: the locks must expire on Redis' clock; nothing signals an expiry
	// a fetch applies expired locks; nothing must be left to take
	if item, err := p.FetchOrchestrationItem(ctx, time.Second, 0, nil); err != nil || item != nil {
		t.Errorf("orchestrator queue not drained: item %+v, err %v", item, err)
	}
	if item, err := p.FetchWorkItem(ctx, time.Second, 0, nil, duroxide.AnyTag()); err != nil || item != nil {
		t.Errorf("worker queue not drained: item %+v, err %v", item, err)
	}
	d, err := p.Admin().GetQueueDepths(ctx)
	if err != nil || d != (duroxide.QueueDepths{}) {
		t.Errorf("queue depths after the run: %+v, err %v", d, err)
	}
}

// dumpStuck logs what Redis holds for every instance of ids that did not
// complete, to diagnose a failed run.
func dumpStuck(t testing.TB, admin *redis.Client, k dxredis.Keys, check *Checker, ids []string) {
	t.Helper()
	ctx := context.Background()
	for inst := range check.pending(ids) {
		var b strings.Builder
		fmt.Fprintf(&b, "instance %s did not complete:\n", inst)
		show := func(name string, v any, err error) { fmt.Fprintf(&b, "  %-28s %v %v\n", name, v, errOrEmpty(err)) }
		show("i (record)", admin.HGetAll(ctx, k.Instance(inst)).Val(), nil)
		show("om (bodies, lock, state)", admin.HGetAll(ctx, k.OrchMessages(inst)).Val(), nil)
		show("oq (pending)", admin.ZRangeWithScores(ctx, k.OrchPending(inst), 0, -1).Val(), nil)
		show("ot (tagged)", admin.ZRangeWithScores(ctx, k.OrchTagged(inst), 0, -1).Val(), nil)
		show("wa (activities)", admin.ZRange(ctx, k.WorkActivities(inst), 0, -1).Val(), nil)
		sc, err := admin.ZScore(ctx, k.OrchReady(""), inst).Result()
		show("score in ordy:", sc, err)
		sc, err = admin.ZScore(ctx, k.OrchLocked(), inst).Result()
		show("score in olck", sc, err)
		sc, err = admin.ZScore(ctx, k.OrchDelayed(), inst).Result()
		show("score in odly", sc, err)
		for i, e := range admin.LRange(ctx, k.History(inst, 1), 0, -1).Val() {
			fmt.Fprintf(&b, "  h[%d] %s\n", i, e)
		}
		for _, m := range admin.ZRange(ctx, k.WorkActivities(inst), 0, -1).Val() {
			parts := strings.Split(m, ":")
			seq, _ := strconv.ParseUint(parts[len(parts)-1], 10, 64)
			show("wi:"+parts[len(parts)-1], admin.HGetAll(ctx, k.WorkItem(seq)).Val(), nil)
		}
		t.Log(b.String())
	}
}

func errOrEmpty(err error) string {
	if err == nil {
		return ""
	}
	return "(" + err.Error() + ")"
}
