// Scenario 1, ceiling: what this machine, this Redis and this client pool can
// do at all. The same hooked go-redis client the provider uses issues
// EVALSHA of a trivial script and of a small 3-command one (TIME + ZADD +
// HSET, the shape of the cheapest real queue operation) in a closed loop.
// Every other throughput is divided by these calls/s, so a ratio survives a
// change of machine where an absolute figure does not.

package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	trivialScript = "return 1"
	// smallScript touches a bounded set of members (see runCeiling) so the
	// structures stay small and the cost stays what a tiny queue op costs.
	smallScript = `local t = redis.call('TIME')
redis.call('ZADD', KEYS[1] .. 'z', t[1], ARGV[1])
redis.call('HSET', KEYS[1] .. 'h', ARGV[1], ARGV[2])
return 1`
)

func runCeiling(ctx context.Context, e *env) error {
	prefix := "{" + e.namespace("ceiling") + "}:"
	defer e.cleanup(prefix + "*")
	value := strings.Repeat("v", e.opts.Payload)
	for _, s := range []struct{ variant, name, src string }{
		{vTrivial, "ceiling_trivial", trivialScript},
		{vSmall, "ceiling_3cmd", smallScript},
	} {
		script := redis.NewScript(s.src)
		e.calls.nameScript(s.name, s.src)
		// loaded up front so the measured calls are all EVALSHA hits
		if err := script.Load(ctx, e.main).Err(); err != nil {
			return fmt.Errorf("SCRIPT LOAD: %w", err)
		}
		for _, c := range e.opts.Concurrency {
			seq := make([]int, c) // per-goroutine member counters
			m := newMeter(e.opts.Warmup, e.opts.Duration, 0)
			err := e.measure(ctx, fmt.Sprintf("ceiling %s c=%d", s.name, c), m, func(ctx context.Context) error {
				return closedLoop(ctx, c, m, func(ctx context.Context, w int) error {
					seq[w]++
					member := strconv.Itoa(w) + "-" + strconv.Itoa(seq[w]%64)
					return script.Run(ctx, e.main, []string{prefix}, member, value).Err()
				})
			}, func(k counts) {
				p := Point{Scenario: "ceiling", Variant: s.variant, Concurrency: c, Unit: "calls",
					LatencyOf: "one EVALSHA call"}.measured(m, m, k)
				p.Note = callsNote(k, p.Ops)
				e.add(p)
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// measure runs one point: it shows progress, reads Redis's counters exactly
// at the edges of m's window (not around the warm-up or a drain), runs body
// and hands the counts to record.
func (e *env) measure(ctx context.Context, label string, m *meter, body func(ctx context.Context) error, record func(counts)) error {
	stop := e.prog.track(label, time.Until(m.to), m.count)
	type result struct {
		c   counts
		err error
	}
	res := make(chan result, 1)
	go func() {
		// poll rather than sleep to the window's end: a capped window closes
		// early
		for time.Now().Before(m.from) {
			time.Sleep(time.Millisecond)
		}
		p := e.startProbe(ctx)
		for !m.done() && ctx.Err() == nil {
			time.Sleep(2 * time.Millisecond)
		}
		c, err := p.stop(context.WithoutCancel(ctx))
		res <- result{c, err}
	}()
	err := body(ctx)
	stop()
	if err != nil {
		return err
	}
	r := <-res
	if r.err != nil {
		return fmt.Errorf("reading Redis counters: %w", r.err)
	}
	record(r.c)
	return nil
}
