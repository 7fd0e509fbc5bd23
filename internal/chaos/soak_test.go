package chaos

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	dxredis "github.com/duroxide-go/duroxide-redis"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Bounds of the soak's key count. An instance that is started and not yet
// deleted owns at most perInstanceKeys keys (i, ex, exs, h, oq, ot, om, wa,
// kv, kvd) plus one wi per activity. The namespace holds at most fixedKeys
// other keys: the families of keys.go without an id (18) plus the partitioned
// ones this workload touches, each once (ordy:, ist:Running, ist:Completed,
// wq:d, wq:*, ow:<filter>, ww:d, ww:*).
const (
	perInstanceKeys = 10
	fixedKeys       = 30
)

// soakSample is one measurement of the namespace while the soak runs.
type soakSample struct {
	at       time.Duration
	keys     int64 // DBSIZE
	inFlight int64 // started and not yet deleted, when the sample was taken
	deleted  int64 // instances completed and deleted so far
	memory   int64 // used_memory
	indexes  indexSizes
}

// indexSizes are the namespace-wide bookkeeping entries that must not grow
// with the work done.
type indexSizes struct {
	orchTokens, workTokens, filters, instances int64
}

func (x indexSizes) String() string {
	return fmt.Sprintf("otok=%d wtok=%d ofseen=%d ilist=%d",
		x.orchTokens, x.workTokens, x.filters, x.instances)
}

// TestSoakKeysStayBounded runs thousands of short orchestrations through the
// test runtime, at most window of them started and not yet deleted, while a
// loop deletes completed ones with DeleteInstanceBulk, and samples DBSIZE
// and INFO memory twice a second. The key count must stay within fixedKeys +
// (perInstanceKeys + FanOut) x in-flight instances (started and not yet
// deleted, at most window): proportional to the work in flight, never to the
// work done. Lock tokens and wake-up bookkeeping must stay as small as the number
// of dispatchers. Once everything is deleted only the documented fixed keys
// remain (seq, stats, the gates, duenext, ofilt, ofseen and expiring wake markers), the
// metrics read zero and used_memory is back near its starting point.
func TestSoakKeysStayBounded(t *testing.T) {
	srv := startRedis(t)
	admin := srv.Client()
	n := 4000
	if testing.Short() {
		n = 500
	}
	const window = 60
	cfg := Config{FanOut: 2, Orchestrators: 2, Workers: 3, LockTimeout: 5 * time.Second,
		PollTimeout: 500 * time.Millisecond, CallTimeout: 3 * time.Second, Seed: 5}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	p := newProvider(t, srv, "soak")
	baseline := usedMemory(t, admin)
	check := NewChecker(cfg.LockTimeout)
	r := Start(p, cfg, check)
	defer r.Kill()
	ids := instanceIDs("soak", n)

	var started, deleted atomic.Int64
	go feed(ctx, r, ids, window, &started, &deleted)
	go deleteCompleted(ctx, t, p, &deleted)
	samples := sampleWhile(ctx, t, admin, p.Keys(), &started, &deleted, func() bool { return deleted.Load() < int64(n) })
	r.Kill()
	if ctx.Err() != nil {
		t.Fatalf("the soak did not finish: %d started, %d completed, %d deleted", started.Load(), check.Completed(), deleted.Load())
	}
	report(t, check, check.Violations())
	checkSamples(t, samples, cfg)
	left := assertOnlyFixedKeys(t, ctx, admin, p)
	// The fixed keys and the wake-up markers still alive are allowed to
	// stay, so their own bytes are not held against the bound: with parked
	// waiters that is a due-time claim hash and one control marker per
	// waiter, a few KB the bound of 1 MiB once missed by.
	if end := usedMemory(t, admin); end-left > baseline+1<<20 {
		t.Errorf("used_memory %d after deleting everything (%d of it in the keys left), %d before the soak", end, left, baseline)
	}
}

// feed starts instances one by one, keeping at most window of them started
// and not yet deleted.
func feed(ctx context.Context, r *Runtime, ids []string, window int64, started, deleted *atomic.Int64) {
	for _, id := range ids {
		for started.Load()-deleted.Load() >= window {
			if sleep(ctx, 2*time.Millisecond); ctx.Err() != nil {
				return
			}
		}
		started.Add(1) // before the enqueue: in flight is an upper bound
		if r.StartInstances(ctx, []string{id}) != nil {
			return
		}
	}
}

// deleteCompleted deletes completed instances in bulk, pausing 100 ms when
// there was nothing to delete.
func deleteCompleted(ctx context.Context, t *testing.T, p duroxide.Provider, deleted *atomic.Int64) {
	for ctx.Err() == nil {
		res, err := p.Admin().DeleteInstanceBulk(ctx, duroxide.InstanceFilter{})
		if err != nil && ctx.Err() == nil {
			t.Errorf("DeleteInstanceBulk: %v", err)
		}
		deleted.Add(int64(res.InstancesDeleted))
		if res.InstancesDeleted == 0 {
			sleep(ctx, 100*time.Millisecond)
		}
	}
}

