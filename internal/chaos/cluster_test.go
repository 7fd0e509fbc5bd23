package chaos

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	dxredis "github.com/duroxide-go/duroxide-redis"
	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/internal/redistest"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// Workload of the cluster test, run by the durable runtime. A parent (input
// "gated" or "free") runs two activities, then a child with an explicit id
// (so it lives in the partition of that id, usually another one than the
// parent's), then starts a detached peer with an explicit id and waits for
// the "pong" event the peer's activity raises back to it. A gated parent
// then records that it waits, dequeues "go" (which the test sends just
// before it kills a primary), runs one more activity and a second child,
// so its second half runs across the crash. Every result is a function of
// the instance ids, so the test knows each output.
const (
	xParent   = "xparent"
	xChild    = "xchild"
	xPeer     = "xpeer"
	xWork     = "xwork"
	xRaise    = "xraise"
	xPhaseKey = "phase"
)

// clusterRegistry registers the workload.
func clusterRegistry() *durable.Registry {
	reg := durable.NewRegistry()
	reg.MustAddActivity(xWork, func(_ *durable.ActivityContext, in string) (string, error) { return "done " + in, nil })
	reg.MustAddActivity(xRaise, func(ctx *durable.ActivityContext, parent string) (string, error) {
		// the parent's shard may be down: the event must get there
		// anyway, so the activity tries until the runtime gives up on it
		for {
			// named, so that the activity run again (its worker lost it
			// under the storm) raises it once
			err := ctx.Client().RaiseEvent(ctx, parent, "pong", "pong from peer of "+parent,
				durable.WithRequestID(fmt.Sprintf("%s/%d", ctx.InstanceID(), ctx.ActivityID())))
			if err == nil || ctx.Err() != nil {
				return "raised", err
			}
			sleep(ctx, 50*time.Millisecond)
		}
	})
	reg.MustAddOrchestration(xChild, func(ctx *durable.OrchestrationContext, in string) (string, error) {
		r, err := ctx.ScheduleActivity(xWork, in).Get()
		return "child(" + r + ")", err
	})
	reg.MustAddOrchestration(xPeer, func(ctx *durable.OrchestrationContext, parent string) (string, error) {
		_, err := ctx.ScheduleActivity(xRaise, parent).Get()
		return "peer of " + parent, err
	})
	reg.MustAddOrchestration(xParent, func(ctx *durable.OrchestrationContext, in string) (string, error) {
		id := ctx.InstanceID()
		a, b := ctx.ScheduleActivity(xWork, id+"/a"), ctx.ScheduleActivity(xWork, id+"/b")
		ctx.Join(a, b)
		var out []string
		for _, f := range []durable.Future[string]{a, b} {
			r, err := f.Get()
			if err != nil {
				return "", err
			}
			out = append(out, r)
		}
		c1, err := ctx.ScheduleSubOrchestration(xChild, id+"/c1", durable.WithInstanceID(id+"-c1")).Get()
		if err != nil {
			return "", err
		}
		ctx.StartOrchestration(id+"-peer", xPeer, id)
		pong, err := ctx.WaitForEvent("pong").Get()
		if err != nil {
			return "", err
		}
		out = append(out, c1, pong)
		if in == "gated" {
			ctx.SetValue(xPhaseKey, "waiting")
			g, err := ctx.Dequeue("go").Get()
			if err != nil {
				return "", err
			}
			d, err := ctx.ScheduleActivity(xWork, id+"/d").Get()
			if err != nil {
				return "", err
			}
			c2, err := ctx.ScheduleSubOrchestration(xChild, id+"/c2", durable.WithInstanceID(id+"-c2")).Get()
			if err != nil {
				return "", err
			}
			out = append(out, g, d, c2)
		}
		return strings.Join(out, " | "), nil
	})
	return reg
}

// expected returns every instance a parent makes (itself included) with
// the output it must complete with.
func expected(parent string, gated bool) map[string]string {
	child := func(in string) string { return "child(done " + in + ")" }
	out := []string{"done " + parent + "/a", "done " + parent + "/b", child(parent + "/c1"), "pong from peer of " + parent}
	want := map[string]string{parent + "-c1": child(parent + "/c1"), parent + "-peer": "peer of " + parent}
	if gated {
		out = append(out, "go "+parent, "done "+parent+"/d", child(parent+"/c2"))
		want[parent+"-c2"] = child(parent + "/c2")
	}
	want[parent] = strings.Join(out, " | ")
	return want
}

