package dxotel_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/extra/dxotel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The wrapper's pass-throughs of duroxide's optional provider interfaces:
// which interfaces the wrapper has is checked generically in
// optional_test.go; these tests check what their calls record.

// TestWrapperKeepsTheRedisProvidersOptionalInterfaces: the wrapper of the
// Redis provider (of one partition, or of several) has every
// optional interface it has, its admin's duroxide.InstanceLister included.
func TestWrapperKeepsTheRedisProvidersOptionalInterfaces(t *testing.T) {
	t.Parallel()
	for name, p := range map[string]duroxide.Provider{
		"one partition": newRedisProvider(t),
		"4 partitions":  newPartitionedProvider(t, 4),
	} {
		w := wrap(t, p, newTelemetry(t))
		if _, ok := w.(duroxide.OrchestrationAckFetcher); !ok {
			t.Errorf("%s: the wrapper hides duroxide.OrchestrationAckFetcher", name)
		}
		if _, ok := w.(duroxide.WorkAckFetcher); !ok {
			t.Errorf("%s: the wrapper hides duroxide.WorkAckFetcher", name)
		}
		if _, ok := w.(duroxide.BatchEnqueuer); !ok {
			t.Errorf("%s: the wrapper hides duroxide.BatchEnqueuer", name)
		}
		if _, ok := w.(duroxide.LazyHistoryFetcher); !ok {
			t.Errorf("%s: the wrapper hides duroxide.LazyHistoryFetcher", name)
		}
		if _, ok := w.(duroxide.PendingStartNoter); !ok {
			t.Errorf("%s: the wrapper hides duroxide.PendingStartNoter", name)
		}
		if _, ok := w.(duroxide.FlowController); !ok {
			t.Errorf("%s: the wrapper hides duroxide.FlowController", name)
		}
		if sr, ok := w.(duroxide.StickyRouter); !ok || !sr.SupportsStickyRouting() {
			t.Errorf("%s: the wrapper hides sticky routing", name)
		}
		if _, ok := w.Admin().(duroxide.InstanceLister); !ok {
			t.Errorf("%s: the wrapper's admin hides duroxide.InstanceLister", name)
		}
	}
	plain := wrap(t, durabletest.PlainProvider{Provider: newRedisProvider(t)}, newTelemetry(t))
	if _, ok := plain.(duroxide.WorkAckFetcher); ok {
		t.Error("the wrapper of a provider without duroxide.WorkAckFetcher claims it")
	}
}

func TestOrchestrationAckAndFetchRecordsTheAckAndTheFetchedInstance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tel := newTelemetry(t)
	w := wrap(t, newRedisProvider(t), tel)
	start(t, w, "a")
	a, err := w.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
	if err != nil || a == nil {
		t.Fatalf("fetch: %v %v", a, err)
	}
	end := w.Observer().StartTurn(durable.TurnInfo{Instance: "a", Orchestration: "O", ExecutionID: 1, Attempt: 1, LockToken: a.LockToken})
	start(t, w, "b")
	af := w.(duroxide.OrchestrationAckFetcher)
	b, err := af.AckOrchestrationItemAndFetch(ctx, a.LockToken, startCommit("a"), time.Minute, 0, nil)
	end() // what the runtime does once the turn returns
	if err != nil || b == nil || b.Instance != "b" {
		t.Fatalf("ack-and-fetch: %v %v", b, err)
	}
	if none, err := af.AckOrchestrationItemAndFetch(ctx, b.LockToken, startCommit("b"), time.Minute, 0, nil); err != nil || none != nil {
		t.Fatalf("ack-and-fetch of an empty queue: %v %v", none, err)
	}

	calls := fetchThenNothing(t, tel, "orchestration_turn", "running", "ack_orchestration_item_and_fetch", dxotel.KeyInstance, "b")
	if attr(calls[0], dxotel.KeyExecution) != "1" || attr(calls[0], dxotel.KeyInstance) != "" {
		t.Errorf("the ack-and-fetch span does not name the acked execution alone: %v", calls[0].Attributes())
	}
	if n := sumCount(t, tel.collect(t, dxotel.MetricTurns), attrs{dxotel.KeyStatus: "running"}); n != 2 {
		t.Errorf("running turns = %d, want 2", n)
	}
	wantOneOkOneEmpty(t, tel, "ack_orchestration_item_and_fetch")
}

