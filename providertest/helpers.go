package providertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
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

// env bundles what every case needs: a fresh provider, a context, and the
// harness for the cases that use its optional hooks.
type env struct {
	t   *testing.T
	h   Harness
	p   duroxide.Provider
	ctx context.Context
}

// setup marks the test parallel and returns a fresh provider.
func setup(t *testing.T, h Harness) *env {
	t.Helper()
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return &env{t: t, h: h, p: h.New(t), ctx: ctx}
}

// envCase is one named case; run gets a fresh provider.
type envCase struct {
	name string
	run  func(e *env)
}

// runCases runs each case as a subtest on its own provider.
func runCases(t *testing.T, h Harness, cases []envCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(setup(t, h)) })
	}
}

// caseGroup is a named sub-group of a section's cases.
type caseGroup struct {
	name  string
	cases []envCase
}

// runGroups runs every group as a parallel subtest of its cases.
func runGroups(t *testing.T, h Harness, groups []caseGroup) {
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			runCases(t, h, g.cases)
		})
	}
}

// wait lets d pass on the provider's clock: Harness.Advance when the harness
// has it, a real sleep otherwise.
func (e *env) wait(d time.Duration) {
	e.t.Helper()
	if e.h.Advance != nil {
		e.h.Advance(e.t, e.p, d)
		return
	}
	time.Sleep(d) // sleep: without Advance only real time moves the provider's clock, and nothing signals that d has passed on it
}

// errOf drops a call's result and keeps its error, for cases that only
// judge the error.
func errOf[T any](_ T, err error) error { return err }

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
	item := e.fetchExpected(lock, nil)
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

// abandon abandons an orchestration lock or fails the test.
func (e *env) abandon(token string, delay time.Duration, ignore bool) {
	e.t.Helper()
	if err := e.p.AbandonOrchestrationItem(e.ctx, token, delay, ignore); err != nil {
		e.t.Fatalf("AbandonOrchestrationItem(delay %v, ignore %v): %v", delay, ignore, err)
	}
}

// waitFetch polls until an orchestration item is fetchable (within
// within) and returns it with the time it was fetched.
func (e *env) waitFetch(within time.Duration, what string) (*duroxide.OrchestrationItem, time.Time) {
	e.t.Helper()
	var item *duroxide.OrchestrationItem
	eventually(e.t, within, what, func() bool {
		item = e.fetch(longLock, nil)
		return item != nil
	})
	return item, time.Now()
}

// read reads an execution's history (execution 0: Read, the current one).
func (e *env) read(instance string, execution uint64) []duroxide.Event {
	e.t.Helper()
	var h []duroxide.Event
	var err error
	if execution == 0 {
		h, err = e.p.Read(e.ctx, instance)
	} else {
		h, err = e.p.ReadWithExecution(e.ctx, instance, execution)
	}
	if err != nil {
		e.t.Fatalf("read history of %s execution %d: %v", instance, execution, err)
	}
	return h
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

// mustFetchWork fetches a worker item under f that must exist.
func (e *env) mustFetchWork(lock time.Duration, f duroxide.TagFilter) *duroxide.LockedWorkItem {
	e.t.Helper()
	w := e.fetchWork(lock, nil, f)
	if w == nil {
		e.t.Fatalf("FetchWorkItem(%v) returned no item, want one", f.Kind)
	}
	return w
}

// noWork asserts that no worker item is available to f.
func (e *env) noWork(f duroxide.TagFilter) {
	e.t.Helper()
	if w := e.fetchWork(longLock, nil, f); w != nil {
		e.t.Fatalf("FetchWorkItem(%v) returned %+v, want none", f.Kind, w.Item)
	}
}

// ackWork acks a worker item (completion nil: none) or fails the test.
func (e *env) ackWork(token string, completion duroxide.WorkItem) {
	e.t.Helper()
	if err := e.p.AckWorkItem(e.ctx, token, completion); err != nil {
		e.t.Fatalf("AckWorkItem: %v", err)
	}
}

// abandonWork abandons a worker lock or fails the test.
func (e *env) abandonWork(token string, delay time.Duration, ignore bool) {
	e.t.Helper()
	if err := e.p.AbandonWorkItem(e.ctx, token, delay, ignore); err != nil {
		e.t.Fatalf("AbandonWorkItem(delay %v, ignore %v): %v", delay, ignore, err)
	}
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

// fetchInstance fetches instance, which must be next in enqueue order:
// another instance fetched instead fails the test, unless it is in another
// partition (fetchInOrder).
func (e *env) fetchInstance(instance string) *duroxide.OrchestrationItem {
	e.t.Helper()
	item := e.fetchInOrder(instance, func() *duroxide.OrchestrationItem { return e.mustFetch(longLock) })
	if item.Instance != instance {
		e.t.Fatalf("fetched instance %q, want %q", item.Instance, instance)
	}
	return item
}

// wantPermanent asserts err is a non-retryable *duroxide.ProviderError of
// kind (errors.Is) whose text names op (and each of the words given).
func wantPermanent(t *testing.T, err, kind error, op string, words ...string) {
	t.Helper()
	if p := permanentProblem(err, kind, op, words...); p != "" {
		t.Fatal(p)
	}
}

// permanentProblem says what is wrong with err as a permanent error of op:
// it must be a non-retryable *duroxide.ProviderError of kind whose text names
// op and each of the words given. "" = as expected. It serves goroutines that
// may not call t.Fatal.
func permanentProblem(err, kind error, op string, words ...string) string {
	var pe *duroxide.ProviderError
	switch {
	case err == nil:
		return fmt.Sprintf("want a permanent %s error (%v), got nil", op, kind)
	case !errors.As(err, &pe):
		return fmt.Sprintf("want *duroxide.ProviderError, got %T: %v", err, err)
	case duroxide.IsRetryable(err):
		return fmt.Sprintf("want a permanent error, got a retryable one: %v", err)
	case !errors.Is(err, kind):
		return fmt.Sprintf("error %q has kind %v, want errors.Is(err, %v)", err, pe.Kind, kind)
	}
	for _, w := range append([]string{op}, words...) {
		if !strings.Contains(err.Error(), w) {
			return fmt.Sprintf("error %q does not mention %q", err, w)
		}
	}
	return ""
}

// eventually polls cond until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true after %v", what, timeout)
		}
		time.Sleep(20 * time.Millisecond) // sleep: the poll interval of a wait on cond, which has no signal of its own
	}
}

