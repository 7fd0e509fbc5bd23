package providertest

import (
	"reflect"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Capability-filtered fetching (duroxide
// docs/proposals-impl/provider-capability-filtering.md "Test plan" categories
// A, B, F, F2 and I; duroxide docs/provider-implementation-guide.md "Capability
// Filtering Contract" and "History Deserialization Contract"; duroxide.Provider
// docs "Capability filter"). Pins are set the way the runtime sets them:
// through ExecutionMetadata.PinnedDuroxideVersion on an ack, never derived from
// event payloads.

func init() { register("Capability", runCapability) }

// runCapability runs the capability-filter and history-deserialization
// cases, one group per part of the contract.
func runCapability(t *testing.T, h Harness) {
	runGroups(t, h, []caseGroup{
		{"Basics", capBasicsCases()},
		{"Versions", capVersionsCases()},
		{"Executions", capExecutionsCases()},
		{"Edges", capEdgesCases()},
		{"CorruptedHistory", capCorruptedCases()},
	})
}

// capBasicsCases lists duroxide
// docs/proposals-impl/provider-capability-filtering.md category A cases 1-6 and
// 8-9.
func capBasicsCases() []envCase {
	return []envCase{
		{"FetchWithFilterNoneReturnsAnyItem", capFilterNone},
		{"FetchWithCompatibleFilterReturnsItem", capCompatible},
		{"FetchWithIncompatibleFilterSkipsItem", capIncompatible},
		{"FetchFilterSkipsIncompatibleSelectsCompatible", capSelects},
		{"FetchFilterDoesNotLockSkippedInstances", capNotLocked},
		{"FetchFilterNullPinnedVersionAlwaysCompatible", capUnpinned},
		{"PinnedVersionStoredViaAckMetadata", capStoredViaAck},
		{"PinnedVersionImmutableAcrossAckCycles", capAcrossAcks},
		{"AckStoresPinnedVersionViaMetadataUpdate", capBackfill},
		{"ProviderUpdatesPinnedVersionWhenTold", capOverwrite},
	}
}

// capVersionsCases lists the version-comparison cases (duroxide
// docs/proposals-impl/provider-capability-filtering.md A7, F2 44 with
// duroxide.Provider docs, ANY-range rule, prerelease and numeric ordering).
func capVersionsCases() []envCase {
	return []envCase{
		{"FetchFilterBoundaryVersions", capBoundaries},
		{"FetchFilterPrereleaseBoundaries", capPrerelease},
		{"FetchFilterComparesVersionsNumerically", capNumeric},
		{"FetchFilterIgnoresBuildMetadata", capBuildMetadata},
		{"FetchFilterMatchesAnyRange", capAnyRange},
		{"FetchFilterPrereleasePrecedence", capPrecedence},
		{"FetchFilterOpenEndedRanges", capOpenEnded},
		{"FetchFilterManyRanges", capManyRanges},
	}
}

// capExecutionsCases lists the per-execution pin cases (duroxide
// docs/proposals-impl/provider-capability-filtering.md B 10-11, F 24, F
// 25a/25b).
func capExecutionsCases() []envCase {
	return []envCase{
		{"ContinueAsNewExecutionGetsOwnPinnedVersion", capCANOwnPin},
		{"ContinueAsNewDoesNotInheritPreviousPinnedVersion", capCANNoInherit},
		{"SubOrchestrationGetsOwnPinnedVersion", capSubOrch},
		{"ContinueAsNewCancelledActivityCompletionNeverArrives", capCANCancelled},
		{"StaleExecutionCompletionStillDelivered", capStaleCompletion},
		{"DelayedMessageFollowsCurrentPin", capDelayedRepin},
		{"ExpiredLockReturnsToCompatibleFetchersOnly", capExpiredFiltered},
	}
}

// capEdgesCases lists duroxide
// docs/proposals-impl/provider-capability-filtering.md F 22-23 and the
// queue-order / long-poll edges.
func capEdgesCases() []envCase {
	return []envCase{
		{"FilterWithEmptySupportedVersionsReturnsNothing", capEmptyFilter},
		{"ConcurrentFilteredFetchNoDoubleLock", capConcurrent},
		{"IncompatibleInstancesDoNotBlockCompatibleOne", capNoHeadOfLine},
		{"FilteredLongPollWakesForCompatibleWork", capLongPoll},
	}
}

// capCorruptedCases lists the deserialization-contract cases (duroxide
// docs/proposals-impl/provider-capability-filtering.md F2 43 and category I as
// adapted by duroxide docs/provider-implementation-guide.md and
// duroxide.Provider docs).
func capCorruptedCases() []envCase {
	return []envCase{
		{"FetchFilterAppliedBeforeHistoryDeserialization", capFilterBeforeDecode},
		{"FetchCorruptedHistoryFilteredVsUnfiltered", capCorruptFiltered},
		{"FetchDeserializationErrorIncrementsAttemptCount", capCorruptAttempts},
		{"AckAppendsEventToCorruptedHistory", capCorruptAck},
		{"CorruptedPreviousExecutionDoesNotAffectCurrent", capCorruptPrevious},
	}
}

// ---- helpers ----------------------------------------------------------------

// capInstance is an instance a capability test seeds: its id and the duroxide
// version pinned on its first execution ("" = unpinned).
type capInstance struct{ id, pin string }

// capPin parses a pin; "" is nil (unpinned).
func capPin(t *testing.T, s string) *semver.Version {
	t.Helper()
	if s == "" {
		return nil
	}
	return ver(t, s)
}

// capSeed starts every instance with its pin, then gives each, in order, one
// pending message, so all are fetchable and unlocked.
func capSeed(e *env, insts ...capInstance) {
	e.t.Helper()
	for _, in := range insts {
		e.start(in.id, capPin(e.t, in.pin))
	}
	for _, in := range insts {
		capPoke(e, in.id)
	}
}

// capPokeItem is the message capPoke enqueues for instance.
func capPokeItem(instance string) duroxide.WorkItem {
	return duroxide.ExternalRaised{Instance: instance, Name: "poke", Data: `"p"`}
}

// capPoke enqueues a message for instance so it has work to fetch.
func capPoke(e *env, instance string) {
	e.t.Helper()
	e.enqueue(capPokeItem(instance), 0)
}

// capFetchIs fetches with f (long lock) and asserts it returns instance.
func capFetchIs(e *env, f *duroxide.DispatcherCapabilityFilter, instance string) *duroxide.OrchestrationItem {
	e.t.Helper()
	item := e.fetchExpected(longLock, f)
	if item == nil {
		e.t.Fatalf("filtered fetch returned nothing, want instance %q", instance)
	}
	if item.Instance != instance {
		e.t.Fatalf("filtered fetch returned instance %q, want %q", item.Instance, instance)
	}
	return item
}

// capDrainItems fetches with f (long locks, kept) until nothing is left.
func capDrainItems(e *env, f *duroxide.DispatcherCapabilityFilter) []*duroxide.OrchestrationItem {
	e.t.Helper()
	var items []*duroxide.OrchestrationItem
	for i := 0; ; i++ {
		item := e.fetch(longLock, f)
		if item == nil {
			return items
		}
		if i > 50 {
			e.t.Fatal("fetch keeps returning items: locks are not held")
		}
		items = append(items, item)
	}
}

// capDrain fetches with f (long locks, kept) until nothing is left and returns
// the sorted instances it got.
func capDrain(e *env, f *duroxide.DispatcherCapabilityFilter) []string {
	e.t.Helper()
	var got []string
	for _, item := range capDrainItems(e, f) {
		got = append(got, item.Instance)
	}
	sort.Strings(got)
	return got
}

// capWantInstances asserts the sorted instances of items are exactly want.
func capWantInstances(t *testing.T, got, want []string) {
	t.Helper()
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) {
		t.Fatalf("filtered fetches returned %v, want %v", got, want)
	}
}

// capWantDrain asserts that a drain with f returns exactly want, keeping the
// locks.
func capWantDrain(e *env, f *duroxide.DispatcherCapabilityFilter, want ...string) {
	e.t.Helper()
	capWantInstances(e.t, capDrain(e, f), want)
}

// capWantOnly asserts that a drain with f returns exactly want, then
// releases the locks (attempts ignored) so the next filter sees everything.
func capWantOnly(e *env, f *duroxide.DispatcherCapabilityFilter, want ...string) {
	e.t.Helper()
	items := capDrainItems(e, f)
	got := make([]string, len(items))
	for i, item := range items {
		got[i] = item.Instance
		e.abandon(item.LockToken, 0, true)
	}
	sort.Strings(got)
	capWantInstances(e.t, got, want)
}

// capAckPin acks a fetched item with no events and the given pin (nil:
// unchanged).
func capAckPin(e *env, item *duroxide.OrchestrationItem, pin *semver.Version) {
	e.t.Helper()
	e.ack(item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID: item.ExecutionID,
		Metadata:    duroxide.ExecutionMetadata{PinnedDuroxideVersion: pin},
	})
}

