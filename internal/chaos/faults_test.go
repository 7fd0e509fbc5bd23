package chaos

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// blockedConns lists the ids of connections blocked in BZPOPMIN.
// waitBlocked waits until a fetch's long poll blocks in Redis (BZPOPMIN),
// failing the test after 5 s.
func waitBlocked(t *testing.T, admin *redis.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	waitFor(t, ctx, "the long poll to block", func() bool { return len(blockedConns(ctx, admin)) >= 1 })
}

func blockedConns(ctx context.Context, admin *redis.Client) []string {
	list, err := admin.ClientList(ctx).Result()
	if err != nil {
		return nil
	}
	var ids []string
	for _, line := range strings.Split(list, "\n") {
		if strings.Contains(line, " cmd=bzpopmin ") {
			for _, f := range strings.Fields(line) {
				if id, ok := strings.CutPrefix(f, "id="); ok {
					ids = append(ids, id)
				}
			}
		}
	}
	return ids
}

// TestClientKillDuringLongPoll kills the provider's connections while its
// fetches are blocked in long polls, in turn all of them (CLIENT KILL TYPE
// normal) and only the ones parked in BZPOPMIN (by id). Ordinary calls right
// after the kill must work (after at most one retryable error) and every
// blocked fetch must still return work enqueued after the kill, promptly:
// the waiter must block again, never silently stop. When every connection
// was killed, a blocked fetch may instead fail retryably (the script it ran
// when woken met a dead pooled connection) if the next fetch gets the work.
func TestClientKillDuringLongPoll(t *testing.T) {
	srv := startRedis(t)
	p := newProvider(t, srv, "kill")
	admin := srv.Client()
	ctx := context.Background()
	const poll = 8 * time.Second
	orch, work := queuesOf(p, 5*time.Second)
	for round := 0; round < 6; round++ {
		blocked := map[string][]<-chan fetchResult{}
		for _, q := range []queue{orch, work} {
			blocked[q.name] = []<-chan fetchResult{q.blockedFetch(poll), q.blockedFetch(poll)}
		}
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		// one connection per partition, whatever the kinds of fetcher
		waitFor(t, wctx, "the long poll to block", func() bool { return len(blockedConns(ctx, admin)) >= 1 })
		cancel()
		all := round%2 == 0 // else only the connections parked in BZPOPMIN
		kind := killConnections(t, admin, all)
		time.Sleep(time.Duration(round*40) * time.Millisecond) // sleep: enqueues before, during and after the waiter's pause, which signals nothing
		enqueued := time.Now()
		for _, q := range []queue{orch, work} {
			for i := range blocked[q.name] {
				inst := fmt.Sprintf("kill-%d-%d", round, i)
				withRetry(t, "enqueue after killing "+kind, func(ctx context.Context) error { return q.enqueue(ctx, inst) })
			}
		}
		for _, q := range []queue{orch, work} {
			for _, ch := range blocked[q.name] {
				what := fmt.Sprintf("%s fetch after killing %s", q.name, kind)
				r := q.expectWork(t, what, ch, enqueued, 1500*time.Millisecond, all)
				withRetry(t, "ack", func(ctx context.Context) error { return q.ack(ctx, r.token) })
			}
		}
	}
	d, err := p.Admin().GetQueueDepths(ctx)
	if err != nil || d != (duroxide.QueueDepths{}) {
		t.Errorf("queues after the rounds: %+v, %v (a retried enqueue applied twice?)", d, err)
	}
}

// killConnections kills every normal connection, or only those blocked in
// BZPOPMIN, and names what it killed.
func killConnections(t *testing.T, admin *redis.Client, all bool) string {
	ctx := context.Background()
	if all {
		if err := admin.ClientKillByFilter(ctx, "TYPE", "normal").Err(); err != nil {
			t.Fatal(err)
		}
		return "all normal connections"
	}
	for _, id := range blockedConns(ctx, admin) {
		_ = admin.Do(ctx, "CLIENT", "KILL", "ID", id).Err()
	}
	return "the BZPOPMIN connections"
}

