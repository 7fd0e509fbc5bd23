package providertest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Timing of the suite. Locks that a test lets expire are short; locks that
// must hold during a test are long, so a slow machine (or -race) cannot make
// them expire by accident.
const (
	shortLock = 400 * time.Millisecond
	longLock  = 30 * time.Second
	// afterShort is a wait after which a shortLock has surely expired.
	afterShort = shortLock + 400*time.Millisecond
	// testTimeout bounds every test's context.
	testTimeout = 2 * time.Minute
)

// env bundles what most tests need: a fresh provider and a context.
type env struct {
	t   *testing.T
	p   duroxide.Provider
	ctx context.Context
}

// setup marks the test parallel and returns a fresh provider.
func setup(t *testing.T, h Harness) *env {
	t.Helper()
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return &env{t: t, p: h.New(t), ctx: ctx}
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }

// ver parses a semver version or fails the test.
func ver(t *testing.T, s string) *semver.Version {
	t.Helper()
	v, err := semver.NewVersion(s)
	if err != nil {
		t.Fatalf("bad version %q: %v", s, err)
	}
	return v
}

// filter builds a capability filter from [min, max] pairs.
func filter(t *testing.T, bounds ...string) *duroxide.DispatcherCapabilityFilter {
	t.Helper()
	f := &duroxide.DispatcherCapabilityFilter{SupportedDuroxideVersions: []duroxide.SemverRange{}}
	for i := 0; i+1 < len(bounds); i += 2 {
		f.SupportedDuroxideVersions = append(f.SupportedDuroxideVersions,
			duroxide.SemverRange{Min: ver(t, bounds[i]), Max: ver(t, bounds[i+1])})
	}
	return f
}

// event builds an event of instance/execution with the given id and kind.
func event(id uint64, instance string, execution uint64, kind duroxide.EventKind) duroxide.Event {
	return duroxide.NewEvent(id, instance, execution, nil, kind)
}

// started is the OrchestrationStarted event (id 1) of an execution.
func started(instance string, execution uint64, name, version string) duroxide.Event {
	return event(1, instance, execution, duroxide.OrchestrationStartedEvent{Name: name, Version: version, Input: `"in"`})
}

// startItem is the StartOrchestration that creates an instance.
func startItem(instance, name string) duroxide.StartOrchestration {
	return duroxide.StartOrchestration{Instance: instance, Orchestration: name, Input: `"in"`, ExecutionID: duroxide.InitialExecutionID}
}

// activity is an ActivityExecute for scheduled event id of execution 1.
func activity(instance string, id uint64) duroxide.ActivityExecute {
	return duroxide.ActivityExecute{Instance: instance, ExecutionID: 1, ID: id, Name: "Act", Input: `"x"`}
}

// completed is the ActivityCompleted answering scheduled event id.
func completed(instance string, id uint64) duroxide.ActivityCompleted {
	return duroxide.ActivityCompleted{Instance: instance, ExecutionID: 1, ID: id, Result: `"ok"`}
}

// enqueue sends an item to the orchestrator queue or fails the test.
func (e *env) enqueue(item duroxide.WorkItem, delay time.Duration) {
	e.t.Helper()
	if err := e.p.EnqueueForOrchestrator(e.ctx, item, delay); err != nil {
		e.t.Fatalf("EnqueueForOrchestrator(%T): %v", item, err)
	}
}

// enqueueWork sends an item to the worker queue or fails the test.
func (e *env) enqueueWork(item duroxide.WorkItem) {
	e.t.Helper()
	if err := e.p.EnqueueForWorker(e.ctx, item); err != nil {
		e.t.Fatalf("EnqueueForWorker(%T): %v", item, err)
	}
}

// fetch fetches an orchestration item without waiting; nil when none.
func (e *env) fetch(lock time.Duration, f *duroxide.DispatcherCapabilityFilter) *duroxide.OrchestrationItem {
	e.t.Helper()
	item, err := e.p.FetchOrchestrationItem(e.ctx, lock, 0, f)
	if err != nil {
		e.t.Fatalf("FetchOrchestrationItem: %v", err)
	}
	return item
}

// mustFetch fetches an orchestration item that must exist.
func (e *env) mustFetch(lock time.Duration) *duroxide.OrchestrationItem {
	e.t.Helper()
	item := e.fetch(lock, nil)
	if item == nil {
		e.t.Fatal("FetchOrchestrationItem returned no item, want one")
	}
	return item
}

// noFetch asserts that no orchestration item is available to filter f.
func (e *env) noFetch(f *duroxide.DispatcherCapabilityFilter) {
	e.t.Helper()
	if item := e.fetch(longLock, f); item != nil {
		e.t.Fatalf("FetchOrchestrationItem returned instance %q, want none", item.Instance)
	}
}

// ack commits a turn or fails the test.
func (e *env) ack(token string, c duroxide.OrchestrationCommit) {
	e.t.Helper()
	if err := e.p.AckOrchestrationItem(e.ctx, token, c); err != nil {
		e.t.Fatalf("AckOrchestrationItem: %v", err)
	}
}

// fetchWork fetches a worker item without waiting; nil when none.
func (e *env) fetchWork(lock time.Duration, s *duroxide.SessionFetchConfig, tags duroxide.TagFilter) *duroxide.LockedWorkItem {
	e.t.Helper()
	w, err := e.p.FetchWorkItem(e.ctx, lock, 0, s, tags)
	if err != nil {
		e.t.Fatalf("FetchWorkItem: %v", err)
	}
	return w
}

// start creates instance with a first turn: StartOrchestration fetched and
// acked with OrchestrationStarted and the given metadata version pin (nil:
// unpinned). The instance is left unlocked with history [OrchestrationStarted].
func (e *env) start(instance string, pin *semver.Version) {
	e.t.Helper()
	e.enqueue(startItem(instance, "Orch"), 0)
	item := e.fetchInstance(instance)
	e.ack(item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID:  1,
		HistoryDelta: []duroxide.Event{started(instance, 1, "Orch", "1.0.0")},
		Metadata: duroxide.ExecutionMetadata{
			OrchestrationName: "Orch", OrchestrationVersion: "1.0.0", PinnedDuroxideVersion: pin,
		},
	})
}

// fetchInstance fetches until it gets instance, abandoning nothing: other
// instances fetched on the way fail the test.
func (e *env) fetchInstance(instance string) *duroxide.OrchestrationItem {
	e.t.Helper()
	item := e.mustFetch(longLock)
	if item.Instance != instance {
		e.t.Fatalf("fetched instance %q, want %q", item.Instance, instance)
	}
	return item
}

// wantPermanent asserts err is a non-retryable *duroxide.ProviderError whose
// text names op (and each of the words given).
func wantPermanent(t *testing.T, err error, op string, words ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want a permanent %s error, got nil", op)
	}
	var pe *duroxide.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("want *duroxide.ProviderError, got %T: %v", err, err)
	}
	if duroxide.IsRetryable(err) {
		t.Fatalf("want a permanent error, got a retryable one: %v", err)
	}
	for _, w := range append([]string{op}, words...) {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %q does not mention %q", err, w)
		}
	}
}

// eventually polls cond until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true after %v", what, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