// capRepin fetches instance (it must be the only work), acks with pin and
// pokes it again.
func capRepin(e *env, instance string, pin *semver.Version) {
	e.t.Helper()
	capAckPin(e, capFetchIs(e, nil, instance), pin)
	capPoke(e, instance)
}

// capWantHistory asserts the event types of one execution's history.
func capWantHistory(e *env, instance string, execution uint64, types ...string) {
	e.t.Helper()
	events := e.read(instance, execution)
	got := make([]string, len(events))
	for i, ev := range events {
		got[i] = ev.Kind.EventType()
	}
	if !reflect.DeepEqual(got, types) && (len(got) > 0 || len(types) > 0) {
		e.t.Fatalf("history of %s execution %d = %v, want %v", instance, execution, got, types)
	}
}

// capScheduleActivity runs a turn of execution 1 scheduling activity id
// (history gets ActivityScheduled at id) and returns the worker's lock on it.
func capScheduleActivity(e *env, instance string, id uint64) *duroxide.LockedWorkItem {
	e.t.Helper()
	capPoke(e, instance)
	item := capFetchIs(e, nil, instance)
	e.ack(item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID:  1,
		HistoryDelta: []duroxide.Event{event(id, instance, 1, duroxide.ActivityScheduledEvent{Name: "Act", Input: `"x"`})},
		WorkerItems:  []duroxide.WorkItem{activity(instance, id)},
	})
	w := e.fetchWork(longLock, nil, duroxide.DefaultOnly())
	if w == nil || !reflect.DeepEqual(w.Item, activity(instance, id)) {
		e.t.Fatalf("worker fetch = %#v, want the scheduled activity", w)
	}
	return w
}

// capContinueAsNewItem is the ContinueAsNew message that ends execution 1.
func capContinueAsNewItem(instance string) duroxide.ContinueAsNew {
	return duroxide.ContinueAsNew{Instance: instance, Orchestration: "Orch", Input: `"next"`}
}

