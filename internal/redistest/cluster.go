package redistest

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a Redis Cluster of primaries only, each a Server of the test
// (its own port and data directory, its nodes.conf there), so a test can
// kill one primary and start it again as the same node on the same data.
type Cluster struct {
	t     testing.TB
	Nodes []*Server
}

// StartCluster starts n redis-server processes with cluster mode on and
// extra configuration arguments, joins them with `redis-cli --cluster
// create` (the slots in n equal ranges, no replicas) and waits until every
// node reports cluster_state:ok. The test is skipped when redis-server or
// redis-cli is not on PATH.
func StartCluster(t testing.TB, n int, extra ...string) *Cluster {
	t.Helper()
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("redis-cli is not on PATH: these tests create their own Redis Cluster with it (CI installs it)")
	}
	c := &Cluster{t: t}
	args := append([]string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"}, extra...)
	create := []string{"--cluster", "create"}
	for i := 0; i < n; i++ {
		// the cluster bus gets a free port of its own: the default (port +
		// 10000) may be taken, or above 65535 for a high free port
		bus := []string{"--cluster-port", strconv.Itoa(freePort(t))}
		s := Start(t, append(bus, args...)...)
		c.Nodes = append(c.Nodes, s)
		create = append(create, s.Addr())
	}
	create = append(create, "--cluster-replicas", "0", "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "redis-cli", create...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	c.WaitOK(30 * time.Second)
	return c
}

// Addrs lists the nodes' host:port.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		addrs[i] = s.Addr()
	}
	return addrs
}

// Client returns a cluster client of the test's own, as the provider wants
// one (no go-redis retries: the provider's callers retry; context deadlines
// honoured), closed when the test ends.
func (c *Cluster) Client() *redis.ClusterClient {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), MaxRetries: -1, ContextTimeoutEnabled: true})
	c.t.Cleanup(func() { cc.Close() })
	return cc
}

// WaitOK waits until every node reports cluster_state:ok with all 16384
// slots served, for at most limit.
func (c *Cluster) WaitOK(limit time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(limit)
	for i, s := range c.Nodes {
		cl := s.client()
		var info string
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			got, err := cl.ClusterInfo(ctx).Result()
			cancel()
			info = got
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_slots_ok:16384") {
				break
			}
			if time.Now().After(deadline) {
				cl.Close()
				c.t.Fatalf("cluster node %d (%s) not ok after %v: %v\n%s\n%s", i, s.Addr(), limit, err, info, s.logTail())
			}
			time.Sleep(50 * time.Millisecond) // sleep: the poll interval of a wait on CLUSTER INFO, which has no push of its own
		}
		cl.Close()
	}
}

// String names the nodes, for test logs.
func (c *Cluster) String() string { return fmt.Sprintf("cluster %v", c.Addrs()) }
