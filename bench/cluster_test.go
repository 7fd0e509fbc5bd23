package main

import (
	"context"
	"math"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dxredis "github.com/duroxide-go/duroxide-redis"
)

// TestClusterScenario runs the cluster scenario end to end on a 3-master
// cluster it starts (short windows: it checks the bookkeeping, not the
// figures): every point reports each master, the partitions land 4 per
// master at P = 12, the shares add up, and the targets and the
// projection are derived.
func TestClusterScenario(t *testing.T) {
	if _, err := exec.LookPath(redisServerBinary); err != nil {
		t.Skipf("%s is not on PATH: the cluster scenario starts its own clusters", redisServerBinary)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	o := Options{
		Out:            filepath.Join(t.TempDir(), "results.json"),
		Duration:       time.Second,
		Warmup:         200 * time.Millisecond,
		Concurrency:    []int{4},
		Scenarios:      []string{"cluster"},
		ClusterMasters: []int{3},
	}
	rep, _ := mustRun(t, ctx, o)
	if rep.Mode != "redis" || !strings.HasPrefix(rep.Machine.Server, "redis ") {
		t.Errorf("a run of only the cluster scenario is a real run on redis-server: mode %q, server %q", rep.Mode, rep.Machine.Server)
	}
	want := []string{"fan-out 5", vCross(0), vCross(10), vCross(100)}
	for _, what := range want {
		if what == "fan-out 5" {
			if p := rep.find("cluster", "3 masters, P=1, fan-out 5", 4); p == nil || len(p.Shards) != 3 || slices.IndexFunc(p.Shards, func(s ShardShare) bool { return s.Partitions == 1 }) < 0 {
				t.Errorf("P=1 point missing or not on one master: %+v", p)
			}
		}
		p := rep.find("cluster", "3 masters, P=12, "+what, 4)
		if p == nil {
			t.Errorf("no point for %s", what)
			continue
		}
		if p.Ops == 0 || len(p.Shards) != 3 {
			t.Errorf("%s: %d ops, %d shards", what, p.Ops, len(p.Shards))
			continue
		}
		var share float64
		for _, s := range p.Shards {
			share += s.Share
			if s.Partitions != 4 || s.RedisCmds <= 0 || s.CPUUsPerOp <= 0 {
				t.Errorf("%s: master %+v: want 4 partitions and commands and CPU counted", what, s)
			}
		}
		if math.Abs(share-1) > 1e-9 || p.Metrics["one_core_per_shard_per_sec"] <= 0 {
			t.Errorf("%s: shares add up to %v, projection %v", what, share, p.Metrics["one_core_per_shard_per_sec"])
		}
	}
	for _, goal := range []string{"within 15% of even", "the outbox adds <= 10%"} {
		if !slices.ContainsFunc(rep.Targets, func(x Target) bool { return strings.Contains(x.Goal, goal) }) {
			t.Errorf("no target %q in %+v", goal, rep.Targets)
		}
	}
}

// TestCrossChildLeavesItsParentsPartition: the explicit child ids the
// cross-partition points give always name another partition.
func TestCrossChildLeavesItsParentsPartition(t *testing.T) {
	t.Parallel()
	for i := range 200 {
		root := "wf-x-" + strconv.Itoa(i)
		child := crossChild(root, 12)
		if dxredis.PartitionOf(child, 12) == dxredis.PartitionOf(root, 12) {
			t.Fatalf("child %s of %s is in its parent's partition", child, root)
		}
	}
}