// capEndWithContinueAsNew runs a turn ending execution 1 with ContinueAsNew
// (event id eventID), cancelling the given activities.
func capEndWithContinueAsNew(e *env, instance string, eventID uint64, cancelled ...duroxide.ScheduledActivityIdentifier) {
	e.t.Helper()
	capPoke(e, instance)
	item := capFetchIs(e, nil, instance)
	e.ack(item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID:         1,
		HistoryDelta:        []duroxide.Event{event(eventID, instance, 1, duroxide.OrchestrationContinuedAsNewEvent{Input: `"next"`})},
		OrchestratorItems:   []duroxide.WorkItem{capContinueAsNewItem(instance)},
		Metadata:            duroxide.ExecutionMetadata{Status: "ContinuedAsNew", Output: ptr(`"next"`)},
		CancelledActivities: cancelled,
	})
}

// capStartExecution2 fetches the ContinueAsNew message (unfiltered: it is
// still execution 1's work) and acks execution 2's first turn with pin.
func capStartExecution2(e *env, instance string, pin *semver.Version) {
	e.t.Helper()
	item := capFetchIs(e, nil, instance)
	e.wantMessages(item, capContinueAsNewItem(instance))
	capAckExecution2(e, item, pin)
}

// capAckExecution2 acks the fetched ContinueAsNew item with execution 2's
// first turn, pinned at pin.
func capAckExecution2(e *env, item *duroxide.OrchestrationItem, pin *semver.Version) {
	e.t.Helper()
	instance := item.Instance
	e.ack(item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID:  2,
		HistoryDelta: []duroxide.Event{started(instance, 2, "Orch", "1.0.0")},
		Metadata:     duroxide.ExecutionMetadata{Status: "Running", PinnedDuroxideVersion: pin},
	})
}

// capNeedCorrupt skips the test when the harness cannot corrupt history.
func capNeedCorrupt(e *env) {
	e.t.Helper()
	if e.h.CorruptHistory == nil {
		e.t.Skip("Harness.CorruptHistory is nil: cannot store undecodable history")
	}
}

// capCorrupted starts instance pinned at pin, appends an undecodable entry to
// execution 1's history and gives it a pending message.
func capCorrupted(e *env, instance, pin string) {
	e.t.Helper()
	e.start(instance, capPin(e.t, pin))
	e.h.CorruptHistory(e.t, e.p, instance, 1)
	capPoke(e, instance)
}

// capWantCorruptItem asserts item is instance's with a history error, no
// history, the pending poke and the given attempt count.
func capWantCorruptItem(e *env, item *duroxide.OrchestrationItem, instance string, attempts uint32) {
	t := e.t
	t.Helper()
	if item == nil || item.Instance != instance {
		t.Fatalf("fetch = %#v, want instance %q with a history error", item, instance)
	}
	if item.HistoryError == "" || len(item.History) != 0 {
		t.Fatalf("HistoryError = %q with %d events, want an error and no events", item.HistoryError, len(item.History))
	}
	if item.AttemptCount != attempts || item.ExecutionID != 1 {
		t.Fatalf("AttemptCount = %d, ExecutionID = %d, want %d and 1", item.AttemptCount, item.ExecutionID, attempts)
	}
	e.wantMessages(item, capPokeItem(instance))
}

// ---- category A -------------------------------------------------------------

// capFilterNone proves a nil filter returns a pinned instance with its message
// (duroxide docs/proposals-impl/provider-capability-filtering.md A1: legacy
// behaviour).
// Same as duroxide provider_validation::capability_filtering::test_fetch_with_filter_none_returns_any_item.
func capFilterNone(e *env) {
	capSeed(e, capInstance{"A", "1.2.3"})
	item := capFetchIs(e, nil, "A")
	e.wantMessages(item, capPokeItem("A"))
	if item.ExecutionID != 1 || item.OrchestrationName != "Orch" || len(item.History) != 1 {
		e.t.Fatalf("item = %#v, want execution 1 of Orch with 1 event", item)
	}
}

// capCompatible proves a filter whose range holds the pin returns the item
// (duroxide docs/proposals-impl/provider-capability-filtering.md A2).
// Same as duroxide provider_validation::capability_filtering::test_fetch_with_compatible_filter_returns_item.
func capCompatible(e *env) {
	capSeed(e, capInstance{"A", "1.2.3"})
	item := capFetchIs(e, filter(e.t, "1.0.0", "1.99.99"), "A")
	e.wantMessages(item, capPokeItem("A"))
	e.noFetch(nil)
}

// capIncompatible proves a filter excluding the pin returns (nil, nil) and
// leaves the instance untouched: an unfiltered fetch still gets it, as a first
// attempt (duroxide docs/proposals-impl/provider-capability-filtering.md A3).
// Same as duroxide provider_validation::capability_filtering::test_fetch_with_incompatible_filter_skips_item.
func capIncompatible(e *env) {
	capSeed(e, capInstance{"A", "1.2.3"})
	e.noFetch(filter(e.t, "2.0.0", "3.0.0"))
	item := capFetchIs(e, nil, "A")
	e.wantMessages(item, capPokeItem("A"))
	if item.AttemptCount != 1 {
		e.t.Fatalf("AttemptCount = %d after a skipping fetch, want 1", item.AttemptCount)
	}
}

// capSelects proves a filter picks the compatible instance among others
// (duroxide docs/proposals-impl/provider-capability-filtering.md A4).
// Same as duroxide provider_validation::capability_filtering::test_fetch_filter_skips_incompatible_selects_compatible.
func capSelects(e *env) {
	capSeed(e, capInstance{"A", "1.0.0"}, capInstance{"B", "2.0.0"})
	capWantDrain(e, filter(e.t, "2.0.0", "2.99.99"), "B")
	capWantDrain(e, filter(e.t, "1.0.0", "1.99.99"), "A")
	e.noFetch(nil)
}

