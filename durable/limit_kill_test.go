package durable_test

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/internal/redistest"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// The workload of TestConcurrencyLimitAfterProcessKill: one "Fan" instance
// schedules limitKillFan Steps at once under a concurrency limit of
// limitKillLimit on "Step".
const (
	limitKillFan   = 6
	limitKillLimit = 2
	// limitKillProbeTag tags the Probe activity, which only the parent's
	// runtime serves (the child's serves untagged work only).
	limitKillProbeTag = "probe"
	// limitKillDueGrace is U.DUE_GRACE (lua/lib_util.lua): a process that
	// dies leaves the due time it claimed (here its own locks' expiry)
	// unrun; the backup due loop runs this long after it
	// (docs/internals.md). So a killed worker's leases come back within
	// its lock timeout and this grace (they took the 10 s refresh of the
	// other loops before there was a backup).
	limitKillDueGrace = time.Second
	// limitKillMargin is how much later the leases may come back on a
	// loaded machine (a script, a wake-up and a fetch).
	limitKillMargin = 5 * time.Second
)

// limitKillRegistry is the recovery registry (Step) plus "Fan", which runs
// limitKillFan Steps at once, and "Probe", which runs one Probe activity
// tagged limitKillProbeTag.
func limitKillRegistry(h recoveryHooks) *durable.Registry {
	reg := recoveryRegistry(h)
	fanOut(reg, "Step", limitKillFan)
	reg.MustAddActivity("Probe", func(_ *durable.ActivityContext, in string) (string, error) { return in, nil })
	reg.MustAddOrchestration("Probe", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		return ctx.ScheduleActivity("Probe", in, durable.WithTag(limitKillProbeTag)).Get()
	})
	return reg
}

// TestConcurrencyLimitAfterProcessKill: a runtime in a child process holds
// the limitKillLimit leases a concurrency limit allows on "Step" (its third
// worker slot is refused a third) and is SIGKILLed. While it lives, this
// process's runtime, free workers and Steps queued, runs none: its fetch
// of a Probe queued after the Steps returns the Probe, so it saw the Steps
// and was refused them. Once the child is dead, its leases come back when
// its locks have expired (2 s) and a live due loop has run (the backup
// loop, 1 s after the expiry, when the dead process held the due loops'
// claim, as it usually does here: it runs the expiries of its own locks),
// plus a margin, and this runtime runs every Step,
// never more than the limit at once (a ledger of the Steps running, which
// releases one only when the limit's worth run and all the others are
// accounted for, started or queued, so a leak or an excess shows).
//
// Unlike TestRecoveryAfterProcessKill it runs on the shared server at
// $DUROXIDE_REDIS_URL, in a namespace of its own, and is skipped without it.
func TestConcurrencyLimitAfterProcessKill(t *testing.T) {
	t.Parallel()
	url := os.Getenv(durabletest.EnvRedisURL)
	if url == "" {
		t.Skip(durabletest.EnvRedisURL + " is not set: this test kills a process holding leases on a real Redis")
	}
	ctx := context.Background()
	keys := recoveryKeys{ns: "limitkill-" + uuid.NewString()}
	p, err := redisprovider.New(ctx, redisprovider.Options{URL: url, Namespace: keys.ns})
	if err != nil {
		t.Fatal(err)
	}
	ropts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(ropts)
	t.Cleanup(func() { // after the runtime's shutdown and the child's kill, registered later
		_ = p.Close()
		for _, prefix := range []string{p.Keys().Prefix(), "recovery:" + keys.ns + ":"} {
			if err := redistest.DropPrefix(context.Background(), rdb, prefix); err != nil {
				t.Logf("deleting %s: %v", prefix, err)
			}
		}
		_ = rdb.Close()
	})
	client := durable.NewClient(p)
	if err := client.SetLimit(ctx, duroxide.Limit{Name: "Step", Concurrency: limitKillLimit}); err != nil {
		t.Fatal(err)
	}

	child := startRecoveryChild(t, "limit", url, keys.ns)
	if err := client.StartOrchestration(ctx, "fan", "Fan", ""); err != nil {
		t.Fatal(err)
	}
	awaitHeldInRedis(t, rdb, keys, child, limitKillLimit)

	ledger := newLimitLedger(limitKillFan)
	hooks := recoveryHooks{holdActivity: func(ctx *durable.ActivityContext, _ string) { _ = ledger.hold(ctx) }}
	rt, err := durable.NewRuntime(p, limitKillRegistry(hooks), durable.Options{
		LongPollTimeout: 100 * time.Millisecond, WorkerConcurrency: 4,
		WorkerTagFilter: duroxide.DefaultAndTags(limitKillProbeTag), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdownRuntime(t, rt) })

	// One fetch script weighs every queue of the caller's filter and takes
	// the oldest item it may run: the Probe, queued after the Steps, is
	// what a fetch of this runtime returns only if no Step was allowed.
	if err := client.StartOrchestration(ctx, "probe", "Probe", "seen"); err != nil {
		t.Fatal(err)
	}
	if st, err := client.WaitForOrchestration(ctx, "probe", 30*time.Second); err != nil || st.Status != durable.StatusCompleted {
		t.Fatalf("probe: %v %v", st, err)
	}
	if n := ledger.started.Load(); n != 0 {
		t.Fatalf("this runtime started %d Steps while the child held the %d leases", n, limitKillLimit)
	}
	if held, err := rdb.LLen(ctx, keys.held()).Result(); err != nil || held != limitKillLimit {
		t.Fatalf("the child holds %d Steps (%v), want the limit, %d:\n%s", held, err, limitKillLimit, child.out.String())
	}
	if d, err := p.GetQueueDepths(ctx); err != nil || d.WorkerQueue != limitKillFan-limitKillLimit {
		t.Fatalf("worker queue %d (%v) while the child holds %d, want %d", d.WorkerQueue, err, limitKillLimit, limitKillFan-limitKillLimit)
	}

	child.kill(t)
	killed := time.Now()
	ledger.releaseUnderLimit(t, limitKillFan, limitKillLimit, p, func() {
		took, bound := time.Since(killed), recoveryChildLockTimeout+limitKillDueGrace+limitKillMargin
		t.Logf("the killed child's leases came back %v after the kill (lock timeout %v)", took, recoveryChildLockTimeout)
		if took > bound {
			t.Fatalf("the killed child's leases came back %v after the kill, past %v (its lock timeout %v, the backup due loop's grace %v, a margin)",
				took, bound, recoveryChildLockTimeout, limitKillDueGrace)
		}
	})
	if st, err := client.WaitForOrchestration(ctx, "fan", 30*time.Second); err != nil || st.Status != durable.StatusCompleted {
		t.Fatalf("fan: %v %v", st, err)
	}
	ledger.checkPeak(t, limitKillLimit)
	if n := ledger.started.Load(); n != limitKillFan {
		t.Fatalf("this runtime started %d Steps, want all %d (the killed child's among them)", n, limitKillFan)
	}
}