func TestWorkAckAndFetchRecordsTheAckAndTheFetchedActivity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tel := newTelemetry(t)
	w := wrap(t, newRedisProvider(t), tel)
	for id := range uint64(2) {
		if err := w.EnqueueForWorker(ctx, activity(id+1)); err != nil {
			t.Fatal(err)
		}
	}
	first, err := w.FetchWorkItem(ctx, time.Minute, 0, nil, duroxide.TagFilter{})
	if err != nil || first == nil {
		t.Fatalf("fetch: %v %v", first, err)
	}
	_, end := w.Observer().StartActivity(ctx, durable.ActivityInfo{Instance: "i", ExecutionID: 1, Name: "A", ActivityID: 1, Attempt: 1, LockToken: first.LockToken})
	af := w.(duroxide.WorkAckFetcher)
	second, err := af.AckWorkItemAndFetch(ctx, first.LockToken, completed(1), time.Minute, 0, nil, duroxide.TagFilter{})
	end()
	if err != nil || second == nil {
		t.Fatalf("ack-and-fetch: %v %v", second, err)
	}
	if none, err := af.AckWorkItemAndFetch(ctx, second.LockToken, completed(2), time.Minute, 0, nil, duroxide.TagFilter{}); err != nil || none != nil {
		t.Fatalf("ack-and-fetch of an empty queue: %v %v", none, err)
	}

	fetchThenNothing(t, tel, "activity A", "completed", "ack_work_item_and_fetch", dxotel.KeyActivityID, "2")
	if n := sumCount(t, tel.collect(t, dxotel.MetricActivities), attrs{dxotel.KeyOutcome: "completed"}); n != 2 {
		t.Errorf("completed activities = %d, want 2", n)
	}
}

