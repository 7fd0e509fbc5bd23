package redisprovider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	dxredis "github.com/duroxide-go/duroxide-redis"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/internal/redistest"
)

// A marker the waiter popped after its last fetcher left is put back with
// the expiry every marker has: BZPOPMIN deleted the key, and a marker
// recreated without one would outlive the class it wakes.
func TestRearmedMarkerExpires(t *testing.T) {
	m, p := newMiniProvider(t)
	key := p.Keys().WorkWake("d")
	p.rearm(key)
	if !m.Exists(key) {
		t.Fatalf("marker %s not put back", key)
	}
	if ttl := m.TTL(key); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("marker %s put back with TTL %v, want (0, 1m]", key, ttl)
	}
	// a key outside the namespace is refused, not written
	p.rearm("elsewhere")
	if m.Exists("elsewhere") {
		t.Fatal("rearm wrote a key outside the namespace")
	}
}

// workerKind is one kind of fetcher: its session routing and tag filter.
type workerKind struct {
	session *duroxide.SessionFetchConfig
	tags    duroxide.TagFilter
}

func sessionOwner(owner string) *duroxide.SessionFetchConfig {
	return &duroxide.SessionFetchConfig{OwnerID: owner, LockTimeout: time.Minute}
}

// Fetchers of different classes wait in different waiters that share a wake
// key (the plain default queue). Two plain items enqueued while both sleep
// must reach both: a marker popped by one waiter while its fetcher was busy
// taking the first item must not be dropped when that fetcher leaves. The
// poll timeout is below the 10 s rerun, so a lost wake-up shows as a fetcher
// that returns nothing.
func TestFetchersOfDifferentClassesBothWake(t *testing.T) {
	const rounds = 40
	cases := map[string][2]workerKind{
		"session owners": {
			{sessionOwner("o1"), duroxide.DefaultOnly()},
			{sessionOwner("o2"), duroxide.DefaultOnly()},
		},
		"tag filters": {
			{nil, duroxide.DefaultOnly()},
			{nil, duroxide.DefaultAndTags("x")},
		},
	}
	for name, classes := range cases {
		t.Run(name, func(t *testing.T) {
			for round := 0; round < rounds; round++ {
				_, p := newMiniProvider(t)
				if got := wakeBoth(t, p, classes); got != 2 {
					t.Fatalf("round %d: %d of 2 fetchers got an item", round, got)
				}
			}
		})
	}
}

// wakeBoth starts one long poll of p per class, enqueues two plain items once both
// sleep and returns how many of the polls got an item.
func wakeBoth(t *testing.T, p *partition, classes [2]workerKind) int {
	t.Helper()
	ctx := context.Background()
	got := make(chan *duroxide.LockedWorkItem, len(classes))
	var wg sync.WaitGroup
	for _, c := range classes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			it, err := p.FetchWorkItem(ctx, time.Minute, 5*time.Second, c.session, c.tags)
			if err != nil {
				t.Error(err)
			}
			got <- it
		}()
	}
	waitSleeping(t, p, len(classes))
	for id := uint64(1); id <= 2; id++ {
		act := duroxide.ActivityExecute{Instance: "i", ExecutionID: 1, ID: id, Name: "a", Input: "x"}
		if err := p.EnqueueForWorker(ctx, act); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(got)
	n := 0
	for it := range got {
		if it != nil {
			n++
		}
	}
	return n
}

// waitSleeping returns once n callers of p wait for work while their
// classes' pollers are clean and blocked on, so work put after it must reach
// them through wake-up markers.
func waitSleeping(t *testing.T, p *partition, n int) {
	t.Helper()
	waitPollers(t, p, fmt.Sprintf("%d sleeping fetchers", n), func() bool { return sleepingFetchers(p) == n })
}

// waitPollers returns once ok holds, checking it at each change of the
// state of p's pollers and callers (their pollSet's bell); it fails the
// test, naming what, after 30 s.
func waitPollers(t *testing.T, p *partition, what string, ok func() bool) {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		changed := p.set.bell.wait()
		if ok() {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("waited 30 s for %s", what)
		}
	}
}

// demandsOf returns the demands of p's fetch classes.
func demandsOf(p *partition) []*demand { return p.set.demands() }

// sleepingFetchers counts the callers of p waiting for work whose class's
// poller sleeps.
func sleepingFetchers(p *partition) int {
	n := 0
	for _, d := range demandsOf(p) {
		if d.pollers[p.part].asleep() {
			n += d.waitingCount()
		}
	}
	return n
}

