package providertest

import (
	"slices"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Enqueue order across instances. A provider keeps one order over its
// namespace unless its harness says it is partitioned (Harness.PartitionOf):
// then two instances are ordered only when they share a partition. The
// helpers here are the suite's only judges of cross-instance order, so a
// single-partition provider is held to the one global order everywhere.

// orderSkips bounds how many items of instances of other partitions an
// ordered fetch gives back before it fails: a fetch over P partitions that
// starts at a rotating one reaches every partition within P fetches.
const orderSkips = 64

// relayWait bounds how long a case waits for an orchestration item it
// expects, on a partitioned provider, whose acks relay messages to other
// partitions after they return (Harness.PartitionOf).
const relayWait = 5 * time.Second

// fetchExpected is fetch for an item the case expects: on a partitioned
// provider a nil result is retried for up to relayWait, as the item may be
// a message still being relayed from another partition; nil when none
// came.
func (e *env) fetchExpected(lock time.Duration, f *duroxide.DispatcherCapabilityFilter) *duroxide.OrchestrationItem {
	e.t.Helper()
	deadline := time.Now().Add(relayWait)
	for {
		item := e.fetch(lock, f)
		if item != nil || e.h.PartitionOf == nil || time.Now().After(deadline) {
			return item
		}
		time.Sleep(20 * time.Millisecond) // sleep: the poll interval of a wait for a relayed message, which has no signal of its own
	}
}

// ordered says whether the provider keeps the enqueue order between the
// items of instances a and b: always, unless they are in different
// partitions of a partitioned provider.
func (e *env) ordered(a, b string) bool {
	return e.h.PartitionOf == nil || e.h.PartitionOf(e.p, a) == e.h.PartitionOf(e.p, b)
}

// fetchInOrder fetches with fetch until it gets an instance ordered with
// instance, and returns that item (nil when fetch found nothing): the item
// the case expects next, unless the provider broke its order. Items of
// instances in other partitions are given back on the way with an abandon
// that does not count an attempt, so they stay as the case left them.
func (e *env) fetchInOrder(instance string, fetch func() *duroxide.OrchestrationItem) *duroxide.OrchestrationItem {
	e.t.Helper()
	for range orderSkips {
		item := fetch()
		if item == nil || e.ordered(item.Instance, instance) {
			return item
		}
		e.abandon(item.LockToken, 0, true)
	}
	e.t.Fatalf("%d fetches got only instances of other partitions than %q's", orderSkips, instance)
	return nil
}

// fetchWorkInOrder is fetchInOrder for worker items.
func (e *env) fetchWorkInOrder(instance string, fetch func() *duroxide.LockedWorkItem) *duroxide.LockedWorkItem {
	e.t.Helper()
	for range orderSkips {
		w := fetch()
		if w == nil || e.ordered(w.Item.InstanceID(), instance) {
			return w
		}
		e.abandonWork(w.LockToken, 0, true)
	}
	e.t.Fatalf("%d worker fetches got only instances of other partitions than %q's", orderSkips, instance)
	return nil
}

// nextInOrder returns the index, among the indexes left (ascending, into
// the expected items whose instances instanceOf gives), of the item that
// must come next when an item of instance arrives: the first one left
// whose instance is ordered with it (without partitions, the first one
// left). -1 when none is.
func (e *env) nextInOrder(left []int, instanceOf func(i int) string, instance string) int {
	for _, i := range left {
		if e.ordered(instanceOf(i), instance) {
			return i
		}
	}
	return -1
}

// sameItemsInOrder asserts got holds exactly the items of want, in enqueue
// order among ordered instances (sameItems without partitions).
func (e *env) sameItemsInOrder(what string, got []duroxide.WorkItem, want ...duroxide.WorkItem) {
	e.t.Helper()
	if e.h.PartitionOf == nil {
		sameItems(e.t, what, got, want...)
		return
	}
	// want rearranged into the order got should have: each got item takes
	// the next expected one of its partition; the rest go at the end, so
	// a missing or extra item shows in the comparison.
	left := make([]int, len(want))
	for i := range left {
		left[i] = i
	}
	expect := make([]duroxide.WorkItem, 0, len(want))
	for _, g := range got {
		k := e.nextInOrder(left, func(i int) string { return want[i].InstanceID() }, g.InstanceID())
		if k < 0 {
			break
		}
		expect = append(expect, want[k])
		left = slices.DeleteFunc(left, func(i int) bool { return i == k })
	}
	for _, i := range left {
		expect = append(expect, want[i])
	}
	sameItems(e.t, what+" (in order per partition)", got, expect...)
}
