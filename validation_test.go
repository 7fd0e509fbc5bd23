package dxredis_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	dxredis "github.com/duroxide-go/duroxide-redis"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/internal/redistest"
	"github.com/duroxide-go/duroxide-redis/providertest"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// TestMiniredis runs the validation suite on embedded miniredis servers: no
// server needed. Each test gets its own server, so Harness.Advance moves that
// test's clock without expiring the locks of tests running beside it.
func TestMiniredis(t *testing.T) {
	providertest.Run(t, harness(func(t *testing.T) backend {
		c := newMRClock(t)
		client := redis.NewClient(&redis.Options{Addr: c.m.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
		t.Cleanup(func() { client.Close() })
		return backend{client: client, clock: c}
	}, true))
}

// TestRedis runs the validation suite on the Redis at DUROXIDE_REDIS_URL
// (.ci/run starts one). Each test uses its own namespace. A Redis 7 runs the
// scripts as its function library.
func TestRedis(t *testing.T) {
	shared := backend{client: redis.NewClient(realRedis(t))}
	providertest.Run(t, harness(func(*testing.T) backend { return shared }, false))
}

// TestRedisEvalsha runs the validation suite on the same Redis with
// Options.ForceEvalsha: the EVALSHA path older servers take, on a real
// server too.
func TestRedisEvalsha(t *testing.T) {
	shared := backend{client: redis.NewClient(realRedis(t)), evalsha: true}
	providertest.Run(t, harness(func(*testing.T) backend { return shared }, false))
}

// realRedis returns the client options of DUROXIDE_REDIS_URL, and skips the
// test when it is not set.
func realRedis(t *testing.T) *redis.Options {
	url := os.Getenv("DUROXIDE_REDIS_URL")
	if url == "" {
		t.Skip("DUROXIDE_REDIS_URL is not set: no real Redis to test against")
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	return opts
}

// TestMiniredisPartitioned runs the validation suite on namespaces of 4
// partitions (redisprovider.New) on embedded miniredis servers.
// Enqueue order holds per partition (Harness.PartitionOf). Where a Cluster
// is named, TestClusterPartitioned runs the same suite with 12 partitions
// on it instead: the suite on partitions once is what CI's 30 minutes on
// two cores afford, and on a machine without a Cluster this one covers it.
func TestMiniredisPartitioned(t *testing.T) {
	if os.Getenv("DUROXIDE_REDIS_CLUSTER") != "" {
		t.Skip("DUROXIDE_REDIS_CLUSTER is set: TestClusterPartitioned runs the suite on partitions there")
	}
	h := harness(func(t *testing.T) backend {
		c := newMRClock(t)
		client := redis.NewClient(&redis.Options{Addr: c.m.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
		t.Cleanup(func() { client.Close() })
		return backend{client: client, clock: c, partitions: 4}
	}, true)
	h.PartitionOf = partitionIndex
	providertest.Run(t, h)
}

// TestCluster runs the validation suite on the Redis Cluster whose nodes
// DUROXIDE_REDIS_CLUSTER lists (comma-separated host:port; .ci/run starts a
// 3-master cluster). Every script touches keys of one hash slot only: a key
// outside it would fail with CROSSSLOT or a non-local-key error here.
func TestCluster(t *testing.T) {
	addrs := os.Getenv("DUROXIDE_REDIS_CLUSTER")
	if addrs == "" {
		t.Skip("DUROXIDE_REDIS_CLUSTER is not set: no Redis Cluster to test against")
	}
	shared := backend{client: redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(addrs, ",")})}
	providertest.Run(t, harness(func(*testing.T) backend { return shared }, false))
}

// TestClusterPartitioned runs the validation suite on the same Redis
// Cluster with namespaces of 12 partitions, spread over every master (4 a
// master on .ci/run's 3): cross-partition messages, fetches and management
// all run against real shards. Enqueue order holds per partition
// (Harness.PartitionOf).
func TestClusterPartitioned(t *testing.T) {
	addrs := os.Getenv("DUROXIDE_REDIS_CLUSTER")
	if addrs == "" {
		t.Skip("DUROXIDE_REDIS_CLUSTER is not set: no Redis Cluster to test against")
	}
	shared := backend{client: redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(addrs, ",")}), partitions: 12}
	h := harness(func(*testing.T) backend { return shared }, false)
	h.PartitionOf = partitionIndex
	providertest.Run(t, h)
}

// fixedFamilies are the key families that exist independently of instances
// (counters, maintenance gates and the due loops' next run, registries) or expire on their own (wake-up
// markers, at most one per fetcher class, waiter or sticky owner, gone 60 s after their last use).
// Everything else must go when the last instance is deleted.
var fixedFamilies = []string{"meta", "flow", "rmark", "seq", "stats", "duenext", "dueowner", "duebackup", "duewake", "ogate", "wgate", "wqs", "ofilt", "ofseen", "ow:", "osw:", "ww:", "wc:", "wo:", "wx:"}

// backend is the server one test's provider uses.
type backend struct {
	client redis.UniversalClient
	clock  *mrClock // nil when the server's clock cannot be set
	// evalsha makes providers use EVALSHA where the server has functions
	evalsha bool
	// partitions is the partition count namespaces are created with (0:
	// the default, one)
	partitions int
}

// openBackend opens namespace on b as b says.
func openBackend(t *testing.T, b backend, namespace string) duroxide.Provider {
	opts := redisprovider.Options{Client: b.client, Namespace: namespace, ForceEvalsha: b.evalsha, Partitions: b.partitions}
	p, err := redisprovider.New(context.Background(), opts)
	if err != nil {
		t.Fatalf("redisprovider.New: %v", err)
	}
	return p
}

// prefixesOf returns the key prefixes of a provider's namespace: the
// namespace's own (its layout record) and its partitions'.
func prefixesOf(p duroxide.Provider) []string {
	pp := p.(*redisprovider.Provider)
	out := []string{pp.Keys().Prefix()}
	for i := range pp.Partitions() {
		if pre := pp.PartitionKeys(i).Prefix(); pre != out[0] {
			out = append(out, pre)
		}
	}
	return out
}

// partitionIndex is Harness.PartitionOf of a partitioned provider: the
// index of the partition that holds instance.
func partitionIndex(p duroxide.Provider, instance string) int {
	return p.(*redisprovider.Provider).PartitionOf(instance)
}

// keysOf returns the key schema of the partition that holds instance.
func keysOf(p duroxide.Provider, instance string) dxredis.Keys {
	pp := p.(*redisprovider.Provider)
	return pp.PartitionKeys(pp.PartitionOf(instance))
}

// harness builds providers on the backend backendFor returns for a test, one
// namespace per test. clocked says every backend has a clock, so the harness
// offers Advance.
func harness(backendFor func(t *testing.T) backend, clocked bool) providertest.Harness {
	backends := &sync.Map{} // *redisprovider.Provider -> backend
	backendOf := func(p duroxide.Provider) backend {
		b, _ := backends.Load(p)
		return b.(backend)
	}
	h := providertest.Harness{
		New: func(t *testing.T) duroxide.Provider {
			b := backendFor(t)
			p := openBackend(t, b, "t-"+uuid.NewString())
			backends.Store(p, b)
			t.Cleanup(func() {
				for _, prefix := range prefixesOf(p) {
					_ = redistest.DropPrefix(context.Background(), b.client, prefix)
				}
				p.(interface{ Close() error }).Close()
			})
			return p
		},
		CorruptHistory: func(t *testing.T, p duroxide.Provider, instance string, executionID uint64) {
			key := keysOf(p, instance).History(instance, executionID)
			if err := backendOf(p).client.RPush(context.Background(), key, `{"event_id":`).Err(); err != nil {
				t.Fatal(err)
			}
		},
		StoredKeys: func(t *testing.T, p duroxide.Provider) []string {
			var out []string
			for _, prefix := range prefixesOf(p) {
				for _, k := range scanNamespace(t, backendOf(p).client, prefix) {
					if !isFixed(strings.TrimPrefix(k, prefix)) {
						out = append(out, k)
					}
				}
			}
			return out
		},
	}
	if clocked {
		h.Advance = func(t *testing.T, p duroxide.Provider, d time.Duration) { backendOf(p).clock.advance(d) }
	}
	return h
}

func isFixed(rest string) bool {
	for _, f := range fixedFamilies {
		if rest == f || (strings.HasSuffix(f, ":") && strings.HasPrefix(rest, f)) {
			return true
		}
	}
	return false
}

// scanNamespace lists the keys of a namespace (failing t, when given, if the
// scan fails).
func scanNamespace(t *testing.T, client redis.UniversalClient, prefix string) []string {
	keys, err := redistest.ScanPrefix(context.Background(), client, prefix)
	if err != nil && t != nil {
		t.Fatal(err)
	}
	return keys
}

// mrClockTick is how often a moved clock is re-set: miniredis's SetTime
// freezes TIME, so a clock running ahead of real time is kept moving by
// setting it again (the provider reads time in whole milliseconds).
const mrClockTick = time.Millisecond

// mrClock is the clock of one miniredis server: real time until the first
// advance, then real time plus the sum of the advances. TTLs follow it
// (ClockTTL), so keys expire as they would on a real server whose clock
// moved that far; the provider's own waits (long polls) stay in real time.
type mrClock struct {
	m      *miniredis.Miniredis
	mu     sync.Mutex
	offset time.Duration
	done   chan struct{}
	ticker sync.Once
}

// newMRClock starts a miniredis server for t, stopped with t.
func newMRClock(t *testing.T) *mrClock {
	c := &mrClock{m: miniredis.RunT(t), done: make(chan struct{})}
	c.m.ClockTTL(true)
	t.Cleanup(func() { close(c.done) })
	return c
}

// advance moves the server's clock d forward at once.
func (c *mrClock) advance(d time.Duration) {
	c.mu.Lock()
	c.offset += d
	c.m.SetTime(time.Now().Add(c.offset))
	c.mu.Unlock()
	c.ticker.Do(func() { go c.run() })
}

// run keeps the clock at real time plus the offset until the test ends.
func (c *mrClock) run() {
	tick := time.NewTicker(mrClockTick)
	defer tick.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-tick.C:
			c.mu.Lock()
			c.m.SetTime(time.Now().Add(c.offset))
			c.mu.Unlock()
		}
	}
}

// The long-poll suite waits for parked fetches through providertest.Parker
// rather than sleeping: both provider types must keep offering it.
var (
	_ providertest.Parker = (*redisprovider.Provider)(nil)
	_ providertest.Parker = (*redisprovider.Provider)(nil)
)
