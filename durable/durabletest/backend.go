package durabletest

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Environment variables naming the real servers Backends adds (the root
// package's validation suite reads the same ones; .ci/run sets both).
const (
	// EnvRedisURL is a redis:// URL of a single Redis server.
	EnvRedisURL = "DUROXIDE_REDIS_URL"
	// EnvRedisCluster is a comma-separated list of Redis Cluster node
	// addresses (host:port).
	EnvRedisCluster = "DUROXIDE_REDIS_CLUSTER"
)

// ClusterPartitions is the partition count of the "cluster-p12" backend's
// namespaces: four per master of a 3-master Cluster.
const ClusterPartitions = 12

// Backend is a Redis server an Env can run on. Every Env gets its own
// namespace on it (a fresh one per Start, deleted when the test ends), so
// tests can share a real server.
type Backend struct {
	// Name is "miniredis", "redis", "cluster" or "cluster-p12"; Each uses
	// it as the subtest name.
	Name string
	// Clocked says Env.Advance works: only miniredis's clock can be moved.
	// On a real server time is real, so a test that advances the clock
	// declares so by running on Miniredis only: Start without WithBackend
	// (Advance on a real backend fails the test).
	Clocked bool
	// Partitions is the number of partitions of the Env's namespace
	// (redisprovider.Options.Partitions); 0 or 1: one.
	Partitions int

	// connect opens the client of one Env; mr is nil on real servers.
	connect func(t testing.TB) (rdb redis.UniversalClient, mr *miniredis.Miniredis)
}

// Miniredis is an embedded miniredis server per Env: needs nothing, and its
// clock can be moved. It is Start's default.
func Miniredis() Backend {
	return Backend{Name: "miniredis", Clocked: true, connect: func(t testing.TB) (redis.UniversalClient, *miniredis.Miniredis) {
		m := miniredis.RunT(t)
		return redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true}), m
	}}
}

// Client connects to the backend (a new server, for Miniredis) with the
// options the provider wants (no command retries: a retried script whose
// reply was lost could apply twice), closed when the test ends. For tests
// that build their own provider.
func (b Backend) Client(t testing.TB) redis.UniversalClient {
	t.Helper()
	rdb, _ := b.connect(t)
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// Backends is Miniredis, plus the Redis at $DUROXIDE_REDIS_URL and the
// Cluster at $DUROXIDE_REDIS_CLUSTER when they are set, the Cluster twice:
// with namespaces of one partition ("cluster") and of ClusterPartitions
// ("cluster-p12"). A malformed URL
// fails the test rather than silently testing less.
func Backends(t testing.TB) []Backend {
	t.Helper()
	out := []Backend{Miniredis()}
	if url := os.Getenv(EnvRedisURL); url != "" {
		opts, err := redis.ParseURL(url)
		if err != nil {
			t.Fatalf("durabletest: %s=%q: %v", EnvRedisURL, url, err)
		}
		opts.MaxRetries, opts.ContextTimeoutEnabled = -1, true
		out = append(out, Backend{Name: "redis", connect: func(testing.TB) (redis.UniversalClient, *miniredis.Miniredis) {
			o := *opts
			return redis.NewClient(&o), nil
		}})
	}
	if addrs := os.Getenv(EnvRedisCluster); addrs != "" {
		nodes := strings.Split(addrs, ",")
		connect := func(testing.TB) (redis.UniversalClient, *miniredis.Miniredis) {
			return redis.NewClusterClient(&redis.ClusterOptions{Addrs: nodes, MaxRetries: -1, ContextTimeoutEnabled: true}), nil
		}
		out = append(out, Backend{Name: "cluster", connect: connect},
			Backend{Name: "cluster-p" + strconv.Itoa(ClusterPartitions), Partitions: ClusterPartitions, connect: connect})
	}
	return out
}

// Each runs body once per backend of Backends, as a subtest named after the
// backend; the subtests run in parallel with each other (each Env has a
// namespace of its own), so body must not call t.Parallel again. A test
// converts to every backend by wrapping its body and passing WithBackend(b)
// to Start:
//
//	durabletest.Each(t, func(t *testing.T, b durabletest.Backend) {
//		env := durabletest.Start(t, reg, durabletest.WithBackend(b))
//		...
//	})
//
// Build per-run state (registries whose activities count calls) inside body,
// so the concurrent runs do not see each other's counts; a registry shared
// by the runs is fine, as Start runs on a copy of it. The subtests run after
// the calling test function returns, so the caller must not read their
// results after Each, nor defer what they need (use t.Cleanup).
func Each(t *testing.T, body func(t *testing.T, b Backend)) {
	t.Helper()
	for _, b := range Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			body(t, b)
		})
	}
}

// WithBackend runs the Env on b instead of an embedded miniredis.
func WithBackend(b Backend) Option { return func(c *config) { c.backend = b } }
