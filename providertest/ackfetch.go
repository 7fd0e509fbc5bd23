package providertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The AckFetch section: the optional one-call ack-and-fetch of
// duroxide.WorkAckFetcher and duroxide.OrchestrationAckFetcher. Its cases
// check what the combined call adds to the plain ones: the fetch runs only
// after a successful ack, errors of the ack are the plain ack's and fetch
// nothing, invalid fetch arguments change nothing, errors after the ack are
// *duroxide.FetchAfterAckError, and long polling starts once the ack is
// durable. A provider without the interfaces skips the section. The plain
// sections' ack invariants are rerun through the combined call in
// ackfetch_paths.go.

func init() { register("AckFetch", runAckFetch) }

// afGroups lists the section's cases, worker then orchestrator.
var afGroups = []caseGroup{
	{"Worker", []envCase{
		{"AcksAndFetchesNext", afWorkAcksAndFetchesNext},
		{"AckFailureFetchesNothing", afWorkAckFailureFetchesNothing},
		{"InvalidFetchArgumentsChangeNothing", afWorkInvalidFetchArgumentsChangeNothing},
		{"NothingToFetchStillAcks", afWorkNothingToFetchStillAcks},
		{"LongPollStartsAfterAck", afWorkLongPollStartsAfterAck},
		{"CancelWhileWaitingIsAfterAck", afWorkCancelWhileWaitingIsAfterAck},
		{"SessionItemClaimsSession", afWorkSessionItemClaimsSession},
	}},
	{"Orchestrator", []envCase{
		{"CommitsAndFetchesNext", afOrchCommitsAndFetchesNext},
		{"AckFailureFetchesNothing", afOrchAckFailureFetchesNothing},
		{"DuplicateEventFetchesNothing", afOrchDuplicateEventFetchesNothing},
		{"InvalidFetchArgumentsChangeNothing", afOrchInvalidFetchArgumentsChangeNothing},
		{"RefetchesSameInstanceWithNewMessages", afOrchRefetchesSameInstanceWithNewMessages},
		{"NothingToFetchStillCommits", afOrchNothingToFetchStillCommits},
		{"LongPollStartsAfterAck", afOrchLongPollStartsAfterAck},
		{"CancelWhileWaitingIsAfterAck", afOrchCancelWhileWaitingIsAfterAck},
	}},
}

func runAckFetch(t *testing.T, h Harness) {
	p := h.New(t)
	_, work := p.(duroxide.WorkAckFetcher)
	_, orch := p.(duroxide.OrchestrationAckFetcher)
	if !work || !orch {
		t.Skipf("%s implements neither or only one of the optional ack-and-fetch interfaces", p.Name())
	}
	runGroups(t, h, afGroups)
	runAckFetchPaths(t, h)
}

// wf is the provider's WorkAckFetcher.
func (e *env) wf() duroxide.WorkAckFetcher { return e.p.(duroxide.WorkAckFetcher) }

// of is the provider's OrchestrationAckFetcher.
func (e *env) of() duroxide.OrchestrationAckFetcher { return e.p.(duroxide.OrchestrationAckFetcher) }

// wantBeforeAck asserts err is a permanent error of kind that is not marked
// as coming after an applied ack.
func wantBeforeAck(t *testing.T, err, kind error, op string) {
	t.Helper()
	wantPermanent(t, err, kind, op)
	if duroxide.FetchFailedAfterAck(err) {
		t.Fatalf("error %v is marked as after the ack; the ack failed", err)
	}
}

// wantAcked asserts the worker lock token is gone: its ack was applied.
func (e *env) wantAcked(token string) {
	e.t.Helper()
	wantPermanent(e.t, e.p.RenewWorkItemLock(e.ctx, token, longLock), duroxide.ErrLockLost, "renew_work_item_lock")
}

// wantHeld asserts the worker lock token still holds its item.
func (e *env) wantHeld(token string) {
	e.t.Helper()
	if err := e.p.RenewWorkItemLock(e.ctx, token, longLock); err != nil {
		e.t.Fatalf("renew of the item whose ack must not have applied: %v", err)
	}
}

