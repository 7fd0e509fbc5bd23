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
)

type observedProvider struct {
	duroxide.Provider
	ev     engineEvents
	locked sync.Map // lock token -> *duroxide.OrchestrationItem, between fetch and ack
}

// FetchOrchestrationItem remembers the item until its ack, which carries
// only the lock token.
func (o *observedProvider) FetchOrchestrationItem(ctx context.Context, lock, poll time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	item, err := o.Provider.FetchOrchestrationItem(ctx, lock, poll, filter)
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
	item, _ := v.(*duroxide.OrchestrationItem)
	if err != nil || item == nil {
		return err
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
	return nil
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

// hasParent reports whether the execution a turn belongs to was started as
// a sub-orchestration: its OrchestrationStarted, in the fetched history or
// (on a first turn) in the commit, names a parent.
func hasParent(item *duroxide.OrchestrationItem, commit duroxide.OrchestrationCommit) bool {
	for _, evs := range [][]duroxide.Event{item.History, commit.HistoryDelta} {
		for _, ev := range evs {
			if s, ok := ev.Kind.(duroxide.OrchestrationStartedEvent); ok {
				return s.ParentInstance != nil
			}
		}
	}
	return false
}
