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
	// Their fetch half is given no poll timeout: a completion can only be
	// reported when the call returns, and a fetch half waiting for work
	// would delay that by up to the whole timeout (a lone root's last turn
	// was reported 1 s late). When the fetch half finds nothing at once, the
	// runtime long-polls with a plain fetch instead: the same wait, one call
	// more per idle gap. With passPoll (-ackfetch-poll) they get the
	// runtime's poll timeout, as in an application.
	af       ackFetcher
	passPoll bool
	ev       engineEvents
	locked   sync.Map // lock token -> *duroxide.OrchestrationItem, between fetch and ack
}

// ackFetcher is what a provider needs for both dispatchers' ack-and-fetch
// and the runtime's history-free fetches (its instance cache).
type ackFetcher interface {
	duroxide.WorkAckFetcher
	duroxide.OrchestrationAckFetcher
	duroxide.LazyHistoryFetcher
}

// observable is a provider the wrapper can observe: a namespace's
// *redisprovider.Provider, or its *redisprovider.Partitioned.
type observable interface {
	duroxide.Provider
	ackFetcher
}

var (
	_ observable = (*redisprovider.Provider)(nil)
	_ observable = (*redisprovider.Partitioned)(nil)
)

// newObserved wraps p, reporting to ev.
func newObserved(p observable, ev engineEvents, passPoll bool) *observedProvider {
	return &observedProvider{Provider: p, af: p, ev: ev, passPoll: passPoll}
}

// pollOf is the poll timeout an ack-and-fetch is given: none, unless
// passPoll.
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
	o.acked(token, v, commit, err == nil)
	return err
}

// AckOrchestrationItemAndFetch reports what AckOrchestrationItem reports
// once the ack applied (the fetch half may still fail), and remembers the
// fetched item like FetchOrchestrationItem. Its fetch half does not wait
// (see observedProvider.af).
func (o *observedProvider) AckOrchestrationItemAndFetch(ctx context.Context, token string, commit duroxide.OrchestrationCommit,
	lock, poll time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return o.ackAndFetch(token, commit, func() (*duroxide.OrchestrationItem, error) {
		return o.af.AckOrchestrationItemAndFetch(ctx, token, commit, lock, o.pollOf(poll), filter)
	})
}

// AckOrchestrationItemAndFetchLazy is AckOrchestrationItemAndFetch with a
// history-free fetch half.
func (o *observedProvider) AckOrchestrationItemAndFetchLazy(ctx context.Context, token string, commit duroxide.OrchestrationCommit,
	lock, poll time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return o.ackAndFetch(token, commit, func() (*duroxide.OrchestrationItem, error) {
		return o.af.AckOrchestrationItemAndFetchLazy(ctx, token, commit, lock, o.pollOf(poll), filter)
	})
}

func (o *observedProvider) ackAndFetch(token string, commit duroxide.OrchestrationCommit, call func() (*duroxide.OrchestrationItem, error)) (*duroxide.OrchestrationItem, error) {
	v, _ := o.locked.LoadAndDelete(token)
	next, err := o.remember(call())
	o.acked(token, v, commit, err == nil || duroxide.FetchFailedAfterAck(err))
	return next, err
}

// acked reports an orchestration that the turn of item v (the remembered
// fetch of token, nil if unknown) completed or failed, once the ack applied;
// an ack that did not apply gives v back, for the runtime's retry.
func (o *observedProvider) acked(token string, v any, commit duroxide.OrchestrationCommit, applied bool) {
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
		o.ev.finished(item.Instance, !hasParent(item, commit), nil, time.Now())
	case "Failed":
		msg := "(no output)"
		if commit.Metadata.Output != nil {
			msg = *commit.Metadata.Output
		}
		o.ev.finished(item.Instance, !hasParent(item, commit), errors.New(msg), time.Now())
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
// (the fetch half may still fail). Its fetch half does not wait (see
// observedProvider.af).
func (o *observedProvider) AckWorkItemAndFetch(ctx context.Context, token string, completion duroxide.WorkItem,
	lock, poll time.Duration, session *duroxide.SessionFetchConfig, tags duroxide.TagFilter) (*duroxide.LockedWorkItem, error) {
	next, err := o.af.AckWorkItemAndFetch(ctx, token, completion, lock, o.pollOf(poll), session, tags)
	if (err == nil || duroxide.FetchFailedAfterAck(err)) && completion != nil {
		o.ev.activity(time.Now())
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