// capNotLocked proves an incompatible fetch neither locks nor counts an
// attempt: a compatible fetch right after gets the instance at attempt 1
// (duroxide docs/proposals-impl/provider-capability-filtering.md A5; filter
// before locking).
// Same as duroxide provider_validation::capability_filtering::test_fetch_filter_does_not_lock_skipped_instances.
func capNotLocked(e *env) {
	capSeed(e, capInstance{"A", "1.0.0"})
	for i := 0; i < 3; i++ {
		e.noFetch(filter(e.t, "2.0.0", "3.0.0"))
	}
	item := capFetchIs(e, filter(e.t, "1.0.0", "1.0.0"), "A")
	if item.AttemptCount != 1 {
		e.t.Fatalf("AttemptCount = %d, want 1: skipped fetches must not count", item.AttemptCount)
	}
}

// capUnpinned proves an unpinned execution is compatible with every non-empty
// filter (duroxide docs/proposals-impl/provider-capability-filtering.md A6;
// duroxide.Provider docs).
// Same as duroxide provider_validation::capability_filtering::test_fetch_filter_null_pinned_version_always_compatible.
func capUnpinned(e *env) {
	capSeed(e, capInstance{"A", ""})
	for _, f := range []*duroxide.DispatcherCapabilityFilter{
		filter(e.t, "0.0.0", "0.0.1"), filter(e.t, "99.0.0", "99.9.9"), filter(e.t, "5.0.0", "5.0.0", "7.0.0", "8.0.0"),
	} {
		item := capFetchIs(e, f, "A")
		e.abandon(item.LockToken, 0, true)
	}
}

// capStoredViaAck proves the pin given in the first ack's metadata is what the
// filter uses (duroxide docs/proposals-impl/provider-capability-filtering.md
// A8).
// Same as duroxide provider_validation::capability_filtering::test_pinned_version_stored_via_ack_metadata.
func capStoredViaAck(e *env) {
	capSeed(e, capInstance{"A", "1.2.3"})
	e.noFetch(filter(e.t, "1.2.4", "9.0.0"))
	e.noFetch(filter(e.t, "0.0.0", "1.2.2"))
	capFetchIs(e, filter(e.t, "1.2.3", "1.2.3"), "A")
}

// capAcrossAcks proves the pin persists over later acks of the same execution,
// whether they repeat it or leave it nil (= unchanged) (duroxide
// docs/proposals-impl/provider-capability-filtering.md A9; duroxide.Provider
// docs ExecutionMetadata).
// Same as duroxide provider_validation::capability_filtering::test_pinned_version_immutable_across_ack_cycles.
func capAcrossAcks(e *env) {
	capSeed(e, capInstance{"A", "1.0.0"})
	capRepin(e, "A", ver(e.t, "1.0.0"))
	e.abandon(capFetchIs(e, filter(e.t, "1.0.0", "1.99.99"), "A").LockToken, 0, true)
	capRepin(e, "A", nil)
	e.noFetch(filter(e.t, "2.0.0", "9.0.0"))
	capFetchIs(e, filter(e.t, "1.0.0", "1.0.0"), "A")
}

// capBackfill proves an ack pins an execution that had no pin: it stops being
// universally compatible (duroxide
// docs/proposals-impl/provider-capability-filtering.md F2 45).
// Same as duroxide provider_validation::capability_filtering::test_ack_stores_pinned_version_via_metadata_update.
func capBackfill(e *env) {
	capSeed(e, capInstance{"A", ""})
	capRepin(e, "A", ver(e.t, "1.2.3"))
	e.noFetch(filter(e.t, "2.0.0", "3.0.0"))
	capFetchIs(e, filter(e.t, "1.2.3", "1.2.3"), "A")
}

// capOverwrite proves the provider stores a new pin unconditionally, and that a
// message which arrived during that turn is routed by the new pin (duroxide
// docs/proposals-impl/provider-capability-filtering.md F2 46; duroxide
// docs/provider-implementation-guide.md checklist: no write-once guard).
// Same as duroxide provider_validation::capability_filtering::test_provider_updates_pinned_version_when_told.
func capOverwrite(e *env) {
	capSeed(e, capInstance{"A", "1.0.0"})
	item := capFetchIs(e, nil, "A")
	capPoke(e, "A")
	capAckPin(e, item, ver(e.t, "2.0.0"))
	e.noFetch(filter(e.t, "1.0.0", "1.0.0"))
	e.wantMessages(capFetchIs(e, filter(e.t, "2.0.0", "2.0.0"), "A"), capPokeItem("A"))
}

// ---- version comparison ---------------------------------------------------------

// capBoundaries proves both range bounds are inclusive and nothing past them is
// returned (duroxide docs/proposals-impl/provider-capability-filtering.md A7
// with duroxide.Provider docs, inclusive ranges).
// Same as duroxide provider_validation::capability_filtering::test_fetch_filter_boundary_versions.
func capBoundaries(e *env) {
	capSeed(e, capInstance{"lo", "1.0.0"}, capInstance{"hi", "1.9.99"},
		capInstance{"out", "2.0.0"}, capInstance{"below", "0.9.99"})
	capWantDrain(e, filter(e.t, "1.0.0", "1.9.99"), "hi", "lo")
	capWantDrain(e, nil, "below", "out")
}

