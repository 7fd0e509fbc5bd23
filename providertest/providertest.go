// Package providertest is a validation suite for duroxide providers written
// in Go, in the spirit of testing/fstest: a provider author calls Run from a
// test with a Harness that makes fresh providers, and every behaviour of the
// duroxide provider contract runs as a named subtest.
//
//	func TestProvider(t *testing.T) {
//		providertest.Run(t, providertest.Harness{
//			New: func(t *testing.T) duroxide.Provider { return newEmptyProvider(t) },
//		})
//	}
//
// The suite covers the validation checklist of duroxide's provider guide
// (core, worker queue, tag filtering, orchestrator queue, custom status,
// sessions, KV, concurrency, error handling), its named validation tests,
// capability filtering, lock-stealing cancellation, attempt counts, long
// polling and management, what every method answers for unknown instances
// and executions (UnknownObjects), the error kind every rejected call
// carries (ErrorKinds), and the optional interfaces (AckFetch, Batch,
// LazyHistory), skipped for a provider without them. Tests that need a Harness hook the harness does not
// provide are skipped with a message naming the hook; a harness with Advance
// lets the suite move the storage clock instead of sleeping.
package providertest

import (
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Harness tells the suite how to obtain providers under test.
type Harness struct {
	// New returns a provider holding no state, used by one test only. It
	// registers its own cleanup with t.Cleanup. Required.
	New func(t *testing.T) duroxide.Provider

	// CorruptHistory stores an entry that cannot be decoded as an event at
	// the end of the history of one execution, bypassing the provider's
	// validation (as data written by a newer duroxide would look). Needed
	// by the deserialization-contract tests.
	CorruptHistory func(t *testing.T, p duroxide.Provider, instance string, executionID uint64)

	// StoredKeys lists the storage entries (keys, rows, files) holding
	// instance data, leaving out the fixed ones the provider documents as
	// always present. Needed by the tests proving that deletion leaves
	// nothing behind.
	StoredKeys func(t *testing.T, p duroxide.Provider) []string

	// Advance moves the clock of p's storage d forward at once, as if d had
	// passed: locks, delays and visibility times compared with the storage's
	// clock behave as after a sleep of d. Optional; without it the cases
	// that let time pass sleep for real. Waits the provider itself measures
	// in real time (long-poll timeouts) always stay real.
	Advance func(t *testing.T, p duroxide.Provider, d time.Duration)

	// PartitionOf, when set, says that p splits its namespace into
	// partitions that each keep their own enqueue order, and returns the
	// partition holding instance. A partitioned provider (such as a
	// namespace spread over the shards of a cluster) has one sequence per
	// partition and fetches fairly across partitions, so the order of two
	// items of instances in different partitions is not defined. With it,
	// the cases that assert enqueue order across instances assert it only
	// among instances of the same partition, and still that every expected
	// item arrives exactly once and nothing else does; a fetch that gets an
	// instance of another partition before the one a case waits for gives
	// it back (an abandon that does not count an attempt) and fetches
	// again. A message an ack sends to an instance of another partition
	// may also arrive a moment after the ack returns (it is relayed), so
	// where a case expects an orchestration item it waits for it up to
	// relayWait. Nil: one order over the whole namespace, and an ack's
	// messages fetchable once it returns, asserted as such.
	PartitionOf func(p duroxide.Provider, instance string) int
}

// group is one section of the suite.
type group struct {
	name string
	run  func(t *testing.T, h Harness)
}

// groups lists the sections of the suite in the order they run. Each
// section's file defines its function.
var groups []group

// register adds a section; called from the init functions of the section
// files so each file owns its tests.
func register(name string, run func(t *testing.T, h Harness)) {
	groups = append(groups, group{name: name, run: run})
}

// Run runs every section of the suite against the providers h makes.
func Run(t *testing.T, h Harness) {
	if h.New == nil {
		t.Fatal("providertest: Harness.New is required")
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) { g.run(t, h) })
	}
}