// probe calls fn with a deadline every 20 ms until it succeeds or limit
// passes, and checks each failure: retryable or a context error, returned
// within the deadline plus Grace. It returns the failures.
func probe(t *testing.T, limit time.Duration, fn func(ctx context.Context) error) []error {
	t.Helper()
	const deadline = time.Second
	var failures []error
	end := time.Now().Add(limit)
	for time.Now().Before(end) {
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		start := time.Now()
		err := fn(ctx)
		took := time.Since(start)
		cancel()
		if err == nil {
			return failures
		}
		failures = append(failures, err)
		if c := Classify(err); c != Retryable && c != Canceled {
			t.Errorf("call failed with a %s error: %v", c, err)
		}
		if took > deadline+Grace {
			t.Errorf("call took %v with a %v deadline: %v", took, deadline, err)
		}
		time.Sleep(20 * time.Millisecond) // sleep: paces the probe's calls, which count failures while the fault lasts
	}
	t.Fatalf("calls still fail after %v; last: %v", limit, failures[len(failures)-1])
	return nil
}

// countPrefix counts the errors whose message contains code.
func countPrefix(errs []error, code string) int {
	n := 0
	for _, err := range errs {
		if strings.Contains(err.Error(), code) {
			n++
		}
	}
	return n
}

// TestLoadingIsRetryable restarts Redis on a data set that takes seconds to
// load (key-load-delay slows the AOF replay, the way Redis's own tests make
// LOADING observable; DEBUG RELOAD would block the server instead of answering
// LOADING). Calls meanwhile must fail retryably, with LOADING among the
// errors; once loaded, calls work again (scripts are reloaded after the
// restart) and a fetch blocked across the restart gets work, or returns a
// retryable error after which the next fetch gets it.
func TestLoadingIsRetryable(t *testing.T) {
	srv := startRedis(t)
	admin := srv.Client()
	ctx := context.Background()
	const filler = 20000 // ~6 s of loading at key-load-delay 200
	if err := admin.Eval(ctx, "for i = 1, tonumber(ARGV[1]) do redis.call('SET', 'filler:' .. i, string.rep('x', 100)) end return 1",
		nil, filler).Err(); err != nil {
		t.Fatal(err)
	}
	p := newProvider(t, srv, "loading")
	orch, _ := queuesOf(p, 5*time.Second)
	const poll = 20 * time.Second
	blocked := orch.blockedFetch(poll)
	waitBlocked(t, admin)
	srv.Shutdown()
	srv.Restart("--key-load-delay", "200", "--loading-process-events-interval-bytes", "1024")
	failures := probe(t, 30*time.Second, func(ctx context.Context) error {
		_, err := p.Read(ctx, "loaded")
		return err
	})
	t.Logf("%d calls failed while Redis restarted and loaded; first %v, last %v", len(failures),
		firstErr(failures), lastErr(failures))
	if countPrefix(failures, "LOADING") == 0 {
		t.Fatalf("no call saw LOADING: the data set loaded too fast to test it")
	}
	enqueued := time.Now()
	withRetry(t, "enqueue after loading", func(ctx context.Context) error { return orch.enqueue(ctx, "loaded") })
	orch.expectWork(t, "fetch blocked across the restart", blocked, enqueued, 1500*time.Millisecond, true)
}

func firstErr(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return errs[0]
}

func lastErr(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return errs[len(errs)-1]
}

