package providertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Long polling (duroxide.Provider docs "Long polling"; duroxide
// docs/provider-implementation-guide.md "Long Polling vs Short Polling"): with
// pollTimeout > 0 a fetch blocks until eligible work appears or the timeout
// passes, returns early when work arrives (also work that becomes visible
// later: delays, timers, expired locks), never returns before its timeout when
// none does, and honours its context.

// init registers the LongPoll section.
func init() { register("LongPoll", runLongPoll) }

// Timing of the long-poll tests. Bounds on "promptly" and "not much later"
// carry lpSlack so a loaded machine cannot make them fail; "never before"
// bounds are exact (lpTol only absorbs millisecond rounding of server time).
const (
	lpWait   = 10 * time.Second       // pollTimeout of a fetch that must be woken
	lpPoll   = time.Second            // pollTimeout of a fetch that must time out
	lpSettle = 300 * time.Millisecond // lets started fetches block
	lpSlack  = 2 * time.Second        // allowance on "promptly"
	lpDelay  = time.Second            // visibility delays and lock lifetimes
	lpTol    = 20 * time.Millisecond  // millisecond rounding of server time
)

// lpGot is what a fetch returned, for either queue.
type lpGot struct {
	id      string   // instance (orchestrator queue) or instance of the item (worker queue); "" = none
	token   string   // lock token
	attempt uint32   // attempt count
	kinds   []string // Go types of the fetched messages
}

// lpQueue abstracts the two fetchable queues so each long-poll behaviour is
// written once and proven for both.
type lpQueue struct {
	name    string
	op      string                                                                     // fetch operation name
	put     func(e *env, id string)                                                    // make work for id visible now
	fetch   func(ctx context.Context, e *env, lock, poll time.Duration) (lpGot, error) // default filter
	abandon func(e *env, token string, delay time.Duration) error
	renew   func(e *env, token string, extend time.Duration) error
}

// lpQueues are the orchestrator queue (work: a StartOrchestration for
// instance id) and the worker queue (work: an untagged ActivityExecute of
// instance id).
var lpQueues = []lpQueue{
	{
		name: "Orch", op: "fetch_orchestration_item",
		put: func(e *env, id string) { e.enqueue(startItem(id, "Orch"), 0) },
		fetch: func(ctx context.Context, e *env, lock, poll time.Duration) (lpGot, error) {
			return lpOrchFetch(ctx, e, lock, poll, nil)
		},
		abandon: func(e *env, token string, delay time.Duration) error {
			return e.p.AbandonOrchestrationItem(e.ctx, token, delay, false)
		},
		renew: func(e *env, token string, extend time.Duration) error {
			return e.p.RenewOrchestrationItemLock(e.ctx, token, extend)
		},
	},
	{
		name: "Work", op: "fetch_work_item",
		put: func(e *env, id string) { e.enqueueWork(activity(id, 1)) },
		fetch: func(ctx context.Context, e *env, lock, poll time.Duration) (lpGot, error) {
			return lpWorkFetch(ctx, e, lock, poll, nil, duroxide.DefaultOnly())
		},
		abandon: func(e *env, token string, delay time.Duration) error {
			return e.p.AbandonWorkItem(e.ctx, token, delay, false)
		},
		renew: func(e *env, token string, extend time.Duration) error {
			return e.p.RenewWorkItemLock(e.ctx, token, extend)
		},
	},
}

// lpOrchFetch fetches an orchestration item with filter f.
func lpOrchFetch(ctx context.Context, e *env, lock, poll time.Duration, f *duroxide.DispatcherCapabilityFilter) (lpGot, error) {
	item, err := e.p.FetchOrchestrationItem(ctx, lock, poll, f)
	if err != nil || item == nil {
		return lpGot{}, err
	}
	g := lpGot{id: item.Instance, token: item.LockToken, attempt: item.AttemptCount}
	for _, m := range item.Messages {
		g.kinds = append(g.kinds, fmt.Sprintf("%T", m))
	}
	return g, nil
}

// lpWorkFetch fetches a worker item with the given session config and tags.
func lpWorkFetch(ctx context.Context, e *env, lock, poll time.Duration, s *duroxide.SessionFetchConfig, tags duroxide.TagFilter) (lpGot, error) {
	w, err := e.p.FetchWorkItem(ctx, lock, poll, s, tags)
	if err != nil || w == nil {
		return lpGot{}, err
	}
	return lpGot{id: w.Item.InstanceID(), token: w.LockToken, attempt: w.AttemptCount,
		kinds: []string{fmt.Sprintf("%T", w.Item)}}, nil
}

// lpResult is the outcome of a fetch run in the background.
type lpResult struct {
	got lpGot
	err error
	at  time.Time // when it returned
}

// lpGo runs fetch in the background; the channel receives its outcome.
// Callers let started fetches block with lpBlock before creating work.
func lpGo(fetch func() (lpGot, error)) <-chan lpResult {
	ch := make(chan lpResult, 1)
	go func() {
		g, err := fetch()
		ch <- lpResult{got: g, err: err, at: time.Now()}
	}()
	return ch
}

// Parker is implemented by providers that can tell when fetch calls are
// parked in a long poll: they found nothing and only a wake-up (new work, a
// due time) or their timeout returns them. The long-poll cases then start
// work once the fetches they started are parked, instead of sleeping
// lpSettle and trusting that they are. redisprovider's Provider
// implements it.
type Parker interface {
	// WaitParked returns once at least n fetch calls are parked, or ctx's
	// error when it ends first.
	WaitParked(ctx context.Context, n int) error
}

// lpSettleUnseen gives a fetch that takes nothing (an empty filter, no
// tags) time to start its wait: it parks nowhere a Parker could see, as it
// needs no wake-up, so there is no signal to wait on.
func lpSettleUnseen() {
	time.Sleep(lpSettle) // sleep: such a fetch parks nowhere a Parker sees (see above)
}

// lpBlock waits until the n fetches just started have found nothing and
// block: with Parker, until they are parked (failing the test after
// lpWait); without it, it sleeps lpSettle.
func lpBlock(e *env, n int) {
	e.t.Helper()
	pk, ok := e.p.(Parker)
	if !ok {
		time.Sleep(lpSettle) // sleep: a provider without Parker gives no signal that its fetches block
		return
	}
	ctx, cancel := context.WithTimeout(e.ctx, lpWait)
	defer cancel()
	if err := pk.WaitParked(ctx, n); err != nil {
		e.t.Fatalf("%d fetches did not park within %v: %v", n, lpWait, err)
	}
}

// lpRecv waits up to limit for a background fetch to return.
func lpRecv(t *testing.T, ch <-chan lpResult, limit time.Duration) lpResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(limit):
		t.Fatalf("fetch still blocked after %v", limit)
		return lpResult{}
	}
}