// TestAckAndFetchRecordsTheAckBeforeItsLongPoll waits, with an idle queue,
// for the turn's span to end and its counter to count while the combined
// call still polls, then gives the call something to fetch.
func TestAckAndFetchRecordsTheAckBeforeItsLongPoll(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tel := newTelemetry(t)
	ended := make(chan sdktrace.ReadOnlySpan, 16)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tel.spans), sdktrace.WithSpanProcessor(onEnd(ended)))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	opts := tel.opts
	opts.TracerProvider = tp
	w, err := dxotel.WrapProvider(newRedisProvider(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	start(t, w, "a")
	a, err := w.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
	if err != nil || a == nil {
		t.Fatalf("fetch: %v %v", a, err)
	}
	end := w.Observer().StartTurn(durable.TurnInfo{Instance: "a", LockToken: a.LockToken})
	type result struct {
		item *duroxide.OrchestrationItem
		err  error
	}
	done := make(chan result, 1)
	go func() {
		item, err := w.(duroxide.OrchestrationAckFetcher).AckOrchestrationItemAndFetch(ctx, a.LockToken, startCommit("a"), time.Minute, time.Minute, nil)
		end()
		done <- result{item, err}
	}()
	bound := time.NewTimer(30 * time.Second) // bounds the wait should the turn never end
	defer bound.Stop()
	for turnEnded := false; !turnEnded; {
		select {
		case s := <-ended:
			turnEnded = s.Name() == "orchestration_turn"
		case r := <-done:
			t.Fatalf("the call returned (%v %v) before the turn's span ended", r.item, r.err)
		case <-bound.C:
			t.Fatal("the turn's span did not end while its ack-and-fetch polled")
		}
	}
	if n := sumCount(t, tel.collect(t, dxotel.MetricTurns), attrs{dxotel.KeyStatus: "running"}); n != 1 {
		t.Errorf("running turns = %d while the call polls, want 1", n)
	}
	start(t, w, "b")
	r := <-done
	if r.err != nil || r.item == nil || r.item.Instance != "b" {
		t.Fatalf("the long poll did not fetch b: %v %v", r.item, r.err)
	}
	call := only(t, tel, "ack_orchestration_item_and_fetch")
	handedOver(t, only(t, tel, "orchestration_turn"), call)
	fetchedEvent(t, call, dxotel.KeyInstance, "b")
}

// onEnd is a span processor that sends ended spans to its channel while it
// has room (it must never block the code under test).
type onEnd chan<- sdktrace.ReadOnlySpan

func (o onEnd) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

func (o onEnd) OnEnd(s sdktrace.ReadOnlySpan) {
	select {
	case o <- s:
	default:
	}
}

func (o onEnd) Shutdown(context.Context) error   { return nil }
func (o onEnd) ForceFlush(context.Context) error { return nil }

func TestAckAndFetchCountsTheAckOnlyWhenItApplied(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reset := duroxide.Retryable("fetch_work_item", "connection reset")
	lost := duroxide.Errorf("ack_work_item", duroxide.ErrLockLost, "lock_token t expired")
	for _, c := range []struct {
		inner    ackFetchFailing
		err      error // what the call returns, or wraps
		errType  string
		counted  int64
		unitOpen bool // the unit's span is left for the runtime's fallback
	}{
		{ackFetchFailing{err: &duroxide.FetchAfterAckError{Err: reset}}, reset, "unavailable", 1, false},
		// The rest of the poll is the plain fetch: its error is the fetch half's.
		{ackFetchFailing{fetchErr: reset}, reset, "unavailable", 1, false},
		{ackFetchFailing{err: lost}, lost, "lock_lost", 0, true},
	} {
		tel := newTelemetry(t)
		w := wrap(t, c.inner, tel)
		_, end := w.Observer().StartActivity(ctx, durable.ActivityInfo{Name: "A", LockToken: "t"})
		_, err := w.(duroxide.WorkAckFetcher).AckWorkItemAndFetch(ctx, "t", completed(1), time.Minute, time.Minute, nil, duroxide.TagFilter{})
		if !errors.Is(err, c.err) || duroxide.FetchFailedAfterAck(err) == c.unitOpen {
			t.Fatalf("want %v, after the ack: %v; got %v", c.err, !c.unitOpen, err)
		}
		if ended := len(tel.spansNamed("activity A")) == 1; ended == c.unitOpen {
			t.Errorf("%v: the activity's span ended before the runtime ended it: %v, want %v", c.err, ended, !c.unitOpen)
		}
		end()
		span := only(t, tel, "ack_work_item_and_fetch")
		if attr(span, dxotel.KeyOutcome) != "error" || attr(span, dxotel.KeyErrorType) != c.errType {
			t.Errorf("%v: span %v", c.err, span.Attributes())
		}
		var n int64
		if tel.collected(t, dxotel.MetricActivities) {
			n = sumCount(t, tel.collect(t, dxotel.MetricActivities), attrs{dxotel.KeyOutcome: "completed"})
		}
		if n != c.counted {
			t.Errorf("%v: completed activities = %d, want %d", c.err, n, c.counted)
		}
	}
}

// ackFetchFailing is a provider whose worker ack-and-fetch fails with err
// and whose plain worker fetch fails with fetchErr; any other call panics on
// the nil embedded provider.
type ackFetchFailing struct {
	duroxide.Provider
	err, fetchErr error
}

func (f ackFetchFailing) AckWorkItemAndFetch(context.Context, string, duroxide.WorkItem, time.Duration, time.Duration,
	*duroxide.SessionFetchConfig, duroxide.TagFilter) (*duroxide.LockedWorkItem, error) {
	return nil, f.err
}

func (f ackFetchFailing) FetchWorkItem(context.Context, time.Duration, time.Duration, *duroxide.SessionFetchConfig, duroxide.TagFilter) (*duroxide.LockedWorkItem, error) {
	return nil, f.fetchErr
}

func (ackFetchFailing) Admin() duroxide.ProviderAdmin { return nil }

func TestBatchEnqueueIsOneSpanNamingItsSize(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tel := newTelemetry(t)
	w := wrap(t, newRedisProvider(t), tel)
	be := w.(duroxide.BatchEnqueuer)
	if err := be.EnqueueForWorkerBatch(ctx, []duroxide.WorkItem{activity(1), activity(2), activity(3)}); err != nil {
		t.Fatal(err)
	}
	starts := []duroxide.WorkItem{duroxide.StartOrchestration{Instance: "x", Orchestration: "O", Input: "{}"},
		duroxide.StartOrchestration{Instance: "y", Orchestration: "O", Input: "{}"}}
	if err := be.EnqueueForOrchestratorBatch(ctx, starts, 0); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if item, err := w.FetchWorkItem(ctx, time.Minute, 0, nil, duroxide.TagFilter{}); err != nil || item == nil {
			t.Fatalf("the batch did not reach the queue: %v %v", item, err)
		}
	}
	for op, size := range map[string]string{"enqueue_for_worker_batch": "3", "enqueue_for_orchestrator_batch": "2"} {
		if s := only(t, tel, op); attr(s, dxotel.KeyBatchSize) != size || attr(s, dxotel.KeyOutcome) != "ok" {
			t.Errorf("%s span: %v", op, s.Attributes())
		}
	}
}

