package redisprovider

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The relay moves the messages in each partition's outbox (O.send) to the
// partitions of their instances.
//
// A drain reads the oldest entries of one outbox, applies them in each
// target partition with lua/relay_messages.lua, in id order, then trims the
// outbox up to the highest id it read. Each step is atomic on its own, and
// their sequence is safe to cut anywhere and to run twice at once: a target
// records, per source partition, the highest id it applied and skips what is
// at or below it, so a batch delivered again (a relay died before trimming,
// or two relays read the same entries) is applied once; and an entry leaves
// the outbox only after its target applied it, so none is lost. The ids of
// one outbox grow in commit order (they come from the partition's
// sequence), so every read is a prefix and each target receives a source's
// messages in order.
//
// A process drains a partition's outbox right after one of its acks put
// messages there, and every relaySweep on its own, which delivers what a
// process that died between its ack and its drain left behind.

const (
	// relayBatch is how many outbox entries one drain step reads.
	relayBatch = 256
	// relaySweep spaces the drains a process runs without an ack of its own
	// asking for one.
	relaySweep = 10 * time.Second
)

type relay struct {
	pp    *Provider
	once  sync.Once
	kicks []chan struct{}
	done  chan struct{}
	quit  sync.Once
	wg    sync.WaitGroup
	// fault, when set by a test, runs before each delivery ("deliver") and
	// before the trim ("trim"); an error ends the drain there, as a process
	// dying at that point would.
	fault func(step string) error
}

func newRelay(pp *Provider) *relay {
	r := &relay{pp: pp, done: make(chan struct{})}
	r.kicks = make([]chan struct{}, len(pp.parts))
	for i := range r.kicks {
		r.kicks[i] = make(chan struct{}, 1)
	}
	return r
}

// start runs the relay's loops once the process fetches or sends: a
// provider used only as a client runs none.
func (r *relay) start() {
	if len(r.pp.parts) == 1 {
		return // no other partition to send to
	}
	r.once.Do(func() {
		for k := range r.pp.parts {
			r.wg.Add(1)
			go r.run(k)
		}
	})
}

// kick asks for a drain of partition part's outbox.
func (r *relay) kick(part int) {
	r.start()
	select {
	case r.kicks[part] <- struct{}{}:
	default: // one is pending already; it reads whatever is there by then
	}
}

// stop ends the loops, after a drain in progress.
func (r *relay) stop() {
	r.quit.Do(func() { close(r.done) })
	r.wg.Wait()
}

// run drains partition k's outbox when kicked and every relaySweep (with a
// jitter, so processes do not sweep in step), and again soon after a
// failed drain.
func (r *relay) run(k int) {
	defer r.wg.Done()
	sweep := func() time.Duration { return relaySweep/2 + rand.N(relaySweep) }
	t := time.NewTimer(sweep())
	defer t.Stop()
	for {
		select {
		case <-r.done:
			return
		case <-r.kicks[k]:
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), rearmTimeout)
		err := r.drain(ctx, k)
		cancel()
		next := sweep()
		if err != nil {
			r.pp.base.log.Warn("duroxide-redis: relaying a partition's outbox failed; retrying", "partition", k, "error", err)
			next = retryPause
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(next)
	}
}

// drain relays partition k's outbox until it is empty.
func (r *relay) drain(ctx context.Context, k int) error {
	src := r.pp.parts[k]
	for {
		members, err := src.rdb.ZRange(ctx, src.keys.Outbox(), 0, relayBatch-1).Result()
		if err != nil {
			return fail("relay", err)
		}
		if len(members) == 0 {
			return nil
		}
		byTarget, order, last, err := parseOutbox(members, len(r.pp.parts))
		if err != nil {
			return err
		}
		for _, t := range order {
			if err := r.step("deliver"); err != nil {
				return err
			}
			if err := r.pp.parts[t].relayMessages(ctx, k, byTarget[t]); err != nil {
				return err
			}
		}
		if err := r.step("trim"); err != nil {
			return err
		}
		if err := src.rdb.ZRemRangeByScore(ctx, src.keys.Outbox(), "-inf", strconv.FormatUint(last, 10)).Err(); err != nil {
			return fail("relay", err)
		}
		if len(members) < relayBatch {
			return nil
		}
	}
}

// relayMessages applies in p's partition the outbox entries of partition
// src (id, instance, json, visible at each) with lua/relay_messages.lua.
func (p *partition) relayMessages(ctx context.Context, src int, entries args) error {
	a := args{strconv.Itoa(src), strconv.Itoa(len(entries) / 4)}
	_, err := p.run(ctx, "relay_messages", scriptRelayMessages, append(a, entries...))
	return err
}

func (r *relay) step(name string) error {
	if r.fault == nil {
		return nil
	}
	return r.fault(name)
}

// parseOutbox reads outbox entries ('<id> <partition> <visible at>
// <#instance> <instance><json>', as O.send writes them) into the arguments
// of lua/relay_messages.lua per target partition (id, instance, json,
// visible at), the targets in the order of their first entry, and the
// highest id.
func parseOutbox(members []string, parts int) (map[int]args, []int, uint64, error) {
	by := make(map[int]args)
	var order []int
	var last uint64
	for _, m := range members {
		f := strings.SplitN(m, " ", 5)
		if len(f) != 5 {
			return nil, nil, 0, corruptOutbox(m)
		}
		id, err1 := strconv.ParseUint(f[0], 10, 64)
		t, err2 := strconv.Atoi(f[1])
		n, err3 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil || err3 != nil || t < 0 || t >= parts || n > len(f[4]) {
			return nil, nil, 0, corruptOutbox(m)
		}
		if _, ok := by[t]; !ok {
			order = append(order, t)
		}
		by[t] = append(by[t], f[0], f[4][:n], f[4][n:], f[2])
		last = max(last, id)
	}
	return by, order, last, nil
}

func corruptOutbox(m string) error {
	return fmt.Errorf("relay: outbox entry %.80q is not '<id> <partition> <visible at> <length> <instance><json>'", m)
}
