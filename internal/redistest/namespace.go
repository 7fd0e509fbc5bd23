package redistest

import (
	"context"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// ScanPrefix lists the keys starting with prefix. Test-only: the provider
// never scans. On a cluster every master is scanned, so a key outside the
// namespace's hash slot would be found too.
func ScanPrefix(ctx context.Context, client redis.UniversalClient, prefix string) ([]string, error) {
	scan := func(c *redis.Client) ([]string, error) {
		var keys []string
		iter := c.Scan(ctx, 0, globEscape(prefix)+"*", 1000).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		return keys, iter.Err()
	}
	switch c := client.(type) {
	case *redis.ClusterClient:
		var mu sync.Mutex
		var keys []string
		err := c.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			k, err := scan(node)
			mu.Lock()
			keys = append(keys, k...)
			mu.Unlock()
			return err
		})
		return keys, err
	case *redis.Client:
		return scan(c)
	}
	return nil, nil
}

// DropPrefix deletes the keys starting with prefix, so tests sharing a
// server do not fill it up. Keys of one namespace share a hash slot, so a
// batch of them is one legal DEL on a cluster.
func DropPrefix(ctx context.Context, client redis.UniversalClient, prefix string) error {
	keys, err := ScanPrefix(ctx, client, prefix)
	for i := 0; i < len(keys); i += 500 {
		if derr := client.Del(ctx, keys[i:min(i+500, len(keys))]...).Err(); err == nil {
			err = derr
		}
	}
	return err
}

func globEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`)
	return r.Replace(s)
}