// afWorkAcksAndFetchesNext: the ack deletes the item and delivers its
// completion; the fetch locks the next item with a fresh token and a first
// attempt.
func afWorkAcksAndFetchesNext(e *env) {
	e.start("af-a", nil)
	e.enqueueWork(activity("af-a", 2))
	e.enqueueWork(activity("af-a", 3))
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	next, err := e.wf().AckWorkItemAndFetch(e.ctx, w.LockToken, completed("af-a", 2), longLock, 0, nil, duroxide.DefaultOnly())
	if err != nil || next == nil {
		e.t.Fatalf("AckWorkItemAndFetch = %v, %v; want the next item", next, err)
	}
	sameItems(e.t, "fetched item", []duroxide.WorkItem{next.Item}, activity("af-a", 3))
	if next.LockToken == "" || next.LockToken == w.LockToken || next.AttemptCount != 1 {
		e.t.Fatalf("fetched token %q (acked %q), attempt %d; want a new token, attempt 1", next.LockToken, w.LockToken, next.AttemptCount)
	}
	e.wantAcked(w.LockToken)
	e.wantHeld(next.LockToken)
	e.noWork(duroxide.AnyTag())
	e.wkWantMessages("af-a", completed("af-a", 2))
}

// afWorkAckFailureFetchesNothing: an ack with a lost token is AckWorkItem's
// error, delivers nothing and leaves the queued item unlocked.
func afWorkAckFailureFetchesNothing(e *env) {
	e.start("af-a", nil)
	e.enqueueWork(activity("af-a", 2))
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	e.ackWork(w.LockToken, nil)
	e.enqueueWork(activity("af-a", 3))
	next, err := e.wf().AckWorkItemAndFetch(e.ctx, w.LockToken, completed("af-a", 2), longLock, 0, nil, duroxide.DefaultOnly())
	if next != nil {
		e.t.Fatalf("a failed ack fetched %+v", next.Item)
	}
	wantBeforeAck(e.t, err, duroxide.ErrLockLost, "ack_work_item")
	got := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	sameItems(e.t, "item left queued", []duroxide.WorkItem{got.Item}, activity("af-a", 3))
	e.wkWantMessages("af-a")
}

// afWorkInvalidFetchArgumentsChangeNothing: arguments of the fetch half are
// validated before the ack: invalid ones leave the lock held.
func afWorkInvalidFetchArgumentsChangeNothing(e *env) {
	e.start("af-a", nil)
	e.enqueueWork(activity("af-a", 2))
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	bad := []struct {
		name       string
		lock, poll time.Duration
		session    *duroxide.SessionFetchConfig
		tags       duroxide.TagFilter
	}{
		{"tag filter", longLock, 0, nil, duroxide.TagsOnly()},
		{"lock timeout", -time.Second, 0, nil, duroxide.DefaultOnly()},
		{"poll timeout", longLock, -time.Second, nil, duroxide.DefaultOnly()},
		{"session owner", longLock, 0, &duroxide.SessionFetchConfig{LockTimeout: longLock}, duroxide.DefaultOnly()},
	}
	for _, b := range bad {
		next, err := e.wf().AckWorkItemAndFetch(e.ctx, w.LockToken, completed("af-a", 2), b.lock, b.poll, b.session, b.tags)
		if next != nil {
			e.t.Fatalf("invalid %s fetched %+v", b.name, next.Item)
		}
		wantBeforeAck(e.t, err, duroxide.ErrInvalidInput, "fetch_work_item")
		e.wantHeld(w.LockToken)
	}
	e.wkWantMessages("af-a")
}

// afWorkNothingToFetchStillAcks: with nothing eligible the call returns no
// item and no error, and the ack is applied.
func afWorkNothingToFetchStillAcks(e *env) {
	e.start("af-a", nil)
	e.enqueueWork(activity("af-a", 2))
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	next, err := e.wf().AckWorkItemAndFetch(e.ctx, w.LockToken, completed("af-a", 2), longLock, 0, nil, duroxide.DefaultOnly())
	if next != nil || err != nil {
		e.t.Fatalf("AckWorkItemAndFetch on an empty queue = %v, %v; want nil, nil", next, err)
	}
	e.wantAcked(w.LockToken)
	e.wkWantMessages("af-a", completed("af-a", 2))
}