// afterHook is a go-redis hook that calls itself with each single command
// (not pipelines) and its error once the command has returned.
type afterHook func(cmd redis.Cmder, err error)

func (afterHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (afterHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h afterHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h(cmd, err)
		return err
	}
}

// scriptCounter is a go-redis hook that counts the scripts its clients run
// (EVALSHA, EVAL or FCALL, whichever the provider uses), or with sha set,
// the EVALSHA calls of that one script.
type scriptCounter struct {
	sha string
	// skip, when set, leaves out the calls with an argument equal to it
	skip string
	n    atomic.Int64
	// hit, when set, receives a signal per call counted (dropped when full)
	hit chan struct{}
}

func (c *scriptCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *scriptCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if c.counts(cmd) {
			c.n.Add(1)
			if c.hit != nil {
				select {
				case c.hit <- struct{}{}:
				default:
				}
			}
		}
		return next(ctx, cmd)
	}
}

func (c *scriptCounter) counts(cmd redis.Cmder) bool {
	if c.skip != "" && slices.Contains(cmd.Args(), any(c.skip)) {
		return false
	}
	if c.sha != "" {
		a := cmd.Args()
		return len(a) > 1 && cmd.Name() == "evalsha" && a[1] == c.sha
	}
	switch cmd.Name() {
	case "evalsha", "eval", "fcall":
		return true
	}
	return false
}

