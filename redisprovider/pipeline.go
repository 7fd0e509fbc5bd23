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

// process sends cmd, through the autopipeliner when there is one. A call
// whose context is already done is not sent. Once queued, a call is sent
// even if its caller gives up (its context ends first): like a call whose
// reply was lost, it may have run, which every script tolerates (a sent
// fetch is answered within detach's grace anyway). The caller is answered
// as soon as its context ends, with the context's error.
func (p *Provider) process(ctx context.Context, cmd *redis.Cmd) error {
	if p.pipe == nil {
		return p.rdb.Process(ctx, cmd)
	}
	if err := ctx.Err(); err != nil {
		cmd.SetErr(err)
		return err
	}
	return p.pipe.Submit(ctx, cmd).WaitContext(ctx)
}
