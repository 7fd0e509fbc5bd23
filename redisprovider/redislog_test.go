package redisprovider_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

func TestRedisLoggerForwardsToSlog(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	var l interface {
		Printf(context.Context, string, ...any)
	} = redisprovider.RedisLogger(slog.New(slog.NewTextHandler(&buf, nil)))
	l.Printf(context.Background(), "redis: connection pool: failed to dial after %d attempts", 5)
	if out := buf.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "failed to dial after 5 attempts") || !strings.Contains(out, "source=go-redis") {
		t.Fatalf("forwarded line: %q", out)
	}
}

// the adapter is what redis.SetLogger takes (checked when compiling; never
// called, since it would change the process-wide setting under other tests)
var _ = func() { redis.SetLogger(redisprovider.RedisLogger(slog.Default())) }