// lpWantItem asserts a background fetch returned the work of id no earlier
// than notBefore and no later than notAfter.
func lpWantItem(t *testing.T, r lpResult, id string, notBefore, notAfter time.Time) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("fetch: %v", r.err)
	}
	if r.got.id != id {
		t.Fatalf("fetch returned %q, want the work of %q", r.got.id, id)
	}
	if r.at.Before(notBefore.Add(-lpTol)) {
		t.Fatalf("fetch returned %v before the work became eligible", notBefore.Sub(r.at))
	}
	if r.at.After(notAfter) {
		t.Fatalf("fetch returned %v after it should have (it slept while eligible work waited)", r.at.Sub(notAfter))
	}
}

// lpWantNone asserts a fetch started at start with pollTimeout poll
// returned no work and no error, not before poll and not absurdly later.
func lpWantNone(t *testing.T, r lpResult, start time.Time, poll time.Duration) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("fetch: %v", r.err)
	}
	if r.got.id != "" {
		t.Fatalf("fetch returned the work of %q, want none", r.got.id)
	}
	if el := r.at.Sub(start); el < poll || el > poll+lpSlack {
		t.Fatalf("fetch with no work returned after %v, want between %v and %v", el, poll, poll+lpSlack)
	}
}

// lpWantCtxErr asserts err reports the end of ctx (errors.Is(err, ctx.Err()))
// and, like every provider error, wraps a *duroxide.ProviderError.
func lpWantCtxErr(t *testing.T, ctx context.Context, r lpResult, op string) {
	t.Helper()
	if r.err == nil {
		t.Fatalf("%s with an ended context returned %q and no error", op, r.got.id)
	}
	if ctx.Err() == nil || !errors.Is(r.err, ctx.Err()) {
		t.Fatalf("%s: error %v does not satisfy errors.Is(err, ctx.Err()=%v)", op, r.err, ctx.Err())
	}
	var pe *duroxide.ProviderError
	if !errors.As(r.err, &pe) {
		t.Fatalf("%s: context error %T (%v) does not wrap a *duroxide.ProviderError", op, r.err, r.err)
	}
}

// lpNow fetches without waiting or fails the test.
func lpNow(e *env, q lpQueue, lock time.Duration) lpGot {
	e.t.Helper()
	g, err := q.fetch(e.ctx, e, lock, 0)
	if err != nil {
		e.t.Fatalf("%s: %v", q.op, err)
	}
	return g
}

// lpMustNow fetches the work of id without waiting or fails the test.
func lpMustNow(e *env, q lpQueue, id string, lock time.Duration) lpGot {
	e.t.Helper()
	g := lpNow(e, q, lock)
	if g.id != id {
		e.t.Fatalf("%s returned %q, want the work of %q", q.op, g.id, id)
	}
	return g
}

