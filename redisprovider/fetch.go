package redisprovider

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// What both queues' fetches share: the long-poll loop around a fetch script,
// and one run of that script with a new lock token.

// The replies of lua/fetch_orchestration_item.lua and lua/fetch_work_item.lua
// start with whether the script took work. Without work they go on with the
// server time and when to run again (the same for both scripts); with work,
// see orchestrationTaken and workTaken.
const (
	fetchTook    = iota // 1 with work, 0 without
	emptyNow            // server time, ms
	emptyRerun          // when to run the script again, ms
	emptyDropped        // fetch_orchestration_item only: orphan messages dropped
)

// fetchLoop polls once until it returns an item, pollTimeout passes or ctx
// ends. No wake keys means the caller's filter accepts nothing: it waits out
// the poll without asking Redis.
func fetchLoop[T any](ctx context.Context, p *Provider, op string, keys []string, pollTimeout time.Duration,
	once func(ctx context.Context) (*T, time.Duration, error)) (*T, error) {
	if len(keys) == 0 {
		passTurn(ctx)
		return nil, fail(op, p.sleep(ctx, pollTimeout))
	}
	item, err := pollItem(ctx, p, keys, pollTimeout, nil, once)
	return item, fail(op, err)
}

// pollItem is fetchLoop's poll with the error unnamed; early, when not nil,
// is its first round (see poll).
func pollItem[T any](ctx context.Context, p *Provider, keys []string, pollTimeout time.Duration,
	early, once func(ctx context.Context) (*T, time.Duration, error)) (*T, error) {
	var item *T
	round := func(f func(ctx context.Context) (*T, time.Duration, error)) tryFunc {
		return func(ctx context.Context) (bool, time.Duration, error) {
			leave, err := enterRace(ctx)
			if err != nil {
				return false, 0, err
			}
			var due time.Duration
			item, due, err = f(ctx)
			leave(item != nil)
			return item != nil, due, err
		}
	}
	var first tryFunc
	if early != nil {
		first = round(early)
	}
	if err := p.poll(ctx, keys, pollTimeout, first, round(once)); err != nil {
		return nil, err
	}
	return item, nil
}

// fetchScript runs a fetch script once with a new lock token as its first
// argument, followed by a. The script runs detached from ctx's cancellation:
// once sent, the lock it may take must be known, and given back (by the
// abandon script) when the reply is lost or the caller has left meanwhile.
// r is nil when the script's reply never arrived.
func (p *Provider) fetchScript(ctx context.Context, op string, script, abandon luaScript, a args) (r *reply, token string, err error) {
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	token = uuid.NewString()
	sctx, cancel := detach(ctx)
	defer cancel()
	res, err := p.run(sctx, op, script, append(args{token}, a...))
	if err != nil {
		p.lostReply(op, abandon, token, err)
		return nil, "", err
	}
	r = newReply(op, res)
	if r.int(fetchTook) != 0 && ctx.Err() != nil {
		p.giveBack(op, abandon, token)
		return r, token, ctx.Err()
	}
	return r, token, nil
}

// sleep waits d (or until ctx ends) without touching Redis.
func (p *Provider) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-p.closed:
		return nil
	}
}
