// The Redis servers the cluster scenario runs on: Redis Clusters of N
// masters (no replicas) it starts from redis-server on free loopback ports
// in a temp dir and shuts down afterwards, or an existing cluster named by
// -cluster. Also the standalone server a run of self-hosted scenarios only
// uses for its machine facts.

package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServerBinary is the server the bench starts.
const redisServerBinary = "redis-server"

// server is one redis-server process the bench started.
type server struct {
	addr string
	cmd  *exec.Cmd
	done chan error // the process's exit
	dir  string     // removed by stop when set
}

// startServer runs redis-server on a free loopback port in dir: no
// persistence, in cluster mode when cluster is set (its bus port, port +
// 10000, is checked free too).
func startServer(ctx context.Context, dir string, cluster bool) (*server, error) {
	port, err := freePort(cluster)
	if err != nil {
		return nil, err
	}
	p := strconv.Itoa(port)
	args := []string{"--port", p, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--logfile", "redis-" + p + ".log", "--daemonize", "no"}
	if cluster {
		args = append(args, "--cluster-enabled", "yes", "--cluster-config-file", "nodes-"+p+".conf")
	}
	cmd := exec.Command(redisServerBinary, args...)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", redisServerBinary, err)
	}
	s := &server{addr: "127.0.0.1:" + p, cmd: cmd, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait() }()
	c := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := c.Ping(ctx).Err()
		if err == nil {
			return s, nil
		}
		select {
		case exit := <-s.done:
			return nil, fmt.Errorf("%s on port %s exited (%v); see %s", redisServerBinary, p, exit, filepath.Join(dir, "redis-"+p+".log"))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.stop()
			return nil, fmt.Errorf("%s on port %s does not answer PING: %w", redisServerBinary, p, err)
		}
	}
}

// stop shuts the server down (SHUTDOWN NOSAVE), killing it if it has not
// exited after 5 s.
func (s *server) stop() {
	c := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	_ = c.Shutdown(ctx).Err() // the connection closes under the reply
	cancel()
	c.Close()
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// freePort finds a loopback port nobody listens on (and, for a cluster
// node, whose bus port is free too).
func freePort(cluster bool) (int, error) {
	free := func(port int) bool {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			return false
		}
		l.Close()
		return true
	}
	for range 200 {
		port := 20000 + rand.IntN(30000)
		if free(port) && (!cluster || free(port+10000)) {
			return port, nil
		}
	}
	return 0, errors.New("no free loopback port found in 20000..49999")
}

// shard is one master of a cluster and the slots it serves.
type shard struct {
	addr   string
	ranges [][2]int // inclusive slot ranges
	admin  *redis.Client
}

// holds reports whether the shard serves slot.
func (s *shard) holds(slot int) bool {
	for _, r := range s.ranges {
		if slot >= r[0] && slot <= r[1] {
			return true
		}
	}
	return false
}

// slots is the shard's ranges as "0-5460,...".
func (s *shard) slots() string {
	parts := make([]string, len(s.ranges))
	for i, r := range s.ranges {
		parts[i] = fmt.Sprintf("%d-%d", r[0], r[1])
	}
	return strings.Join(parts, ",")
}

// cluster is a Redis Cluster the scenario measures.
type cluster struct {
	name    string // "3 masters" or "existing cluster (3 masters)"
	client  *redis.ClusterClient
	shards  []*shard
	servers []*server // started by the bench: stopped by close
	dir     string
}

// startCluster starts masters redis-servers in cluster mode, gives master i
// the slots [i*16384/masters, (i+1)*16384/masters) (the slices
// dxredis.PartitionTags aims at, so P a multiple of masters puts P/masters
// partitions on each), joins them and waits until every node reports
// cluster_state:ok with every master known.
func startCluster(ctx context.Context, e *env, masters int) (cl *cluster, err error) {
	if _, err := exec.LookPath(redisServerBinary); err != nil {
		return nil, fmt.Errorf("the cluster scenario starts its own clusters and needs %s on PATH (or -cluster host:port for an existing one): %w", redisServerBinary, err)
	}
	dir, err := os.MkdirTemp("", "duroxide-bench-cluster-")
	if err != nil {
		return nil, err
	}
	cl = &cluster{name: fmt.Sprintf("%d masters", masters), dir: dir}
	defer func() {
		if err != nil {
			cl.close()
		}
	}()
	for range masters {
		s, err := startServer(ctx, dir, true)
		if err != nil {
			return cl, err
		}
		cl.servers = append(cl.servers, s)
	}
	first := cl.servers[0].addr
	host, port0, _ := net.SplitHostPort(first)
	for i, s := range cl.servers {
		c := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
		lo, hi := i*clusterSlots/masters, (i+1)*clusterSlots/masters-1
		slots := make([]int, 0, hi-lo+1)
		for slot := lo; slot <= hi; slot++ {
			slots = append(slots, slot)
		}
		err := c.ClusterAddSlots(ctx, slots...).Err()
		if err == nil {
			// distinct epochs, as redis-cli --cluster create sets them: no
			// collision to resolve when the nodes meet
			err = c.Do(ctx, "cluster", "set-config-epoch", i+1).Err()
		}
		if err == nil && i > 0 {
			err = c.ClusterMeet(ctx, host, port0).Err()
		}
		c.Close()
		if err != nil {
			return cl, fmt.Errorf("forming the cluster at %s: %w", s.addr, err)
		}
	}
	if err := waitClusterOK(ctx, cl.servers, masters); err != nil {
		return cl, err
	}
	addrs := make([]string, len(cl.servers))
	for i, s := range cl.servers {
		addrs[i] = s.addr
	}
	return cl, cl.connect(ctx, e, addrs)
}