// lpNoneNow asserts nothing is fetchable right now.
func lpNoneNow(e *env, q lpQueue) {
	e.t.Helper()
	if g := lpNow(e, q, longLock); g.id != "" {
		e.t.Fatalf("%s returned %q, want nothing", q.op, g.id)
	}
}

// lpWaiter starts a default fetch of q with pollTimeout poll and a long
// lock; it does not wait for it to block.
func lpWaiter(e *env, q lpQueue, ctx context.Context, poll time.Duration) <-chan lpResult {
	return lpGo(func() (lpGot, error) { return q.fetch(ctx, e, longLock, poll) })
}

// runLongPoll runs the long-polling cases for both queues, then the cases
// that exist for one queue only.
func runLongPoll(t *testing.T, h Harness) {
	var cases []envCase
	for _, q := range lpQueues {
		cases = append(cases, lpSharedCases(q)...)
	}
	runCases(t, h, append(cases, append(lpOrchOnlyCases(), lpWorkOnlyCases()...)...))
}

// lpSharedCases lists the cases both queues must pass, named for queue q.
func lpSharedCases(q lpQueue) []envCase {
	cases := []struct {
		name string
		run  func(e *env, q lpQueue)
	}{
		{"ZeroPollReturnsAtOnce", lpZeroPoll},
		{"NoWorkWaitsPollTimeout", lpNoWork},
		{"WakesOnEnqueue", lpWakesOnEnqueue},
		{"AbandonDelayWakesWaiter", lpAbandonDelay},
		{"ExpiredLockWakesWaiter", lpExpiredLock},
		{"ShortenedLockExpiryWakesWaiter", lpShortenedLock},
		{"BurstWakesEveryWaiter", func(e *env, q lpQueue) { lpBurst(e, q, 8, 8, false) }},
		{"BurstDrainedByLoopingWaiters", func(e *env, q lpQueue) { lpBurst(e, q, 8, 20, true) }},
		{"CancelDuringLongPoll", lpCancel},
		{"DeadlineDuringLongPoll", lpDeadline},
		{"CancelRacingWork", lpCancelRace},
		{"AlreadyCancelledContext", lpAlreadyCancelled},
	}
	out := make([]envCase, len(cases))
	for i, c := range cases {
		out[i] = envCase{c.name + q.name, func(e *env) { c.run(e, q) }}
	}
	return out
}

// lpZeroPoll proves a zero pollTimeout returns at once when there is no work
// (duroxide docs/provider-implementation-guide.md "Long Polling vs Short
// Polling"; duroxide.Provider docs: zero poll timeout means return
// immediately).
func lpZeroPoll(e *env, q lpQueue) {
	start := time.Now()
	if g := lpNow(e, q, longLock); g.id != "" {
		e.t.Fatalf("empty provider returned %q", g.id)
	}
	if el := time.Since(start); el > lpSlack/2 {
		e.t.Fatalf("fetch with pollTimeout 0 took %v, want an immediate return", el)
	}
}

// lpNoWork proves a fetch with pollTimeout > 0 and no work returns (nil, nil)
// no earlier than pollTimeout and not much later (duroxide.Provider docs "Long
// polling").
func lpNoWork(e *env, q lpQueue) {
	start := time.Now()
	r := lpRecv(e.t, lpWaiter(e, q, e.ctx, lpPoll), lpPoll+2*lpSlack)
	lpWantNone(e.t, r, start, lpPoll)
}

// lpWakesOnEnqueue proves a blocked fetch returns work enqueued by another
// goroutine soon after the enqueue, long before its timeout, holding the lock.
func lpWakesOnEnqueue(e *env, q lpQueue) {
	ch := lpWaiter(e, q, e.ctx, lpWait)
	lpBlock(e, 1)
	at := time.Now()
	q.put(e, "lp-wake")
	done := time.Now()
	r := lpRecv(e.t, ch, lpWait)
	lpWantItem(e.t, r, "lp-wake", at, done.Add(lpSlack))
	if r.got.attempt != 1 {
		e.t.Fatalf("attempt count %d, want 1", r.got.attempt)
	}
	lpNoneNow(e, q) // the waiter holds the lock
}

// lpAbandonDelay proves a waiter blocked before an abandon with delay is woken
// when the abandoned work becomes visible again, not before (duroxide.Provider
// docs "Work that becomes visible later ... wakes waiters").
func lpAbandonDelay(e *env, q lpQueue) {
	q.put(e, "lp-abandon")
	held := lpMustNow(e, q, "lp-abandon", longLock)
	ch := lpWaiter(e, q, e.ctx, lpWait)
	lpBlock(e, 1)
	at := time.Now()
	if err := q.abandon(e, held.token, lpDelay); err != nil {
		e.t.Fatalf("abandon: %v", err)
	}
	done := time.Now()
	r := lpRecv(e.t, ch, lpWait)
	lpWantItem(e.t, r, "lp-abandon", at.Add(lpDelay), done.Add(lpDelay+lpSlack))
	if r.got.attempt != 2 {
		e.t.Fatalf("attempt count %d after one abandon, want 2", r.got.attempt)
	}
}