func TestLazyFetchesGoToTheInnerLazyCalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tel := newTelemetry(t)
	w := wrap(t, lazyProvider{newRedisProvider(t)}, tel)
	lf := w.(duroxide.LazyHistoryFetcher)
	start(t, w, "a")
	a, err := lf.FetchOrchestrationItemLazy(ctx, time.Minute, 0, nil)
	if err != nil || a == nil || a.Cursor == nil {
		t.Fatalf("lazy fetch: %v %v", a, err)
	}
	end := w.Observer().StartTurn(durable.TurnInfo{Instance: "a", LockToken: a.LockToken})
	start(t, w, "b")
	b, err := lf.AckOrchestrationItemAndFetchLazy(ctx, a.LockToken, startCommit("a"), time.Minute, 0, nil)
	end()
	if err != nil || b == nil || b.Cursor == nil || b.History != nil {
		t.Fatalf("lazy ack-and-fetch did not reach the inner lazy call: %+v %v", b, err)
	}
	if s := only(t, tel, "fetch_orchestration_item_lazy"); attr(s, dxotel.KeyInstance) != "a" {
		t.Errorf("lazy fetch span: %v", s.Attributes())
	}
	call := only(t, tel, "ack_orchestration_item_and_fetch_lazy")
	handedOver(t, only(t, tel, "orchestration_turn"), call)
	fetchedEvent(t, call, dxotel.KeyInstance, "b")
}

// lazyProvider stands in for a provider with duroxide.LazyHistoryFetcher:
// its lazy calls are the plain ones with the history replaced by the cursor
// the contract asks for.
type lazyProvider struct{ ackFetcher }

// ackFetcher is what lazyProvider needs of the provider it stands in front
// of: the Redis provider, of one partition or several.
type ackFetcher interface {
	duroxide.Provider
	duroxide.OrchestrationAckFetcher
	duroxide.WorkAckFetcher
}

func (p lazyProvider) FetchOrchestrationItemLazy(ctx context.Context, lockTimeout, pollTimeout time.Duration,
	filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return lazy(p.FetchOrchestrationItem(ctx, lockTimeout, pollTimeout, filter))
}

func (p lazyProvider) AckOrchestrationItemAndFetchLazy(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return lazy(p.AckOrchestrationItemAndFetch(ctx, lockToken, commit, lockTimeout, pollTimeout, filter))
}

// lazy drops item's history for the cursor of where it ends.
func lazy(item *duroxide.OrchestrationItem, err error) (*duroxide.OrchestrationItem, error) {
	if item == nil {
		return nil, err
	}
	cur := &duroxide.HistoryCursor{ExecutionID: item.ExecutionID}
	if h := item.History; len(h) > 0 {
		cur.LastEventID = h[len(h)-1].EventID
		cur.Incarnation = "started@" + strconv.FormatUint(h[0].TimestampMs, 10)
	}
	item.History, item.HistoryError, item.Cursor = nil, "", cur
	return item, err
}