// clusterSlots is Redis Cluster's slot count.
const clusterSlots = 16384

// waitClusterOK waits until every node says cluster_state:ok and knows
// every master.
func waitClusterOK(ctx context.Context, servers []*server, masters int) error {
	deadline := time.Now().Add(60 * time.Second)
	for _, s := range servers {
		c := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
		for {
			info, err := c.ClusterInfo(ctx).Result()
			state, _ := infoField(info, "cluster_state")
			known, _ := infoField(info, "cluster_known_nodes")
			if err == nil && state == "ok" && known == strconv.Itoa(masters) {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				c.Close()
				return fmt.Errorf("cluster node %s not ready after 60 s: state %q, %s of %d nodes known, %v", s.addr, state, known, masters, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		c.Close()
	}
	return nil
}

// existingCluster connects to the cluster of seed addresses, leaving it
// running afterwards.
func existingCluster(ctx context.Context, e *env, seeds []string) (*cluster, error) {
	cl := &cluster{}
	if err := cl.connect(ctx, e, seeds); err != nil {
		cl.close()
		return nil, err
	}
	cl.name = fmt.Sprintf("existing cluster (%d masters)", len(cl.shards))
	return cl, nil
}

// connect opens the cluster client (the provider's recommended settings,
// counted by the run's hook) and an admin client per master, learned from
// CLUSTER SLOTS.
func (cl *cluster) connect(ctx context.Context, e *env, addrs []string) error {
	o := &redis.ClusterOptions{Addrs: addrs, MaxRetries: -1, ContextTimeoutEnabled: true}
	if e.opts.PoolSize > 0 {
		o.PoolSize = e.opts.PoolSize
	}
	cl.client = redis.NewClusterClient(o)
	cl.client.AddHook(e.calls)
	ranges, err := cl.client.ClusterSlots(ctx).Result()
	if err != nil {
		return fmt.Errorf("CLUSTER SLOTS at %s: %w", strings.Join(addrs, ","), err)
	}
	byAddr := map[string]*shard{}
	for _, r := range ranges {
		if len(r.Nodes) == 0 {
			continue
		}
		addr := r.Nodes[0].Addr
		s := byAddr[addr]
		if s == nil {
			s = &shard{addr: addr, admin: redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 2})}
			byAddr[addr] = s
			cl.shards = append(cl.shards, s)
		}
		s.ranges = append(s.ranges, [2]int{int(r.Start), int(r.End)})
	}
	for _, s := range cl.shards {
		slices.SortFunc(s.ranges, func(a, b [2]int) int { return a[0] - b[0] })
	}
	slices.SortFunc(cl.shards, func(a, b *shard) int { return a.ranges[0][0] - b.ranges[0][0] })
	if len(cl.shards) == 0 {
		return fmt.Errorf("the cluster at %s serves no slots", strings.Join(addrs, ","))
	}
	return nil
}

// shardOf returns the index of the shard serving slot (-1: none).
func (cl *cluster) shardOf(slot int) int {
	return slices.IndexFunc(cl.shards, func(s *shard) bool { return s.holds(slot) })
}

// admins is every master's admin client, in shard order.
func (cl *cluster) admins() []*redis.Client {
	out := make([]*redis.Client, len(cl.shards))
	for i, s := range cl.shards {
		out[i] = s.admin
	}
	return out
}

// close closes the clients, stops the servers the bench started and
// removes their directory.
func (cl *cluster) close() {
	if cl.client != nil {
		cl.client.Close()
	}
	for _, s := range cl.shards {
		s.admin.Close()
	}
	for _, s := range cl.servers {
		s.stop()
	}
	if cl.dir != "" {
		os.RemoveAll(cl.dir)
	}
}