// capPrerelease proves prerelease pins follow semver precedence: 2.0.0-rc.1
// lies inside [1.0.0, 2.0.0] and outside [2.0.0, 3.0.0] (duroxide
// SemverRange).
func capPrerelease(e *env) {
	capSeed(e, capInstance{"rc", "2.0.0-rc.1"})
	e.noFetch(filter(e.t, "2.0.0", "3.0.0"))
	capFetchIs(e, filter(e.t, "1.0.0", "2.0.0"), "rc")
}

// capNumeric proves versions compare numerically per component, not as text
// (1.10.0 > 1.9.x, 10.0.0 > 9.x) (duroxide
// docs/proposals-impl/provider-capability-filtering.md "Version
// representation").
func capNumeric(e *env) {
	capSeed(e, capInstance{"nine", "1.9.0"}, capInstance{"ten", "1.10.0"}, capInstance{"major", "10.0.0"})
	capWantDrain(e, filter(e.t, "1.9.0", "1.9.99"), "nine")
	capWantDrain(e, filter(e.t, "2.0.0", "9.0.0"))
	capWantDrain(e, filter(e.t, "1.10.0", "1.20.0"), "ten")
	capWantDrain(e, filter(e.t, "9.0.0", "10.0.0"), "major")
}

// capBuildMetadata proves build metadata does not affect compatibility:
// 1.5.0+build.7 lies in [1.5.0, 1.5.0] (duroxide SemverRange).
func capBuildMetadata(e *env) {
	capSeed(e, capInstance{"A", "1.5.0+build.7"})
	e.noFetch(filter(e.t, "1.5.1", "2.0.0"))
	capFetchIs(e, filter(e.t, "1.5.0", "1.5.0"), "A")
}

// capAnyRange proves a filter with disjoint ranges accepts a pin in ANY range
// and never one between them (duroxide
// docs/proposals-impl/provider-capability-filtering.md F2 44 inverted by
// duroxide.Provider docs).
func capAnyRange(e *env) {
	capSeed(e, capInstance{"A", "1.0.0"}, capInstance{"B", "3.0.0"}, capInstance{"C", "2.0.0"})
	capWantDrain(e, filter(e.t, "1.0.0", "1.5.0", "3.0.0", "3.5.0"), "A", "B")
	capWantDrain(e, nil, "C")
}

// capPrecedence proves prerelease pins follow full semver precedence
// (numeric identifiers compare as numbers, alphanumeric ones as text, a
// shorter identifier list first): [1.0.0-beta.2, 1.0.0-rc.1] holds beta.2,
// beta.11 and rc.1 only (duroxide SemverRange; semver 2.0.0 §11).
func capPrecedence(e *env) {
	capSeed(e, capInstance{"alpha", "1.0.0-alpha"}, capInstance{"alpha.1", "1.0.0-alpha.1"},
		capInstance{"alpha.beta", "1.0.0-alpha.beta"}, capInstance{"beta", "1.0.0-beta"},
		capInstance{"beta.2", "1.0.0-beta.2"}, capInstance{"beta.11", "1.0.0-beta.11"},
		capInstance{"rc.1", "1.0.0-rc.1"}, capInstance{"final", "1.0.0"})
	capWantDrain(e, filter(e.t, "1.0.0-beta.2", "1.0.0-rc.1"), "beta.2", "beta.11", "rc.1")
	capWantDrain(e, nil, "alpha", "alpha.1", "alpha.beta", "beta", "final")
}

// capOpenEnded proves nil range bounds are unbounded on that side and the
// zero range holds every version, while a range with Min > Max holds none
// (duroxide SemverRange).
func capOpenEnded(e *env) {
	capSeed(e, capInstance{"A", "1.0.0"}, capInstance{"B", "2.0.0"}, capInstance{"C", "99.0.0"})
	upTo := &duroxide.DispatcherCapabilityFilter{SupportedDuroxideVersions: []duroxide.SemverRange{{Max: ver(e.t, "1.5.0")}}}
	from := &duroxide.DispatcherCapabilityFilter{SupportedDuroxideVersions: []duroxide.SemverRange{{Min: ver(e.t, "2.0.0")}}}
	all := &duroxide.DispatcherCapabilityFilter{SupportedDuroxideVersions: []duroxide.SemverRange{{}}}
	capWantOnly(e, upTo, "A")
	capWantOnly(e, from, "B", "C")
	capWantOnly(e, filter(e.t, "3.0.0", "1.0.0"))
	capWantOnly(e, all, "A", "B", "C")
}

// capManyRanges proves a filter with many ranges is honoured whole: a pin in
// its last range is returned, one between ranges is not (duroxide.Provider
// docs: ANY range).
func capManyRanges(e *env) {
	capSeed(e, capInstance{"last", "12.0.0"}, capInstance{"gap", "7.5.0"})
	var bounds []string
	for i := 1; i <= 12; i++ {
		v := strconv.Itoa(i) + ".0.0"
		bounds = append(bounds, v, v)
	}
	capWantDrain(e, filter(e.t, bounds...), "last")
	capWantDrain(e, nil, "gap")
}

// ---- executions ---------------------------------------------------------------