// lpExpiredLock proves a waiter blocked on locked work gets it when the lock
// expires (the holder never acks), with the attempt counted.
func lpExpiredLock(e *env, q lpQueue) {
	q.put(e, "lp-expire")
	start := time.Now()
	lpMustNow(e, q, "lp-expire", lpDelay)
	fetched := time.Now()
	ch := lpWaiter(e, q, e.ctx, lpWait)
	r := lpRecv(e.t, ch, lpWait)
	lpWantItem(e.t, r, "lp-expire", start.Add(lpDelay), fetched.Add(lpDelay+lpSlack))
	if r.got.attempt != 2 {
		e.t.Fatalf("attempt count %d after an expired lock, want 2", r.got.attempt)
	}
}

// lpShortenedLock proves a waiter that blocked while the work was locked for a
// long time is woken when a renewal made the lock end sooner and it expired:
// the lock expiry the waiter must wake for is created after it blocked
// (duroxide docs/provider-implementation-guide.md renewal sets locked_until =
// now + extend_for).
func lpShortenedLock(e *env, q lpQueue) {
	q.put(e, "lp-renew")
	held := lpMustNow(e, q, "lp-renew", longLock)
	ch := lpWaiter(e, q, e.ctx, lpWait)
	lpBlock(e, 1)
	at := time.Now()
	if err := q.renew(e, held.token, lpDelay); err != nil {
		e.t.Fatalf("renew: %v", err)
	}
	done := time.Now()
	r := lpRecv(e.t, ch, lpWait)
	lpWantItem(e.t, r, "lp-renew", at.Add(lpDelay), done.Add(lpDelay+lpSlack))
}

// lpBurst proves several blocked fetchers share a burst of new work promptly
// (duroxide.Provider docs "no waiter sleeps while eligible work waits"):
// waiters fetch once each (loop false, one item per waiter) or repeatedly until
// the burst is drained (loop true); every item is fetched exactly once, all
// within lpSlack of the burst.
func lpBurst(e *env, q lpQueue, waiters, items int, loop bool) {
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	results := make(chan lpResult, waiters*(items+1))
	done := make(chan struct{}, waiters)
	for range waiters {
		go lpBurstWaiter(e, q, ctx, loop, results, done)
	}
	lpBlock(e, waiters)
	for i := range items {
		q.put(e, fmt.Sprintf("lp-burst-%02d", i))
	}
	deadline := time.Now().Add(lpSlack)
	seen := lpCollect(e.t, results, items, deadline)
	cancel()
	for range waiters {
		<-done
	}
	close(results)
	for r := range results { // outcomes after the burst was drained
		if r.err == nil || !errors.Is(r.err, context.Canceled) {
			e.t.Fatalf("after the burst a waiter got %q (err %v), want only cancellations", r.got.id, r.err)
		}
	}
	if len(seen) != items {
		e.t.Fatalf("fetched %d distinct items, want %d", len(seen), items)
	}
	lpNoneNow(e, q)
}

// lpBurstWaiter is one fetcher of lpBurst.
func lpBurstWaiter(e *env, q lpQueue, ctx context.Context, loop bool, out chan<- lpResult, done chan<- struct{}) {
	defer func() { done <- struct{}{} }()
	for {
		g, err := q.fetch(ctx, e, longLock, lpWait)
		select {
		case out <- lpResult{got: g, err: err, at: time.Now()}:
		default: // more outcomes than items and waiters: already failing
			return
		}
		if err != nil || g.id == "" || !loop {
			return
		}
	}
}

// lpCollect receives fetch outcomes until n distinct items arrived, failing
// on errors, empty returns, duplicates or the deadline.
func lpCollect(t *testing.T, results <-chan lpResult, n int, deadline time.Time) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	timeout := time.After(time.Until(deadline))
	for len(seen) < n {
		select {
		case r := <-results:
			if r.err != nil || r.got.id == "" {
				t.Fatalf("waiter returned %q, err %v during the burst", r.got.id, r.err)
			}
			if seen[r.got.id] {
				t.Fatalf("%q fetched twice", r.got.id)
			}
			seen[r.got.id] = true
		case <-timeout:
			t.Fatalf("only %d of %d items fetched within %v of the burst: waiters slept while work waited", len(seen), n, lpSlack)
		}
	}
	return seen
}

