// Scenario 7, memory: what a completed orchestration leaves in Redis, next
// to the raw JSON of its history (the part a user asked to keep). Completed
// fan-out orchestrations are run through the synthetic runtime on a fresh
// namespace, then measured two ways: the sum of MEMORY USAGE over the
// namespace's keys (exact per key, broken down by key family) and the
// used_memory delta of INFO memory (everything, allocator overhead included,
// but noisy).

package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

func runMemory(ctx context.Context, e *env) error {
	p, done, err := e.provider(ctx, "memory")
	if err != nil {
		return err
	}
	defer done()
	k := e.opts.Memory
	before, err := settledMemory(ctx, e.admin, e.embedded)
	if err != nil {
		return err
	}
	var completed atomic.Int64
	r := &synth{p: p, fanout: e.opts.FanOut, size: e.opts.Payload,
		onDone: func(string, time.Time, time.Time) { completed.Add(1) }}
	acts := &sink{m: newMeter(0, 24*time.Hour, 0), seen: newSeen()}
	c := keyConcurrency(e.opts.Concurrency)
	stop, failed := r.start(ctx, c, acts)
	err = e.fill(ctx, fmt.Sprintf("starting %d orchestrations", k), k, orchestrationStarter(p, e.opts.Payload, "mem-"))
	if err == nil {
		err = waitFor(ctx, failed, 10*time.Minute, "memory: orchestrations", func() (bool, string) {
			return completed.Load() >= int64(k), fmt.Sprintf("%d of %d completed", completed.Load(), k)
		})
	}
	if stopErr := stop(); err == nil && !stopped(stopErr) {
		err = stopErr
	}
	if err != nil {
		return err
	}
	if err := r.verify(ctx); err != nil {
		return err
	}
	after, err := settledMemory(ctx, e.admin, e.embedded)
	if err != nil {
		return err
	}
	prefix := p.Keys().Prefix()
	usage, keys, err := keyUsage(ctx, e.admin, prefix, e.embedded)
	if err != nil {
		return err
	}
	// the provider keeps the JSON bytes of each execution's stored events
	jsonBytes := 0
	for i := 1; i <= k; i++ {
		inst := fmt.Sprintf("mem-%d", i)
		st, err := p.GetInstanceStats(ctx, inst)
		if err != nil {
			return err
		}
		if st == nil {
			return fmt.Errorf("memory: instance %s not found", inst)
		}
		jsonBytes += int(st.HistorySizeBytes)
	}
	total := 0
	for _, v := range usage {
		total += v
	}
	per := func(v int) float64 { return float64(v) / float64(k) }
	pt := Point{Scenario: "memory", Variant: fmt.Sprintf("completed fan-out-%d orchestration", e.opts.FanOut),
		Concurrency: c, Unit: "orchestrations", Ops: int64(k),
		Metrics: map[string]float64{
			"memory_usage_bytes_per_orch": per(total),
			"json_history_bytes_per_orch": per(jsonBytes),
			"keys_per_orch":               per(keys),
			"memory_over_json":            float64(total) / float64(max(jsonBytes, 1)),
		}}
	if !e.embedded {
		pt.Metrics["used_memory_delta_per_orch"] = per(int(after - before))
	}
	var fam []string
	for _, f := range slices.Sorted(maps.Keys(usage)) {
		pt.Metrics["bytes_per_orch."+f] = per(usage[f])
	}
	for _, f := range topFamilies(usage, 4) {
		fam = append(fam, fmt.Sprintf("%s %.0f", f, per(usage[f])))
	}
	pt.Note = fmt.Sprintf("%.0f B/orch (MEMORY USAGE) vs %.0f B JSON history = %.1fx; %.1f keys/orch; top: %s",
		per(total), per(jsonBytes), pt.Metrics["memory_over_json"], per(keys), strings.Join(fam, ", "))
	if !e.embedded {
		pt.Note += fmt.Sprintf("; used_memory delta %.0f B/orch", pt.Metrics["used_memory_delta_per_orch"])
	} else {
		pt.Note += " (miniredis sizes Go objects: not Redis bytes)"
	}
	e.add(pt)
	return nil
}

// keyUsage sums MEMORY USAGE of every key under prefix by key family (the
// token after the prefix: "h" history, "i" instance, ...).
func keyUsage(ctx context.Context, admin *redis.Client, prefix string, embedded bool) (map[string]int, int, error) {
	keys, err := scanKeys(ctx, admin, prefix+"*")
	if err != nil {
		return nil, 0, err
	}
	usage := map[string]int{}
	for start := 0; start < len(keys); start += 500 {
		batch := keys[start:min(start+500, len(keys))]
		pipe := admin.Pipeline()
		cmds := make([]*redis.IntCmd, len(batch))
		for i, key := range batch {
			if embedded {
				cmds[i] = pipe.MemoryUsage(ctx, key) // miniredis takes no SAMPLES
			} else {
				cmds[i] = pipe.MemoryUsage(ctx, key, 0) // 0: every element, exact
			}
		}
		if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
			return nil, 0, fmt.Errorf("MEMORY USAGE: %w", err)
		}
		for i, key := range batch {
			fam, _, _ := strings.Cut(strings.TrimPrefix(key, prefix), ":")
			usage[fam] += int(cmds[i].Val())
		}
	}
	return usage, len(keys), nil
}

// topFamilies returns the n families holding the most bytes.
func topFamilies(usage map[string]int, n int) []string {
	fams := slices.Sorted(maps.Keys(usage))
	sort.SliceStable(fams, func(i, j int) bool { return usage[fams[i]] > usage[fams[j]] })
	return fams[:min(n, len(fams))]
}

// settledMemory reads used_memory once it stops moving: after an earlier
// scenario deleted many keys, Redis shrinks its main hash table in the
// background, and a reading taken meanwhile would credit that shrinking to
// the orchestrations (a recorded run saw the delta halved that way).
func settledMemory(ctx context.Context, admin *redis.Client, embedded bool) (int64, error) {
	prev, err := usedMemory(ctx, admin, embedded)
	if err != nil || embedded {
		return prev, err
	}
	for range 40 {
		time.Sleep(250 * time.Millisecond)
		cur, err := usedMemory(ctx, admin, embedded)
		if err != nil {
			return 0, err
		}
		if d := cur - prev; d > -16<<10 && d < 16<<10 {
			return cur, nil
		}
		prev = cur
	}
	return prev, nil
}
