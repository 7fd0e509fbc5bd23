package redisprovider

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Provider's queue calls: fetches over every partition, and the calls on
// a lock token, which go to the token's partition.

// FetchOrchestrationItem locks the next instance with visible messages in
// any partition (see Provider.FetchOrchestrationItem).
func (pp *Provider) FetchOrchestrationItem(ctx context.Context, lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return pp.fetchOrchestration(ctx, lockTimeout, pollTimeout, filter, false)
}

// FetchOrchestrationItemLazy is FetchOrchestrationItem returning the
// history's cursor (see duroxide.LazyHistoryFetcher).
func (pp *Provider) FetchOrchestrationItemLazy(ctx context.Context, lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return pp.fetchOrchestration(ctx, lockTimeout, pollTimeout, filter, true)
}

func (pp *Provider) fetchOrchestration(ctx context.Context, lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter, lazy bool) (*duroxide.OrchestrationItem, error) {
	const op = "fetch_orchestration_item"
	pp.relay.start()
	c, _, err := orchestrationClass(ctx, op, pp.base.lockFor(lockTimeout), lockTimeout, pollTimeout, filter, lazy)
	if err != nil {
		return nil, err
	}
	item, part, err := fetchAny[duroxide.OrchestrationItem](ctx, pp, op, c, pollTimeout)
	return withOrchToken(item, part, 0), err
}

// FetchWorkItem locks one visible activity in any partition (see
// Provider.FetchWorkItem); sessions are held per partition.
func (pp *Provider) FetchWorkItem(ctx context.Context, lockTimeout, pollTimeout time.Duration, session *duroxide.SessionFetchConfig, tags duroxide.TagFilter) (*duroxide.LockedWorkItem, error) {
	const op = "fetch_work_item"
	c, _, err := workClass(op, pp.base.lockFor(lockTimeout), lockTimeout, pollTimeout, session, tags)
	if err != nil {
		return nil, err
	}
	item, part, err := fetchAny[duroxide.LockedWorkItem](ctx, pp, op, c, pollTimeout)
	return withWorkToken(item, part, 0), err
}

// fetchAny fetches with class c from any partition: with no poll timeout,
// one round in each in turn, starting at a rotating one, until one finds
// work (errors count only when none did); else through the class's pollers
// in every partition, whichever has work first.
func fetchAny[T any](ctx context.Context, pp *Provider, op string, c fetchClass, pollTimeout time.Duration) (*T, int, error) {
	if c.empty {
		return nil, 0, fail(op, pp.base.sleep(ctx, pollTimeout))
	}
	d := pp.set.class(c.id, c.build)
	if pollTimeout > 0 {
		item, part, err := pp.set.wait(ctx, d, -1, pollTimeout)
		return typed[T](item), part, fail(op, err)
	}
	n := len(pp.parts)
	first := int(pp.rr.Add(1) % uint64(n))
	var firstErr error
	for i := range n {
		k := (first + i) % n
		p := pp.parts[k]
		item, err := p.round(ctx, d, d.pollers[k].spec.once)
		if item != nil {
			return typed[T](item), k, nil
		}
		firstErr = cmp.Or(firstErr, err)
	}
	return nil, 0, fail(op, firstErr)
}

// AckOrchestrationItem commits a turn in its partition; messages to other
// partitions' instances go to its outbox and are relayed.
func (pp *Provider) AckOrchestrationItem(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit) error {
	p, part, _, inner := pp.unwrapToken(lockToken)
	ctx, commit, sent := pp.split(ctx, part, commit)
	err := p.AckOrchestrationItem(ctx, inner, commit)
	pp.relayed(part, sent, err)
	return err
}

// AckOrchestrationItemAndFetch commits a turn and fetches the next instance,
// from the same partition in one script while its streak lasts (see
// Provider), else across every partition.
func (pp *Provider) AckOrchestrationItemAndFetch(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return pp.ackOrchestrationAndFetch(ctx, lockToken, commit, lockTimeout, pollTimeout, filter, false, nil)
}

