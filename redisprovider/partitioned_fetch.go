package redisprovider

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Partitioned's queue calls: fetches over every partition, and the calls on
// a lock token, which go to the token's partition.

// FetchOrchestrationItem locks the next instance with visible messages in
// any partition (see Provider.FetchOrchestrationItem).
func (pp *Partitioned) FetchOrchestrationItem(ctx context.Context, lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return pp.fetchOrchestration(ctx, lockTimeout, pollTimeout, filter, false)
}

// FetchOrchestrationItemLazy is FetchOrchestrationItem returning the
// history's cursor (see duroxide.LazyHistoryFetcher).
func (pp *Partitioned) FetchOrchestrationItemLazy(ctx context.Context, lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return pp.fetchOrchestration(ctx, lockTimeout, pollTimeout, filter, true)
}

func (pp *Partitioned) fetchOrchestration(ctx context.Context, lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter, lazy bool) (*duroxide.OrchestrationItem, error) {
	pp.relay.start()
	item, part, err := race(ctx, pp, pollTimeout, func(ctx context.Context, p *Provider, poll time.Duration) (*duroxide.OrchestrationItem, error) {
		return p.fetchOrchestration(ctx, lockTimeout, poll, filter, lazy)
	}, func(p *Provider, item *duroxide.OrchestrationItem) error {
		return p.AbandonOrchestrationItem(context.WithoutCancel(ctx), item.LockToken, 0, true)
	})
	return withOrchToken(item, part, 0), err
}

// FetchWorkItem locks one visible activity in any partition (see
// Provider.FetchWorkItem); sessions are held per partition.
func (pp *Partitioned) FetchWorkItem(ctx context.Context, lockTimeout, pollTimeout time.Duration, session *duroxide.SessionFetchConfig, tags duroxide.TagFilter) (*duroxide.LockedWorkItem, error) {
	item, part, err := race(ctx, pp, pollTimeout, func(ctx context.Context, p *Provider, poll time.Duration) (*duroxide.LockedWorkItem, error) {
		return p.FetchWorkItem(ctx, lockTimeout, poll, session, tags)
	}, func(p *Provider, item *duroxide.LockedWorkItem) error {
		return p.AbandonWorkItem(context.WithoutCancel(ctx), item.LockToken, 0, true)
	})
	return withWorkToken(item, part, 0), err
}