// TestBusyIsRetryable keeps Redis busy in a slow script past
// busy-reply-threshold: calls meanwhile must fail retryably (BUSY) within
// their deadline, and once the script ends the next call works and a fetch
// blocked throughout gets new work.
func TestBusyIsRetryable(t *testing.T) {
	srv := startRedis(t, "--busy-reply-threshold", "50")
	admin := srv.Client()
	p := newProvider(t, srv, "busy")
	_, work := queuesOf(p, 5*time.Second)
	const poll = 20 * time.Second
	blocked := work.blockedFetch(poll)
	waitBlocked(t, admin)
	slow := make(chan error, 1)
	go func() {
		slow <- admin.Eval(context.Background(), `local t = redis.call('TIME')
			local start = t[1] * 1000000 + t[2]
			repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] - start > 2000000
			return 1`, nil).Err()
	}()
	busy, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	waitFor(t, busy, "Redis busy in the slow script", func() bool {
		err := admin.Ping(busy).Err()
		return err != nil && strings.HasPrefix(err.Error(), "BUSY")
	})
	failures := probe(t, 10*time.Second, func(ctx context.Context) error {
		return p.EnqueueForOrchestrator(ctx, StartMessage("busy"), 0)
	})
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d calls failed while Redis ran a slow script; first %v", len(failures), firstErr(failures))
	if countPrefix(failures, "BUSY") == 0 {
		t.Fatal("no call saw BUSY")
	}
	enqueued := time.Now()
	withRetry(t, "enqueue after BUSY", func(ctx context.Context) error { return work.enqueue(ctx, "busy") })
	work.expectWork(t, "fetch blocked while Redis was busy", blocked, enqueued, 1500*time.Millisecond, true)
}

// TestCancelDuringLongPoll cancels long-polling fetches at random moments
// while work arrives. Each cancelled fetch must return an error matching
// context.Canceled promptly, and must not keep a lock: with locks of 30 s,
// every enqueued item must be fetchable right after the storm.
func TestCancelDuringLongPoll(t *testing.T) {
	srv := startRedis(t)
	orch, work := queuesOf(newProvider(t, srv, "cancel"), 30*time.Second)
	for _, q := range []queue{orch, work} {
		t.Run(q.name, func(t *testing.T) { cancelStorm(t, q) })
	}
}

// cancelStorm enqueues items one by one on q while fetchers whose context
// is cancelled after 0-11 ms keep polling; then it drains q with ordinary
// fetches. Every item must be taken.
func cancelStorm(t *testing.T, q queue) {
	const items, fetchers = 60, 4
	var tally stormTally
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for f := range fetchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cancelledFetches(t, q, f, stop, &tally)
		}()
	}
	for i := range items {
		if err := q.enqueue(context.Background(), fmt.Sprintf("c-%d", i)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // sleep: spreads the items over the storm, so cancellations meet work arriving
	}
	close(stop)
	wg.Wait()
	drained := drain(t, q)
	t.Logf("%d fetches cancelled; %d items taken during the storm, %d after it", tally.cancelled, tally.got, drained)
	if tally.got+drained != items {
		t.Errorf("%d of %d items could be fetched: a cancelled fetch kept the others locked", tally.got+drained, items)
	}
}

// stormTally counts the outcomes of a cancel storm's fetches.
type stormTally struct {
	mu             sync.Mutex
	got, cancelled int
}

// takeOne fetches one item of q with a long poll and acks it; "" = none.
func takeOne(ctx context.Context, q queue, poll time.Duration) (string, error) {
	token, err := q.fetch(ctx, poll)
	if token != "" {
		err = q.ack(context.Background(), token)
	}
	return token, err
}

// cancelledFetches is fetcher f of a cancel storm: it fetches from q with a
// context cancelled after 0-11 ms until stop is closed.
func cancelledFetches(t *testing.T, q queue, f int, stop <-chan struct{}, tally *stormTally) {
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		ctx, cancel := context.WithCancel(context.Background())
		timer := time.AfterFunc(time.Duration((n*7+f*13)%12)*time.Millisecond, cancel)
		start := time.Now()
		token, err := takeOne(ctx, q, 2*time.Second)
		timer.Stop()
		cancel()
		tally.mu.Lock()
		switch {
		case token != "":
			tally.got++
		case errors.Is(err, context.Canceled):
			tally.cancelled++
			if d := time.Since(start); d > 30*time.Millisecond+Grace {
				t.Errorf("a cancelled fetch returned after %v", d)
			}
		default:
			t.Errorf("fetch: %v", err)
		}
		tally.mu.Unlock()
	}
}

// drain takes every item left on q with ordinary fetches and counts them.
func drain(t *testing.T, q queue) int {
	for n := 0; ; n++ {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		token, err := takeOne(ctx, q, 300*time.Millisecond)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if token == "" {
			return n
		}
	}
}

