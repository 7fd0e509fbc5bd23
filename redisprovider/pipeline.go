package redisprovider

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Script calls are short and independent, so concurrent ones can share a
// connection's writes and reads: go-redis's autopipeliner queues each call
// and flushes whatever is queued as one pipeline, one write and one read
// for the batch instead of one per call (on a Cluster, per node; every
// provider key is in one slot). On a loopback Redis the syscalls of single
// calls are most of both processes' CPU (bench: the pipeline scenario).
// Blocking calls (BZPOPMIN) never come here: they run on the blocking client.

// autoPipeliner returns the deferred-face autopipeliner of c, shared with
// any other user of c and closed with c, or nil when c cannot give one (a
// caller's own UniversalClient implementation): calls then go one by one.
// The default options apply: one batch in flight at a time, which keeps the
// batches deep; a lone call is flushed at once.
func autoPipeliner(c redis.UniversalClient) *redis.AutoPipeliner {
	ap, err := c.AsyncAutoPipeline()
	if err != nil {
		return nil
	}
	return ap
}

// process sends cmd at most once, through the autopipeliner when there is
// one. A call whose context is already done is not sent. Once queued, a call
// is sent even if its caller gives up (its context ends first): like a call
// whose reply was lost, it may have run, which every script tolerates (a sent
// fetch is answered within detach's grace anyway). The caller is answered as
// soon as its context ends, with the context's error.
func (p *partition) process(ctx context.Context, cmd *redis.Cmd) error {
	if p.pipe == nil {
		return p.rdb.Process(ctx, sendOnce(cmd))
	}
	if err := ctx.Err(); err != nil {
		cmd.SetErr(err)
		return err
	}
	return p.pipe.Submit(ctx, sendOnce(cmd)).WaitContext(ctx)
}

// onceCmd is a command go-redis sends at most once. go-redis re-sends a
// command whose reply did not arrive (a dropped connection, a timeout, a
// server going down) whatever its client's MaxRetries says: a ClusterClient
// loops up to MaxRedirects times over every error it deems retryable
// (osscluster.go's process), so an enqueue whose reply was lost ran twice
// and returned nil. A command that says NoRetry is never re-sent after it
// may have reached the server, on any client type and in its pipelines;
// go-redis still follows MOVED and ASK, which mean the command did not run.
// The provider's callers get the retryable error instead: an ack, fetch or
// enqueue that returned nil was applied exactly once.
type onceCmd struct{ *redis.Cmd }

// NoRetry tells go-redis never to send the command a second time.
func (onceCmd) NoRetry() bool { return true }

// sendOnce wraps cmd so that go-redis sends it at most once.
func sendOnce(cmd *redis.Cmd) redis.Cmder { return onceCmd{cmd} }