// sampleWhile samples the namespace every 500 ms while running holds.
func sampleWhile(ctx context.Context, t *testing.T, admin *redis.Client, keys dxredis.Keys,
	started, deleted *atomic.Int64, running func() bool) []soakSample {
	begin := time.Now()
	var out []soakSample
	for running() && ctx.Err() == nil {
		// deleted is read before Redis and started after it, so that
		// deletions and starts during the reads only loosen the bound
		gone := deleted.Load()
		s := soakSample{at: time.Since(begin).Round(time.Millisecond), keys: admin.DBSize(ctx).Val(), deleted: gone}
		s.indexes = readIndexes(ctx, admin, keys)
		s.inFlight = started.Load() - gone
		s.memory = usedMemory(t, admin)
		out = append(out, s)
		sleep(ctx, 500*time.Millisecond)
	}
	return out
}

// readIndexes reads the namespace-wide bookkeeping.
func readIndexes(ctx context.Context, admin *redis.Client, keys dxredis.Keys) indexSizes {
	return indexSizes{
		orchTokens: admin.HLen(ctx, keys.OrchTokens()).Val(),
		workTokens: admin.HLen(ctx, keys.WorkTokens()).Val(),
		filters:    admin.ZCard(ctx, keys.OrchFiltersSeen()).Val(),
		instances:  admin.ZCard(ctx, keys.Instances()).Val(),
	}
}

// checkSamples logs the samples and checks each against the bounds: keys
// within fixedKeys + (perInstanceKeys + fanOut) per instance in flight, lock
// tokens within the dispatchers, wake-up bookkeeping within the wake keys of
// the run (one orchestrator filter, two worker queues), the instance list
// within the instances in flight, and used_memory flat once warm.
func checkSamples(t *testing.T, samples []soakSample, cfg Config) {
	t.Helper()
	if len(samples) < 6 {
		t.Fatalf("only %d samples: the soak was too short to measure", len(samples))
	}
	var maxKeys int64
	for _, s := range samples {
		bound := fixedKeys + int64(perInstanceKeys+cfg.FanOut)*s.inFlight
		t.Logf("%8v DBSIZE %5d (bound %5d, %3d in flight) used_memory %8d %v", s.at, s.keys, bound, s.inFlight, s.memory, s.indexes)
		x := s.indexes
		if s.keys > bound || x.orchTokens > int64(cfg.Orchestrators) || x.workTokens > int64(cfg.Workers) ||
			x.filters > 1 || x.instances > s.inFlight {
			t.Errorf("at %v: %d keys for %d instances in flight (bound %d), %v", s.at, s.keys, s.inFlight, bound, x)
		}
		maxKeys = max(maxKeys, s.keys)
	}
	third := len(samples) / 3
	early, late := maxMemory(samples[1:third+1]), maxMemory(samples[len(samples)-third:])
	if late > early+1<<20 {
		t.Errorf("used_memory grows while the load is steady: at most %d early, %d late", early, late)
	}
	last := samples[len(samples)-1]
	t.Logf("largest DBSIZE seen: %d; %.0f instances/s completed and deleted", maxKeys, float64(last.deleted)/last.at.Seconds())
}

// maxMemory is the largest used_memory among samples.
func maxMemory(samples []soakSample) int64 {
	var m int64
	for _, s := range samples {
		m = max(m, s.memory)
	}
	return m
}

// usedMemory reads used_memory from INFO memory, less what the clients'
// connections hold (mem_clients_normal: query and reply buffers), which
// follows how many connections are open, not what the provider stored.
func usedMemory(t *testing.T, admin *redis.Client) int64 {
	info, err := admin.Info(context.Background(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	var used, clients int64 = -1, 0
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			used, _ = strconv.ParseInt(v, 10, 64)
		}
		if v, ok := strings.CutPrefix(line, "mem_clients_normal:"); ok {
			clients, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if used < 0 {
		t.Fatal("INFO memory has no used_memory")
	}
	return used - clients
}

// assertOnlyFixedKeys checks the namespace after every instance was deleted:
// only the keys docs/internals.md documents as fixed remain, wake markers expire, the
// bookkeeping is empty and the metrics read zero.
func assertOnlyFixedKeys(t *testing.T, ctx context.Context, admin *redis.Client, p interface {
	Keys() dxredis.Keys
	duroxide.Provider
}) (leftBytes int64) {
	t.Helper()
	k := p.Keys()
	fixed := map[string]bool{k.Seq(): true, k.Stats(): true, k.DueNext(): true, k.DueOwner(): true, k.OrchFilters(): true, k.OrchFiltersSeen(): true,
		k.OrchGate(): true, k.WorkGate(): true, k.WorkQueues(): true, k.Meta(): true}
	wake := []string{k.OrchWake(""), k.WorkWake(""), k.ClaimableWake(""), k.Prefix() + "wo:", k.WaiterControl(""), k.DueWake(), k.DueBackup()}
	all, err := admin.Keys(ctx, k.Prefix()+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range all {
		if fixed[key] || hasAnyPrefix(key, wake) && admin.PTTL(ctx, key).Val() > 0 {
			leftBytes += admin.MemoryUsage(ctx, key).Val()
			continue
		}
		t.Errorf("key %s (%s) is left after deleting every instance", key, admin.Type(ctx, key).Val())
	}
	t.Logf("%d keys left: %v", len(all), all)
	m, err := p.Admin().GetSystemMetrics(ctx)
	if err != nil || m != (duroxide.SystemMetrics{}) {
		t.Errorf("metrics after deleting everything: %+v (err %v)", m, err)
	}
	d, err := p.Admin().GetQueueDepths(ctx)
	if err != nil || d != (duroxide.QueueDepths{}) {
		t.Errorf("queue depths after deleting everything: %+v (err %v)", d, err)
	}
	return leftBytes
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