// TestRuntimeChainsUnitsThroughTheWrappersCombinedCalls runs fan-outs on the
// runtime through the wrapper, on the Redis provider and on one with the
// history-free fetch: the runtime takes the combined calls, and every unit it
// fetched, plainly or with an ack, got its span and its ack recorded.
func TestRuntimeChainsUnitsThroughTheWrappersCombinedCalls(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		inner     func(duroxide.Provider) duroxide.Provider
		cache     int      // Options.InstanceCacheEntries: the runtime fetches lazily only with its cache on
		turnFetch []string // the runtime's orchestration fetches: plain, then combined
	}{
		{"redis", func(p duroxide.Provider) duroxide.Provider { return p }, 0,
			[]string{"fetch_orchestration_item_lazy", "ack_orchestration_item_and_fetch_lazy"}},
		{"redis cache off", func(p duroxide.Provider) duroxide.Provider { return p }, -1,
			[]string{"fetch_orchestration_item", "ack_orchestration_item_and_fetch"}},
		{"lazy", func(p duroxide.Provider) duroxide.Provider { return lazyProvider{p.(ackFetcher)} }, 0,
			[]string{"fetch_orchestration_item_lazy", "ack_orchestration_item_and_fetch_lazy"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			const instances, fanOut = 4, 5
			tel := newTelemetry(t)
			var obs dxotel.Provider
			env := durabletest.Start(t, fanOutRegistry(fanOut), durabletest.WithAckFetch(true),
				durabletest.WithProviderWrapper(func(p duroxide.Provider) duroxide.Provider {
					obs = wrap(t, c.inner(p), tel)
					return obs
				}), durabletest.WithOptions(durable.Options{LongPollTimeout: 100 * time.Millisecond, Observer: lateObserver{&obs},
					InstanceCacheEntries: c.cache}))
			for i := range instances {
				if err := env.Client.StartOrchestration(context.Background(), fmt.Sprint("fan-", i), "Fan", "1"); err != nil {
					t.Fatal(err)
				}
			}
			for i := range instances {
				if st := env.Wait(t, fmt.Sprint("fan-", i)); st.Status != durable.StatusCompleted {
					t.Fatalf("fan-%d: %v", i, st)
				}
			}
			stop(t, env)

			acts := tel.spansNamed("activity Inc")
			if len(acts) != instances*fanOut {
				t.Fatalf("%d activity spans, want %d", len(acts), instances*fanOut)
			}
			if n := fetchedUnits(tel, "fetch_work_item", "ack_work_item_and_fetch"); n != len(acts) {
				t.Errorf("%d activities fetched, %d with a span", n, len(acts))
			}
			turns := tel.spansNamed("orchestration_turn")
			if n := fetchedUnits(tel, c.turnFetch[0], c.turnFetch[1]); n != len(turns) {
				t.Errorf("%d turns fetched, %d with a span", n, len(turns))
			}
			for _, s := range append(acts, turns...) {
				if attr(s, dxotel.KeyOutcome) == "" {
					t.Errorf("%s span without the outcome its ack records: %v", s.Name(), s.Attributes())
				}
			}
			for _, op := range []string{"ack_work_item_and_fetch", c.turnFetch[1]} {
				if len(tel.spansNamed(op)) == 0 {
					t.Errorf("the runtime never called %s through the wrapper", op)
				}
			}
			if n := sumCount(t, tel.collect(t, dxotel.MetricActivities), attrs{dxotel.KeyOutcome: "completed"}); n != instances*fanOut {
				t.Errorf("completed activities = %d, want %d", n, instances*fanOut)
			}
			if n := sumCount(t, tel.collect(t, dxotel.MetricTurns), attrs{dxotel.KeyStatus: "completed"}); n != instances {
				t.Errorf("completed turns = %d, want %d", n, instances)
			}
		})
	}
}

