// observedProvider: how the workflows scenario sees the durable runtime's
// completions without changing the runtime. It wraps the provider the
// runtime is given and reports, after the provider's write returned, each
// turn that ended an orchestration and each activity result: the same
// point at which go-workflows's completions are reported (gwpeer).

package main

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

type observedProvider struct {
	duroxide.Provider
	// af is the same provider's ack-and-fetch calls. The runtime finds them
	// by type assertion, which the embedded interface alone would fail: the
	// bench would measure the runtime's two-call fallback, not its default.
	// With passPoll (the default) their fetch half gets the runtime's poll
	// timeout, as in an application; the call then returns only once it
	// found work or the timeout passed (a lone root's last turn, 1 s after
	// its ack), so what the ack completed is reported at the reply of the
	// call's first script, the ack (ackStamp), not at the call's return.
	// Without passPoll (-ackfetch-poll=false, the no-poll path) the fetch
	// half does not wait and, when it finds nothing, the runtime long-polls
	// with a plain fetch instead: one call more per idle gap.
	af       ackFetcher
	passPoll bool
	ev       engineEvents
	locked   sync.Map // lock token -> *duroxide.OrchestrationItem, between fetch and ack
}

// ackFetcher is what a provider needs for the client's checked starts, both
// dispatchers' ack-and-fetch,
// the report of an applied ack before the fetch half waits (the runtime
// caches a turn's engine then) and the runtime's history-free fetches (its
// instance cache).
type ackFetcher interface {
	duroxide.CheckedEnqueuer
	duroxide.WorkAckFetcher
	duroxide.OrchestrationAckFetcher
	duroxide.OrchestrationAckReporter
	duroxide.LazyHistoryFetcher
}

// SupportsStickyRouting passes the provider's sticky routing through: with
// it (and its instance cache, on by default) the runtime routes an
// instance's turns to itself, as it does on the provider in an application.
// Without it the bench measured the unrouted path, which applications on
// redisprovider never run. The route travels in the calls' contexts, which
// the wrapper passes on.
func (o *observedProvider) SupportsStickyRouting() bool {
	sr, ok := o.Provider.(duroxide.StickyRouter)
	return ok && sr.SupportsStickyRouting()
}

// EnqueueForOrchestratorChecked passes the provider's checked enqueue
// through: the client's starts use it, as they do in an application.
func (o *observedProvider) EnqueueForOrchestratorChecked(ctx context.Context, item duroxide.WorkItem, opts duroxide.CheckedEnqueue) error {
	return o.af.EnqueueForOrchestratorChecked(ctx, item, opts)
}

// observable is a provider the wrapper can observe: a namespace's
// *redisprovider.Provider, or its *redisprovider.Provider.
type observable interface {
	duroxide.Provider
	ackFetcher
}

var (
	_ observable = (*redisprovider.Provider)(nil)
	_ observable = (*redisprovider.Provider)(nil)
)

// newObserved wraps p, reporting to ev.
func newObserved(p observable, ev engineEvents, passPoll bool) *observedProvider {
	return &observedProvider{Provider: p, af: p, ev: ev, passPoll: passPoll}
}

// pollOf is the poll timeout an ack-and-fetch is given: the runtime's with
// passPoll, else none.
func (o *observedProvider) pollOf(poll time.Duration) time.Duration {
	if o.passPoll {
		return poll
	}
	return 0
}

// FetchOrchestrationItem remembers the item until its ack, which carries
// only the lock token.
func (o *observedProvider) FetchOrchestrationItem(ctx context.Context, lock, poll time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return o.remember(o.Provider.FetchOrchestrationItem(ctx, lock, poll, filter))
}

// FetchOrchestrationItemLazy is FetchOrchestrationItem without the history.
func (o *observedProvider) FetchOrchestrationItemLazy(ctx context.Context, lock, poll time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return o.remember(o.af.FetchOrchestrationItemLazy(ctx, lock, poll, filter))
}

func (o *observedProvider) remember(item *duroxide.OrchestrationItem, err error) (*duroxide.OrchestrationItem, error) {
	if item != nil {
		o.locked.Store(item.LockToken, item)
	}
	return item, err
}

// AckOrchestrationItem reports an orchestration that the committed turn
// completed or failed.
func (o *observedProvider) AckOrchestrationItem(ctx context.Context, token string, commit duroxide.OrchestrationCommit) error {
	v, _ := o.locked.LoadAndDelete(token)
	err := o.Provider.AckOrchestrationItem(ctx, token, commit)
	o.ackedAt(token, v, commit, err == nil, time.Now())
	return err
}

// AckOrchestrationItemAndFetch reports what AckOrchestrationItem reports
// once the ack applied (the fetch half may still fail), at the time the ack
// replied, and remembers the fetched item like FetchOrchestrationItem. Its
// fetch half waits only with passPoll (see observedProvider.af).
func (o *observedProvider) AckOrchestrationItemAndFetch(ctx context.Context, token string, commit duroxide.OrchestrationCommit,
	lock, poll time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return o.ackAndFetch(ctx, token, commit, func(ctx context.Context) (*duroxide.OrchestrationItem, error) {
		return o.af.AckOrchestrationItemAndFetch(ctx, token, commit, lock, o.pollOf(poll), filter)
	})
}

