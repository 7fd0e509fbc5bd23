package redisprovider

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

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