// fanOutRegistry is an orchestration fanning out to n activities and in.
func fanOutRegistry(n int) *durable.Registry {
	reg := durable.NewRegistry()
	reg.MustAddActivity("Inc", durable.Activity(func(_ *durable.ActivityContext, x int) (int, error) { return x + 1, nil }))
	reg.MustAddOrchestration("Fan", durable.Orchestration(func(ctx *durable.OrchestrationContext, x int) (int, error) {
		fs := make([]durable.Awaitable, n)
		for i := range fs {
			fs[i] = durable.ScheduleActivity[int](ctx, "Inc", i)
		}
		ctx.Join(fs...)
		return x, nil
	}))
	return reg
}

// fetchedUnits counts the units locked by the spans of a plain fetch, which
// name what they locked, and of a combined call, which has a "fetched" event.
func fetchedUnits(tel *telemetry, plain, combined string) int {
	n := 0
	for _, s := range tel.spansNamed(plain) {
		if attr(s, dxotel.KeyOutcome) == "ok" {
			n++
		}
	}
	for _, s := range tel.spansNamed(combined) {
		for _, e := range s.Events() {
			if e.Name == "fetched" {
				n++
			}
		}
	}
	return n
}

// fetchThenNothing asserts the two spans of op, an ack-and-fetch of the
// observed unit that fetched the unit with key = fetched, then one that found
// nothing, and that the unit's span recorded outcome; it returns the spans.
func fetchThenNothing(t *testing.T, tel *telemetry, unitName, outcome, op string, key attribute.Key, fetched string) []sdktrace.ReadOnlySpan {
	t.Helper()
	unit := only(t, tel, unitName)
	if attr(unit, dxotel.KeyOutcome) != outcome {
		t.Errorf("%s: the ack's outcome %s is not recorded: %v", unitName, outcome, unit.Attributes())
	}
	calls := tel.spansNamed(op)
	if len(calls) != 2 {
		t.Fatalf("want 2 %s spans, got %d", op, len(calls))
	}
	handedOver(t, unit, calls[0])
	fetchedEvent(t, calls[0], key, fetched)
	if attr(calls[0], dxotel.KeyOutcome) != "ok" {
		t.Errorf("an ack-and-fetch that fetched: %v", calls[0].Attributes())
	}
	if attr(calls[1], dxotel.KeyOutcome) != "empty" || len(calls[1].Events()) != 0 {
		t.Errorf("an ack-and-fetch that found nothing: %v, events %v", calls[1].Attributes(), calls[1].Events())
	}
	return calls
}

// handedOver asserts that the combined call is a child of the unit it acked
// and that the unit's span ended where the call began, not after its wait.
func handedOver(t *testing.T, unit, call sdktrace.ReadOnlySpan) {
	t.Helper()
	if call.Parent().SpanID() != unit.SpanContext().SpanID() {
		t.Errorf("%s is not a child of the %s it acked", call.Name(), unit.Name())
	}
	if unit.EndTime().After(call.EndTime()) || unit.EndTime().Before(call.StartTime()) {
		t.Errorf("%s ended at %v, want within its ack-and-fetch (%v to %v)", unit.Name(), unit.EndTime(), call.StartTime(), call.EndTime())
	}
}

// fetchedEvent asserts that span's "fetched" event has key = want.
func fetchedEvent(t *testing.T, span sdktrace.ReadOnlySpan, key attribute.Key, want string) {
	t.Helper()
	for _, e := range span.Events() {
		if e.Name != "fetched" {
			continue
		}
		for _, kv := range e.Attributes {
			if kv.Key == key && kv.Value.Emit() == want {
				return
			}
		}
		t.Errorf("%s: fetched event %v lacks %s=%s", span.Name(), e.Attributes, key, want)
		return
	}
	t.Errorf("%s has no fetched event: %v", span.Name(), span.Events())
}

// only returns the one ended span called name.
func only(t *testing.T, tel *telemetry, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	spans := tel.spansNamed(name)
	if len(spans) != 1 {
		t.Fatalf("want one %s span, got %d", name, len(spans))
	}
	return spans[0]
}

// start enqueues the start of instance.
func start(t *testing.T, p duroxide.Provider, instance string) {
	t.Helper()
	if err := p.EnqueueForOrchestrator(context.Background(), duroxide.StartOrchestration{Instance: instance, Orchestration: "O", Input: "{}"}, 0); err != nil {
		t.Fatal(err)
	}
}