// capCANOwnPin proves the filter follows the current execution: after
// ContinueAsNew, execution 2's pin decides, also for a message that arrived
// while execution 2's first turn held the lock (duroxide
// docs/proposals-impl/provider-capability-filtering.md B10).
// Same as duroxide provider_validation::capability_filtering::test_continue_as_new_execution_gets_own_pinned_version.
func capCANOwnPin(e *env) {
	e.start("A", ver(e.t, "1.0.0"))
	capEndWithContinueAsNew(e, "A", 2)
	item := capFetchIs(e, nil, "A")
	capPoke(e, "A")
	capAckExecution2(e, item, ver(e.t, "2.0.0"))
	e.noFetch(filter(e.t, "1.0.0", "1.99.99"))
	item = capFetchIs(e, filter(e.t, "2.0.0", "2.99.99"), "A")
	e.wantMessages(item, capPokeItem("A"))
	if item.ExecutionID != 2 || len(item.History) != 1 {
		e.t.Fatalf("ExecutionID = %d with %d events, want execution 2 with 1 event", item.ExecutionID, len(item.History))
	}
}

// capCANNoInherit proves a new execution does not inherit the previous
// execution's pin: acked without one, execution 2 is unpinned and so compatible
// with a filter excluding execution 1's pin (duroxide
// docs/proposals-impl/provider-capability-filtering.md B11).
func capCANNoInherit(e *env) {
	e.start("A", ver(e.t, "1.0.0"))
	capEndWithContinueAsNew(e, "A", 2)
	capStartExecution2(e, "A", nil)
	capPoke(e, "A")
	item := capFetchIs(e, filter(e.t, "3.0.0", "3.0.0"), "A")
	if item.ExecutionID != 2 {
		e.t.Fatalf("ExecutionID = %d, want 2", item.ExecutionID)
	}
}

// capSubOrch proves a sub-orchestration is filtered by its own pin, not its
// parent's: unpinned before its first ack, then pinned independently (duroxide
// docs/proposals-impl/provider-capability-filtering.md F24).
func capSubOrch(e *env) {
	e.start("P", ver(e.t, "1.0.0"))
	capPoke(e, "P")
	item := capFetchIs(e, nil, "P")
	e.ack(item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID: 1,
		HistoryDelta: []duroxide.Event{event(2, "P", 1,
			duroxide.SubOrchestrationScheduledEvent{Name: "Child", Instance: "C", Input: `"c"`})},
		OrchestratorItems: []duroxide.WorkItem{duroxide.StartOrchestration{Instance: "C", Orchestration: "Child",
			Input: `"c"`, ParentInstance: ptr("P"), ParentID: ptr(uint64(2)), ExecutionID: 1}},
	})
	child := capFetchIs(e, filter(e.t, "2.0.0", "2.0.0"), "C")
	e.ack(child.LockToken, duroxide.OrchestrationCommit{
		ExecutionID:  1,
		HistoryDelta: []duroxide.Event{started("C", 1, "Child", "1.0.0")},
		Metadata: duroxide.ExecutionMetadata{OrchestrationName: "Child", OrchestrationVersion: "1.0.0",
			ParentInstanceID: "P", PinnedDuroxideVersion: ver(e.t, "2.0.0")},
	})
	capPoke(e, "P")
	capPoke(e, "C")
	capWantDrain(e, filter(e.t, "1.0.0", "1.0.0"), "P")
	capWantDrain(e, filter(e.t, "2.0.0", "2.0.0"), "C")
}

// capCANCancelled proves an activity cancelled by a ContinueAsNew ack loses its
// worker lock (ack and renew fail permanently) and its completion never reaches
// the orchestrator queue (duroxide
// docs/proposals-impl/provider-capability-filtering.md F25a; duroxide
// docs/provider-implementation-guide.md lock stealing).
func capCANCancelled(e *env) {
	e.start("A", ver(e.t, "1.0.0"))
	w := capScheduleActivity(e, "A", 2)
	capEndWithContinueAsNew(e, "A", 3, duroxide.ScheduledActivityIdentifier{Instance: "A", ExecutionID: 1, ActivityID: 2})
	wantPermanent(e.t, e.p.RenewWorkItemLock(e.ctx, w.LockToken, longLock), duroxide.ErrLockLost, "renew_work_item_lock", "lock_token")
	wantPermanent(e.t, e.p.AckWorkItem(e.ctx, w.LockToken, completed("A", 2)), duroxide.ErrLockLost, "ack_work_item", "lock_token")
	capStartExecution2(e, "A", ver(e.t, "2.0.0"))
	e.noFetch(nil)
	e.noWork(duroxide.AnyTag())
	capWantHistory(e, "A", 1, "OrchestrationStarted", "ActivityScheduled", "OrchestrationContinuedAsNew")
	capWantHistory(e, "A", 2, "OrchestrationStarted")
}

// capStaleCompletion proves a completion for execution 1 that arrives after
// execution 2 started is still delivered, routed by execution 2's pin: the
// runtime discards it, the provider must not (duroxide
// docs/proposals-impl/provider-capability-filtering.md F25b; duroxide WorkItem
// routing).
func capStaleCompletion(e *env) {
	e.start("A", ver(e.t, "1.0.0"))
	w := capScheduleActivity(e, "A", 2)
	capEndWithContinueAsNew(e, "A", 3)
	capStartExecution2(e, "A", ver(e.t, "2.0.0"))
	e.ackWork(w.LockToken, completed("A", 2))
	e.noFetch(filter(e.t, "1.0.0", "1.99.99"))
	item := capFetchIs(e, filter(e.t, "2.0.0", "2.99.99"), "A")
	e.wantMessages(item, completed("A", 2))
	if item.ExecutionID != 2 {
		e.t.Fatalf("ExecutionID = %d, want 2", item.ExecutionID)
	}
	capAckPin(e, item, nil)
	capWantHistory(e, "A", 2, "OrchestrationStarted")
	e.noFetch(nil)
}