// lpCancel proves cancelling the context of a long poll returns promptly with
// an error for which errors.Is(err, ctx.Err()) holds and leaves no lock: work
// enqueued afterwards is fetchable at once, first attempt.
func lpCancel(e *env, q lpQueue) {
	ctx, cancel := context.WithCancel(e.ctx)
	ch := lpWaiter(e, q, ctx, lpWait)
	lpBlock(e, 1)
	cancel()
	r := lpRecv(e.t, ch, lpSlack)
	lpWantCtxErr(e.t, ctx, r, q.op)
	q.put(e, "lp-after-cancel")
	if g := lpMustNow(e, q, "lp-after-cancel", longLock); g.attempt != 1 {
		e.t.Fatalf("attempt count %d, want 1", g.attempt)
	}
}

// lpDeadline proves a context deadline shorter than pollTimeout ends the
// long poll at the deadline with an error satisfying errors.Is(err,
// context.DeadlineExceeded).
func lpDeadline(e *env, q lpQueue) {
	ctx, cancel := context.WithTimeout(e.ctx, lpSettle)
	defer cancel()
	ch := lpWaiter(e, q, ctx, lpWait)
	r := lpRecv(e.t, ch, lpSettle+lpSlack)
	lpWantCtxErr(e.t, ctx, r, q.op)
	if !errors.Is(r.err, context.DeadlineExceeded) {
		e.t.Fatalf("error %v is not a deadline error", r.err)
	}
}

// lpCancelRace proves cancellation racing with new work never leaks a lock:
// in each round a blocked fetch is cancelled right after work is enqueued;
// either it returns the work (and holds it) or it returns the context error
// and the work is fetchable at once by another fetch.
func lpCancelRace(e *env, q lpQueue) {
	for i := range 6 {
		id := fmt.Sprintf("lp-race-%d", i)
		ctx, cancel := context.WithCancel(e.ctx)
		ch := lpWaiter(e, q, ctx, lpWait)
		lpBlock(e, 1)
		q.put(e, id)
		time.Sleep(time.Duration(i) * time.Millisecond) // sleep: each round cancels at another moment of the race with the wake-up
		cancel()
		r := lpRecv(e.t, ch, lpSlack)
		if r.err == nil {
			lpWantItem(e.t, r, id, time.Time{}, time.Now())
			lpNoneNow(e, q) // the winner holds it
			continue
		}
		lpWantCtxErr(e.t, ctx, r, q.op)
		lpMustNow(e, q, id, longLock)
	}
}

// lpAlreadyCancelled proves a fetch with an already cancelled context fails
// with the context error, with or without pollTimeout, and takes no lock:
// the waiting work is then fetched with attempt count 1.
func lpAlreadyCancelled(e *env, q lpQueue) {
	q.put(e, "lp-cancelled")
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	for _, poll := range []time.Duration{0, lpWait} {
		r := lpRecv(e.t, lpWaiter(e, q, ctx, poll), lpSlack)
		lpWantCtxErr(e.t, ctx, r, q.op)
	}
	if g := lpMustNow(e, q, "lp-cancelled", longLock); g.attempt != 1 {
		e.t.Fatalf("attempt count %d, want 1: a cancelled fetch took the lock", g.attempt)
	}
}

// lpOrchOnlyCases lists the orchestrator-queue-only cases: delayed
// enqueues, timers and capability filters.
func lpOrchOnlyCases() []envCase {
	return []envCase{
		{"DelayedEnqueueWakesWaiter", lpDelayedEnqueue},
		{"TimerFiredWakesWaiter", lpTimerFired},
		{"FilteredWaiterWokenByCompatibleWork", lpFilterWoken},
		{"FilteredWaiterNotHandedIncompatibleWork", lpFilterNotHanded},
		{"EmptyRangeFilterWaitsPollTimeout", lpEmptyRangeWaits},
		{"EmptyRangeFilterHonoursCancel", lpEmptyRangeCancel},
	}
}

// lpWorkOnlyCases lists the worker-queue-only cases: tag filters and
// sessions.
func lpWorkOnlyCases() []envCase {
	return []envCase{
		{"TagWaiterWokenByTaggedWork", lpTagWoken},
		{"TagWaiterNotHandedDefaultWork", lpTagNotHanded},
		{"AnyWaiterWokenByNewTag", lpAnyWokenByNewTag},
		{"AnyWaiterWokenAfterTagWaiterLeftWork", lpAnyWokenAfterTagWork},
		{"SessionWaiterWokenByOwnedSession", lpSessionWoken},
		{"SessionOwnersBothWokenByPlainWork", lpOwnersBothWoken},
		{"NoTagsWaitsPollTimeout", lpNoTagsWaits},
		{"NoTagsHonoursCancel", lpNoTagsCancel},
	}
}

// lpOrchWaiter starts an orchestration fetch with filter f in the background.
func lpOrchWaiter(e *env, ctx context.Context, poll time.Duration, f *duroxide.DispatcherCapabilityFilter) <-chan lpResult {
	return lpGo(func() (lpGot, error) { return lpOrchFetch(ctx, e, longLock, poll, f) })
}

