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
func newMiniProvider(t *testing.T) (*miniredis.Miniredis, *Provider) {
	t.Helper()
	m := miniredis.RunT(t)
	p, err := New(context.Background(), Options{URL: "redis://" + m.Addr() + "/0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return m, p
}

// The warning must fire for go-redis's defaults and stay silent for the
// settings it recommends, on both client types (whose Options() normalize
// MaxRetries differently).
func TestWarnUnsafeClient(t *testing.T) {
	cases := []struct {
		name   string
		client redis.UniversalClient
		warn   bool
	}{
		{"client defaults", redis.NewClient(&redis.Options{}), true},
		{"client no retries only", redis.NewClient(&redis.Options{MaxRetries: -1}), true},
		{"client deadlines only", redis.NewClient(&redis.Options{ContextTimeoutEnabled: true}), true},
		{"client recommended", redis.NewClient(&redis.Options{MaxRetries: -1, ContextTimeoutEnabled: true}), false},
		{"cluster retries", redis.NewClusterClient(&redis.ClusterOptions{MaxRetries: 3, ContextTimeoutEnabled: true}), true},
		{"cluster recommended", redis.NewClusterClient(&redis.ClusterOptions{MaxRetries: -1, ContextTimeoutEnabled: true}), false},
		{"cluster default retries", redis.NewClusterClient(&redis.ClusterOptions{ContextTimeoutEnabled: true}), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer c.client.Close()
			var buf bytes.Buffer
			warnUnsafeClient(slog.New(slog.NewTextHandler(&buf, nil)), c.client)
			if got := strings.Contains(buf.String(), "MaxRetries"); got != c.warn {
				t.Fatalf("warned = %v, want %v; log: %q", got, c.warn, buf.String())
			}
		})
	}
}