// TestClusterShardPrimaryKilled runs the workload over a namespace of 12
// partitions on a Redis Cluster of three primaries (AOF, appendfsync
// always), and SIGKILLs one primary while it runs: after the free parents
// completed, right after the gated ones were let go (their second halves,
// children and relayed messages in flight), while a third wave of parents
// is being started. The primary is started again on its port and data
// (the AOF replays; its nodes.conf makes it the same node) and the
// workload must finish with nothing lost or doubled: every instance
// completes once with its output, every activity and child has exactly one
// result in history, and the outboxes and queues end empty.
func TestClusterShardPrimaryKilled(t *testing.T) {
	// appendfsync always (redistest's default), not everysec: with
	// everysec Redis postpones its AOF write by up to 2 s while a
	// background fsync is still running, and replies meanwhile, so a
	// SIGKILL of the process can lose writes it acknowledged (seen here:
	// ~30 acknowledged INCRs per key lost on Redis 7.0.15 under disk load;
	// with always, none). What the relay read before the kill then lives
	// on in other shards while its source forgot it (a child completes
	// for a parent whose history lost the turn that started it), and no
	// provider can repair that. The other shards keep serving meanwhile.
	cluster := redistest.StartCluster(t, 3, "--cluster-require-full-coverage", "no")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pp, err := redisprovider.New(ctx, redisprovider.Options{Client: cluster.Client(), Namespace: "xshard", Partitions: 12})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pp.Close() })
	rt, err := durable.NewRuntime(pp, clusterRegistry(), durable.Options{
		LongPollTimeout: 200 * time.Millisecond, OrchestrationConcurrency: 4, WorkerConcurrency: 4,
		OrchestratorLockTimeout: 5 * time.Second, WorkerLockTimeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		_ = rt.Shutdown(sctx)
	})
	client := rt.Client()
	want := map[string]string{}
	var free, gated, late []string
	for i := 0; i < 12; i++ {
		free = append(free, fmt.Sprintf("free-%02d", i))
		gated = append(gated, fmt.Sprintf("gated-%02d", i))
	}
	for i := 0; i < 8; i++ {
		late = append(late, fmt.Sprintf("late-%02d", i))
	}
	storm := clientKillStorm(ctx, cluster, 20*time.Millisecond)
	var startRetries atomic.Int64
	start := func(ids []string, input string) error {
		for _, id := range ids {
			for inst, out := range expected(id, input == "gated") {
				want[inst] = out
			}
			// the client repeats a start whose reply was lost under its
			// request id until the context ends; one that failed all that
			// time may still have been applied, which the next try learns
			for {
				err := client.StartOrchestration(ctx, id, xParent, input, durable.UseExisting())
				if err == nil {
					break
				}
				if ctx.Err() != nil {
					return fmt.Errorf("starting %s: %w", id, err)
				}
				startRetries.Add(1)
				sleep(ctx, 50*time.Millisecond)
			}
		}
		return nil
	}
	if err := start(free, "free"); err != nil {
		t.Fatal(err)
	}
	if err := start(gated, "gated"); err != nil {
		t.Fatal(err)
	}
	// every free parent completed and every gated one waits for "go"
	for _, id := range free {
		waitDone(t, ctx, client, pp, id, want[id])
	}
	for _, id := range gated {
		waitFor(t, ctx, id+" to wait for go", func() bool {
			v, ok, err := client.KVValue(ctx, id, xPhaseKey)
			return err == nil && ok && v == "waiting"
		})
	}
	for _, id := range gated {
		if err := client.EnqueueEvent(ctx, id, "go", "go "+id); err != nil {
			t.Fatal(err)
		}
	}
	victim := cluster.Nodes[1]
	admin := cluster.Client()
	onVictim := partitionsOn(t, ctx, admin, pp, victim.Addr())
	// the victim must hold work of every kind the test cares about: a
	// completed instance (data that must survive the AOF replay) and a
	// gated parent (its "go", enqueued just before the kill, too)
	onV := func(ids []string) (n int) {
		for _, id := range ids {
			if slices.Contains(onVictim, pp.PartitionOf(id)) {
				n++
			}
		}
		return n
	}
	if onV(free) == 0 || onV(gated) == 0 {
		t.Fatalf("partitions %v on the victim hold %d free and %d gated parents: pick another victim", onVictim, onV(free), onV(gated))
	}
	killed := time.Now()
	victim.Crash()
	t.Logf("SIGKILLed %s (partitions %v, %d completed and %d gated parents there) after %d parents completed, right after %d were let go",
		victim.Addr(), onVictim, onV(free), onV(gated), len(free), len(gated))
	var wg sync.WaitGroup
	var lateErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		lateErr = start(late, "free")
	}()
	victim.Restart()
	victim.WaitLoaded()
	cluster.WaitOK(30 * time.Second)
	t.Logf("cluster ok again %v after the kill", time.Since(killed).Round(time.Millisecond))
	wg.Wait()
	if lateErr != nil {
		t.Fatal(lateErr)
	}
	t.Logf("%d late parents started, after %d failed attempts during the outage", len(late), startRetries.Load())
	for id, out := range want {
		waitDone(t, ctx, client, pp, id, out)
	}
	t.Logf("%d rounds of CLIENT KILL on every node during the run", storm())
	histories := verifyCluster(t, ctx, pp, admin, want)
	// the kill must have hit work in flight: instances that started
	// before it and completed after it, some of them on the victim
	spanning, onVictimSpanning := 0, 0
	for id, h := range histories {
		if len(h) > 0 && h[0].TimestampMs < uint64(killed.UnixMilli()) && h[len(h)-1].TimestampMs > uint64(killed.UnixMilli()) {
			spanning++
			if slices.Contains(onVictim, pp.PartitionOf(id)) {
				onVictimSpanning++
			}
		}
	}
	t.Logf("%d instances ran across the kill, %d of them on the killed primary", spanning, onVictimSpanning)
	if onVictimSpanning == 0 {
		t.Error("no instance of the killed primary ran across the kill: it hit no work in flight")
	}
}