// lpWorkWaiter starts a worker fetch with session config s and tags in the
// background.
func lpWorkWaiter(e *env, ctx context.Context, poll time.Duration, s *duroxide.SessionFetchConfig, tags duroxide.TagFilter) <-chan lpResult {
	return lpGo(func() (lpGot, error) { return lpWorkFetch(ctx, e, longLock, poll, s, tags) })
}

// lpWantKinds asserts the fetched messages have exactly the given types.
func lpWantKinds(t *testing.T, r lpResult, kinds ...string) {
	t.Helper()
	if !slices.Equal(r.got.kinds, kinds) {
		t.Fatalf("fetched messages %v, want %v", r.got.kinds, kinds)
	}
}

// lpDelayedEnqueue proves a waiter blocked before a delayed
// EnqueueForOrchestrator is woken when the message becomes visible, not
// before.
func lpDelayedEnqueue(e *env) {
	ch := lpOrchWaiter(e, e.ctx, lpWait, nil)
	lpBlock(e, 1)
	at := time.Now()
	e.enqueue(startItem("lp-delayed", "Orch"), lpDelay)
	done := time.Now()
	r := lpRecv(e.t, ch, lpWait)
	lpWantItem(e.t, r, "lp-delayed", at.Add(lpDelay), done.Add(lpDelay+lpSlack))
	lpWantKinds(e.t, r, "duroxide.StartOrchestration")
}

// lpTimerFired proves a waiter blocked before an ack that schedules a
// TimerFired at FireAtMs is woken at the fire time with the timer
// (duroxide.Provider docs: a TimerFired in OrchestratorItems becomes visible at
// its FireAtMs).
func lpTimerFired(e *env) {
	e.enqueue(startItem("lp-timer", "Orch"), 0)
	item := e.fetchInstance("lp-timer")
	ch := lpOrchWaiter(e, e.ctx, lpWait, nil)
	lpBlock(e, 1)
	fire := time.Now().Add(lpDelay).Truncate(time.Millisecond)
	e.ack(item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID: 1,
		HistoryDelta: []duroxide.Event{started("lp-timer", 1, "Orch", "1.0.0"),
			event(2, "lp-timer", 1, duroxide.TimerCreatedEvent{FireAtMs: uint64(fire.UnixMilli())})},
		OrchestratorItems: []duroxide.WorkItem{duroxide.TimerFired{
			Instance: "lp-timer", ExecutionID: 1, ID: 2, FireAtMs: uint64(fire.UnixMilli())}},
		Metadata: duroxide.ExecutionMetadata{OrchestrationName: "Orch", OrchestrationVersion: "1.0.0"},
	})
	done := time.Now()
	r := lpRecv(e.t, ch, lpWait)
	lpWantItem(e.t, r, "lp-timer", fire, done.Add(lpDelay+lpSlack))
	lpWantKinds(e.t, r, "duroxide.TimerFired")
}

// lpPinned creates instance pinned to version 1.5.0 with no pending message.
func lpPinned(e *env, instance string) {
	e.t.Helper()
	e.start(instance, ver(e.t, "1.5.0"))
}

// lpRaise enqueues an external event for instance.
func lpRaise(e *env, instance string) {
	e.t.Helper()
	e.enqueue(duroxide.ExternalRaised{Instance: instance, Name: "ev", Data: `"d"`}, 0)
}

// lpFilterWoken proves a waiter with a capability filter is woken by work of
// an execution its filter accepts.
func lpFilterWoken(e *env) {
	lpPinned(e, "lp-pinned")
	ch := lpOrchWaiter(e, e.ctx, lpWait, filter(e.t, "1.0.0", "1.9.9"))
	lpBlock(e, 1)
	at := time.Now()
	lpRaise(e, "lp-pinned")
	r := lpRecv(e.t, ch, lpWait)
	lpWantItem(e.t, r, "lp-pinned", at, at.Add(lpSlack))
	lpWantKinds(e.t, r, "duroxide.ExternalRaised")
}

// lpFilterNotHanded proves a waiter whose filter rejects the execution is
// not handed its work (it times out with nothing) while an unfiltered waiter
// gets it promptly.
func lpFilterNotHanded(e *env) {
	lpPinned(e, "lp-pinned")
	start := time.Now()
	other := lpOrchWaiter(e, e.ctx, lpPoll+lpSettle, filter(e.t, "2.0.0", "2.9.9"))
	open := lpOrchWaiter(e, e.ctx, lpWait, nil)
	lpBlock(e, 2)
	at := time.Now()
	lpRaise(e, "lp-pinned")
	r := lpRecv(e.t, open, lpWait)
	lpWantItem(e.t, r, "lp-pinned", at, at.Add(lpSlack))
	lpWantNone(e.t, lpRecv(e.t, other, lpWait), start, lpPoll+lpSettle)
}

