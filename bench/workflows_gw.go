// The go-workflows side of the workflows scenario (bench/peer/gwpeer): a
// go-workflows worker on its own key prefix and its own pool, counted by the
// same hook as the provider's client.

package main

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/bench/peer/gwpeer"
)

var gwEngine = engine{
	name: "go-workflows",
	smokeless: "needs a real Redis (miniredis's cjson encodes {} as [], which go-workflows cannot read back); " +
		"run with -redis",
	start: startGW,
}

type gwRun struct {
	p     *gwpeer.Peer
	rdb   *redis.Client
	e     *env
	shape gwpeer.TreeInput // depth and width; the payload is set per start
	fan   int
}

func startGW(ctx context.Context, e *env, c int, ev engineEvents) (engineRun, error) {
	// each of go-workflows's 2c pollers holds a connection in a blocking
	// XREADGROUP: without room for them in its pool it would starve itself
	rdb := e.peerClient(2 * c)
	prefix := fmt.Sprintf("gw-%s-%d:", e.runID, e.nsN.Add(1))
	p, err := gwpeer.Start(ctx, rdb, prefix, c, gwpeer.Events{Finished: ev.finished, Activity: ev.activity})
	if err != nil {
		rdb.Close()
		e.cleanup(prefix + "*")
		return nil, err
	}
	return &gwRun{p: p, rdb: rdb, e: e, fan: e.opts.FanOut,
		shape: gwpeer.TreeInput{Depth: e.opts.TreeDepth, Width: e.opts.TreeWidth}}, nil
}

func (r *gwRun) startFanOut(ctx context.Context, id, payload string) error {
	return r.p.StartFanOut(ctx, id, gwpeer.FanOutInput{Activities: r.fan, Payload: payload})
}

func (r *gwRun) startTree(ctx context.Context, id, payload string) error {
	in := r.shape
	in.Payload = payload
	return r.p.StartTree(ctx, id, in)
}

func (r *gwRun) startSequence(ctx context.Context, id, payload string, n int) error {
	return r.p.StartSequence(ctx, id, gwpeer.SequenceInput{Activities: n, Payload: payload})
}

func (r *gwRun) startWide(ctx context.Context, id, payload string, n int) error {
	return r.p.StartFanOut(ctx, id, gwpeer.FanOutInput{Activities: n, Payload: payload})
}

func (r *gwRun) historyLength(ctx context.Context, id string) (int, error) {
	return r.p.HistoryLength(ctx, id)
}

func (r *gwRun) stop() error {
	err := r.p.Stop()
	r.rdb.Close()
	r.e.cleanup(r.p.KeyPattern())
	return err
}