// AckOrchestrationItemAndFetchLazy is AckOrchestrationItemAndFetch
// returning the history's cursor.
func (pp *Provider) AckOrchestrationItemAndFetchLazy(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return pp.ackOrchestrationAndFetch(ctx, lockToken, commit, lockTimeout, pollTimeout, filter, true, nil)
}

var _ duroxide.OrchestrationAckReporter = (*Provider)(nil)

// AckOrchestrationItemAndFetchReporting is AckOrchestrationItemAndFetch (or,
// lazy, AckOrchestrationItemAndFetchLazy) that runs applied once the ack
// applied, before the fetch waits (duroxide.OrchestrationAckReporter).
func (pp *Provider) AckOrchestrationItemAndFetchReporting(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter, lazy bool, applied func()) (*duroxide.OrchestrationItem, error) {
	return pp.ackOrchestrationAndFetch(ctx, lockToken, commit, lockTimeout, pollTimeout, filter, lazy, applied)
}

func (pp *Provider) ackOrchestrationAndFetch(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter, lazy bool, applied func()) (*duroxide.OrchestrationItem, error) {
	p, part, streak, inner := pp.unwrapToken(lockToken)
	actx, commit, sent := pp.split(ctx, part, commit)
	return streakAckFetch(pp, streak, pollTimeout,
		func() error {
			err := p.AckOrchestrationItem(actx, inner, commit)
			pp.relayed(part, sent, err)
			if err == nil && applied != nil {
				applied() // before the fetch over every partition waits
			}
			return err
		},
		func(poll time.Duration) (*duroxide.OrchestrationItem, error) {
			item, err := p.ackOrchestrationAndFetch(actx, inner, commit, lockTimeout, poll, filter, lazy, applied)
			ackErr := err
			if duroxide.FetchFailedAfterAck(err) {
				ackErr = nil
			}
			pp.relayed(part, sent, ackErr)
			return withOrchToken(item, part, streak+1), err
		},
		func() (*duroxide.OrchestrationItem, error) {
			return pp.fetchOrchestration(ctx, lockTimeout, pollTimeout, filter, lazy)
		})
}

// streakAckFetch is an ack-and-fetch over partitions: while the token's
// streak lasts, ackFetch acks and fetches in the token's partition in one
// script (with a long poll only when there is one partition: else the poll,
// if it comes to one, is over every partition, by fetch); after maxStreak
// turns in a row, ack alone, then fetch across every partition.
func streakAckFetch[T any](pp *Provider, streak int, pollTimeout time.Duration,
	ack func() error, ackFetch func(poll time.Duration) (*T, error), fetch func() (*T, error)) (*T, error) {
	if len(pp.parts) == 1 {
		return ackFetch(pollTimeout)
	}
	if streak+1 >= maxStreak {
		if err := ack(); err != nil {
			return nil, err
		}
		item, err := fetch()
		return item, afterAck(err)
	}
	item, err := ackFetch(min(pollTimeout, 0))
	if item != nil || err != nil {
		return item, err
	}
	item, err = fetch()
	return item, afterAck(err)
}

// split moves the messages of commit for other partitions' instances from
// its OrchestratorItems to the outbox its ack's context carries.
func (pp *Provider) split(ctx context.Context, part int, commit duroxide.OrchestrationCommit) (context.Context, duroxide.OrchestrationCommit, bool) {
	if len(pp.parts) == 1 {
		return ctx, commit, false
	}
	var local []duroxide.WorkItem
	var remote []outboxEntry
	for _, item := range commit.OrchestratorItems {
		if k := pp.PartitionOf(itemInstance(item)); k != part {
			remote = append(remote, outboxEntry{part: k, item: item})
		} else {
			local = append(local, item)
		}
	}
	if len(remote) == 0 {
		return ctx, commit, false
	}
	commit.OrchestratorItems = local
	return withOutbox(ctx, remote), commit, true
}