// AckOrchestrationItemAndFetchLazy is AckOrchestrationItemAndFetch with a
// history-free fetch half.
func (o *observedProvider) AckOrchestrationItemAndFetchLazy(ctx context.Context, token string, commit duroxide.OrchestrationCommit,
	lock, poll time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return o.ackAndFetch(ctx, token, commit, func(ctx context.Context) (*duroxide.OrchestrationItem, error) {
		return o.af.AckOrchestrationItemAndFetchLazy(ctx, token, commit, lock, o.pollOf(poll), filter)
	})
}

// AckOrchestrationItemAndFetchReporting is AckOrchestrationItemAndFetch (or,
// lazy, its history-free form) that runs applied once the ack applied, as
// an application's provider does (duroxide.OrchestrationAckReporter): the
// runtime caches the turn's engine then, not when the call returns. Before
// the eleventh recorded run the wrapper lacked it, and the application's
// path it measured waited for the fetch half's poll before the next turn of
// a sequence could run on another dispatcher.
func (o *observedProvider) AckOrchestrationItemAndFetchReporting(ctx context.Context, token string, commit duroxide.OrchestrationCommit,
	lock, poll time.Duration, filter *duroxide.DispatcherCapabilityFilter, lazy bool, applied func()) (*duroxide.OrchestrationItem, error) {
	return o.ackAndFetch(ctx, token, commit, func(ctx context.Context) (*duroxide.OrchestrationItem, error) {
		return o.af.AckOrchestrationItemAndFetchReporting(ctx, token, commit, lock, o.pollOf(poll), filter, lazy, applied)
	})
}

func (o *observedProvider) ackAndFetch(ctx context.Context, token string, commit duroxide.OrchestrationCommit,
	call func(ctx context.Context) (*duroxide.OrchestrationItem, error)) (*duroxide.OrchestrationItem, error) {
	v, _ := o.locked.LoadAndDelete(token)
	ctx, st := withAckStamp(ctx)
	next, err := o.remember(call(ctx))
	o.ackedAt(token, v, commit, err == nil || duroxide.FetchFailedAfterAck(err), st.time())
	return next, err
}

// ackedAt reports an orchestration that the turn of item v (the remembered
// fetch of token, nil if unknown) completed or failed, once the ack applied,
// as of at; an ack that did not apply gives v back, for the runtime's retry.
func (o *observedProvider) ackedAt(token string, v any, commit duroxide.OrchestrationCommit, applied bool, at time.Time) {
	item, _ := v.(*duroxide.OrchestrationItem)
	if item == nil {
		return
	}
	if !applied {
		o.locked.Store(token, item)
		return
	}
	switch commit.Metadata.Status {
	case "Completed":
		o.ev.finished(item.Instance, !hasParent(item, commit), nil, at)
	case "Failed":
		msg := "(no output)"
		if commit.Metadata.Output != nil {
			msg = *commit.Metadata.Output
		}
		o.ev.finished(item.Instance, !hasParent(item, commit), errors.New(msg), at)
	}
}

// AbandonOrchestrationItem forgets the abandoned item.
func (o *observedProvider) AbandonOrchestrationItem(ctx context.Context, token string, delay time.Duration, ignoreAttempt bool) error {
	o.locked.Delete(token)
	return o.Provider.AbandonOrchestrationItem(ctx, token, delay, ignoreAttempt)
}

// AckWorkItem reports an activity whose result was committed (not one
// acked without a completion, as a cancelled activity is).
func (o *observedProvider) AckWorkItem(ctx context.Context, token string, completion duroxide.WorkItem) error {
	err := o.Provider.AckWorkItem(ctx, token, completion)
	if err == nil && completion != nil {
		o.ev.activity(time.Now())
	}
	return err
}

// AckWorkItemAndFetch reports what AckWorkItem reports once the ack applied
// (the fetch half may still fail), at the time the ack replied. Its fetch
// half waits only with passPoll (see observedProvider.af).
func (o *observedProvider) AckWorkItemAndFetch(ctx context.Context, token string, completion duroxide.WorkItem,
	lock, poll time.Duration, session *duroxide.SessionFetchConfig, tags duroxide.TagFilter) (*duroxide.LockedWorkItem, error) {
	ctx, st := withAckStamp(ctx)
	next, err := o.af.AckWorkItemAndFetch(ctx, token, completion, lock, o.pollOf(poll), session, tags)
	if (err == nil || duroxide.FetchFailedAfterAck(err)) && completion != nil {
		o.ev.activity(st.time())
	}
	return next, err
}

// hasParent reports a child's final turn: it tells its parent (a lazily
// fetched item carries no history to read the parent from).
func hasParent(_ *duroxide.OrchestrationItem, commit duroxide.OrchestrationCommit) bool {
	for _, w := range commit.OrchestratorItems {
		switch w.(type) {
		case duroxide.SubOrchCompleted, duroxide.SubOrchFailed:
			return true
		}
	}
	return false
}