// startCommit is a first turn of instance that leaves it running.
func startCommit(instance string) duroxide.OrchestrationCommit {
	return duroxide.OrchestrationCommit{ExecutionID: 1, HistoryDelta: []duroxide.Event{
		duroxide.NewEvent(1, instance, 1, nil, duroxide.OrchestrationStartedEvent{Name: "O", Version: "1.0.0", Input: "{}"}),
	}, Metadata: duroxide.ExecutionMetadata{OrchestrationName: "O", OrchestrationVersion: "1.0.0"}}
}

func activity(id uint64) duroxide.WorkItem {
	return duroxide.ActivityExecute{Instance: "i", ExecutionID: 1, ID: id, Name: "A", Input: "x"}
}

func completed(id uint64) duroxide.WorkItem {
	return duroxide.ActivityCompleted{Instance: "i", ExecutionID: 1, ID: id, Result: "ok"}
}

// TestWrapperAnswersStickyRoutingForTheInner: the runtime routes turns back
// to itself only when the provider says it honours routes.
func TestWrapperAnswersStickyRoutingForTheInner(t *testing.T) {
	inner := newRedisProvider(t)
	w, err := dxotel.WrapProvider(inner, dxotel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sr, ok := w.(duroxide.StickyRouter)
	if !ok || !inner.SupportsStickyRouting() || !sr.SupportsStickyRouting() {
		t.Fatalf("wrapped sticky routing: implemented %v; inner answers %v", ok, inner.SupportsStickyRouting())
	}
}

// runningInstance creates instance with a first turn that leaves it Running.
func runningInstance(t *testing.T, p duroxide.Provider, instance string) {
	t.Helper()
	ctx := context.Background()
	start := duroxide.StartOrchestration{Instance: instance, Orchestration: "O", Input: "{}", ExecutionID: 1}
	if err := p.EnqueueForOrchestrator(ctx, start, 0); err != nil {
		t.Fatal(err)
	}
	item, err := p.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
	if err != nil || item == nil {
		t.Fatalf("fetch: %v %v", item, err)
	}
	commit := duroxide.OrchestrationCommit{ExecutionID: 1, HistoryDelta: []duroxide.Event{
		duroxide.NewEvent(1, item.Instance, 1, nil, duroxide.OrchestrationStartedEvent{Name: "O", Version: "1.0.0", Input: "{}"}),
	}, Metadata: duroxide.ExecutionMetadata{Status: "Running", OrchestrationName: "O", OrchestrationVersion: "1.0.0"}}
	if err := p.AckOrchestrationItem(ctx, item.LockToken, commit); err != nil {
		t.Fatalf("ack: %v", err)
	}
}

// TestAdminListsInstancesPageByPage: the instrumented admin's page of
// instances is the inner admin's, cursor included, in a span that names
// the filter.
func TestAdminListsInstancesPageByPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tel := newTelemetry(t)
	p := newPartitionedProvider(t, 4)
	w := wrap(t, p, tel)
	for i := range 3 { // running instances over the partitions: a page of 2 has a next cursor
		runningInstance(t, p, fmt.Sprint("page-", i))
	}
	filter := duroxide.InstancePageFilter{Status: "Running", Orchestration: "O"}
	page, next, err := w.Admin().(duroxide.InstanceLister).ListInstancesPage(ctx, filter, "", 2)
	wantPage, wantNext, wantErr := p.ListInstancesPage(ctx, filter, "", 2)
	if err != nil || wantErr != nil || len(page) != 2 || len(page) != len(wantPage) || next != wantNext || next == "" {
		t.Fatalf("wrapped page %v %q %v, inner %v %q %v", page, next, err, wantPage, wantNext, wantErr)
	}
	spans := tel.spansNamed("list_instances_page")
	if len(spans) != 1 {
		t.Fatalf("%d list_instances_page spans, want 1", len(spans))
	}
	if attr(spans[0], dxotel.KeyStatus) != "Running" || attr(spans[0], dxotel.KeyOrchestration) != "O" {
		t.Errorf("the span does not name the filter: %v", spans[0].Attributes())
	}
	if _, _, err := w.Admin().(duroxide.InstanceLister).ListInstancesPage(ctx, filter, "x", 10); !errors.Is(err, duroxide.ErrInvalidInput) {
		t.Errorf("a malformed cursor: %v, want ErrInvalidInput", err)
	}
}