// lpEmptyRangeWaits proves a filter with an empty range list (matching
// nothing) still honours pollTimeout: no work, not before the timeout, and
// the pending work is left untouched (first attempt for the next fetch).
func lpEmptyRangeWaits(e *env) {
	e.enqueue(startItem("lp-none", "Orch"), 0)
	start := time.Now()
	r := lpRecv(e.t, lpOrchWaiter(e, e.ctx, lpPoll, filter(e.t)), lpPoll+2*lpSlack)
	lpWantNone(e.t, r, start, lpPoll)
	if item := e.fetchInstance("lp-none"); item.AttemptCount != 1 {
		e.t.Fatalf("attempt count %d, want 1", item.AttemptCount)
	}
}

// lpEmptyRangeCancel proves a long poll with an empty range list ends
// promptly with the context error when its context is cancelled.
func lpEmptyRangeCancel(e *env) {
	ctx, cancel := context.WithCancel(e.ctx)
	ch := lpOrchWaiter(e, ctx, lpWait, filter(e.t))
	lpSettleUnseen()
	cancel()
	lpWantCtxErr(e.t, ctx, lpRecv(e.t, ch, lpSlack), "fetch_orchestration_item")
}

// lpTagged is an ActivityExecute of instance with the given tag.
func lpTagged(instance, tag string) duroxide.ActivityExecute {
	a := activity(instance, 1)
	a.Tag = &tag
	return a
}

// lpTagWoken proves a waiter with a tag filter is woken by work carrying its
// tag.
func lpTagWoken(e *env) {
	ch := lpWorkWaiter(e, e.ctx, lpWait, nil, duroxide.TagsOnly("gpu"))
	lpBlock(e, 1)
	at := time.Now()
	e.enqueueWork(lpTagged("lp-gpu", "gpu"))
	lpWantItem(e.t, lpRecv(e.t, ch, lpWait), "lp-gpu", at, at.Add(lpSlack))
}

// lpAnyWokenByNewTag proves an AnyTag waiter is woken by the first item of
// a tag nobody used before it blocked.
func lpAnyWokenByNewTag(e *env) {
	ch := lpWorkWaiter(e, e.ctx, lpWait, nil, duroxide.AnyTag())
	lpBlock(e, 1)
	at := time.Now()
	e.enqueueWork(lpTagged("lp-new-tag", "fresh"))
	lpWantItem(e.t, lpRecv(e.t, ch, lpWait), "lp-new-tag", at, at.Add(lpSlack))
}

// lpAnyWokenAfterTagWork proves an AnyTag waiter is woken by work on a tag
// whose own fetchers were last told of work that an AnyTag fetch then took:
// the tag's wake-up news was already out, and must not hide the next item
// from the AnyTag waiter.
func lpAnyWokenAfterTagWork(e *env) {
	e.enqueueWork(lpTagged("lp-gpu-1", "gpu"))
	e.enqueueWork(lpTagged("lp-gpu-2", "gpu"))
	lpMustWork(e, "lp-gpu-1", duroxide.TagsOnly("gpu"))
	lpMustWork(e, "lp-gpu-2", duroxide.AnyTag())
	ch := lpWorkWaiter(e, e.ctx, lpWait, nil, duroxide.AnyTag())
	lpBlock(e, 1)
	at := time.Now()
	e.enqueueWork(lpTagged("lp-gpu-3", "gpu"))
	lpWantItem(e.t, lpRecv(e.t, ch, lpWait), "lp-gpu-3", at, at.Add(lpSlack))
}

// lpMustWork fetches, without waiting, the worker item of instance with
// filter tags.
func lpMustWork(e *env, instance string, tags duroxide.TagFilter) {
	e.t.Helper()
	var err error
	w := e.fetchWorkInOrder(instance, func() *duroxide.LockedWorkItem {
		var w *duroxide.LockedWorkItem
		w, err = e.p.FetchWorkItem(e.ctx, longLock, 0, nil, tags)
		return w
	})
	var got lpGot
	if w != nil {
		got.id = w.Item.InstanceID()
	}
	if err != nil || got.id != instance {
		e.t.Fatalf("FetchWorkItem(%v) = %q, %v; want %q", tags, got.id, err, instance)
	}
}

// lpTagNotHanded proves a waiter for tag "gpu" is not handed an untagged
// item: the default waiter gets it promptly, the gpu waiter times out.
func lpTagNotHanded(e *env) {
	start := time.Now()
	gpu := lpWorkWaiter(e, e.ctx, lpPoll+lpSettle, nil, duroxide.TagsOnly("gpu"))
	def := lpWorkWaiter(e, e.ctx, lpWait, nil, duroxide.DefaultOnly())
	lpBlock(e, 2)
	at := time.Now()
	e.enqueueWork(activity("lp-default", 1))
	lpWantItem(e.t, lpRecv(e.t, def, lpWait), "lp-default", at, at.Add(lpSlack))
	lpWantNone(e.t, lpRecv(e.t, gpu, lpWait), start, lpPoll+lpSettle)
}

