package redisprovider

import (
	"context"
	"fmt"
	"log/slog"
)

// RedisLogger adapts log to go-redis's own logger, which go-redis writes
// its connection-pool notices to ("redis: connection pool: failed to dial
// ...") and which prints to stderr unless replaced. That logger is one
// setting for the whole process, which New cannot read back, so New leaves
// it alone rather than overwrite a choice the application made; to route
// those notices to the provider's logger, install this once at start-up:
//
//	redis.SetLogger(redisprovider.RedisLogger(logger))
//
// Each notice is logged at Warn, with source=go-redis.
func RedisLogger(log *slog.Logger) interface {
	Printf(ctx context.Context, format string, v ...any)
} {
	return redisLogger{log}
}

type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, fmt.Sprintf(format, v...), "source", "go-redis")
}