// clientKillStorm kills every client connection of every node (CLIENT KILL
// TYPE normal, the blocked long polls included) every interval until ctx
// ends or the returned stop is called, which returns how many rounds ran.
// Commands die in flight, before or after a node ran them: a client that
// re-sends one whose reply was lost applies it twice.
func clientKillStorm(ctx context.Context, cluster *redistest.Cluster, interval time.Duration) (stop func() int) {
	ctx, cancel := context.WithCancel(ctx)
	var rounds atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			for _, n := range cluster.Nodes {
				// a node that is down (the primary killed) is skipped
				_ = n.Client().ClientKillByFilter(ctx, "TYPE", "normal").Err()
			}
			rounds.Add(1)
		}
	}()
	return func() int {
		cancel()
		<-done
		return int(rounds.Load())
	}
}

// partitionsOn lists the partitions of pp whose slot addr serves.
func partitionsOn(t *testing.T, ctx context.Context, rdb *redis.ClusterClient, pp *redisprovider.Provider, addr string) []int {
	t.Helper()
	var slots []redis.ClusterSlot
	waitFor(t, ctx, "the cluster's slots", func() bool { // connections are being killed
		var err error
		slots, err = rdb.ClusterSlots(ctx).Result()
		return err == nil
	})
	var on []int
	for i := 0; i < pp.Partitions(); i++ {
		slot := int(dxredis.Slot(pp.PartitionKeys(i).Outbox()))
		for _, r := range slots {
			if slot >= int(r.Start) && slot <= int(r.End) && len(r.Nodes) > 0 && r.Nodes[0].Addr == addr {
				on = append(on, i)
			}
		}
	}
	if len(on) == 0 {
		t.Fatalf("no partition lives on %s: the test would kill nothing it uses", addr)
	}
	return on
}

// waitDone waits until instance completes (at most the test's deadline)
// and checks its output.
func waitDone(t *testing.T, ctx context.Context, c *durable.Client, pp *redisprovider.Provider, instance, want string) {
	t.Helper()
	left := time.Until(deadlineOf(ctx))
	st, err := c.WaitForOrchestration(ctx, instance, left)
	if err == nil && st.Status == durable.StatusCompleted && st.Output == want {
		return
	}
	t.Log(describeInstance(pp, instance, 1))
	if err != nil {
		t.Fatalf("%s did not complete: %v", instance, err)
	}
	t.Fatalf("%s ended %v with output %q (failure %q), want Completed with %q", instance, st.Status, st.Output, st.FailureMessage(), want)
}

// describeInstance renders instance's stored history, and those of the
// instances it started (down to depth more levels), to diagnose a failure.
func describeInstance(pp *redisprovider.Provider, instance string, depth int) string {
	var b strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h, err := pp.Read(ctx, instance)
	fmt.Fprintf(&b, "history of %s (partition %d, %d events, read error %v):\n", instance, pp.PartitionOf(instance), len(h), err)
	var started []string
	for _, e := range h {
		j, _ := e.MarshalJSON()
		fmt.Fprintf(&b, "  %s\n", j)
		switch k := e.Kind.(type) {
		case duroxide.SubOrchestrationScheduledEvent:
			started = append(started, k.Instance)
		case duroxide.OrchestrationChainedEvent:
			started = append(started, k.Instance)
		}
	}
	if depth > 0 {
		for _, id := range started {
			b.WriteString(describeInstance(pp, id, depth-1))
		}
	}
	return b.String()
}