// ---- comparisons ----------------------------------------------------------

// itemsJSON encodes work items for comparison (the codec is canonical).
func itemsJSON(t *testing.T, items []duroxide.WorkItem) []string {
	t.Helper()
	out := make([]string, len(items))
	for i, it := range items {
		b, err := duroxide.MarshalWorkItem(it)
		if err != nil {
			t.Fatalf("MarshalWorkItem(%#v): %v", it, err)
		}
		out[i] = string(b)
	}
	return out
}

// sameItems asserts got and want hold the same work items in order.
func sameItems(t *testing.T, what string, got []duroxide.WorkItem, want ...duroxide.WorkItem) {
	t.Helper()
	g, w := itemsJSON(t, got), itemsJSON(t, want)
	if !slices.Equal(g, w) {
		t.Fatalf("%s:\n got  %v\n want %v", what, g, w)
	}
}

// wantMessages asserts the batch of item is exactly want, in order.
func (e *env) wantMessages(item *duroxide.OrchestrationItem, want ...duroxide.WorkItem) {
	e.t.Helper()
	sameItems(e.t, "messages of instance "+item.Instance, item.Messages, want...)
}

// eventsJSON renders events as their JSON, for comparisons.
func eventsJSON(t *testing.T, evs []duroxide.Event) []string {
	t.Helper()
	out := make([]string, len(evs))
	for i, ev := range evs {
		b, err := ev.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		out[i] = string(b)
	}
	return out
}

// sameEvents asserts two event lists are identical (full JSON, in order).
func sameEvents(t *testing.T, what string, got, want []duroxide.Event) {
	t.Helper()
	g, w := eventsJSON(t, got), eventsJSON(t, want)
	if len(g) != len(w) {
		t.Fatalf("%s: %d events %v, want %d %v", what, len(g), eventIDs(got), len(w), eventIDs(want))
	}
	for i := range g {
		if g[i] != w[i] {
			t.Fatalf("%s: event %d is\n %s\nwant\n %s", what, i, g[i], w[i])
		}
	}
}

// eventIDs lists the event ids of events.
func eventIDs(events []duroxide.Event) []uint64 {
	out := make([]uint64, len(events))
	for i, ev := range events {
		out[i] = ev.EventID
	}
	return out
}

// ---- concurrency ----------------------------------------------------------

// together runs fn(i) for i in [0, n) on n goroutines released together
// (once all of them are running), and waits for all of them.
func together(n int, fn func(i int)) {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(n)
	done.Add(n)
	for i := range n {
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			fn(i)
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
}

// race runs fetch on n goroutines released together and returns the non-nil
// results; an error fails the test.
func race[T any](e *env, n int, fetch func() (*T, error)) []*T {
	e.t.Helper()
	got := make([]*T, n)
	errs := make([]error, n)
	together(n, func(i int) { got[i], errs[i] = fetch() })
	if err := errors.Join(errs...); err != nil {
		e.t.Fatalf("concurrent fetch: %v", err)
	}
	return slices.DeleteFunc(got, func(p *T) bool { return p == nil })
}
