package redisprovider

import (
	"context"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The optional ack-and-fetch calls (duroxide.WorkAckFetcher,
// duroxide.OrchestrationAckFetcher): one script acks and, when the ack
// applied, fetches, saving a dispatcher one round trip per item. That call
// is the first round of the plain fetch's long-poll loop: when it finds
// nothing, its answer tells the waiter when to run again, like any empty
// fetch, and the later rounds run the plain fetch script.

var (
	_ duroxide.WorkAckFetcher           = (*Provider)(nil)
	_ duroxide.OrchestrationAckFetcher  = (*Provider)(nil)
	_ duroxide.OrchestrationAckReporter = (*Provider)(nil)
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
	if len(wake) == 0 { // the filter takes nothing: ack only
		return ackOnly[duroxide.LockedWorkItem](ctx, p, op, scriptAckWorkItem, ack, pollTimeout, nil)
	}
	once := func(ctx context.Context) (*duroxide.LockedWorkItem, time.Duration, bool, error) {
		r, _, err := p.fetchScript(ctx, op, scriptAckFetchWorkItem, scriptAbandonWorkItem, append(fetch, ack...))
		if r == nil {
			return nil, 0, false, fail(op, err)
		}
		if err != nil {
			return nil, 0, true, err
		}
		item, due, err := workReply("fetch_work_item", r)
		return item, due, true, err
	}
	return ackThenFetch(ctx, p, op, "fetch_work_item", wake, pollTimeout, nil, once, func(ctx context.Context) (*duroxide.LockedWorkItem, time.Duration, error) {
		return p.fetchWorkOnce(ctx, "fetch_work_item", fetch)
	})
}

// AckOrchestrationItemAndFetch commits a turn as AckOrchestrationItem does
// and, once it is committed, fetches the next instance as
// FetchOrchestrationItem does, in one script. Errors of the ack are
// AckOrchestrationItem's; errors of the fetch half are wrapped in a
// *duroxide.FetchAfterAckError (see duroxide.OrchestrationAckFetcher).
func (p *Provider) AckOrchestrationItemAndFetch(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return p.ackOrchestrationAndFetch(ctx, lockToken, commit, lockTimeout, pollTimeout, filter, false, nil)
}

// AckOrchestrationItemAndFetchReporting is AckOrchestrationItemAndFetch (or,
// lazy, AckOrchestrationItemAndFetchLazy) that runs applied once the ack
// applied, before the fetch half waits (duroxide.OrchestrationAckReporter).
func (p *Provider) AckOrchestrationItemAndFetchReporting(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter, lazy bool, applied func()) (*duroxide.OrchestrationItem, error) {
	return p.ackOrchestrationAndFetch(ctx, lockToken, commit, lockTimeout, pollTimeout, filter, lazy, applied)
}

// ackOrchestrationAndFetch is AckOrchestrationItemAndFetch and, lazy,
// AckOrchestrationItemAndFetchLazy; applied, when not nil, runs once the
// ack applied.
func (p *Provider) ackOrchestrationAndFetch(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter, lazy bool, applied func()) (*duroxide.OrchestrationItem, error) {
	const op = "ack_orchestration_item"
	ack, err := ackArgs(ctx, op, lockToken, commit)
	if err != nil {
		return nil, err
	}
	fetch, wake, err := p.orchestrationFetchArgs(ctx, "fetch_orchestration_item", lockTimeout, pollTimeout, filter, lazy)
	if err != nil {
		return nil, err
	}
	if len(wake) == 0 { // the filter accepts nothing: ack only
		return ackOnly[duroxide.OrchestrationItem](ctx, p, op, scriptAckOrchestrationItem, ack, pollTimeout, applied)
	}
	once := func(ctx context.Context) (*duroxide.OrchestrationItem, time.Duration, bool, error) {
		r, _, err := p.fetchScript(ctx, op, scriptAckFetchOrchestrationItem, scriptAbandonOrchestrationItem, append(fetch, ack...))
		if r == nil {
			return nil, 0, false, fail(op, err)
		}
		item, due, err := p.orchestrationReply(r, err, lazy)
		return item, due, true, err
	}
	return ackThenFetch(ctx, p, op, "fetch_orchestration_item", wake, pollTimeout, applied, once, func(ctx context.Context) (*duroxide.OrchestrationItem, time.Duration, error) {
		return p.fetchOrchestrationOnce(ctx, "fetch_orchestration_item", fetch, lazy)
	})
}

// ackThenFetch runs an ack-and-fetch as the first round of a fetch loop on
// keys: once acks and, when the ack applied (acked), fetches; the later
// rounds, if it found nothing, run again for the rest of pollTimeout. Errors
// before the ack applied are named ackOp; every error after it is named
// fetchOp and wrapped in a FetchAfterAckError. applied, when not nil, runs
// once the ack applied, before the later rounds wait.
func ackThenFetch[T any](ctx context.Context, p *Provider, ackOp, fetchOp string, keys []string, pollTimeout time.Duration,
	applied func(),
	once func(ctx context.Context) (item *T, due time.Duration, acked bool, err error),
	again func(ctx context.Context) (*T, time.Duration, error)) (*T, error) {
	acked := false
	first := func(ctx context.Context) (*T, time.Duration, error) {
		item, due, ok, err := once(ctx)
		acked = ok
		if ok && applied != nil {
			// before the later rounds wait: the caller may act on the
			// applied ack now (duroxide.OrchestrationAckReporter)
			applied()
		}
		return item, due, err
	}
	item, err := pollItem(ctx, p, keys, pollTimeout, first, again)
	if !acked {
		return nil, fail(ackOp, err)
	}
	return item, afterAck(fail(fetchOp, err))
}

// ackOnly runs the plain ack of an ack-and-fetch whose filter takes
// nothing, then waits out the poll as such a fetch does. applied, when not
// nil, runs once the ack applied.
func ackOnly[T any](ctx context.Context, p *Provider, op string, ack luaScript, a args, pollTimeout time.Duration, applied func()) (*T, error) {
	if _, err := p.run(ctx, op, ack, a); err != nil {
		return nil, err
	}
	if applied != nil {
		applied()
	}
	return nil, afterAck(fail(op, p.sleep(ctx, pollTimeout)))
}

// afterAck marks an error of the fetch half of an ack-and-fetch.
func afterAck(err error) error {
	if err == nil {
		return nil
	}
	return &duroxide.FetchAfterAckError{Err: err}
}