// TestScriptFlushMidRun flushes Redis's script cache every 20 ms while the
// workload runs on EVALSHA: the provider must reload its scripts
// transparently, so no call fails at all.
func TestScriptFlushMidRun(t *testing.T) {
	flushMidRun(t, true, "SCRIPT FLUSH", func(ctx context.Context, admin *redis.Client) error {
		return admin.ScriptFlush(ctx).Err()
	})
}

// TestFunctionFlushMidRun is TestScriptFlushMidRun for providers on the
// function library: FUNCTION FLUSH every 20 ms, which a restart without
// persistence or a fresh primary amounts to.
func TestFunctionFlushMidRun(t *testing.T) {
	flushMidRun(t, false, "FUNCTION FLUSH", func(ctx context.Context, admin *redis.Client) error {
		return admin.FunctionFlush(ctx).Err()
	})
}

// flushMidRun runs the workload while flush empties what the provider
// loaded every 20 ms; no call may fail.
func flushMidRun(t *testing.T, evalsha bool, what string, flush func(ctx context.Context, admin *redis.Client) error) {
	srv := startRedis(t)
	srv.evalsha = evalsha
	admin := srv.Client()
	s := runScenario(t, srv, "flush", 80, Config{FanOut: 3, Orchestrators: 2, Workers: 3,
		LockTimeout: 2 * time.Second, PollTimeout: 300 * time.Millisecond, CallTimeout: 3 * time.Second, Seed: 4})
	if s.p.UsesFunctions() == evalsha {
		t.Fatalf("provider uses functions: %v, want %v", s.p.UsesFunctions(), !evalsha)
	}
	flushes := s.disturbEvery(20*time.Millisecond, func(ctx context.Context) error { return flush(ctx, admin) })
	s.await()
	for _, op := range []string{"fetch_orchestration_item", "fetch_work_item", "ack_orchestration_item", "ack_work_item"} {
		if n := s.check.Counts(op, Retryable) + s.check.Counts(op, Canceled); n > 0 {
			t.Errorf("%s failed %d times: %s was not transparent", op, n, what)
		}
	}
	s.verify() // its Kill cancels the fetches in flight: not failures of the run
	t.Logf("%d flushes (%s)", flushes(), what)
}

// TestStalledServerRespectsDeadline pauses Redis with CLIENT PAUSE ALL: it
// keeps the connections open but answers nothing for 3 s, as a stalled or
// partitioned primary does. Calls with a 500 ms deadline must return within
// the deadline plus Grace, with a retryable or context error: the caller's
// context bounds every call.
func TestStalledServerRespectsDeadline(t *testing.T) {
	srv := startRedis(t)
	admin := srv.Client()
	p := newProvider(t, srv, "stall")
	ctx := context.Background()
	if _, err := p.Read(ctx, "warm"); err != nil {
		t.Fatal(err)
	}
	if err := admin.Do(ctx, "CLIENT", "PAUSE", "3000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	calls := map[string]func(ctx context.Context) error{
		"read": func(ctx context.Context) error { _, err := p.Read(ctx, "x"); return err },
		"enqueue_for_orchestrator": func(ctx context.Context) error {
			return p.EnqueueForOrchestrator(ctx, StartMessage("stalled"), 0)
		},
		"fetch_work_item": func(ctx context.Context) error {
			_, err := p.FetchWorkItem(ctx, time.Second, 0, nil, duroxide.DefaultOnly())
			return err
		},
		"fetch_orchestration_item (long poll)": func(ctx context.Context) error {
			_, err := p.FetchOrchestrationItem(ctx, time.Second, 200*time.Millisecond, nil)
			return err
		},
	}
	const deadline = 500 * time.Millisecond
	var wg sync.WaitGroup
	for name, call := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, deadline)
			defer cancel()
			start := time.Now()
			err := call(cctx)
			took := time.Since(start)
			t.Logf("%s: %v after %v", name, err, took)
			if c := Classify(err); c != Retryable && c != Canceled && c != OK {
				t.Errorf("%s: %s error %v", name, c, err)
			}
			if took > deadline+Grace {
				t.Errorf("%s returned after %v with a %v deadline: calls to a stalled Redis outlive the caller's context", name, took, deadline)
			}
		}()
	}
	wg.Wait()
}

