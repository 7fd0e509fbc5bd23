package redisprovider

import (
	"context"
	"os"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// newOn opens a provider on client in a fresh namespace.
func newOn(t *testing.T, client redis.UniversalClient, forceEvalsha bool) *partition {
	t.Helper()
	p, err := openPartition(context.Background(), Options{Client: client, Namespace: "fn-" + t.Name(), ForceEvalsha: forceEvalsha})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// miniredis has no FUNCTION command: the provider falls back to EVALSHA and
// works.
func TestMiniredisUsesEvalsha(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	p := newOn(t, rdb, false)
	if p.UsesFunctions() {
		t.Fatal("a server without FUNCTION must be driven with EVALSHA")
	}
	roundTrip(t, p)
}

// On a real Redis 7 the library is used unless ForceEvalsha, and a server
// that lost it (FUNCTION FLUSH) gets it back on the next call.
func TestRedisFunctionsAndFlush(t *testing.T) {
	url := os.Getenv("DUROXIDE_REDIS_URL")
	if url == "" {
		t.Skip("DUROXIDE_REDIS_URL is not set: no real Redis to test against")
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	opts.MaxRetries, opts.ContextTimeoutEnabled = -1, true
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { rdb.Close() })
	if newOn(t, rdb, true).UsesFunctions() {
		t.Fatal("ForceEvalsha must keep the provider on EVALSHA")
	}
	p := newOn(t, rdb, false)
	if !p.UsesFunctions() {
		t.Skip("this server has no Redis Functions (before 7.0)")
	}
	roundTrip(t, p)
	if err := rdb.FunctionFlush(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	roundTrip(t, p)
}

// roundTrip enqueues, fetches and acks one activity.
func roundTrip(t *testing.T, p *partition) {
	t.Helper()
	ctx := context.Background()
	act := duroxide.ActivityExecute{Instance: "i", ExecutionID: 1, ID: 1, Name: "A", Input: `"x"`}
	if err := p.EnqueueForWorker(ctx, act); err != nil {
		t.Fatal(err)
	}
	w, err := p.FetchWorkItem(ctx, 0, 0, nil, duroxide.DefaultOnly())
	if err != nil || w == nil {
		t.Fatalf("FetchWorkItem = %v, %v; want the item", w, err)
	}
	if err := p.AckWorkItem(ctx, w.LockToken, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.RenewWorkItemLock(ctx, w.LockToken, 0); err == nil {
		t.Fatal("renew after ack succeeded: the ack did not apply")
	}
}

// A server that lost its script cache (SCRIPT FLUSH, a restart) answers
// EVALSHA with NOSCRIPT, also inside a pipeline: the call is sent again with
// its source, and the next ones find the script cached again.
func TestEvalshaAfterScriptFlush(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	p := newOn(t, rdb, true)
	if err := rdb.ScriptFlush(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	roundTrip(t, p)
	roundTrip(t, p)
}