// lpSessionItem is an ActivityExecute of instance bound to session sid.
func lpSessionItem(instance string, id uint64, sid string) duroxide.ActivityExecute {
	a := activity(instance, id)
	a.SessionID = &sid
	return a
}

// lpSessionWoken proves a session-aware waiter for owner A is woken by an
// item of a session A owns, while waiters for another owner and without
// session routing are not handed it.
func lpSessionWoken(e *env) {
	a := &duroxide.SessionFetchConfig{OwnerID: "owner-a", LockTimeout: longLock}
	b := &duroxide.SessionFetchConfig{OwnerID: "owner-b", LockTimeout: longLock}
	e.enqueueWork(lpSessionItem("lp-sess", 1, "s1"))
	claim := e.fetchWork(longLock, a, duroxide.DefaultOnly())
	if claim == nil {
		e.t.Fatal("owner A could not claim the session")
	}
	e.ackWork(claim.LockToken, completed("lp-sess", 1))
	start := time.Now()
	other := lpWorkWaiter(e, e.ctx, lpPoll+lpSettle, b, duroxide.DefaultOnly())
	plain := lpWorkWaiter(e, e.ctx, lpPoll+lpSettle, nil, duroxide.DefaultOnly())
	owner := lpWorkWaiter(e, e.ctx, lpWait, a, duroxide.DefaultOnly())
	lpBlock(e, 3)
	at := time.Now()
	e.enqueueWork(lpSessionItem("lp-sess", 2, "s1"))
	lpWantItem(e.t, lpRecv(e.t, owner, lpWait), "lp-sess", at, at.Add(lpSlack))
	lpWantNone(e.t, lpRecv(e.t, other, lpWait), start, lpPoll+lpSettle)
	lpWantNone(e.t, lpRecv(e.t, plain, lpWait), start, lpPoll+lpSettle)
}

// lpOwnersRounds repeats lpOwnersBothWoken: the wake-up it guards against
// losing depends on which waiter the server hands a marker to.
const lpOwnersRounds = 5

// lpOwnersBothWoken proves session-aware waiters of two different owners,
// both blocked on the default queue, each get one of two plain items
// (duroxide.Provider docs "no waiter sleeps while eligible work waits"): plain
// work is not tied to an owner, so neither may sleep while it waits.
func lpOwnersBothWoken(e *env) {
	for round := range lpOwnersRounds {
		var waiters []<-chan lpResult
		for _, owner := range []string{"owner-a", "owner-b"} {
			s := &duroxide.SessionFetchConfig{OwnerID: owner, LockTimeout: longLock}
			waiters = append(waiters, lpWorkWaiter(e, e.ctx, lpWait, s, duroxide.DefaultOnly()))
		}
		lpBlock(e, 2)
		at := time.Now()
		ids := map[string]bool{}
		for i := range waiters {
			id := fmt.Sprintf("lp-owners-%d-%d", round, i)
			ids[id] = true
			e.enqueueWork(activity(id, 1))
		}
		for _, w := range waiters {
			r := lpRecv(e.t, w, lpWait)
			lpWantItem(e.t, r, r.got.id, at, at.Add(lpSlack))
			if !ids[r.got.id] {
				e.t.Fatalf("round %d: a waiter got %q, want one of %v, each once", round, r.got.id, ids)
			}
			delete(ids, r.got.id)
		}
	}
}

// lpNoTagsWaits proves a NoTags fetch (a worker that takes nothing) honours
// pollTimeout and leaves the pending work untouched.
func lpNoTagsWaits(e *env) {
	e.enqueueWork(activity("lp-notags", 1))
	start := time.Now()
	r := lpRecv(e.t, lpWorkWaiter(e, e.ctx, lpPoll, nil, duroxide.NoTags()), lpPoll+2*lpSlack)
	lpWantNone(e.t, r, start, lpPoll)
	w := e.fetchWork(longLock, nil, duroxide.DefaultOnly())
	if w == nil || w.AttemptCount != 1 {
		e.t.Fatalf("fetch after the NoTags poll returned %+v, want the item at attempt 1", w)
	}
}

// lpNoTagsCancel proves a NoTags long poll ends promptly with the context
// error when its context is cancelled.
func lpNoTagsCancel(e *env) {
	ctx, cancel := context.WithCancel(e.ctx)
	ch := lpWorkWaiter(e, ctx, lpWait, nil, duroxide.NoTags())
	lpSettleUnseen()
	cancel()
	lpWantCtxErr(e.t, ctx, lpRecv(e.t, ch, lpSlack), "fetch_work_item")
}
