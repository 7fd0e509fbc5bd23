// Scenario cluster: one namespace spread over a Redis Cluster's shards
// (redisprovider.New). On clusters of -cluster-masters masters
// (no replicas) the scenario starts itself, or on the cluster -cluster
// names, it runs the durable runtime's fan-out with each of
// -cluster-partitions partitions and reports throughput, each master's
// share of the Redis commands and its Redis CPU per orchestration, and what
// a cluster with a core per master would reach: the rate at which the
// busiest master's CPU is saturated. Then, with the most partitions, roots
// that each start one child: auto-named (the child shares its parent's
// partition), or for 10% or all of the roots named explicitly into another
// partition, so the start and the child's result travel through the
// partitions' outboxes and the relay: the cost of a cross-partition message
// against a local one.
//
// On a machine with fewer cores than masters the throughput cannot grow
// with the masters (they share the cores with each other and the client);
// the per-master CPU and the spread are what carry over.

package main

import (
	"context"
	"fmt"
	"math"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	dxredis "github.com/duroxide-go/duroxide-redis"
	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

func init() {
	scenarios = append(scenarios, scenario{"cluster",
		"one namespace over a Redis Cluster's masters: throughput, each master's share of commands and CPU, cross-partition children", runCluster})
}

// wfParent is the orchestration of the cross-partition points.
const wfParent = "bench.wf.parent"

// crossShares are the shares (percent) of roots whose child is named into
// another partition: none (every child local), the 10%, and all
// (the per-message cost, undiluted).
var crossShares = []int{0, 10, 100}

// crossRounds is how many times the cross-partition points run, shares
// alternating: a 10% difference is within the drift of a shared machine
// between two points, so each ratio is taken within a round (its points
// ran back to back) and the figure is the rounds' median.
const crossRounds = 3

// parentInput is the input of the parent orchestration: ChildID "" starts
// an auto-named child, in the parent's partition.
type parentInput struct {
	ChildID string `json:"child_id,omitempty"`
	Payload string `json:"payload"`
}

// parentOrchestration starts one child (a tree leaf: one echo activity) and
// returns its output.
func parentOrchestration(ctx *durable.OrchestrationContext, in parentInput) (string, error) {
	var opts []durable.OrchestrationOption
	if in.ChildID != "" {
		opts = append(opts, durable.WithInstanceID(in.ChildID))
	}
	return durable.ScheduleSubOrchestration[string](ctx, wfTree, treeInput{Payload: in.Payload}, opts...).Get()
}

// crossChild names a child of root that lives in another of parts
// partitions (deterministic: the first such suffix).
func crossChild(root string, parts int) string {
	home := dxredis.PartitionOf(root, parts)
	for i := 0; ; i++ {
		id := root + "-x" + strconv.Itoa(i)
		if dxredis.PartitionOf(id, parts) != home {
			return id
		}
	}
}

// ShardShare is one cluster master's part of a cluster point.
type ShardShare struct {
	Addr       string  `json:"addr"`
	Slots      string  `json:"slots"`
	Partitions int     `json:"partitions"` // the namespace's partitions whose slot it serves
	RedisCmds  int64   `json:"redis_cmds"` // commands it ran in the window, script-internal ones included
	Share      float64 `json:"cmd_share"`  // of every master's commands
	CPUSec     float64 `json:"server_cpu_sec"`
	CPUUsPerOp float64 `json:"redis_cpu_us_per_op"`
}

func vCluster(cl *cluster, parts int, what string) string {
	return fmt.Sprintf("%s, P=%d, %s", cl.name, parts, what)
}

func vCross(pct int) string { return fmt.Sprintf("parent+child, %d%% cross-partition", pct) }

// vCrossRound names round (from 1) of the pct% point.
func vCrossRound(pct, round int) string {
	if round == 1 {
		return vCross(pct)
	}
	return fmt.Sprintf("%s, round %d", vCross(pct), round)
}

func runCluster(ctx context.Context, e *env) error {
	defer func() { e.shards = nil }()
	if len(e.opts.ClusterAddrs) > 0 {
		cl, err := existingCluster(ctx, e, e.opts.ClusterAddrs)
		if err != nil {
			return err
		}
		defer cl.close()
		return e.clusterPoints(ctx, cl)
	}
	if _, err := exec.LookPath(redisServerBinary); err != nil {
		e.skip("cluster: needs " + redisServerBinary + " on PATH to start its clusters (or -cluster host:port)")
		return nil
	}
	for _, n := range e.opts.ClusterMasters {
		cl, err := startCluster(ctx, e, n)
		if err != nil {
			return err
		}
		err = e.clusterPoints(ctx, cl)
		cl.close()
		if err != nil {
			return fmt.Errorf("%s: %w", cl.name, err)
		}
	}
	return nil
}

// clusterPoints measures the fan-out at each partition count, then the
// cross-partition children at the largest, on cl; then derives the figures
// the issue asks for.
func (e *env) clusterPoints(ctx context.Context, cl *cluster) error {
	e.shards = cl.admins()
	fmt.Fprintf(e.out, "   %s: %s\n", cl.name, cl.layout())
	c := keyConcurrency(e.opts.Concurrency)
	fan := e.shapes()[0]
	for _, parts := range e.opts.ClusterPartitions {
		en, finish := e.clusterEngine(cl, parts)
		if err := e.enginePoint(ctx, fan, en, c, "cluster", vCluster(cl, parts, fan.name), finish); err != nil {
			return err
		}
	}
	parts := slices.Max(e.opts.ClusterPartitions)
	for round := 1; round <= crossRounds; round++ {
		for _, pct := range crossShares {
			var n atomic.Int64
			sh := shape{name: vCrossRound(pct, round), unit: "parents", orchestrations: 2, activities: 1, inflight: e.opts.InFlight,
				start: func(r engineRun, ctx context.Context, id, payload string) error {
					// exactly pct% of the roots, spread evenly
					i := n.Add(1)
					in := parentInput{Payload: payload}
					if i*int64(pct)/100 != (i-1)*int64(pct)/100 {
						in.ChildID = crossChild(id, parts)
					}
					return r.(*durableRun).client.StartOrchestrationJSON(ctx, id, wfParent, in)
				}}
			en, finish := e.clusterEngine(cl, parts)
			if err := e.enginePoint(ctx, sh, en, c, "cluster", vCluster(cl, parts, sh.name), finish); err != nil {
				return err
			}
		}
	}
	e.clusterFigures(cl, c, parts)
	return nil
}

// layout describes the cluster's masters and slots.
func (cl *cluster) layout() string {
	parts := make([]string, len(cl.shards))
	for i, s := range cl.shards {
		parts[i] = s.addr + " " + s.slots()
	}
	return strings.Join(parts, "; ")
}

// clusterEngine is the durable runtime on a namespace of parts partitions
// of cl, with the finish that adds each master's part to its point.
func (e *env) clusterEngine(cl *cluster, parts int) (engine, func(*Point, counts)) {
	var pp *redisprovider.Provider // the point's namespace, once started
	en := engine{name: fmt.Sprintf("durable on %s, P=%d", cl.name, parts), ackFetch: true,
		start: func(ctx context.Context, e *env, c int, ev engineEvents) (engineRun, error) {
			var err error
			pp, err = redisprovider.New(ctx, redisprovider.Options{Client: cl.client, Namespace: e.namespace("cluster"), Partitions: parts})
			if err != nil {
				return nil, fmt.Errorf("redisprovider.New with %d partitions: %w", parts, err)
			}
			done := func() {
				pp.Close()
				cl.cleanup(e, pp)
			}
			return e.durableOn(pp, done, c, ev)
		}}
	finish := func(pt *Point, k counts) {
		pt.Metrics["partitions"] = float64(parts)
		if pp != nil {
			cl.shareOut(pt, k, pp)
		}
	}
	return en, finish
}

// cleanup deletes the keys of pp's namespace on every master (a SCAN sees
// one node's keys); each pattern is one partition's, so each DEL stays in
// one slot.
func (cl *cluster) cleanup(e *env, pp *redisprovider.Provider) {
	patterns := []string{pp.Keys().Prefix() + "*"}
	for i := range pp.Partitions() {
		patterns = append(patterns, pp.PartitionKeys(i).Prefix()+"*")
	}
	for _, s := range cl.shards {
		for _, pat := range patterns {
			if _, err := deleteKeys(context.Background(), s.admin, pat); err != nil {
				fmt.Fprintf(e.out, "warning: cleanup of %s on %s: %v\n", pat, s.addr, err)
			}
		}
	}
}

// shareOut adds each master's share of the point's commands and its CPU per
// operation, the largest deviation from an even share, and the rate at
// which the busiest master would saturate one core.
func (cl *cluster) shareOut(pt *Point, k counts, pp *redisprovider.Provider) {
	if len(k.shards) != len(cl.shards) || pt.Ops == 0 {
		return
	}
	held := make([]int, len(cl.shards))
	for i := range pp.Partitions() {
		if s := cl.shardOf(int(dxredis.Slot(pp.PartitionKeys(i).Prefix()))); s >= 0 {
			held[s]++
		}
	}
	var total int64
	for _, s := range k.shards {
		total += s.redisCmds
	}
	n := float64(len(cl.shards))
	var dev, busiest float64
	shares, cpus, holds := make([]string, len(cl.shards)), make([]string, len(cl.shards)), make([]string, len(cl.shards))
	for i, s := range k.shards {
		sh := ShardShare{Addr: cl.shards[i].addr, Slots: cl.shards[i].slots(), Partitions: held[i], RedisCmds: s.redisCmds,
			CPUSec: s.serverCPU, CPUUsPerOp: 1e6 * s.serverCPU / float64(pt.Ops)}
		if total > 0 {
			sh.Share = float64(s.redisCmds) / float64(total)
		}
		dev = max(dev, math.Abs(sh.Share*n-1))
		busiest = max(busiest, sh.CPUUsPerOp)
		pt.Shards = append(pt.Shards, sh)
		shares[i], cpus[i], holds[i] = fmt.Sprintf("%.0f", 100*sh.Share), fmt.Sprintf("%.0f", sh.CPUUsPerOp), strconv.Itoa(held[i])
	}
	pt.Metrics["max_share_deviation"] = dev
	pt.Metrics["busiest_shard_cpu_us_per_op"] = busiest
	if busiest > 0 {
		pt.Metrics["one_core_per_shard_per_sec"] = 1e6 / busiest
	}
	pt.Note = fmt.Sprintf("partitions per master %s, commands %s%% (max %.0f%% off even), Redis CPU/op per master %s us: one core per master %s %s/s; %s",
		strings.Join(holds, "/"), strings.Join(shares, "/"), 100*dev, strings.Join(cpus, "/"), human(pt.Metrics["one_core_per_shard_per_sec"]), pt.Unit, pt.Note)
}

// clusterFigures derives, for cl, the figures from its points: the
// spread at the most partitions against the 15% target, the one-core-per-
// master projection against a single master's, and what cross-partition
// children cost.
func (e *env) clusterFigures(cl *cluster, c, parts int) {
	r := e.report
	fan := e.shapes()[0].name
	wide, one := r.find("cluster", vCluster(cl, parts, fan), c), r.find("cluster", vCluster(cl, 1, fan), c)
	if wide != nil && wide.Metrics["one_core_per_shard_per_sec"] > 0 {
		dev := wide.Metrics["max_share_deviation"]
		shares := make([]string, len(wide.Shards))
		for i, s := range wide.Shards {
			shares[i] = fmt.Sprintf("%.1f%%", 100*s.Share)
		}
		r.target(fmt.Sprintf("%s, P=%d: each master's share of Redis commands within 15%% of even", cl.name, parts),
			fmt.Sprintf("max %.1f%% off even (%s)", 100*dev, strings.Join(shares, ", ")), dev <= 0.15)
		r.ratio(Ratio{Name: fmt.Sprintf("%s, P=%d: orchestrations/s with one core per master", cl.name, parts), Concurrency: c,
			Value: wide.Metrics["one_core_per_shard_per_sec"], Meaning: "1 / the busiest master's Redis CPU per orchestration (fan-out " + strconv.Itoa(e.opts.FanOut) + ")"})
		if one != nil && one.Metrics["one_core_per_shard_per_sec"] > 0 {
			r.ratio(Ratio{Name: fmt.Sprintf("%s: one-core-per-master rate P=%d / P=1", cl.name, parts), Concurrency: c,
				Value:   wide.Metrics["one_core_per_shard_per_sec"] / one.Metrics["one_core_per_shard_per_sec"],
				Meaning: fmt.Sprintf("how much further the namespace scales out over %d masters than in one slot (ideal %d)", len(cl.shards), len(cl.shards))})
			if one.Metrics["redis_cpu_us_per_op"] > 0 {
				r.ratio(Ratio{Name: fmt.Sprintf("%s: Redis CPU per orchestration, all masters, P=%d / P=1", cl.name, parts), Concurrency: c,
					Value: wide.Metrics["redis_cpu_us_per_op"] / one.Metrics["redis_cpu_us_per_op"], Meaning: "what partitioning adds to the work of an orchestration (1.0 = nothing)"})
			}
		}
	}
	for _, pct := range crossShares[1:] {
		var cpus, rates, cmds []float64
		for round := 1; round <= crossRounds; round++ {
			base, p := r.find("cluster", vCluster(cl, parts, vCrossRound(0, round)), c), r.find("cluster", vCluster(cl, parts, vCrossRound(pct, round)), c)
			if base == nil || p == nil || base.PerSec == 0 || p.PerSec == 0 || base.Metrics["redis_cpu_us_per_op"] == 0 || base.Metrics["redis_cmds_per_op"] == 0 {
				continue
			}
			cpus = append(cpus, p.Metrics["redis_cpu_us_per_op"]/base.Metrics["redis_cpu_us_per_op"])
			rates = append(rates, p.PerSec/base.PerSec)
			cmds = append(cmds, p.Metrics["redis_cmds_per_op"]/base.Metrics["redis_cmds_per_op"])
		}
		if len(cpus) == 0 {
			continue
		}
		cpu, rate, cmd := median(cpus), median(rates), median(cmds)
		name := func(what string) string {
			return fmt.Sprintf("%s, P=%d: %s, %d%% / 0%% cross-partition children", cl.name, parts, what, pct)
		}
		r.ratio(Ratio{Name: name("Redis CPU per parent"), Concurrency: c, Value: cpu, Meaning: "1.0 = a cross-partition child costs Redis what a local one does"})
		r.ratio(Ratio{Name: name("Redis commands per parent"), Concurrency: c, Value: cmd, Meaning: "the same in commands, which the machine's load moves less"})
		r.ratio(Ratio{Name: name("parents/s"), Concurrency: c, Value: rate, Meaning: "higher is better"})
		if pct == 10 {
			r.target(fmt.Sprintf("%s, P=%d: the outbox adds <= 10%% to a workload with 10%% cross-partition starts", cl.name, parts),
				fmt.Sprintf("Redis CPU per parent %+.1f%%, Redis commands %+.1f%%, parents/s %.2fx (medians of %d rounds' ratios)", 100*(cpu-1), 100*(cmd-1), rate, len(cpus)),
				cpu <= 1.10)
		}
	}
}

// median is the middle value of v (the mean of the middle two when even).
func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