func (c *scriptCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// testServers is miniredis, plus the Redis at DUROXIDE_REDIS_URL when set:
// client options for each, by name.
func testServers(t *testing.T) map[string]*redis.Options {
	t.Helper()
	servers := map[string]*redis.Options{"miniredis": {Addr: miniredis.RunT(t).Addr()}}
	if url := os.Getenv("DUROXIDE_REDIS_URL"); url != "" {
		o, err := redis.ParseURL(url)
		if err != nil {
			t.Fatal(err)
		}
		servers["redis"] = o
	}
	for _, o := range servers {
		o.MaxRetries, o.ContextTimeoutEnabled = -1, true
	}
	return servers
}

// A crowd of idle processes must not multiply the fetches that due times
// cause. 50 providers, each with its own clients (a process of its own),
// park an orchestration fetcher and a session-aware worker fetcher each.
// Then instances become visible one after another (delayed enqueues), a due
// time each. One due loop run per due time is all it takes (it makes the
// instance ready, and whoever is woken takes it): if every process's loop,
// or every parked fetcher, ran at every due time it would be 50 scripts or
// more per instance here, against at most 5 allowed. The crowd is woken
// once after the enqueues, as its periodic refresh would.
//
// Not parallel, and 50 processes rather than hundreds: 400 fetchers and
// their connections on one miniredis, under the race detector on a loaded
// 2-core machine, made its calls time out.
func TestIdleCrowdDoesNotMultiplyDueTimeFetches(t *testing.T) {
	for name, opts := range testServers(t) {
		t.Run(name, func(t *testing.T) { testIdleCrowd(t, opts) })
	}
}

func testIdleCrowd(t *testing.T, opts *redis.Options) {
	const (
		crowd    = 50
		items    = 20
		first    = 5 * time.Second       // delay of the first instance: the crowd settles first; under the provider's periodic refresh, which would add a fetch per process to the count
		spacing  = 25 * time.Millisecond // between due times
		perItem  = 5                     // scripts per instance allowed, everything included
		lateness = time.Second           // due time to fetch, allowed
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := "crowd-" + uuid.NewString()
	var scripts scriptCounter
	fetched := make(chan string, items)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	providers := make([]*partition, crowd)
	for i := range providers {
		o := *opts
		rdb := redis.NewClient(&o)
		rdb.AddHook(&scripts)
		p, err := newUnloaded(Options{Client: rdb, Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			err = p.loadScripts(ctx, false)
		} else { // loaded already: what every process does once at start costs the test no time
			p.scripts, p.funcs = providers[0].scripts, providers[0].funcs
		}
		if err != nil {
			t.Fatal(err)
		}
		providers[i] = p
		t.Cleanup(func() { p.Close(); rdb.Close() })
		owner := sessionOwner(fmt.Sprint("crowd-", i))
		wg.Add(2)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				it, err := p.FetchOrchestrationItem(ctx, time.Hour, 30*time.Second, nil)
				if it != nil {
					fetched <- it.Instance // held, never acked: each instance is fetched once
				} else if err != nil && ctx.Err() == nil {
					t.Error(err)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if it, err := p.FetchWorkItem(ctx, time.Hour, 30*time.Second, owner, duroxide.DefaultOnly()); it != nil || (err != nil && ctx.Err() == nil) {
					t.Errorf("idle worker fetched %v, %v", it, err)
					return
				}
			}
		}()
	}
	t.Cleanup(func() {
		_ = redistest.DropPrefix(context.Background(), providers[0].rdb, providers[0].Keys().Prefix())
	})
	for _, p := range providers {
		waitSleeping(t, p, 2)
	}
	due := make(map[string]time.Time, items)
	start := time.Now()
	for i := range items {
		id := fmt.Sprint("due-", i)
		delay := first + time.Duration(i)*spacing
		due[id] = start.Add(delay)
		if err := providers[0].EnqueueForOrchestrator(ctx, startItem(id), delay); err != nil {
			t.Fatal(err)
		}
	}
	// every fetcher runs its script once, as at its refresh, and learns the
	// due times
	for _, p := range providers {
		refreshAll(p)
	}
	for _, p := range providers {
		waitSettled(t, p)
	}
	before := scripts.n.Load()
	if len(fetched) > 0 || time.Now().After(start.Add(first)) {
		t.Fatalf("the crowd took more than %v to settle: the count would miss due times", first)
	}
	var worst time.Duration
	for range items {
		select {
		case id := <-fetched:
			worst = max(worst, time.Since(due[id]))
		case <-time.After(first + items*spacing + 10*time.Second):
			t.Fatal("the instances were not all fetched")
		}
	}
	ran := scripts.n.Load() - before
	t.Logf("%d scripts for %d due instances among %d idle processes (%.1f each), fetched at most %v after due",
		ran, items, crowd, float64(ran)/items, worst)
	if ran > perItem*items {
		t.Errorf("%d scripts for %d instances, want at most %d each", ran, items, perItem)
	}
	if worst > lateness {
		t.Errorf("an instance was fetched %v after its due time, want under %v", worst, lateness)
	}
}

// startItem starts instance id.
func startItem(id string) duroxide.StartOrchestration {
	return duroxide.StartOrchestration{Instance: id, Orchestration: "O", Input: `""`, ExecutionID: duroxide.InitialExecutionID}
}

// refreshAll runs every poller of p, as its refresh does.
func refreshAll(p *partition) { p.hub.rouse() }

// waitSettled returns once every poller of p sleeps with a caller waiting:
// each has recorded an empty fetch since its last wake-up.
func waitSettled(t *testing.T, p *partition) {
	t.Helper()
	settled := func() bool {
		for _, d := range demandsOf(p) {
			if !d.pollers[p.part].asleep() || !d.hasWaiting(p.part) {
				return false
			}
		}
		return true
	}
	waitPollers(t, p, "the fetchers to settle", settled)
}

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written bell // rings at every write
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	defer s.written.ring()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// waitFor returns once the buffer holds sub, or false after wait.
func (s *syncBuffer) waitFor(sub string, wait time.Duration) bool {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		written := s.written.wait()
		if strings.Contains(s.String(), sub) {
			return true
		}
		select {
		case <-written:
		case <-deadline.C:
			return false
		}
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A long poll that gets no connection from the blocking pool says so: its
// callers would otherwise wait for unannounced work in silence. A process
// parks one connection per partition; here another call holds the pool's
// only one.
func TestWaiterWithoutConnectionWarns(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true, PoolTimeout: 50 * time.Millisecond})
	defer rdb.Close()
	var log syncBuffer
	p, err := openPartition(context.Background(), Options{Client: rdb, BlockingPoolSize: 1, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	holding := make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		close(holding)
		_ = p.blocking.Do(ctx, "BLPOP", "held", 2).Err() // returns when its block ends, not at cancel
	}()
	<-holding
	for st := p.blocking.PoolStats(); st.TotalConns-st.IdleConns < 1; st = p.blocking.PoolStats() {
		time.Sleep(time.Millisecond) // sleep: the poll interval of a wait on the pool's stats until BLPOP has the connection
	}
	go func() {
		defer wg.Done()
		_, _ = p.FetchOrchestrationItem(ctx, time.Minute, time.Minute, nil)
	}()
	if !log.waitFor("BlockingPoolSize", 5*time.Second) {
		t.Fatalf("no warning about the blocking pool; log: %q", log.String())
	}
}

// The waiter reads an empty fetch's rerun time below refresh as a claimed
// due time: refresh must be the scripts' U.REFRESH.
func TestRefreshMatchesTheScripts(t *testing.T) {
	src, err := dxredis.Script("fetch_work_item")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("U.REFRESH = %d\n", refresh.Milliseconds())
	if !strings.Contains(src, want) {
		t.Fatalf("lua/lib_util.lua does not set %q", want)
	}
}

// rearmBundle is a provider on miniredis whose rearm_wake calls are
// counted, with an orchestration class whose poller has run once and found
// nothing, and no caller waiting.
type rearmBundle struct {
	m      *miniredis.Miniredis
	p      *partition
	rearms *scriptCounter
	ctx    context.Context
}

func newRearmBundle(t *testing.T) *rearmBundle {
	t.Helper()
	m := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
	t.Cleanup(func() { client.Close() })
	rearms := &scriptCounter{hit: make(chan struct{}, 1)}
	client.AddHook(rearms)
	ctx := context.Background()
	p, err := openPartition(ctx, Options{Client: client, Namespace: "rearm"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	rearms.sha = p.scripts[scriptRearmWake].Hash()
	rearms.skip = p.hub.ctl // the blocker's interrupts: not a marker put back
	if item, err := p.FetchOrchestrationItem(ctx, time.Minute, 20*time.Millisecond, nil); item != nil || err != nil {
		t.Fatalf("fetch on an empty namespace: %v, %v", item, err)
	}
	waitPollers(t, p, "the class's poller to sleep", func() bool {
		ds := demandsOf(p)
		return len(ds) == 1 && ds[0].pollers[0].asleep()
	})
	return &rearmBundle{m: m, p: p, rearms: rearms, ctx: ctx}
}

// A marker popped for a class no caller waits for (every slot is busy) goes
// back to Redis after its hold, for a fetcher of another process, and the
// class's poller leaves the blocked set, so it is not popped here again; the
// next caller runs the script and takes the work.
func TestMarkerOfAClassWithoutCallersGoesBack(t *testing.T) {
	t.Parallel()
	b := newRearmBundle(t)
	if err := b.p.EnqueueForOrchestrator(b.ctx, startItem("x"), 0); err != nil {
		t.Fatal(err)
	}
	pl := demandsOf(b.p)[0].pollers[0]
	select {
	case <-b.rearms.hit:
	case <-time.After(10 * time.Second):
		t.Fatal("the marker popped for a class without callers never went back")
	}
	// the hook signals as the call is sent: the marker is back once it returns
	waitPollers(t, b.p, "the marker back in Redis", func() bool { return b.m.Exists(pl.spec.keys[0]) })
	b.p.hub.mu.Lock()
	dirty, watched := pl.dirty, pl.watched()
	b.p.hub.mu.Unlock()
	if !dirty || watched {
		t.Fatalf("after the marker went back: dirty %v, blocked on %v; want true, false", dirty, watched)
	}
	// the blocker's call in flight when it went back may pop it once more;
	// its next call leaves the key out
	if n := b.rearms.n.Load(); n > 2 {
		t.Fatalf("%d rearm_wake calls, want at most 2: the marker keeps being popped here", n)
	}
	item, err := b.p.FetchOrchestrationItem(b.ctx, time.Minute, 10*time.Second, nil)
	if err != nil || item == nil || item.Instance != "x" {
		t.Fatalf("the next caller: %v, %v; want x", item, err)
	}
}

// A marker popped while every caller of its class is busy is held for a
// moment: the caller back from its work within it runs the script and
// takes the work, and the marker never goes back to Redis.
func TestMarkerIsHeldForACallerBackSoon(t *testing.T) {
	t.Parallel()
	b := newRearmBundle(t)
	b.p.hub.mu.Lock()
	b.p.hub.holdFor = time.Hour // a hold that outlasts the test
	b.p.hub.mu.Unlock()
	if err := b.p.EnqueueForOrchestrator(b.ctx, startItem("x"), 0); err != nil {
		t.Fatal(err)
	}
	waitPollers(t, b.p, "the marker popped for a busy class to be held", func() bool {
		b.p.hub.mu.Lock()
		defer b.p.hub.mu.Unlock()
		return len(b.p.hub.held) == 1
	})
	item, err := b.p.FetchOrchestrationItem(b.ctx, time.Minute, 10*time.Second, nil)
	if err != nil || item == nil || item.Instance != "x" {
		t.Fatalf("the caller back: %v, %v; want x", item, err)
	}
	b.p.hub.endHold() // the hold ends: nothing is left to put back
	if n := b.rearms.n.Load(); n != 0 {
		t.Fatalf("%d rearm_wake calls, want 0: the held marker went back", n)
	}
}

// A caller that leaves while a poller's script runs for it waits for the
// script's answer, and gives work taken as its context ended back with its
// attempt undone: it never returns leaving a lock behind.
func TestCallerLeavingDuringItsScriptLeavesNoLock(t *testing.T) {
	t.Parallel()
	b := newRearmBundle(t)
	d := demandsOf(b.p)[0]
	pl := d.pollers[0]
	if err := b.p.EnqueueForOrchestrator(b.ctx, startItem("x"), 0); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(b.ctx)
	r := &request{part: -1, out: make(chan pollResult, 1)}
	r.state.Store(reqTaken) // as a poller took it
	cancel()
	if r.leave() {
		t.Fatal("a taken request left without its answer")
	}
	item, _, err := pl.spec.once(b.ctx)
	if err != nil || item == nil {
		t.Fatalf("fetch: %v, %v", item, err)
	}
	if !r.answer(pollResult{item: item}) {
		t.Fatal("the answer of a leaving caller was refused")
	}
	if got, _, err := b.p.set.result(ctx, d, <-r.out); got != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("result for a cancelled caller: %v, %v; want nil, context.Canceled", got, err)
	}
	again, err := b.p.FetchOrchestrationItem(b.ctx, time.Minute, 0, nil)
	if err != nil || again == nil || again.Instance != "x" || again.AttemptCount != 1 {
		t.Fatalf("fetch after the give-back: %v, %v; want x at attempt 1", again, err)
	}
}

// After the clock jumps (durabletest's Advance), WakeFetchers has every
// fetcher look again at once: one asleep in its poll, and one that starts
// after an empty fetch taught its waiter that nothing is due for a while.
// Nothing announces what the jump made due, so without it both would sleep
// until their refresh, past the 5 s poll below, and return nothing.
func TestWakeFetchersAfterAClockJump(t *testing.T) {
	t.Parallel()
	const poll = 5 * time.Second // below refresh: a fetch not woken returns nil
	for _, asleep := range []bool{true, false} {
		t.Run(fmt.Sprintf("asleep=%v", asleep), func(t *testing.T) {
			t.Parallel()
			m, p := newMiniProvider(t)
			ctx := context.Background()
			now := time.Now()
			m.SetTime(now)
			if err := p.EnqueueForOrchestrator(ctx, startItem("later"), time.Hour); err != nil {
				t.Fatal(err)
			}
			if item, err := p.FetchOrchestrationItem(ctx, time.Minute, 20*time.Millisecond, nil); item != nil || err != nil {
				t.Fatalf("fetch before the jump: %v, %v", item, err)
			}
			got := make(chan *duroxide.OrchestrationItem, 1)
			fetch := func() {
				item, err := p.FetchOrchestrationItem(ctx, time.Minute, poll, nil)
				if err != nil {
					t.Error(err)
				}
				got <- item
			}
			if asleep {
				go fetch()
				waitSleeping(t, p, 1)
			}
			m.SetTime(now.Add(2 * time.Hour))
			p.WakeFetchers()
			if !asleep {
				go fetch()
			}
			if item := <-got; item == nil || item.Instance != "later" {
				t.Fatalf("fetch after the jump took %v, want the instance made due", item)
			}
		})
	}
}

// Idle slots that are each their own session owner share one refresh per
// partition: their classes differ only in the owner's key, and the
// refresher's maintenance marks every owner's work. Without sharing, each
// class ran its own script every 10 s (30 scripts/s for 300 slots).
func TestOwnersShareOneRefresh(t *testing.T) {
	t.Parallel()
	_, p := newMiniProvider(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const owners = 5
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for i := range owners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = p.FetchWorkItem(ctx, time.Minute, time.Minute, sessionOwner(fmt.Sprint("o", i)), duroxide.DefaultOnly())
		}()
	}
	waitSleeping(t, p, owners)
	p.hub.mu.Lock()
	refreshing := 0
	for _, pl := range p.hub.pollers {
		if pl.refreshing {
			refreshing++
		}
	}
	p.hub.mu.Unlock()
	if refreshing != 1 {
		t.Fatalf("%d of %d idle owners' pollers run a refresh, want 1", refreshing, owners)
	}
}