// TestLostReplyIsNotReplayed drops the connection after Redis executed a call
// and before its reply arrived (through a proxy). The caller cannot know
// whether the call took effect: the provider must say so with a retryable
// error (or nil when it took effect exactly once), never apply it twice
// behind a nil, and never report a permanent failure for a call that was
// applied.
func TestLostReplyIsNotReplayed(t *testing.T) {
	// the proxy finds a call by its command: EVALSHA, or FCALL where the
	// provider runs the scripts as functions
	t.Run("evalsha", func(t *testing.T) { lostReplies(t, true, "evalsha") })
	t.Run("functions", func(t *testing.T) { lostReplies(t, false, "fcall") })
}

// lostReplies runs TestLostReplyIsNotReplayed's calls on a provider using
// EVALSHA or functions, whose calls the proxy recognises by marker.
func lostReplies(t *testing.T, evalsha bool, marker string) {
	srv := startRedis(t)
	px := startProxy(t, srv.Addr())
	ctx := context.Background()
	p, err := redisprovider.New(ctx, redisprovider.Options{URL: "redis://" + px.Addr() + "/0", Namespace: "lost", ForceEvalsha: evalsha})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.UsesFunctions() == evalsha {
		t.Fatalf("provider uses functions: %v, want %v", p.UsesFunctions(), !evalsha)
	}
	direct := newProvider(t, srv, "lost")

	t.Run("enqueue", func(t *testing.T) {
		px.LoseNextReply(marker)
		err := p.EnqueueForOrchestrator(ctx, StartMessage("lost-enqueue"), 0)
		item, ferr := direct.FetchOrchestrationItem(ctx, time.Second, 0, nil)
		if ferr != nil || item == nil {
			t.Fatalf("the enqueued message is not there (err %v, fetch %v)", err, ferr)
		}
		t.Logf("enqueue returned %v; %d messages stored", err, len(item.Messages))
		if err == nil && len(item.Messages) != 1 {
			t.Errorf("EnqueueForOrchestrator returned nil but stored the message %d times (the command was re-sent after the reply was lost)", len(item.Messages))
		}
		checkLostReplyError(t, "enqueue_for_orchestrator", err)
	})
	t.Run("ack_work_item", func(t *testing.T) {
		if err := direct.EnqueueForWorker(ctx, activity("lost-ack", 2)); err != nil {
			t.Fatal(err)
		}
		item, err := p.FetchWorkItem(ctx, 5*time.Second, 0, nil, duroxide.DefaultOnly())
		if err != nil || item == nil {
			t.Fatalf("fetch: %v", err)
		}
		px.LoseNextReply(marker)
		err = p.AckWorkItem(ctx, item.LockToken, nil)
		again, _ := direct.FetchWorkItem(ctx, time.Second, 0, nil, duroxide.DefaultOnly())
		t.Logf("ack returned %v; item still queued: %v", err, again != nil)
		if again != nil {
			t.Fatal("the ack did not reach Redis: the proxy did not lose the reply of an executed call")
		}
		checkLostReplyError(t, "ack_work_item", err)
	})
	t.Run("ack_fetch_work_item", func(t *testing.T) {
		lostAckFetch(t, ctx, p, direct, px, marker)
	})
}

