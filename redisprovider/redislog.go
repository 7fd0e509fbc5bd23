package redisprovider

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisLogger adapts log to go-redis's own logger, which go-redis writes
// its connection-pool notices to ("redis: connection pool: failed to dial
// ..."). New installs a rate-limited one of these itself (see
// Options.KeepGoRedisLogger); an application that installs its own after
// New keeps it:
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

// goRedisEvery is how often one kind of go-redis notice (one format
// string) is logged at most: an outage makes every pooled connection of
// every client report each failed dial, tens of lines a second.
const goRedisEvery = 30 * time.Second

// goRedisLogs is the logger New installs in go-redis, once per process: it
// forwards go-redis's notices to the Logger of the provider opened last
// that has one (none: they are dropped), each kind at most every
// goRedisEvery, the next line saying how many were left out.
var goRedisLogs = &limitedLogs{every: goRedisEvery, last: map[string]*limitedKind{}}

var installGoRedisLogs sync.Once

// routeGoRedisLogs installs goRedisLogs in go-redis (once) and makes log
// their destination when it is not nil.
func routeGoRedisLogs(log *slog.Logger) {
	installGoRedisLogs.Do(func() { redis.SetLogger(goRedisLogs) })
	if log != nil {
		goRedisLogs.to.Store(log)
	}
}

// limitedLogs forwards lines to a slog.Logger, each kind (format string)
// at most once per every.
type limitedLogs struct {
	to    atomic.Pointer[slog.Logger]
	every time.Duration
	mu    sync.Mutex
	last  map[string]*limitedKind
}

type limitedKind struct {
	at   time.Time
	left int // lines dropped since at
}

// Printf logs the line unless one of its kind was logged less than every
// ago.
func (l *limitedLogs) Printf(ctx context.Context, format string, v ...any) {
	log := l.to.Load()
	if log == nil {
		return
	}
	now := time.Now()
	l.mu.Lock()
	k := l.last[format]
	if k == nil {
		k = &limitedKind{}
		l.last[format] = k
	}
	if !k.at.IsZero() && now.Sub(k.at) < l.every {
		k.left++
		l.mu.Unlock()
		return
	}
	left := k.left
	k.at, k.left = now, 0
	l.mu.Unlock()
	attrs := []any{"source", "go-redis"}
	if left > 0 {
		attrs = append(attrs, "similar_lines_left_out", left)
	}
	log.WarnContext(ctx, fmt.Sprintf(format, v...), attrs...)
}
