package redisprovider

import (
	"context"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The optional ack-and-fetch calls (duroxide.WorkAckFetcher,
// duroxide.OrchestrationAckFetcher): one script acks and, when the ack
// applied, fetches, saving a dispatcher one round trip per item. Only when
// that fetch finds nothing does the call fall back to the plain fetch's
// long-poll loop for the rest of pollTimeout.

var (
	_ duroxide.WorkAckFetcher          = (*Provider)(nil)
	_ duroxide.OrchestrationAckFetcher = (*Provider)(nil)
)

// AckWorkItemAndFetch acks lockToken as AckWorkItem does and, once the ack
// applied, fetches the next item as FetchWorkItem does, in one script. Errors
// of the ack are AckWorkItem's; errors of the fetch half are wrapped in a
// *duroxide.FetchAfterAckError (see duroxide.WorkAckFetcher).
func (p *Provider) AckWorkItemAndFetch(ctx context.Context, lockToken string, completion duroxide.WorkItem,
	lockTimeout, pollTimeout time.Duration, session *duroxide.SessionFetchConfig, tags duroxide.TagFilter) (*duroxide.LockedWorkItem, error) {
	const op = "ack_work_item"
	ack, err := workAckArgs(op, lockToken, completion)
	if err != nil {
		return nil, err
	}
	fetch, wake, err := p.workFetchArgs("fetch_work_item", lockTimeout, pollTimeout, session, tags)
	if err != nil {
		return nil, err
	}
	once := func(ctx context.Context) (*duroxide.LockedWorkItem, bool, error) {
		if len(wake) == 0 { // the filter takes nothing: ack only
			_, err := p.run(ctx, op, scriptAckWorkItem, ack)
			return nil, err == nil, err
		}
		r, _, err := p.fetchScript(ctx, op, scriptAckFetchWorkItem, scriptAbandonWorkItem, append(fetch, ack...))
		if r == nil {
			return nil, false, fail(op, err)
		}
		if err != nil {
			return nil, true, fail("fetch_work_item", err)
		}
		item, _, err := workReply("fetch_work_item", r)
		return item, true, err
	}
	return ackThenFetch(ctx, pollTimeout, once, func(ctx context.Context, rest time.Duration) (*duroxide.LockedWorkItem, error) {
		return p.fetchWork(ctx, lockTimeout, rest, session, tags, true)
	})
}

// AckOrchestrationItemAndFetch commits a turn as AckOrchestrationItem does
// and, once it is committed, fetches the next instance as
// FetchOrchestrationItem does, in one script. Errors of the ack are
// AckOrchestrationItem's; errors of the fetch half are wrapped in a
// *duroxide.FetchAfterAckError (see duroxide.OrchestrationAckFetcher).
func (p *Provider) AckOrchestrationItemAndFetch(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	const op = "ack_orchestration_item"
	ack, err := ackArgs(op, lockToken, commit)
	if err != nil {
		return nil, err
	}
	fetch, wake, err := p.orchestrationFetchArgs("fetch_orchestration_item", lockTimeout, pollTimeout, filter)
	if err != nil {
		return nil, err
	}
	once := func(ctx context.Context) (*duroxide.OrchestrationItem, bool, error) {
		if len(wake) == 0 { // the filter accepts nothing: ack only
			_, err := p.run(ctx, op, scriptAckOrchestrationItem, ack)
			return nil, err == nil, err
		}
		r, _, err := p.fetchScript(ctx, op, scriptAckFetchOrchestrationItem, scriptAbandonOrchestrationItem, append(fetch, ack...))
		if r == nil {
			return nil, false, fail(op, err)
		}
		item, _, err := p.orchestrationReply(r, fail("fetch_orchestration_item", err))
		return item, true, err
	}
	return ackThenFetch(ctx, pollTimeout, once, func(ctx context.Context, rest time.Duration) (*duroxide.OrchestrationItem, error) {
		return p.fetchOrchestration(ctx, lockTimeout, rest, filter, true)
	})
}

// ackThenFetch runs an ack-and-fetch: once, which reports whether the ack
// applied; then, if it found nothing, fetch for what is left of pollTimeout,
// whose first round always runs its script (the waiter never saw once's
// rerun time, e.g. of a timer the acked turn created).
// Every error after an applied ack is wrapped in a FetchAfterAckError.
func ackThenFetch[T any](ctx context.Context, pollTimeout time.Duration,
	once func(ctx context.Context) (item *T, acked bool, err error),
	fetch func(ctx context.Context, rest time.Duration) (*T, error)) (*T, error) {
	start := time.Now()
	item, acked, err := once(ctx)
	if !acked {
		return nil, err
	}
	if err != nil || item != nil {
		return item, afterAck(err)
	}
	rest := pollTimeout - time.Since(start)
	if rest <= 0 {
		return nil, nil
	}
	item, err = fetch(ctx, rest)
	return item, afterAck(err)
}

// afterAck marks an error of the fetch half of an ack-and-fetch.
func afterAck(err error) error {
	if err == nil {
		return nil
	}
	return &duroxide.FetchAfterAckError{Err: err}
}