// TestPendingStartNotesGoToTheInnerProvider abandons a fetched start with a
// note through the wrapper: the note reaches Redis, reads of it come back
// through the wrapper, and each call has its span.
func TestPendingStartNotesGoToTheInnerProvider(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tel := newTelemetry(t)
	w := wrap(t, newRedisProvider(t), tel)
	noter := w.(duroxide.PendingStartNoter)
	start(t, w, "ghost")
	item, err := w.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
	if err != nil || item == nil {
		t.Fatalf("fetch: %v %v", item, err)
	}
	note := duroxide.PendingStart{Instance: "ghost", Orchestration: "Ghost", Attempt: 1, MaxAttempts: 10, Reason: "is not registered here"}
	if err := noter.AbandonOrchestrationItemWithNote(ctx, item.LockToken, time.Minute, false, note); err != nil {
		t.Fatal(err)
	}
	got, err := noter.PendingStart(ctx, "ghost")
	if err != nil || got == nil || got.Orchestration != "Ghost" || got.Attempt != 1 || got.Reason != note.Reason {
		t.Fatalf("note read back: %+v %v", got, err)
	}
	if list, err := noter.ListPendingStarts(ctx, 10); err != nil || len(list) != 1 || list[0].Instance != "ghost" {
		t.Fatalf("notes listed: %+v %v", list, err)
	}
	if s := only(t, tel, "abandon_orchestration_item_with_note"); attr(s, dxotel.KeyInstance) != "ghost" {
		t.Errorf("abandon span: %v", s.Attributes())
	}
	if s := only(t, tel, "get_pending_start"); attr(s, dxotel.KeyInstance) != "ghost" {
		t.Errorf("read span: %v", s.Attributes())
	}
	only(t, tel, "list_pending_starts")
}

// TestFlowSettingsGoToTheInnerProvider sets priorities and pauses a name
// through the wrapper: the settings reach Redis and read back through it,
// and each call has its span naming what it set.
func TestFlowSettingsGoToTheInnerProvider(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tel := newTelemetry(t)
	w := wrap(t, newRedisProvider(t), tel)
	fc := w.(duroxide.FlowController)
	if ok, err := fc.SetPriority(ctx, duroxide.ActivityName, "Send", 3); err != nil || !ok {
		t.Fatalf("SetPriority: %v %v", ok, err)
	}
	if _, err := fc.SetAgingWindow(ctx, 50); err != nil {
		t.Fatal(err)
	}
	if ok, err := fc.PauseOrchestrationName(ctx, "Billing"); err != nil || !ok {
		t.Fatalf("PauseOrchestrationName: %v %v", ok, err)
	}
	fs, err := fc.FlowSettings(ctx)
	if err != nil || fs.ActivityPriorities["Send"] != 3 || fs.AgingWindow != 50 || fs.PausedNames["Billing"].SinceMs == 0 {
		t.Fatalf("settings read back: %+v %v", fs, err)
	}
	if ok, err := fc.ResumeOrchestrationName(ctx, "Billing"); err != nil || !ok {
		t.Fatalf("ResumeOrchestrationName: %v %v", ok, err)
	}
	if s := only(t, tel, "set_priority"); attr(s, dxotel.KeyActivityName) != "Send" {
		t.Errorf("set_priority span: %v", s.Attributes())
	}
	if s := only(t, tel, "pause_orchestration_name"); attr(s, dxotel.KeyOrchestration) != "Billing" {
		t.Errorf("pause span: %v", s.Attributes())
	}
	only(t, tel, "set_aging_window")
	only(t, tel, "resume_orchestration_name")
	only(t, tel, "flow_settings")
}