// relayed starts the relay of partition part's outbox after an ack that
// put messages in it (or may have: err is a lost reply).
func (pp *Provider) relayed(part int, sent bool, err error) {
	var pe *duroxide.ProviderError
	if sent && (err == nil || !errors.As(err, &pe) || pe.Retryable) {
		pp.relay.kick(part)
	}
}

// AbandonOrchestrationItem releases a lock in the token's partition.
func (pp *Provider) AbandonOrchestrationItem(ctx context.Context, lockToken string, delay time.Duration, ignoreAttempt bool) error {
	p, _, _, inner := pp.unwrapToken(lockToken)
	return p.AbandonOrchestrationItem(ctx, inner, delay, ignoreAttempt)
}

// RenewOrchestrationItemLock extends a lock in the token's partition.
func (pp *Provider) RenewOrchestrationItemLock(ctx context.Context, lockToken string, extendFor time.Duration) error {
	p, _, _, inner := pp.unwrapToken(lockToken)
	return p.RenewOrchestrationItemLock(ctx, inner, extendFor)
}

// AckWorkItem acks an activity in its partition; its completion goes to the
// same partition, its instance's.
func (pp *Provider) AckWorkItem(ctx context.Context, lockToken string, completion duroxide.WorkItem) error {
	p, _, _, inner := pp.unwrapToken(lockToken)
	return p.AckWorkItem(ctx, inner, completion)
}

// AckWorkItemAndFetch acks an activity and fetches the next one (see
// AckOrchestrationItemAndFetch for the partition it comes from).
func (pp *Provider) AckWorkItemAndFetch(ctx context.Context, lockToken string, completion duroxide.WorkItem,
	lockTimeout, pollTimeout time.Duration, session *duroxide.SessionFetchConfig, tags duroxide.TagFilter) (*duroxide.LockedWorkItem, error) {
	p, part, streak, inner := pp.unwrapToken(lockToken)
	return streakAckFetch(pp, streak, pollTimeout,
		func() error {
			return p.AckWorkItem(ctx, inner, completion)
		},
		func(poll time.Duration) (*duroxide.LockedWorkItem, error) {
			item, err := p.AckWorkItemAndFetch(ctx, inner, completion, lockTimeout, poll, session, tags)
			return withWorkToken(item, part, streak+1), err
		},
		func() (*duroxide.LockedWorkItem, error) {
			return pp.FetchWorkItem(ctx, lockTimeout, pollTimeout, session, tags)
		})
}

// AbandonWorkItem releases an activity's lock in its partition.
func (pp *Provider) AbandonWorkItem(ctx context.Context, lockToken string, delay time.Duration, ignoreAttempt bool) error {
	p, _, _, inner := pp.unwrapToken(lockToken)
	return p.AbandonWorkItem(ctx, inner, delay, ignoreAttempt)
}

// RenewWorkItemLock extends an activity's lock in its partition.
func (pp *Provider) RenewWorkItemLock(ctx context.Context, lockToken string, extendFor time.Duration) error {
	p, _, _, inner := pp.unwrapToken(lockToken)
	return p.RenewWorkItemLock(ctx, inner, extendFor)
}

// RenewSessionLock renews the owners' sessions in every partition and
// returns how many it renewed.
func (pp *Provider) RenewSessionLock(ctx context.Context, ownerIDs []string, extendFor, idleTimeout time.Duration) (int, error) {
	return sum(pp, func(p *partition) (int, error) { return p.RenewSessionLock(ctx, ownerIDs, extendFor, idleTimeout) })
}

// CleanupOrphanedSessions removes orphaned sessions in every partition.
func (pp *Provider) CleanupOrphanedSessions(ctx context.Context, idleTimeout time.Duration) (int, error) {
	return sum(pp, func(p *partition) (int, error) { return p.CleanupOrphanedSessions(ctx, idleTimeout) })
}

// sum adds up a count over every partition, stopping at the first error.
func sum(pp *Provider, f func(p *partition) (int, error)) (int, error) {
	total := 0
	for _, p := range pp.parts {
		n, err := f(p)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