// afWorkLongPollStartsAfterAck: while the call waits for work, its ack is
// already durable; work enqueued during the wait is returned.
func afWorkLongPollStartsAfterAck(e *env) {
	e.start("af-a", nil)
	e.enqueueWork(activity("af-a", 2))
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	type result struct {
		item *duroxide.LockedWorkItem
		err  error
	}
	done := make(chan result, 1)
	go func() {
		item, err := e.wf().AckWorkItemAndFetch(e.ctx, w.LockToken, completed("af-a", 2), longLock, 20*time.Second, nil, duroxide.DefaultOnly())
		done <- result{item, err}
	}()
	eventually(e.t, 5*time.Second, "the ack applied while the call waits", func() bool {
		return e.p.RenewWorkItemLock(e.ctx, w.LockToken, longLock) != nil
	})
	select {
	case r := <-done:
		e.t.Fatalf("the call returned %v, %v before any work arrived", r.item, r.err)
	default:
	}
	e.enqueueWork(activity("af-a", 3))
	select {
	case r := <-done:
		if r.err != nil || r.item == nil {
			e.t.Fatalf("AckWorkItemAndFetch = %v, %v; want the item enqueued while it waited", r.item, r.err)
		}
		sameItems(e.t, "fetched item", []duroxide.WorkItem{r.item.Item}, activity("af-a", 3))
	case <-time.After(10 * time.Second):
		e.t.Fatal("the waiting call did not return the item enqueued for it")
	}
}

// afWorkCancelWhileWaitingIsAfterAck: cancelling the context while the
// call waits after its ack returns the context's error marked as after the
// ack.
func afWorkCancelWhileWaitingIsAfterAck(e *env) {
	e.start("af-a", nil)
	e.enqueueWork(activity("af-a", 2))
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	e.afCancelWhileWaiting(func(ctx context.Context) error {
		_, err := e.wf().AckWorkItemAndFetch(ctx, w.LockToken, completed("af-a", 2), longLock, 20*time.Second, nil, duroxide.DefaultOnly())
		return err
	}, func() bool { return e.p.RenewWorkItemLock(e.ctx, w.LockToken, longLock) != nil })
	e.wkWantMessages("af-a", completed("af-a", 2))
}

