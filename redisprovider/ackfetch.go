package redisprovider

import (
	"context"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The optional ack-and-fetch calls (duroxide.WorkAckFetcher,
// duroxide.OrchestrationAckFetcher): one script acks and, when the ack
// applied, fetches, saving a dispatcher one round trip per item. That call
// runs on the caller's goroutine as a round of the fetch's class: when it
// finds nothing, its answer tells the class's poller when to run again, like
// any empty fetch, and the caller then waits in the class's line.

var (
	_ duroxide.WorkAckFetcher           = (*partition)(nil)
	_ duroxide.OrchestrationAckFetcher  = (*partition)(nil)
	_ duroxide.OrchestrationAckReporter = (*partition)(nil)
)

// AckWorkItemAndFetch acks lockToken as AckWorkItem does and, once the ack
// applied, fetches the next item as FetchWorkItem does, in one script. Errors
// of the ack are AckWorkItem's; errors of the fetch half are wrapped in a
// *duroxide.FetchAfterAckError (see duroxide.WorkAckFetcher).
func (p *partition) AckWorkItemAndFetch(ctx context.Context, lockToken string, completion duroxide.WorkItem,
	lockTimeout, pollTimeout time.Duration, session *duroxide.SessionFetchConfig, tags duroxide.TagFilter) (*duroxide.LockedWorkItem, error) {
	const op = "ack_work_item"
	ack, err := workAckArgs(op, lockToken, completion)
	if err != nil {
		return nil, err
	}
	c, fetch, err := workClass("fetch_work_item", p.lockFor(lockTimeout), lockTimeout, pollTimeout, session, tags)
	if err != nil {
		return nil, err
	}
	if c.empty { // the filter takes nothing: ack only
		return ackOnly[duroxide.LockedWorkItem](ctx, p, op, scriptAckWorkItem, ack, pollTimeout, nil)
	}
	once := func(ctx context.Context) (*duroxide.LockedWorkItem, time.Duration, bool, error) {
		pig := p.reserveFor(queueOrch, !isNilItem(completion))
		r, _, err := p.fetchScriptWith(ctx, op, scriptAckFetchWorkItem, scriptAbandonWorkItem, append(fetch, ack...), pig)
		if r == nil {
			return nil, 0, false, fail(op, err)
		}
		if err != nil {
			return nil, 0, true, err
		}
		item, due, err := workReply("fetch_work_item", r)
		return item, due, true, err
	}
	return ackThenFetch(ctx, p, op, "fetch_work_item", c, pollTimeout, nil, once)
}

// AckOrchestrationItemAndFetch commits a turn as AckOrchestrationItem does
// and, once it is committed, fetches the next instance as
// FetchOrchestrationItem does, in one script. Errors of the ack are
// AckOrchestrationItem's; errors of the fetch half are wrapped in a
// *duroxide.FetchAfterAckError (see duroxide.OrchestrationAckFetcher).
func (p *partition) AckOrchestrationItemAndFetch(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return p.ackOrchestrationAndFetch(ctx, lockToken, commit, lockTimeout, pollTimeout, filter, false, nil)
}

// AckOrchestrationItemAndFetchReporting is AckOrchestrationItemAndFetch (or,
// lazy, AckOrchestrationItemAndFetchLazy) that runs applied once the ack
// applied, before the fetch half waits (duroxide.OrchestrationAckReporter).
func (p *partition) AckOrchestrationItemAndFetchReporting(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter, lazy bool, applied func()) (*duroxide.OrchestrationItem, error) {
	return p.ackOrchestrationAndFetch(ctx, lockToken, commit, lockTimeout, pollTimeout, filter, lazy, applied)
}

// ackOrchestrationAndFetch is AckOrchestrationItemAndFetch and, lazy,
// AckOrchestrationItemAndFetchLazy; applied, when not nil, runs once the
// ack applied.
func (p *partition) ackOrchestrationAndFetch(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter, lazy bool, applied func()) (*duroxide.OrchestrationItem, error) {
	const op = "ack_orchestration_item"
	ack, err := ackArgs(ctx, op, lockToken, commit)
	if err != nil {
		return nil, err
	}
	c, fetch, err := orchestrationClass(ctx, "fetch_orchestration_item", p.lockFor(lockTimeout), lockTimeout, pollTimeout, filter, lazy)
	if err != nil {
		return nil, err
	}
	if c.empty { // the filter accepts nothing: ack only
		return ackOnly[duroxide.OrchestrationItem](ctx, p, op, scriptAckOrchestrationItem, ack, pollTimeout, applied)
	}
	once := func(ctx context.Context) (*duroxide.OrchestrationItem, time.Duration, bool, error) {
		pig := p.reserveFor(queueWork, len(commit.WorkerItems) > 0)
		r, _, err := p.fetchScriptWith(ctx, op, scriptAckFetchOrchestrationItem, scriptAbandonOrchestrationItem, append(fetch, ack...), pig)
		if r == nil {
			return nil, 0, false, fail(op, err)
		}
		item, due, err := p.orchestrationReply(r, err, lazy)
		return item, due, true, err
	}
	return ackThenFetch(ctx, p, op, "fetch_orchestration_item", c, pollTimeout, applied, once)
}

// ackThenFetch runs an ack-and-fetch of class c: once acks and, when the ack
// applied (acked), fetches, as a round of the class in p's partition; if it
// found nothing, the class's pollers fetch for the rest of pollTimeout.
// Errors before the ack applied are named ackOp; every error after it is
// named fetchOp and wrapped in a FetchAfterAckError. applied, when not nil,
// runs once the ack applied, before the wait.
func ackThenFetch[T any](ctx context.Context, p *partition, ackOp, fetchOp string, c fetchClass, pollTimeout time.Duration,
	applied func(), once func(ctx context.Context) (item *T, due time.Duration, acked bool, err error)) (*T, error) {
	d := c.demand(p)
	acked := false
	item, err := p.round(ctx, d, func(ctx context.Context) (any, time.Duration, error) {
		item, due, ok, err := once(ctx)
		acked = ok
		return untyped(item), due, err
	})
	if !acked {
		return nil, fail(ackOp, err)
	}
	if applied != nil {
		// before the wait: the caller may act on the applied ack now
		// (duroxide.OrchestrationAckReporter)
		applied()
	}
	if item != nil || err != nil || pollTimeout <= 0 {
		return typed[T](item), afterAck(fail(fetchOp, err))
	}
	item, _, err = p.set.wait(ctx, d, p.part, pollTimeout)
	return typed[T](item), afterAck(fail(fetchOp, err))
}

// ackOnly runs the plain ack of an ack-and-fetch whose filter takes
// nothing, then waits out the poll as such a fetch does. applied, when not
// nil, runs once the ack applied.
func ackOnly[T any](ctx context.Context, p *partition, op string, ack luaScript, a args, pollTimeout time.Duration, applied func()) (*T, error) {
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
