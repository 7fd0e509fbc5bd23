package redisprovider

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// lineCatcher is a go-redis logger that keeps every line.
type lineCatcher struct {
	mu    sync.Mutex
	lines []string
}

func (c *lineCatcher) Printf(_ context.Context, format string, v ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, fmt.Sprintf(format, v...))
}

func (c *lineCatcher) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.lines...)
}

// Closing a provider while its long polls block used to close the blocking
// client under them, and go-redis printed "Unexpected conn[N] state changed
// by hook to CLOSED" on stderr at every clean shutdown. Close now makes the
// polls return first. Not parallel: go-redis's logger is process-wide, and
// no parallel test runs beside a sequential one.
func TestCloseDuringALongPollLogsNothing(t *testing.T) {
	catcher := &lineCatcher{}
	redis.SetLogger(catcher)
	t.Cleanup(func() { redis.SetLogger(goRedisLogs) })
	for _, srv := range testServers(t) {
		client := redis.NewClient(srv)
		p, err := openPartition(context.Background(), Options{Client: client, Namespace: "closelog", KeepGoRedisLogger: true})
		if err != nil {
			t.Fatal(err)
		}
		fetched := make(chan error, 2)
		for range 2 {
			go func() {
				_, err := p.FetchWorkItem(context.Background(), time.Minute, 30*time.Second, nil, duroxide.DefaultOnly())
				fetched <- err
			}()
		}
		waitSleeping(t, p, 2)
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			<-fetched
		}
		client.Close()
	}
	for _, l := range catcher.all() {
		if strings.Contains(l, "CLOSED") || strings.Contains(l, "closed") {
			t.Errorf("go-redis logged at a clean shutdown: %s", l)
		}
	}
}

// The logger New installs forwards each kind of go-redis line at most once
// per period, saying how many it left out.
func TestGoRedisLinesAreRateLimited(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := &limitedLogs{every: time.Hour, last: map[string]*limitedKind{}}
	l.Printf(context.Background(), "dial %d", 1) // no destination yet: dropped
	l.to.Store(slog.New(slog.NewTextHandler(&buf, nil)))
	for i := range 50 {
		l.Printf(context.Background(), "redis: connection pool: failed to dial after %d attempts", i)
	}
	l.Printf(context.Background(), "another kind")
	out := buf.String()
	if n := strings.Count(out, "failed to dial"); n != 1 {
		t.Fatalf("%d dial lines in an hour, want 1:\n%s", n, out)
	}
	if !strings.Contains(out, "another kind") || !strings.Contains(out, "source=go-redis") {
		t.Fatalf("lines: %s", out)
	}
	l.every = 0
	l.Printf(context.Background(), "redis: connection pool: failed to dial after %d attempts", 51)
	if !strings.Contains(buf.String(), "similar_lines_left_out=49") {
		t.Fatalf("the next line does not count the 49 left out:\n%s", buf.String())
	}
}

// go-redis printed every notice to stderr (tens of "failed to dial" lines a
// second while Redis was down): New now routes them to the provider's
// Logger, each kind at most every 30 s. Not parallel: go-redis's logger is
// process-wide.
func TestGoRedisNoticesReachTheProviderLogger(t *testing.T) {
	goRedisLogs.mu.Lock()
	goRedisLogs.last = map[string]*limitedKind{} // earlier tests' lines do not count
	goRedisLogs.mu.Unlock()
	var buf syncBuffer
	p, err := openPartition(context.Background(), Options{URL: "redis://" + miniredis.RunT(t).Addr() + "/0", Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialerRetries: 1})
	defer dead.Close()
	for range 5 {
		if dead.Ping(context.Background()).Err() == nil {
			t.Fatal("a ping to port 1 succeeded")
		}
	}
	if n := strings.Count(buf.String(), "failed to dial"); n != 1 {
		t.Fatalf("%d go-redis dial notices reached the provider's logger after 5 failed dials, want 1:\n%s", n, buf.String())
	}
}
