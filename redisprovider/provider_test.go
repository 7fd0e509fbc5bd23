package redisprovider

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// newMiniProvider starts a miniredis and a provider on it, both closed when
// the test ends.
func newMiniProvider(t *testing.T) (*miniredis.Miniredis, *partition) {
	t.Helper()
	m := miniredis.RunT(t)
	p, err := openPartition(context.Background(), Options{URL: "redis://" + m.Addr() + "/0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return m, p
}

// The warning fires for a client that ignores deadlines, on both client
// types, and no longer for retry settings: every command is sent once
// whatever they say (TestClusterClientNeverResendsAWrite).
func TestWarnUnsafeClient(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		client redis.UniversalClient
		warn   bool
	}{
		{"client defaults", redis.NewClient(&redis.Options{}), true},
		{"client no retries only", redis.NewClient(&redis.Options{MaxRetries: -1}), true},
		{"client deadlines only", redis.NewClient(&redis.Options{ContextTimeoutEnabled: true}), false},
		{"client recommended", redis.NewClient(&redis.Options{MaxRetries: -1, ContextTimeoutEnabled: true}), false},
		{"cluster retries", redis.NewClusterClient(&redis.ClusterOptions{MaxRetries: 3, ContextTimeoutEnabled: true}), false},
		{"cluster no deadlines", redis.NewClusterClient(&redis.ClusterOptions{MaxRetries: -1}), true},
		{"cluster default retries", redis.NewClusterClient(&redis.ClusterOptions{ContextTimeoutEnabled: true}), false},
		{"a client of its own", ownClient{redis.NewClient(&redis.Options{ContextTimeoutEnabled: true})}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer c.client.Close()
			var buf bytes.Buffer
			warnUnsafeClient(slog.New(slog.NewTextHandler(&buf, nil)), c.client)
			if got := strings.Contains(buf.String(), "duroxide-redis: Options.Client"); got != c.warn {
				t.Fatalf("warned = %v, want %v; log: %q", got, c.warn, buf.String())
			}
		})
	}
}

// ownClient is a UniversalClient of an application's own making.
type ownClient struct{ *redis.Client }