// capDelayedRepin proves a delayed message enqueued under one pin is routed by
// the pin in force when it becomes visible (duroxide.Provider docs: the filter
// applies to the current execution's pinned version).
func capDelayedRepin(e *env) {
	capSeed(e, capInstance{"A", "1.0.0"})
	item := capFetchIs(e, nil, "A")
	e.enqueue(capPokeItem("A"), time.Second)
	capAckPin(e, item, ver(e.t, "2.0.0"))
	old, cur := filter(e.t, "1.0.0", "1.0.0"), filter(e.t, "2.0.0", "2.0.0")
	eventually(e.t, 4*time.Second, "delayed message fetchable under the new pin", func() bool {
		e.noFetch(old)
		item = e.fetch(longLock, cur)
		return item != nil
	})
	e.wantMessages(item, capPokeItem("A"))
}

// capExpiredFiltered proves an instance whose lock expired is offered again
// only to fetchers compatible with its pin, as a new attempt (duroxide
// docs/provider-implementation-guide.md peek-lock 2c; duroxide.Provider docs
// capability filter).
func capExpiredFiltered(e *env) {
	capSeed(e, capInstance{"A", "2.0.0"})
	if item := e.fetch(shortLock, filter(e.t, "2.0.0", "2.0.0")); item == nil || item.AttemptCount != 1 {
		e.t.Fatalf("first filtered fetch = %#v, want A at attempt 1", item)
	}
	e.wait(afterShort)
	e.noFetch(filter(e.t, "1.0.0", "1.0.0"))
	item := capFetchIs(e, filter(e.t, "2.0.0", "2.0.0"), "A")
	if item.AttemptCount != 2 {
		e.t.Fatalf("AttemptCount = %d after expiry, want 2", item.AttemptCount)
	}
}

// ---- edges --------------------------------------------------------------------

// capEmptyFilter proves a filter with no ranges (empty or nil list) matches
// nothing, not even an unpinned instance, and locks nothing (duroxide
// docs/proposals-impl/provider-capability-filtering.md F22; duroxide.Provider
// docs settled details).
// Same as duroxide provider_validation::capability_filtering::test_filter_with_empty_supported_versions_returns_nothing.
func capEmptyFilter(e *env) {
	capSeed(e, capInstance{"pinned", "1.0.0"}, capInstance{"free", ""})
	e.noFetch(filter(e.t))
	e.noFetch(&duroxide.DispatcherCapabilityFilter{})
	capWantDrain(e, nil, "free", "pinned")
}

// capConcurrent proves filtered fetches racing for one compatible instance lock
// it exactly once (duroxide
// docs/proposals-impl/provider-capability-filtering.md F23).
// Same as duroxide provider_validation::capability_filtering::test_concurrent_filtered_fetch_no_double_lock.
func capConcurrent(e *env) {
	capSeed(e, capInstance{"A", "1.0.0"}, capInstance{"B", "2.0.0"})
	const n = 8
	f := filter(e.t, "1.0.0", "1.0.0")
	won := race(e, n, func() (*duroxide.OrchestrationItem, error) {
		return e.p.FetchOrchestrationItem(e.ctx, longLock, 0, f)
	})
	for _, item := range won {
		if item.Instance != "A" {
			e.t.Fatalf("concurrent fetch returned incompatible instance %q", item.Instance)
		}
	}
	if len(won) != 1 {
		e.t.Fatalf("%d of %d concurrent fetches got the instance, want exactly 1", len(won), n)
	}
	capWantDrain(e, nil, "B")
}

// capNoHeadOfLine proves incompatible instances enqueued first do not hide a
// compatible one behind them: one filtered fetch returns it at once (duroxide
// docs/provider-implementation-guide.md: skip if incompatible, keep looking).
func capNoHeadOfLine(e *env) {
	insts := []capInstance{}
	for _, id := range []string{"x1", "x2", "x3", "x4", "x5", "x6"} {
		insts = append(insts, capInstance{id, "2.0.0"})
	}
	capSeed(e, append(insts, capInstance{"ok", "1.0.0"})...)
	capFetchIs(e, filter(e.t, "1.0.0", "1.5.0"), "ok")
	e.noFetch(filter(e.t, "1.0.0", "1.5.0"))
	if got := capDrain(e, nil); len(got) != 6 {
		e.t.Fatalf("unfiltered fetches returned %v, want the 6 incompatible instances", got)
	}
}

// capLongPoll proves a filtered long poll ignores incompatible work that
// arrives and returns the compatible work arriving after it, well before its
// timeout (duroxide.Provider docs long polling and capability filter).
func capLongPoll(e *env) {
	e.start("old", ver(e.t, "2.0.0"))
	e.start("ok", ver(e.t, "1.0.0"))
	const poll = 6 * time.Second
	type result struct {
		item *duroxide.OrchestrationItem
		err  error
		took time.Duration
	}
	done := make(chan result, 1)
	go func() {
		begin := time.Now()
		item, err := e.p.FetchOrchestrationItem(e.ctx, longLock, poll, filter(e.t, "1.0.0", "1.5.0"))
		done <- result{item, err, time.Since(begin)}
	}()
	lpBlock(e, 1)
	capPoke(e, "old")
	lpBlock(e, 1) // parked again, or still: the old instance is not for it
	capPoke(e, "ok")
	r := <-done
	if r.err != nil || r.item == nil || r.item.Instance != "ok" {
		e.t.Fatalf("long poll = %#v, %v; want instance ok", r.item, r.err)
	}
	if r.took > poll-2*time.Second {
		e.t.Fatalf("long poll returned after %v, want well before its %v timeout", r.took, poll)
	}
	capWantDrain(e, nil, "old")
}

