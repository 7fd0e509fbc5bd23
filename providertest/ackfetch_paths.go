package providertest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The plain sections rerun with every AckWorkItem going through
// AckWorkItemAndFetch, so the combined call's ack half meets the same
// invariants as the plain ack (cancellation races, sessions, attempts,
// concurrency). Its fetch half asks only for a tag no case uses, so it takes
// nothing and the cases see the queues they expect; the AckFetch cases check
// what it fetches.

// afPathSections are the sections whose worker acks are rerouted.
var afPathSections = []string{"Worker", "Sessions", "Attempts", "Concurrency"}

// afUnusedTag is a tag no case enqueues work under.
const afUnusedTag = "providertest-ack-fetch-unused"

// runAckFetchPaths reruns afPathSections on providers whose AckWorkItem is
// the combined call's.
func runAckFetchPaths(t *testing.T, h Harness) {
	w := wrapHarness(h, func(p duroxide.Provider) duroxide.Provider { return ackViaFetch{p} })
	t.Run("PlainSectionsThroughAckFetch", func(t *testing.T) { runSections(t, w, afPathSections) })
}

// runSections runs the sections named in names, in the suite's order.
func runSections(t *testing.T, h Harness, names []string) {
	for _, g := range groups {
		if slices.Contains(names, g.name) {
			t.Run(g.name, func(t *testing.T) { g.run(t, h) })
		}
	}
}

// wrapHarness returns h making providers wrapped by wrap, whose hooks get
// the provider under the wrapper.
func wrapHarness(h Harness, wrap func(duroxide.Provider) duroxide.Provider) Harness {
	w := h
	w.New = func(t *testing.T) duroxide.Provider { return wrap(h.New(t)) }
	w.CorruptHistory = unwrapHook(h.CorruptHistory)
	w.Advance = unwrapAdvance(h.Advance)
	w.StoredKeys = unwrapKeys(h.StoredKeys)
	w.PartitionOf = unwrapPartition(h.PartitionOf)
	return w
}

// ackViaFetch is a provider whose AckWorkItem is AckWorkItemAndFetch with a
// fetch that takes nothing.
type ackViaFetch struct{ duroxide.Provider }

// AckWorkItem acks through the combined call.
func (a ackViaFetch) AckWorkItem(ctx context.Context, lockToken string, completion duroxide.WorkItem) error {
	next, err := a.Provider.(duroxide.WorkAckFetcher).AckWorkItemAndFetch(ctx, lockToken, completion,
		longLock, 0, nil, duroxide.TagsOnly(afUnusedTag))
	if next != nil {
		return errors.New("providertest: the ack-and-fetch of an unused tag fetched an item")
	}
	return err
}

// unwrapHook, unwrapAdvance, unwrapKeys and unwrapPartition hand the harness hooks the
// provider they were written for.
func unwrapHook(f func(*testing.T, duroxide.Provider, string, uint64)) func(*testing.T, duroxide.Provider, string, uint64) {
	if f == nil {
		return nil
	}
	return func(t *testing.T, p duroxide.Provider, instance string, execution uint64) {
		f(t, inner(p), instance, execution)
	}
}

func unwrapAdvance(f func(*testing.T, duroxide.Provider, time.Duration)) func(*testing.T, duroxide.Provider, time.Duration) {
	if f == nil {
		return nil
	}
	return func(t *testing.T, p duroxide.Provider, d time.Duration) { f(t, inner(p), d) }
}

func unwrapKeys(f func(*testing.T, duroxide.Provider) []string) func(*testing.T, duroxide.Provider) []string {
	if f == nil {
		return nil
	}
	return func(t *testing.T, p duroxide.Provider) []string { return f(t, inner(p)) }
}

func unwrapPartition(f func(duroxide.Provider, string) int) func(duroxide.Provider, string) int {
	if f == nil {
		return nil
	}
	return func(p duroxide.Provider, instance string) int { return f(inner(p), instance) }
}

// wrapped is a provider the suite wraps around the one under test to route
// plain calls through optional ones (ackViaFetch, lazyViaRead).
type wrapped interface {
	duroxide.Provider
	unwrap() duroxide.Provider
}

// unwrap returns the provider under test.
func (a ackViaFetch) unwrap() duroxide.Provider { return a.Provider }

// inner returns the provider under a wrapper.
func inner(p duroxide.Provider) duroxide.Provider {
	if w, ok := p.(wrapped); ok {
		return w.unwrap()
	}
	return p
}
