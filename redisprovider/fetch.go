package redisprovider

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// What both queues' fetches share: a fetch class and its rounds, and one
// run of a fetch script with a new lock token.

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

// fetchClass is a fetch's class (see poller.go): its id, whether its filter
// takes nothing (then it has no wake keys and waits out its poll without
// asking Redis), and how a partition runs it.
type fetchClass struct {
	id    string
	empty bool
	build func(p *partition) fetchSpec
}

// demand returns the class's demand in p's set, creating its pollers.
func (c fetchClass) demand(p *partition) *demand { return p.set.class(c.id, c.build) }

// fetchOne fetches with class c from partition p: one round at once when
// pollTimeout is 0, else through the class's pollers, waiting up to
// pollTimeout.
func fetchOne[T any](ctx context.Context, p *partition, op string, c fetchClass, pollTimeout time.Duration) (*T, error) {
	if c.empty {
		return nil, fail(op, p.sleep(ctx, pollTimeout))
	}
	d := c.demand(p)
	if pollTimeout <= 0 {
		item, err := p.round(ctx, d, d.pollers[p.part].spec.once)
		return typed[T](item), fail(op, err)
	}
	item, _, err := p.set.wait(ctx, d, p.part, pollTimeout)
	return typed[T](item), fail(op, err)
}

// round runs one round of d's class in partition p on the caller's
// goroutine (a fetch with no poll timeout, or an ack-and-fetch), and records
// what it learned with p's poller of the class.
func (p *partition) round(ctx context.Context, d *demand, once func(ctx context.Context) (any, time.Duration, error)) (any, error) {
	pl := d.pollers[p.part]
	epoch := pl.begin(false)
	item, due, err := once(ctx)
	pl.end(epoch, item != nil, due, err)
	return item, err
}

// typed returns a fetched item as its type (nil for none).
func typed[T any](item any) *T {
	if item == nil {
		return nil
	}
	return item.(*T)
}

// untyped returns a fetched item as a pollResult's item: nil for none (a
// nil *T in an interface would not be).
func untyped[T any](item *T) any {
	if item == nil {
		return nil
	}
	return item
}

// fetchScript runs a fetch script once with a new lock token as its first
// argument, followed by a. The script runs detached from ctx's cancellation:
// once sent, the lock it may take must be known, and given back (by the
// abandon script) when the reply is lost or the caller has left meanwhile.
// r is nil when the script's reply never arrived.
func (p *partition) fetchScript(ctx context.Context, op string, script, abandon luaScript, a args) (r *reply, token string, err error) {
	return p.fetchScriptWith(ctx, op, script, abandon, a, nil)
}

// fetchScriptWith is fetchScript for an ack-and-fetch script that may also
// fetch for a parked caller (pig, nil for none): its part of the reply goes
// to pig.
func (p *partition) fetchScriptWith(ctx context.Context, op string, script, abandon luaScript, a args, pig *piggyback) (r *reply, token string, err error) {
	if err := ctx.Err(); err != nil {
		pig.finish(nil, err)
		return nil, "", err
	}
	token = uuid.NewString()
	sctx, cancel := detach(ctx)
	defer cancel()
	res, err := p.run(sctx, op, script, pig.args(append(args{token}, a...)))
	if err != nil {
		p.lostReply(op, abandon, token, err)
		pig.finish(nil, err)
		return nil, "", err
	}
	res = pig.split(op, res)
	r = newReply(op, res)
	if r.int(fetchTook) != 0 && ctx.Err() != nil {
		p.giveBack(op, abandon, token)
		return r, token, ctx.Err()
	}
	return r, token, nil
}

// sleep waits d (or until ctx ends) without touching Redis.
func (p *partition) sleep(ctx context.Context, d time.Duration) error {
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