// ---- corrupted history ------------------------------------------------------------

// capFilterBeforeDecode proves the filter runs before history is read: an
// excluded execution with undecodable history yields no item and no error, and
// counts no attempt (duroxide
// docs/proposals-impl/provider-capability-filtering.md F2 43 / I 39 part A).
// Same as duroxide provider_validation::capability_filtering::test_fetch_filter_applied_before_history_deserialization.
func capFilterBeforeDecode(e *env) {
	capNeedCorrupt(e)
	capCorrupted(e, "A", "99.0.0")
	e.noFetch(filter(e.t, "1.0.0", "2.0.0"))
	capWantCorruptItem(e, e.fetch(longLock, nil), "A", 1)
}

// capCorruptFiltered proves an unfiltered fetch of undecodable history returns
// the item with HistoryError, no events and the lock held; abandon releases it,
// and a compatible filter gets it too (duroxide
// docs/provider-implementation-guide.md History Deserialization Contract;
// duroxide docs/proposals-impl/provider-capability-filtering.md I 39 adapted by
// duroxide.Provider docs).
// Same as duroxide provider_validation::capability_filtering::test_fetch_corrupted_history_filtered_vs_unfiltered.
func capCorruptFiltered(e *env) {
	capNeedCorrupt(e)
	capCorrupted(e, "A", "5.0.0")
	e.noFetch(filter(e.t, "1.0.0", "2.0.0"))
	item := e.fetch(longLock, nil)
	capWantCorruptItem(e, item, "A", 1)
	e.noFetch(nil)
	e.noFetch(filter(e.t, "5.0.0", "5.0.0"))
	e.abandon(item.LockToken, 0, false)
	capWantCorruptItem(e, e.fetch(longLock, filter(e.t, "5.0.0", "5.0.0")), "A", 2)
}

// capCorruptAttempts proves each fetch cycle of undecodable history counts an
// attempt, whether the lock expired or was abandoned, so the runtime's poison
// path can end it (duroxide
// docs/proposals-impl/provider-capability-filtering.md I 41; duroxide
// docs/provider-implementation-guide.md requirement 2).
// Same as duroxide provider_validation::capability_filtering::test_fetch_deserialization_error_increments_attempt_count.
func capCorruptAttempts(e *env) {
	capNeedCorrupt(e)
	capCorrupted(e, "A", "")
	capWantCorruptItem(e, e.fetch(shortLock, nil), "A", 1)
	e.wait(afterShort)
	item := e.fetch(longLock, nil)
	capWantCorruptItem(e, item, "A", 2)
	e.abandon(item.LockToken, 0, false)
	capWantCorruptItem(e, e.fetch(longLock, nil), "A", 3)
}

// capCorruptAck proves the poison ack of an item with undecodable history
// succeeds: it appends OrchestrationFailed at id 99999 without re-reading
// stored events, sets status Failed (read back through Admin when the provider
// has it), consumes the messages and releases the lock, and leaves the stored
// history as it was (a new message still meets the undecodable entry)
// (provider_validation::capability_filtering::test_ack_appends_event_to_corrupted_history).
func capCorruptAck(e *env) {
	capNeedCorrupt(e)
	capCorrupted(e, "A", "1.0.0")
	item := e.fetch(longLock, nil)
	capWantCorruptItem(e, item, "A", 1)
	details := duroxide.ErrorDetails{Poison: &duroxide.PoisonError{AttemptCount: 1, MaxAttempts: 0,
		MessageType: duroxide.PoisonMessageType{FailedDeserialization: &duroxide.PoisonFailedDeserialization{
			Instance: "A", ExecutionID: 1, Error: item.HistoryError}},
		Message: `"poisoned"`}}
	e.ack(item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID:  1,
		HistoryDelta: []duroxide.Event{event(99999, "A", 1, duroxide.OrchestrationFailedEvent{Details: details})},
		Metadata:     duroxide.ExecutionMetadata{Status: "Failed", Output: ptr("poisoned")},
	})
	e.noFetch(nil)
	if a := e.p.Admin(); a != nil {
		info, err := a.GetInstanceInfo(e.ctx, "A")
		if err != nil || info.Status != "Failed" {
			e.t.Fatalf("GetInstanceInfo = %+v, %v; want status Failed", info, err)
		}
	} else {
		e.t.Log("provider has no Admin: the Failed status cannot be read back")
	}
	capPoke(e, "A")
	capWantCorruptItem(e, e.fetch(longLock, nil), "A", 1)
}

// capCorruptPrevious proves only the current execution's history is read:
// undecodable data in execution 1 does not affect a fetch of execution 2
// (duroxide src/providers/mod.rs OrchestrationItem: "only return the LATEST
// execution's history").
func capCorruptPrevious(e *env) {
	capNeedCorrupt(e)
	e.start("A", ver(e.t, "1.0.0"))
	capEndWithContinueAsNew(e, "A", 2)
	capStartExecution2(e, "A", ver(e.t, "2.0.0"))
	e.h.CorruptHistory(e.t, e.p, "A", 1)
	capPoke(e, "A")
	item := capFetchIs(e, nil, "A")
	if item.HistoryError != "" || item.ExecutionID != 2 || len(item.History) != 1 {
		e.t.Fatalf("item = execution %d, %d events, HistoryError %q; want execution 2, 1 event, no error",
			item.ExecutionID, len(item.History), item.HistoryError)
	}
}
