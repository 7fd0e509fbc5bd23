package providertest

import (
	"context"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The Sticky section: the optional sticky routing of duroxide.StickyRouter.
// Two runtimes, owners "a" and "b", call one provider with their routes in
// the context (a view: stView; the plain one has no route); an instance
// whose last turn a acked is offered to a alone for the wait, then to every
// fetcher (a still first). What it must never change: locks, attempts,
// messages. A provider without the interface skips the section.

func init() { register("Sticky", runSticky) }

// Timing of the section. stWait is long enough that a fetch made right
// after a message arrives is surely inside the wait on a loaded machine;
// cases that let it pass move the storage clock (or sleep) past it.
const (
	stWait = 2 * time.Second
	stTTL  = time.Hour
	stPast = stWait + 200*time.Millisecond
)

// stCases lists the section's cases.
var stCases = []envCase{
	{"InvalidOptions", stInvalidOptions},
	{"OwnerFetchesFirst", stOwnerFetchesFirst},
	{"AnyFetcherAfterWait", stAnyFetcherAfterWait},
	{"OwnerTakesItAfterWaitToo", stOwnerTakesItAfterWaitToo},
	{"LongPollWakesOwner", stLongPollWakesOwner},
	{"LongPollWakesOthersAfterWait", stLongPollWakesOthersAfterWait},
	{"Expiry", stExpiry},
	{"GoneOwnerStrandsNothing", stGoneOwnerStrandsNothing},
	{"LocksUnchanged", stLocksUnchanged},
	{"PlainAckEndsStickiness", stPlainAckEndsStickiness},
	{"TerminalAckEndsStickiness", stTerminalAckEndsStickiness},
	{"FilterApplies", stFilterApplies},
	{"DelayedMessageOfferedToOwner", stDelayedMessageOfferedToOwner},
	{"AckAndFetchTakesOwnInstance", stAckAndFetchTakesOwnInstance},
	{"LazyFetchTakesOwnInstance", stLazyFetchTakesOwnInstance},
	{"DeleteLeavesNothing", stDeleteLeavesNothing},
}

func runSticky(t *testing.T, h Harness) {
	p := h.New(t)
	if sr, ok := p.(duroxide.StickyRouter); !ok || !sr.SupportsStickyRouting() {
		t.Skipf("%s does not route sticky (duroxide.StickyRouter)", p.Name())
	}
	runCases(t, h, stCases)
}

// stView is how one runtime calls the provider: the context its calls
// carry.
type stView struct{ ctx context.Context }

// view returns owner's view of the provider.
func (e *env) view(owner string, wait, ttl time.Duration) stView {
	return stView{duroxide.WithStickyRoute(e.ctx, duroxide.StickyRoute{Owner: owner, Wait: wait, TTL: ttl})}
}

// plain is the view of a fetcher without a route.
func (e *env) plain() stView { return stView{e.ctx} }

// stViews returns the views of owners a and b with the section's timing.
func (e *env) stViews() (a, b stView) {
	return e.view("a", stWait, stTTL), e.view("b", stWait, stTTL)
}

// fetchVia fetches without waiting through p; nil when nothing is fetchable.
func (e *env) fetchVia(v stView, f *duroxide.DispatcherCapabilityFilter) *duroxide.OrchestrationItem {
	e.t.Helper()
	item, err := e.p.FetchOrchestrationItem(v.ctx, longLock, 0, f)
	if err != nil {
		e.t.Fatalf("FetchOrchestrationItem: %v", err)
	}
	return item
}

// wantNone asserts that the fetchers (named for the message) get nothing.
func (e *env) wantNone(who string, vs ...stView) {
	e.t.Helper()
	for _, v := range vs {
		if item := e.fetchVia(v, nil); item != nil {
			e.t.Fatalf("%s fetched instance %q, want nothing", who, item.Instance)
		}
	}
}

// wantInstance asserts that v fetches instance now, and returns the item.
func (e *env) wantInstance(who string, v stView, instance string) *duroxide.OrchestrationItem {
	e.t.Helper()
	item := e.fetchInOrder(instance, func() *duroxide.OrchestrationItem { return e.fetchVia(v, nil) })
	if item == nil || item.Instance != instance {
		e.t.Fatalf("%s fetched %v, want instance %q", who, itemName(item), instance)
	}
	return item
}

// itemName describes a fetch result for messages.
func itemName(item *duroxide.OrchestrationItem) string {
	if item == nil {
		return "nothing"
	}
	return "instance " + item.Instance
}

// runningCommit is a turn of execution 1 that schedules activity id and
// leaves the execution running; first adds the OrchestrationStarted event.
func runningCommit(instance string, id uint64, first bool, pin *semver.Version) duroxide.OrchestrationCommit {
	var delta []duroxide.Event
	if first {
		delta = append(delta, started(instance, 1, "Orch", "1.0.0"))
	}
	delta = append(delta, event(id, instance, 1, duroxide.ActivityScheduledEvent{Name: "Act", Input: `"x"`}))
	return duroxide.OrchestrationCommit{
		ExecutionID: 1, HistoryDelta: delta,
		Metadata: duroxide.ExecutionMetadata{
			Status: "Running", OrchestrationName: "Orch", OrchestrationVersion: "1.0.0", PinnedDuroxideVersion: pin,
		},
	}
}

// ackVia commits c through v or fails the test.
func (e *env) ackVia(v stView, token string, c duroxide.OrchestrationCommit) {
	e.t.Helper()
	if err := e.p.AckOrchestrationItem(v.ctx, token, c); err != nil {
		e.t.Fatalf("AckOrchestrationItem: %v", err)
	}
}

// stickyTo starts instance through owner's view: its first turn is fetched
// and acked there, running, so it is sticky to owner. No message is left.
func (e *env) stickyTo(owner stView, instance string, pin *semver.Version) {
	e.t.Helper()
	e.enqueue(startItem(instance, "Orch"), 0)
	item := e.wantInstance("owner", owner, instance)
	e.ackVia(owner, item.LockToken, runningCommit(instance, 2, true, pin))
}

// ownersSecondTurn makes instance "i" sticky to a, sends it a message and
// returns the views and a's fetch of it.
func (e *env) ownersSecondTurn() (a, b stView, item *duroxide.OrchestrationItem) {
	e.t.Helper()
	a, b = e.stViews()
	e.stickyTo(a, "i", nil)
	e.enqueue(completed("i", 2), 0)
	return a, b, e.wantInstance("owner a", a, "i")
}

// longPoll starts a fetch through v that waits up to lpWait, lets it
// block, and returns where its result will arrive.
func (e *env) longPoll(who string, v stView) <-chan *duroxide.OrchestrationItem {
	got := make(chan *duroxide.OrchestrationItem, 1)
	go func() {
		item, err := e.p.FetchOrchestrationItem(v.ctx, longLock, lpWait, nil)
		if err != nil {
			e.t.Errorf("long poll of %s: %v", who, err)
		}
		got <- item
	}()
	lpBlock(e, 1)
	return got
}

// stInvalidOptions: a fetch or ack whose route is invalid fails with a
// permanent ErrInvalidInput error and changes nothing.
func stInvalidOptions(e *env) {
	e.enqueue(startItem("i", "Orch"), 0)
	for _, r := range []duroxide.StickyRoute{
		{Owner: "", Wait: stWait, TTL: stTTL},
		{Owner: "a", Wait: 0, TTL: stTTL},
		{Owner: "a", Wait: -time.Second, TTL: stTTL},
		{Owner: "a", Wait: stWait, TTL: 0},
	} {
		ctx := duroxide.WithStickyRoute(e.ctx, r)
		item, err := e.p.FetchOrchestrationItem(ctx, longLock, 0, nil)
		if item != nil {
			e.t.Fatalf("a fetch with route %+v took instance %q", r, item.Instance)
		}
		wantPermanent(e.t, err, duroxide.ErrInvalidInput, "")
	}
	item := e.wantInstance("a plain fetcher", e.plain(), "i")
	bad := duroxide.WithStickyRoute(e.ctx, duroxide.StickyRoute{Owner: "a", TTL: stTTL})
	wantPermanent(e.t, e.p.AckOrchestrationItem(bad, item.LockToken, runningCommit("i", 2, true, nil)), duroxide.ErrInvalidInput, "")
	e.ack(item.LockToken, runningCommit("i", 2, true, nil)) // the lock is still held
}

// stOwnerFetchesFirst: a message for an instance sticky to a is offered to
// a alone: b and a plain fetch get nothing, a gets it, with its message.
func stOwnerFetchesFirst(e *env) {
	a, b := e.stViews()
	e.stickyTo(a, "i", nil)
	e.enqueue(completed("i", 2), 0)
	e.wantNone("b and a plain fetcher, inside the wait", b, e.plain())
	item := e.wantInstance("owner a", a, "i")
	e.wantMessages(item, completed("i", 2))
	if item.AttemptCount != 1 {
		e.t.Fatalf("AttemptCount = %d, want 1", item.AttemptCount)
	}
}

// stAnyFetcherAfterWait: once the wait has passed, any fetcher takes it.
func stAnyFetcherAfterWait(e *env) {
	a, b := e.stViews()
	e.stickyTo(a, "i", nil)
	e.enqueue(completed("i", 2), 0)
	e.wantNone("b, inside the wait", b)
	e.wait(stPast)
	item := e.wantInstance("b, after the wait", b, "i")
	e.wantMessages(item, completed("i", 2))
}

// stOwnerTakesItAfterWaitToo: after the wait the owner still takes its
// instance, in order with newer work.
func stOwnerTakesItAfterWaitToo(e *env) {
	a, _ := e.stViews()
	e.stickyTo(a, "i", nil)
	e.enqueue(completed("i", 2), 0)
	e.wait(stPast)
	e.enqueue(startItem("newer", "Orch"), 0)
	e.wantInstance("owner a, after the wait", a, "i")
	e.wantInstance("owner a, next", a, "newer")
}

// stLongPollWakesOwner: a's waiting fetch returns as soon as its instance
// gets a message.
func stLongPollWakesOwner(e *env) {
	a, _ := e.stViews()
	e.stickyTo(a, "i", nil)
	got := e.longPoll("a", a)
	sent := time.Now()
	e.enqueue(completed("i", 2), 0)
	item := <-got
	if item == nil || item.Instance != "i" {
		e.t.Fatalf("a's long poll returned %s, want instance i", itemName(item))
	}
	if d := time.Since(sent); d > lpSlack {
		e.t.Fatalf("a's long poll returned %v after the message, want promptly", d)
	}
}

// stLongPollWakesOthersAfterWait: b, already waiting when a's instance gets
// a message a never fetches, takes it once the wait has passed, without
// waiting for its own poll timeout.
func stLongPollWakesOthersAfterWait(e *env) {
	const wait = 300 * time.Millisecond
	a, b := e.view("a", wait, stTTL), e.view("b", wait, stTTL)
	e.stickyTo(a, "i", nil)
	got := e.longPoll("b", b)
	sent := time.Now()
	e.enqueue(completed("i", 2), 0)
	item := <-got
	d := time.Since(sent)
	if item == nil || item.Instance != "i" {
		e.t.Fatalf("b's long poll returned %s, want instance i", itemName(item))
	}
	if d < wait-lpTol || d > wait+lpSlack {
		e.t.Fatalf("b's long poll returned %v after the message, want after the wait (%v), promptly", d, wait)
	}
}

// stExpiry: an instance whose last ack is older than the TTL is no longer
// sticky: any fetcher takes its next message at once.
func stExpiry(e *env) {
	const ttl = time.Second
	a, b := e.view("a", stWait, ttl), e.view("b", stWait, ttl)
	e.stickyTo(a, "i", nil)
	e.wait(ttl + 200*time.Millisecond)
	e.enqueue(completed("i", 2), 0)
	e.wantInstance("b, after the TTL", b, "i")
}

// stGoneOwnerStrandsNothing: a never fetches again; b takes the instance
// after the wait, and its running ack makes it sticky to b instead.
func stGoneOwnerStrandsNothing(e *env) {
	a, b := e.stViews()
	e.stickyTo(a, "i", nil)
	e.enqueue(completed("i", 2), 0)
	e.wait(stPast)
	item := e.wantInstance("b, after the wait", b, "i")
	e.ackVia(b, item.LockToken, runningCommit("i", 3, false, nil))
	e.enqueue(completed("i", 3), 0)
	e.wantNone("a and a plain fetcher, now that i is b's", a, e.plain())
	e.wantInstance("b", b, "i")
}

// stLocksUnchanged: stickiness never hands out a locked instance, neither
// to the owner nor after the wait, and the owner's next offer comes with the
// release of the lock.
func stLocksUnchanged(e *env) {
	a, b, held := e.ownersSecondTurn()
	e.enqueue(event2("i"), 0)
	e.wait(stPast)
	e.wantNone("a, b and a plain fetcher while a holds the lock", a, b, e.plain())
	e.ackVia(a, held.LockToken, runningCommit("i", 3, false, nil))
	e.wantNone("b, inside the new wait", b)
	item := e.wantInstance("owner a, after its ack", a, "i")
	e.wantMessages(item, event2("i"))
	if item.AttemptCount != 1 {
		e.t.Fatalf("AttemptCount = %d, want 1", item.AttemptCount)
	}
	// b takes it only after a gave it back and the wait passed
	e.abandon(item.LockToken, 0, false)
	e.wantNone("b, inside the wait after the abandon", b)
	e.wait(stPast)
	again := e.wantInstance("b, after the wait", b, "i")
	if again.AttemptCount != 2 {
		e.t.Fatalf("AttemptCount after an abandon = %d, want 2", again.AttemptCount)
	}
	e.wantNone("a while b holds the lock", a)
}

// event2 is an external event for instance, a second kind of message.
func event2(instance string) duroxide.ExternalRaised {
	return duroxide.ExternalRaised{Instance: instance, Name: "go", Data: `"2"`}
}

// stPlainAckEndsStickiness: a turn acked through a provider that is not a
// view leaves the instance sticky to nobody.
func stPlainAckEndsStickiness(e *env) {
	_, b, item := e.ownersSecondTurn()
	e.ack(item.LockToken, runningCommit("i", 3, false, nil))
	e.enqueue(completed("i", 3), 0)
	e.wantInstance("b, after a plain ack", b, "i")
}

// stTerminalAckEndsStickiness: a completing turn ends stickiness even
// through the owner's view.
func stTerminalAckEndsStickiness(e *env) {
	a, b, item := e.ownersSecondTurn()
	done := runningCommit("i", 3, false, nil)
	done.HistoryDelta[0] = event(3, "i", 1, duroxide.OrchestrationCompletedEvent{Output: `"ok"`})
	done.Metadata.Status, done.Metadata.Output = "Completed", ptr(`"ok"`)
	e.ackVia(a, item.LockToken, done)
	e.enqueue(event2("i"), 0)
	e.wantInstance("b, after a completing ack", b, "i")
}

// stFilterApplies: the owner's capability filter applies to its offers; a
// compatible fetcher takes the instance after the wait.
func stFilterApplies(e *env) {
	a, b := e.stViews()
	e.stickyTo(a, "i", ver(e.t, "1.0.0"))
	e.enqueue(completed("i", 2), 0)
	if item := e.fetchVia(a, filter(e.t, "2.0.0", "3.0.0")); item != nil {
		e.t.Fatalf("a with an incompatible filter fetched %s", itemName(item))
	}
	e.wait(stPast)
	if item := e.fetchVia(b, filter(e.t, "2.0.0", "3.0.0")); item != nil {
		e.t.Fatalf("b with an incompatible filter fetched %s", itemName(item))
	}
	item := e.fetchVia(b, filter(e.t, "1.0.0", "1.5.0"))
	if item == nil || item.Instance != "i" {
		e.t.Fatalf("b with a compatible filter fetched %s, want instance i", itemName(item))
	}
}

// stDelayedMessageOfferedToOwner: a message that becomes visible later (a
// timer) is offered to the owner too.
func stDelayedMessageOfferedToOwner(e *env) {
	a, b := e.stViews()
	e.stickyTo(a, "i", nil)
	e.enqueue(completed("i", 2), time.Second)
	e.wantNone("a and b before the message is visible", a, b)
	e.wait(1100 * time.Millisecond)
	e.wantNone("b once the message is visible", b)
	e.wantInstance("owner a once the message is visible", a, "i")
}

// stAckAndFetchTakesOwnInstance: the fetch half of the owner's
// ack-and-fetch takes the owner's offer, and nobody else's.
func stAckAndFetchTakesOwnInstance(e *env) {
	a, b := e.stViews()
	af, ok := e.p.(duroxide.OrchestrationAckFetcher)
	if !ok {
		e.t.Skip("the provider does not implement duroxide.OrchestrationAckFetcher")
	}
	e.stickyTo(a, "mine", nil)
	e.stickyTo(b, "theirs", nil)
	e.enqueue(startItem("other", "Orch"), 0)
	other := e.wantInstance("a", a, "other")
	e.enqueue(completed("theirs", 2), 0)
	e.enqueue(completed("mine", 2), 0)
	next, err := af.AckOrchestrationItemAndFetch(a.ctx, other.LockToken, runningCommit("other", 2, true, nil), longLock, 0, nil)
	if err != nil || next == nil || next.Instance != "mine" {
		e.t.Fatalf("a's ack-and-fetch fetched %s (%v), want instance mine", itemName(next), err)
	}
	e.wantInstance("b", b, "theirs")
}

// stLazyFetchTakesOwnInstance: the history-free fetch routes as the plain
// one.
func stLazyFetchTakesOwnInstance(e *env) {
	a, b := e.stViews()
	lf, ok := e.p.(duroxide.LazyHistoryFetcher)
	if !ok {
		e.t.Skip("the provider does not implement duroxide.LazyHistoryFetcher")
	}
	lazy := func(v stView) *duroxide.OrchestrationItem {
		item, err := lf.FetchOrchestrationItemLazy(v.ctx, longLock, 0, nil)
		if err != nil {
			e.t.Fatalf("FetchOrchestrationItemLazy: %v", err)
		}
		return item
	}
	e.stickyTo(a, "i", nil)
	e.enqueue(completed("i", 2), 0)
	if item := lazy(b); item != nil {
		e.t.Fatalf("b's lazy fetch took %s inside the wait", itemName(item))
	}
	if item := lazy(a); item == nil || item.Instance != "i" {
		e.t.Fatalf("a's lazy fetch took %s, want instance i", itemName(item))
	}
}

// stDeleteLeavesNothing: deleting an instance offered to its owner, and
// one ready to all and still preferred by its owner, leaves no sticky entry
// behind.
func stDeleteLeavesNothing(e *env) {
	if e.h.StoredKeys == nil {
		e.t.Skip("Harness.StoredKeys is nil: cannot check that deletion leaves nothing behind")
	}
	adm := e.p.Admin()
	if adm == nil {
		e.t.Skip("the provider has no management capability")
	}
	a, _ := e.stViews()
	e.stickyTo(a, "preferred", nil)
	e.stickyTo(a, "offered", nil)
	e.enqueue(completed("preferred", 2), 0)
	e.wait(stPast)
	e.enqueue(completed("offered", 2), 0)
	// queue depths count what is fetchable: a provider applies what time
	// made due first (the Redis one does)
	if _, err := adm.GetQueueDepths(e.ctx); err != nil {
		e.t.Fatalf("GetQueueDepths: %v", err)
	}
	for _, inst := range []string{"preferred", "offered"} {
		if _, err := adm.DeleteInstance(e.ctx, inst, true); err != nil {
			e.t.Fatalf("DeleteInstance(%s): %v", inst, err)
		}
	}
	if keys := e.h.StoredKeys(e.t, e.p); len(keys) != 0 {
		e.t.Fatalf("after deleting every instance, StoredKeys = %q, want none", keys)
	}
}