// afCancelWhileWaiting runs call, an ack-and-fetch that finds nothing to
// fetch, until acked reports its ack applied, then cancels its context: the
// call must return the context's error marked as after the ack.
func (e *env) afCancelWhileWaiting(call func(ctx context.Context) error, acked func() bool) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- call(ctx) }()
	eventually(e.t, 5*time.Second, "the ack applied while the call waits", acked)
	cancel()
	select {
	case err := <-done:
		if !duroxide.FetchFailedAfterAck(err) || !errors.Is(err, context.Canceled) {
			e.t.Fatalf("cancelled wait after the ack returned %v; want a FetchAfterAckError of context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		e.t.Fatal("the call did not return after its context was cancelled")
	}
}

// afWorkSessionItemClaimsSession: the fetch half routes sessions as
// FetchWorkItem does: it takes an unowned session's item and claims the
// session, so another owner gets nothing of it.
func afWorkSessionItemClaimsSession(e *env) {
	e.start("af-a", nil)
	e.enqueueWork(activity("af-a", 2))
	sess := activity("af-a", 3)
	sess.SessionID = ptr("s1")
	e.enqueueWork(sess)
	w := e.mustFetchWork(longLock, duroxide.DefaultOnly())
	mine := &duroxide.SessionFetchConfig{OwnerID: "owner-1", LockTimeout: longLock}
	next, err := e.wf().AckWorkItemAndFetch(e.ctx, w.LockToken, nil, longLock, 0, mine, duroxide.DefaultOnly())
	if err != nil || next == nil {
		e.t.Fatalf("AckWorkItemAndFetch with a session config = %v, %v; want the session item", next, err)
	}
	sameItems(e.t, "session item", []duroxide.WorkItem{next.Item}, sess)
	e.abandonWork(next.LockToken, 0, false)
	other := &duroxide.SessionFetchConfig{OwnerID: "owner-2", LockTimeout: longLock}
	if got := e.fetchWork(longLock, other, duroxide.DefaultOnly()); got != nil {
		e.t.Fatalf("another owner fetched %+v from a session the ack-and-fetch claimed", got.Item)
	}
}

// ---- orchestrator ------------------------------------------------------------

// afStartCommit is the first turn of instance: OrchestrationStarted.
func afStartCommit(instance string) duroxide.OrchestrationCommit {
	return duroxide.OrchestrationCommit{
		ExecutionID:  1,
		HistoryDelta: []duroxide.Event{started(instance, 1, "Orch", "1.0.0")},
		Metadata:     duroxide.ExecutionMetadata{OrchestrationName: "Orch", OrchestrationVersion: "1.0.0"},
	}
}

// afWantHistory asserts instance's current history has n events.
func (e *env) afWantHistory(instance string, n int) {
	e.t.Helper()
	if h := e.read(instance, 0); len(h) != n {
		e.t.Fatalf("history of %s has %d events, want %d", instance, len(h), n)
	}
}

// afOrchCommitsAndFetchesNext: the turn is committed, its lock released, and
// the next instance is locked with its messages.
func afOrchCommitsAndFetchesNext(e *env) {
	e.enqueue(startItem("af-a", "Orch"), 0)
	e.enqueue(startItem("af-b", "Orch"), 0)
	item := e.fetchInstance("af-a")
	next, err := e.of().AckOrchestrationItemAndFetch(e.ctx, item.LockToken, afStartCommit("af-a"), longLock, 0, nil)
	if err != nil || next == nil {
		e.t.Fatalf("AckOrchestrationItemAndFetch = %v, %v; want instance af-b", next, err)
	}
	if next.Instance != "af-b" || next.LockToken == item.LockToken || next.AttemptCount != 1 {
		e.t.Fatalf("fetched %q token %q attempt %d; want af-b, a new token, attempt 1", next.Instance, next.LockToken, next.AttemptCount)
	}
	e.wantMessages(next, startItem("af-b", "Orch"))
	e.afWantHistory("af-a", 1)
	wantPermanent(e.t, e.p.RenewOrchestrationItemLock(e.ctx, item.LockToken, longLock), duroxide.ErrLockLost, "renew_orchestration_item_lock")
	e.noFetch(nil)
}

// afOrchAckFailureFetchesNothing: an unknown token is AckOrchestrationItem's
// error, and no instance is locked.
func afOrchAckFailureFetchesNothing(e *env) {
	e.enqueue(startItem("af-b", "Orch"), 0)
	next, err := e.of().AckOrchestrationItemAndFetch(e.ctx, "af-no-such-token", afStartCommit("af-a"), longLock, 0, nil)
	if next != nil {
		e.t.Fatalf("a failed ack fetched instance %q", next.Instance)
	}
	wantBeforeAck(e.t, err, duroxide.ErrLockLost, "ack_orchestration_item")
	e.fetchInstance("af-b")
}

// afOrchDuplicateEventFetchesNothing: a commit rejected for a duplicate
// event id writes nothing and locks nothing.
func afOrchDuplicateEventFetchesNothing(e *env) {
	e.start("af-a", nil)
	e.enqueue(duroxide.ExternalRaised{Instance: "af-a", Name: "x", Data: "1"}, 0)
	e.enqueue(startItem("af-b", "Orch"), 0)
	item := e.fetchInstance("af-a")
	next, err := e.of().AckOrchestrationItemAndFetch(e.ctx, item.LockToken, afStartCommit("af-a"), longLock, 0, nil)
	if next != nil {
		e.t.Fatalf("a rejected commit fetched instance %q", next.Instance)
	}
	wantBeforeAck(e.t, err, duroxide.ErrDuplicateEvent, "ack_orchestration_item")
	e.afWantHistory("af-a", 1)
	if err := e.p.RenewOrchestrationItemLock(e.ctx, item.LockToken, longLock); err != nil {
		e.t.Fatalf("the lock of the rejected commit must still be held: %v", err)
	}
	e.fetchInstance("af-b")
}

// afOrchInvalidFetchArgumentsChangeNothing: invalid fetch durations are
// rejected before the commit.
func afOrchInvalidFetchArgumentsChangeNothing(e *env) {
	e.enqueue(startItem("af-a", "Orch"), 0)
	item := e.fetchInstance("af-a")
	for _, d := range [][2]time.Duration{{-time.Second, 0}, {longLock, -time.Second}} {
		next, err := e.of().AckOrchestrationItemAndFetch(e.ctx, item.LockToken, afStartCommit("af-a"), d[0], d[1], nil)
		if next != nil {
			e.t.Fatalf("invalid durations %v fetched instance %q", d, next.Instance)
		}
		wantBeforeAck(e.t, err, duroxide.ErrInvalidInput, "fetch_orchestration_item")
	}
	e.afWantHistory("af-a", 0)
	e.ack(item.LockToken, afStartCommit("af-a"))
}

// afOrchRefetchesSameInstanceWithNewMessages: messages that arrived during
// the turn make the acked instance eligible again at once.
func afOrchRefetchesSameInstanceWithNewMessages(e *env) {
	e.enqueue(startItem("af-a", "Orch"), 0)
	item := e.fetchInstance("af-a")
	ev := duroxide.ExternalRaised{Instance: "af-a", Name: "x", Data: "1"}
	e.enqueue(ev, 0)
	next, err := e.of().AckOrchestrationItemAndFetch(e.ctx, item.LockToken, afStartCommit("af-a"), longLock, 0, nil)
	if err != nil || next == nil || next.Instance != "af-a" {
		e.t.Fatalf("AckOrchestrationItemAndFetch = %v, %v; want af-a again", next, err)
	}
	e.wantMessages(next, ev)
	if len(next.History) != 1 || next.OrchestrationName != "Orch" {
		e.t.Fatalf("refetched af-a with %d events, name %q; want the committed turn", len(next.History), next.OrchestrationName)
	}
}

// afOrchNothingToFetchStillCommits: with nothing eligible the call returns
// no item and no error, and the turn is committed.
func afOrchNothingToFetchStillCommits(e *env) {
	e.enqueue(startItem("af-a", "Orch"), 0)
	item := e.fetchInstance("af-a")
	next, err := e.of().AckOrchestrationItemAndFetch(e.ctx, item.LockToken, afStartCommit("af-a"), longLock, 0, nil)
	if next != nil || err != nil {
		e.t.Fatalf("AckOrchestrationItemAndFetch with nothing queued = %v, %v; want nil, nil", next, err)
	}
	e.afWantHistory("af-a", 1)
	e.noFetch(nil)
}

// afOrchLongPollStartsAfterAck: the turn is committed before the call waits;
// an instance started during the wait is returned.
func afOrchLongPollStartsAfterAck(e *env) {
	e.enqueue(startItem("af-a", "Orch"), 0)
	item := e.fetchInstance("af-a")
	type result struct {
		item *duroxide.OrchestrationItem
		err  error
	}
	done := make(chan result, 1)
	go func() {
		next, err := e.of().AckOrchestrationItemAndFetch(e.ctx, item.LockToken, afStartCommit("af-a"), longLock, 20*time.Second, nil)
		done <- result{next, err}
	}()
	eventually(e.t, 5*time.Second, "the turn committed while the call waits", func() bool {
		h, err := e.p.Read(e.ctx, "af-a")
		return err == nil && len(h) == 1
	})
	select {
	case r := <-done:
		e.t.Fatalf("the call returned %v, %v before any work arrived", r.item, r.err)
	default:
	}
	e.enqueue(startItem("af-b", "Orch"), 0)
	select {
	case r := <-done:
		if r.err != nil || r.item == nil || r.item.Instance != "af-b" {
			e.t.Fatalf("AckOrchestrationItemAndFetch = %v, %v; want af-b, started while it waited", r.item, r.err)
		}
	case <-time.After(10 * time.Second):
		e.t.Fatal("the waiting call did not return the instance started for it")
	}
}

// afOrchCancelWhileWaitingIsAfterAck: cancelling the context while the call
// waits after its commit returns the context's error marked as after the ack.
func afOrchCancelWhileWaitingIsAfterAck(e *env) {
	e.enqueue(startItem("af-a", "Orch"), 0)
	item := e.fetchInstance("af-a")
	e.afCancelWhileWaiting(func(ctx context.Context) error {
		_, err := e.of().AckOrchestrationItemAndFetch(ctx, item.LockToken, afStartCommit("af-a"), longLock, 20*time.Second, nil)
		return err
	}, func() bool {
		h, err := e.p.Read(e.ctx, "af-a")
		return err == nil && len(h) == 1
	})
}