func deadlineOf(ctx context.Context) time.Time {
	d, ok := ctx.Deadline()
	if !ok {
		return time.Now().Add(time.Minute)
	}
	return d
}

// verifyCluster checks every instance's history (one start, one
// completion as the last event, exactly one result per activity and per
// child) and that every outbox and queue ends empty. It returns the
// histories.
func verifyCluster(t *testing.T, ctx context.Context, pp *redisprovider.Provider, rdb *redis.ClusterClient, want map[string]string) map[string][]duroxide.Event {
	t.Helper()
	histories := map[string][]duroxide.Event{}
	for id := range want {
		h, err := pp.Read(ctx, id)
		if err != nil {
			t.Errorf("reading %s: %v", id, err)
			continue
		}
		histories[id] = h
		for _, v := range checkClusterHistory(h) {
			t.Errorf("%s: %s", id, v)
		}
	}
	waitFor(t, ctx, "every outbox to be empty", func() bool {
		for i := 0; i < pp.Partitions(); i++ {
			if n, err := rdb.ZCard(ctx, pp.PartitionKeys(i).Outbox()).Result(); err != nil || n != 0 {
				return false
			}
		}
		return true
	})
	waitFor(t, ctx, "every queue to be empty", func() bool {
		d, err := pp.GetQueueDepths(ctx)
		return err == nil && d == (duroxide.QueueDepths{})
	})
	return histories
}

// checkClusterHistory checks one history of the workload: contiguous ids,
// one start first and one completion last, exactly one result for each
// scheduled activity and child, and no external event or queue message
// twice (the workload sends each once, with data that names its instance).
func checkClusterHistory(h []duroxide.Event) []string {
	var bad []string
	if len(h) == 0 {
		return []string{"no history"}
	}
	seen := map[string]int{}
	for _, e := range h {
		switch k := e.Kind.(type) {
		case duroxide.ExternalEventEvent:
			seen["external event "+k.Name+" "+k.Data]++
		case duroxide.QueueEventDeliveredEvent:
			seen[fmt.Sprintf("queue message %+v", k)]++
		}
	}
	for what, n := range seen {
		if n > 1 {
			bad = append(bad, fmt.Sprintf("%s is in history %d times (sent once)", what, n))
		}
	}
	scheduled := map[uint64]string{}
	results := map[uint64]int{}
	completions := 0
	for i, e := range h {
		if e.EventID != uint64(i+1) {
			bad = append(bad, fmt.Sprintf("event at position %d has id %d", i, e.EventID))
		}
		switch e.Kind.(type) {
		case duroxide.ActivityScheduledEvent, duroxide.SubOrchestrationScheduledEvent:
			scheduled[e.EventID] = e.Kind.EventType()
		case duroxide.ActivityCompletedEvent, duroxide.SubOrchestrationCompletedEvent:
			if e.SourceEventID == nil {
				bad = append(bad, fmt.Sprintf("event %d: %s without source", e.EventID, e.Kind.EventType()))
				continue
			}
			results[*e.SourceEventID]++
		case duroxide.ActivityFailedEvent, duroxide.SubOrchestrationFailedEvent, duroxide.OrchestrationFailedEvent:
			bad = append(bad, fmt.Sprintf("event %d: %s", e.EventID, e.Kind.EventType()))
		case duroxide.OrchestrationStartedEvent:
			if i != 0 {
				bad = append(bad, fmt.Sprintf("event %d starts the orchestration again", e.EventID))
			}
		case duroxide.OrchestrationCompletedEvent:
			completions++
			if i != len(h)-1 {
				bad = append(bad, fmt.Sprintf("event %d completes the orchestration but is not the last", e.EventID))
			}
		}
	}
	if _, ok := h[0].Kind.(duroxide.OrchestrationStartedEvent); !ok {
		bad = append(bad, "first event is "+h[0].Kind.EventType())
	}
	if completions != 1 {
		bad = append(bad, fmt.Sprintf("%d completions (want 1)", completions))
	}
	for id, kind := range scheduled {
		if results[id] != 1 {
			bad = append(bad, fmt.Sprintf("%s %d has %d results (want 1)", kind, id, results[id]))
		}
	}
	for id := range results {
		if _, ok := scheduled[id]; !ok {
			bad = append(bad, fmt.Sprintf("a result for %d, which schedules nothing", id))
		}
	}
	return bad
}
