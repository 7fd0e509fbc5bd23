package dxredis_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/providertest"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// TestMiniredis runs the validation suite on an embedded miniredis: no server
// needed.
func TestMiniredis(t *testing.T) {
	m := miniredis.RunT(t)
	providertest.Run(t, harness(redis.NewClient(&redis.Options{Addr: m.Addr()})))
}

// TestRedis runs the validation suite on the Redis at DUROXIDE_REDIS_URL
// (.ci/run starts one). Each test uses its own namespace.
func TestRedis(t *testing.T) {
	url := os.Getenv("DUROXIDE_REDIS_URL")
	if url == "" {
		t.Skip("DUROXIDE_REDIS_URL is not set: no real Redis to test against")
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	providertest.Run(t, harness(redis.NewClient(opts)))
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
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(addrs, ",")})
	providertest.Run(t, harness(client))
}

// fixedFamilies are the key families that exist independently of instances
// (counters, registries) or expire on their own (wake-up markers, at most one
// per fetcher class, gone 60 s after their last use). Everything else must go
// when the last instance is deleted.
var fixedFamilies = []string{"seq", "stats", "wakedue", "ofilt", "ofseen", "ow:", "ww:", "wc:", "wo:"}

// harness builds providers on client, one namespace per test.
func harness(client redis.UniversalClient) providertest.Harness {
	return providertest.Harness{
		New: func(t *testing.T) duroxide.Provider {
			p, err := redisprovider.New(context.Background(), redisprovider.Options{
				Client:    client,
				Namespace: "t-" + uuid.NewString(),
			})
			if err != nil {
				t.Fatalf("redisprovider.New: %v", err)
			}
			t.Cleanup(func() {
				dropNamespace(client, p)
				p.Close()
			})
			return p
		},
		CorruptHistory: func(t *testing.T, p duroxide.Provider, instance string, executionID uint64) {
			key := p.(*redisprovider.Provider).Keys().History(instance, executionID)
			if err := client.RPush(context.Background(), key, `{"event_id":`).Err(); err != nil {
				t.Fatal(err)
			}
		},
		StoredKeys: func(t *testing.T, p duroxide.Provider) []string {
			prefix := p.(*redisprovider.Provider).Keys().Prefix()
			var out []string
			for _, k := range scanNamespace(t, client, prefix) {
				if !isFixed(strings.TrimPrefix(k, prefix)) {
					out = append(out, k)
				}
			}
			return out
		},
	}
}

func isFixed(rest string) bool {
	for _, f := range fixedFamilies {
		if rest == f || (strings.HasSuffix(f, ":") && strings.HasPrefix(rest, f)) {
			return true
		}
	}
	return false
}

// scanNamespace lists the keys of a namespace. Test-only: the provider never
// scans. On a cluster the namespace lives on the master owning its slot.
func scanNamespace(t *testing.T, client redis.UniversalClient, prefix string) []string {
	ctx := context.Background()
	scan := func(c *redis.Client) ([]string, error) {
		var keys []string
		iter := c.Scan(ctx, 0, globEscape(prefix)+"*", 1000).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		return keys, iter.Err()
	}
	var keys []string
	var err error
	switch c := client.(type) {
	case *redis.ClusterClient:
		var mu sync.Mutex
		err = c.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			k, err := scan(node)
			mu.Lock()
			keys = append(keys, k...)
			mu.Unlock()
			return err
		})
	case *redis.Client:
		keys, err = scan(c)
	}
	if err != nil && t != nil {
		t.Fatal(err)
	}
	return keys
}

// dropNamespace deletes a test's keys so a shared server does not fill up.
func dropNamespace(client redis.UniversalClient, p *redisprovider.Provider) {
	if keys := scanNamespace(nil, client, p.Keys().Prefix()); len(keys) > 0 {
		for i := 0; i < len(keys); i += 500 {
			client.Del(context.Background(), keys[i:min(i+500, len(keys))]...)
		}
	}
}

func globEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`)
	return r.Replace(s)
}