// lostAckFetch loses the reply of an ack-and-fetch that acked one item and
// locked the next: the ack stays applied, the error is retryable, and the
// lock nobody learnt of is given back at once rather than left to expire.
func lostAckFetch(t *testing.T, ctx context.Context, p, direct *redisprovider.Provider, px *proxy, marker string) {
	for id := uint64(2); id <= 3; id++ {
		if err := direct.EnqueueForWorker(ctx, activity("lost-ackfetch", id)); err != nil {
			t.Fatal(err)
		}
	}
	item, err := p.FetchWorkItem(ctx, time.Minute, 0, nil, duroxide.DefaultOnly())
	if err != nil || item == nil {
		t.Fatalf("fetch: %v", err)
	}
	px.LoseNextReply(marker)
	next, err := p.AckWorkItemAndFetch(ctx, item.LockToken, nil, time.Minute, 0, nil, duroxide.DefaultOnly())
	if next != nil || err == nil {
		t.Fatalf("AckWorkItemAndFetch = %v, %v; the proxy did not lose its reply", next, err)
	}
	checkLostReplyError(t, "ack_work_item", err)
	var again *duroxide.LockedWorkItem
	waitFor(t, ctx, "the lost fetch's lock given back", func() bool {
		again, _ = direct.FetchWorkItem(ctx, time.Minute, 0, nil, duroxide.DefaultOnly())
		return again != nil
	})
	if act := again.Item.(duroxide.ActivityExecute); act.ID != 3 {
		t.Fatalf("refetched activity %d, want 3: the first one was acked", act.ID)
	}
}

// checkLostReplyError requires nil or a retryable error from a call whose
// reply was lost after it was applied.
func checkLostReplyError(t *testing.T, op string, err error) {
	t.Helper()
	if err != nil && !duroxide.IsRetryable(err) {
		t.Errorf("%s was applied but returned a permanent error: %v (the command was re-sent after its reply was lost, and the retry failed)", op, err)
	}
}

// TestClientKillUnderLoad kills every connection of the provider (CLIENT
// KILL TYPE normal) every 50 ms while the workload runs: commands die in
// flight, before or after Redis executed them. The workload must finish with
// every invariant of the crash test, including: an ack that returned a
// permanent error wrote nothing.
func TestClientKillUnderLoad(t *testing.T) {
	srv := startRedis(t)
	admin := srv.Client()
	s := runScenario(t, srv, "killload", 100, Config{FanOut: 3, Orchestrators: 3, Workers: 3,
		LockTimeout: time.Second, PollTimeout: 300 * time.Millisecond, CallTimeout: 2 * time.Second, Seed: 6})
	kills := s.disturbEvery(50*time.Millisecond, func(ctx context.Context) error {
		return admin.ClientKillByFilter(ctx, "TYPE", "normal").Err()
	})
	s.finish()
	t.Logf("%d rounds of CLIENT KILL", kills())
}

// TestOutOfMemoryIsRetryable runs the workload against a Redis whose memory
// is capped (maxmemory-policy noeviction): first below what it uses, so the
// starts are refused, then 100 KiB above, so it fills up while the
// orchestrations run. Every refused write must reach its caller as a
// retryable error and never leave half a script applied; once the cap is
// lifted the workload finishes with every invariant.
func TestOutOfMemoryIsRetryable(t *testing.T) {
	srv := startRedis(t)
	admin := srv.Client()
	s := idleScenario(t, srv, "oom", 60, Config{FanOut: 3, Orchestrators: 2, Workers: 3,
		LockTimeout: 2 * time.Second, PollTimeout: 300 * time.Millisecond, CallTimeout: 2 * time.Second, Seed: 7})
	capMemory := func(delta int64) {
		if err := admin.ConfigSet(s.ctx, "maxmemory", strconv.FormatInt(usedMemory(t, admin)+delta, 10)).Err(); err != nil {
			t.Fatal(err)
		}
	}
	refused := func(ops ...string) func() bool {
		return func() bool {
			n := 0
			for _, op := range ops {
				n += s.check.Counts(op, Retryable)
			}
			return n >= 10
		}
	}
	capMemory(-64 << 10)
	started := make(chan error, 1)
	go func() { started <- s.r.StartInstances(s.ctx, s.ids) }()
	waitFor(t, s.ctx, "starts refused with OOM", refused("enqueue_for_orchestrator"))
	capMemory(100 << 10)
	waitFor(t, s.ctx, "turns refused with OOM", refused("ack_orchestration_item", "ack_work_item", "fetch_orchestration_item", "fetch_work_item"))
	t.Logf("%d instances completed before Redis was full", s.check.Completed())
	if err := admin.ConfigSet(s.ctx, "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	s.finish()
}