// race fetches from every partition at once, starting at a rotating one:
// with one partition, or no poll timeout, it asks them in turn once; else
// each partition's fetch long-polls, their scripts run one at a time and
// their first rounds in that order (enterRace), and the first item ends the
// others. An item taken after the
// race was decided (a reply that crossed the cancellation) is given back.
// Errors count only when no partition found work.
func race[T any](ctx context.Context, pp *Partitioned, pollTimeout time.Duration,
	fetch func(ctx context.Context, p *Provider, poll time.Duration) (*T, error),
	giveBack func(p *Provider, item *T) error) (*T, int, error) {
	n := len(pp.parts)
	first := int(pp.rr.Add(1) % uint64(n))
	if n == 1 {
		item, err := fetch(ctx, pp.parts[0], pollTimeout)
		return item, 0, err
	}
	if pollTimeout <= 0 {
		var firstErr error
		for i := range n {
			k := (first + i) % n
			item, err := fetch(ctx, pp.parts[k], pollTimeout) // < 0 is refused
			if item != nil {
				return item, k, nil
			}
			firstErr = cmp.Or(firstErr, err)
		}
		return nil, 0, firstErr
	}
	type result struct {
		item *T
		part int
		err  error
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	gate := newRaceGate(n)
	results := make(chan result, n)
	for i := range n {
		k := (first + i) % n
		go func() {
			fctx := withRacer(rctx, gate, i)
			item, err := fetch(fctx, pp.parts[k], pollTimeout)
			passTurn(fctx)
			results <- result{item, k, err}
		}()
	}
	var won *result
	var firstErr error
	for range n {
		r := <-results
		switch {
		case r.item != nil && won == nil:
			won = &r
			cancel()
		case r.item != nil:
			_ = giveBack(pp.parts[r.part], r.item)
		case r.err != nil && !errors.Is(r.err, errRaceLost) && rctx.Err() == nil:
			firstErr = cmp.Or(firstErr, r.err)
		}
	}
	if won != nil {
		return won.item, won.part, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, fail("fetch", err)
	}
	return nil, 0, firstErr
}

// AckOrchestrationItem commits a turn in its partition; messages to other
// partitions' instances go to its outbox and are relayed.
func (pp *Partitioned) AckOrchestrationItem(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit) error {
	p, part, _, inner := pp.unwrapToken(lockToken)
	ctx, commit, sent := pp.split(ctx, part, commit)
	err := p.AckOrchestrationItem(ctx, inner, commit)
	pp.relayed(part, sent, err)
	return err
}

// AckOrchestrationItemAndFetch commits a turn and fetches the next instance,
// from the same partition in one script while its streak lasts (see
// Partitioned), else across every partition.
func (pp *Partitioned) AckOrchestrationItemAndFetch(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return pp.ackOrchestrationAndFetch(ctx, lockToken, commit, lockTimeout, pollTimeout, filter, false, nil)
}

// AckOrchestrationItemAndFetchLazy is AckOrchestrationItemAndFetch
// returning the history's cursor.
func (pp *Partitioned) AckOrchestrationItemAndFetchLazy(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return pp.ackOrchestrationAndFetch(ctx, lockToken, commit, lockTimeout, pollTimeout, filter, true, nil)
}

var _ duroxide.OrchestrationAckReporter = (*Partitioned)(nil)

// AckOrchestrationItemAndFetchReporting is AckOrchestrationItemAndFetch (or,
// lazy, AckOrchestrationItemAndFetchLazy) that runs applied once the ack
// applied, before the fetch waits (duroxide.OrchestrationAckReporter).
func (pp *Partitioned) AckOrchestrationItemAndFetchReporting(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter, lazy bool, applied func()) (*duroxide.OrchestrationItem, error) {
	return pp.ackOrchestrationAndFetch(ctx, lockToken, commit, lockTimeout, pollTimeout, filter, lazy, applied)
}

func (pp *Partitioned) ackOrchestrationAndFetch(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit,
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
func streakAckFetch[T any](pp *Partitioned, streak int, pollTimeout time.Duration,
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
func (pp *Partitioned) split(ctx context.Context, part int, commit duroxide.OrchestrationCommit) (context.Context, duroxide.OrchestrationCommit, bool) {
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
func (pp *Partitioned) relayed(part int, sent bool, err error) {
	var pe *duroxide.ProviderError
	if sent && (err == nil || !errors.As(err, &pe) || pe.Retryable) {
		pp.relay.kick(part)
	}
}

// AbandonOrchestrationItem releases a lock in the token's partition.
func (pp *Partitioned) AbandonOrchestrationItem(ctx context.Context, lockToken string, delay time.Duration, ignoreAttempt bool) error {
	p, _, _, inner := pp.unwrapToken(lockToken)
	return p.AbandonOrchestrationItem(ctx, inner, delay, ignoreAttempt)
}

// RenewOrchestrationItemLock extends a lock in the token's partition.
func (pp *Partitioned) RenewOrchestrationItemLock(ctx context.Context, lockToken string, extendFor time.Duration) error {
	p, _, _, inner := pp.unwrapToken(lockToken)
	return p.RenewOrchestrationItemLock(ctx, inner, extendFor)
}

// AckWorkItem acks an activity in its partition; its completion goes to the
// same partition, its instance's.
func (pp *Partitioned) AckWorkItem(ctx context.Context, lockToken string, completion duroxide.WorkItem) error {
	p, _, _, inner := pp.unwrapToken(lockToken)
	return p.AckWorkItem(ctx, inner, completion)
}

// AckWorkItemAndFetch acks an activity and fetches the next one (see
// AckOrchestrationItemAndFetch for the partition it comes from).
func (pp *Partitioned) AckWorkItemAndFetch(ctx context.Context, lockToken string, completion duroxide.WorkItem,
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
func (pp *Partitioned) AbandonWorkItem(ctx context.Context, lockToken string, delay time.Duration, ignoreAttempt bool) error {
	p, _, _, inner := pp.unwrapToken(lockToken)
	return p.AbandonWorkItem(ctx, inner, delay, ignoreAttempt)
}

// RenewWorkItemLock extends an activity's lock in its partition.
func (pp *Partitioned) RenewWorkItemLock(ctx context.Context, lockToken string, extendFor time.Duration) error {
	p, _, _, inner := pp.unwrapToken(lockToken)
	return p.RenewWorkItemLock(ctx, inner, extendFor)
}

// RenewSessionLock renews the owners' sessions in every partition and
// returns how many it renewed.
func (pp *Partitioned) RenewSessionLock(ctx context.Context, ownerIDs []string, extendFor, idleTimeout time.Duration) (int, error) {
	return sum(pp, func(p *Provider) (int, error) { return p.RenewSessionLock(ctx, ownerIDs, extendFor, idleTimeout) })
}

// CleanupOrphanedSessions removes orphaned sessions in every partition.
func (pp *Partitioned) CleanupOrphanedSessions(ctx context.Context, idleTimeout time.Duration) (int, error) {
	return sum(pp, func(p *Provider) (int, error) { return p.CleanupOrphanedSessions(ctx, idleTimeout) })
}

// sum adds up a count over every partition, stopping at the first error.
func sum(pp *Partitioned, f func(p *Provider) (int, error)) (int, error) {
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
