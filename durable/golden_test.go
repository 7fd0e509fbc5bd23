package durable_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/internal/redistest"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// The golden tests run, on the Go runtime, the orchestrations whose histories
// testdata/golden holds (derived from duroxide's source; see its README.md), and
// compare what the runtime wrote event by event. Each test names the duroxide test
// whose orchestration it reproduces. The samples that also run on real time compare
// with their goldens in TestSamples (ported_e2e_samples_test.go).

// TestGoldenFanOut mirrors e2e_samples.rs dtf_legacy_gabbar_greetings_fs. The second
// activity is held until the first one's completion is in history, so the completion
// order (and with it the ids) is the one the golden records.
func TestGoldenFanOut(t *testing.T) {
	t.Parallel()
	const inst = "inst-dtf-greetings"
	var h *harness
	h = newGoldenHarness(t, greetingsSample(func(in string) {
		if in == "Samba" {
			h.awaitEvents(inst, 1, 4)
		}
	}))
	h.start(inst, "Greetings", "")
	h.wantCompleted(inst, "Hello, Gabbar!, Hello, Samba!")
	h.checkGolden("fan_out")
}

// TestGoldenJoinOutOfOrder mirrors futures_tests.rs join_returns_schedule_order: the
// activity scheduled second completes first, and Join still yields schedule order.
func TestGoldenJoinOutOfOrder(t *testing.T) {
	t.Parallel()
	var h *harness
	h = newGoldenHarness(t, joinABSample(func() { h.awaitEvents("inst-join", 1, 4) }))
	h.start("inst-join", "JoinAB", "")
	h.wantCompleted("inst-join", "A,B")
	h.checkGolden("join_out_of_order")
}

// TestGoldenExternalEvent mirrors e2e_samples.rs sample_typed_event_fs (the unit input
// of the typed Rust orchestration is the JSON "null"). The event is raised once the
// subscription is in history, as the Rust test does with wait_for_subscription.
func TestGoldenExternalEvent(t *testing.T) {
	t.Parallel()
	const inst = "inst-typed-ack"
	reg := durable.NewRegistry().
		MustAddOrchestration("WaitAck", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.WaitForEvent("Ready").Get()
		})
	h := newGoldenHarness(t, reg)
	h.start(inst, "WaitAck", "null")
	h.awaitEvents(inst, 1, 2)
	h.raise(inst, "Ready", `{"ok":true}`)
	h.wantCompleted(inst, `{"ok":true}`)
	h.checkGolden("external_event")
}

// TestGoldenSelectTimerWins mirrors e2e_samples.rs sample_timeout_with_timer_race_fs.
// LongOp runs until the runtime cancels it (or the test ends).
func TestGoldenSelectTimerWins(t *testing.T) {
	t.Parallel()
	var h *harness
	h = newGoldenHarness(t, timeoutSample(blocking(&h)))
	h.start("inst-timeout-sample", "TimeoutSample", "")
	h.wantFailed("inst-timeout-sample", "timeout")
	h.checkGolden("select_timer_wins")
}

// TestGoldenSelectExternalWins mirrors e2e_samples.rs
// sample_select2_activity_vs_external_fs.
func TestGoldenSelectExternalWins(t *testing.T) {
	t.Parallel()
	const inst = "inst-s2-mixed"
	var h *harness
	h = newGoldenHarness(t, activityVsEventSample(blocking(&h)))
	h.start(inst, "Select2ActVsEvt", "")
	h.awaitEvents(inst, 1, 3)
	h.raise(inst, "Go", "ok")
	h.wantCompleted(inst, "event:ok")
	h.checkGolden("select_external_wins")
}

// TestGoldenSelectTwoExternals mirrors futures_tests.rs
// select2_two_externals_first_delivery_wins, raising only B (see the golden README).
func TestGoldenSelectTwoExternals(t *testing.T) {
	t.Parallel()
	const inst = "inst-ab2"
	h := newGoldenHarness(t, durable.NewRegistry().MustAddOrchestration("ABSelect2", selectAB))
	h.start(inst, "ABSelect2", "")
	h.awaitEvents(inst, 1, 3)
	h.raise(inst, "B", "vb")
	h.wantCompleted(inst, "B:vb")
	h.checkGolden("select_two_externals")
}

// TestGoldenSystemCalls mirrors e2e_samples.rs sample_system_activities_fs.
func TestGoldenSystemCalls(t *testing.T) {
	t.Parallel()
	h := newGoldenHarness(t, systemActivitiesSample())
	h.start("inst-system-acts", "SystemActivities", "")
	st := h.wait("inst-system-acts")
	if st.Status != durable.StatusCompleted || !regexp.MustCompile(`^n=[1-9][0-9]*,g=[0-9a-f-]{36}$`).MatchString(st.Output) {
		t.Fatalf("status %v output %q, want n=<ms>,g=<guid>", st.Status, st.Output)
	}
	h.checkGolden("system_calls")
}

// TestGoldenCancelCascade mirrors cancellation_tests.rs
// cancel_parent_down_propagates_to_child. The cancel is sent once the child's
// subscription is in history, where the Rust test sleeps 50ms.
func TestGoldenCancelCascade(t *testing.T) {
	t.Parallel()
	h := newGoldenHarness(t, cancelCascadeSample())
	h.start("inst-cancel-1", "Parent", "")
	h.awaitEvents("inst-cancel-1::sub::2", 1, 2)
	h.cancel("inst-cancel-1", "by_test")
	h.wantCancelled("inst-cancel-1", "by_test")
	h.wantCancelled("inst-cancel-1::sub::2", "parent canceled")
	h.checkGolden("cancel_cascade")
}

// TestGoldenCancelPendingActivity mirrors cancellation_tests.rs
// activity_receives_cancellation_signal: the activity still running when the instance
// is cancelled gets its cancel request after the terminal event.
func TestGoldenCancelPendingActivity(t *testing.T) {
	t.Parallel()
	var h *harness
	h = newGoldenHarness(t, longActivitySample(blocking(&h)))
	h.start("inst-activity-cancel", "LongActivityOrch", "")
	h.awaitEvents("inst-activity-cancel", 1, 2)
	h.cancel("inst-activity-cancel", "test_cancellation")
	h.wantCancelled("inst-activity-cancel", "test_cancellation")
	h.checkGolden("cancel_pending_activity")
}

// TestGoldenContinueAsNewInflightActivity mirrors the first execution of
// nondeterminism_tests.rs continue_as_new_with_unconsumed_completion_triggers_nondeterminism
// (without its forged completion): an activity never awaited is still in flight at
// continue-as-new and is cancelled after the terminal event.
func TestGoldenContinueAsNewInflightActivity(t *testing.T) {
	t.Parallel()
	const inst = "inst-can-inflight"
	var h *harness
	h = newGoldenHarness(t, continueAsNewInflightSample(blocking(&h)))
	h.start(inst, "CanNondeterminism", "0")
	h.awaitEvents(inst, 1, 3)
	h.raise(inst, "proceed_signal", "go")
	h.wantCompleted(inst, "final:iteration_1")
	h.checkGolden("continue_as_new_inflight_activity")
}

// TestGoldenCustomStatusAndKV mirrors custom_status_tests.rs
// custom_status_updated_in_later_turn combined with kv_store_tests.rs
// kv_clear_single_value: status and KV calls are events with ids of their own, in
// call order with the schedules.
func TestGoldenCustomStatusAndKV(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Work", constActivity("worked")).
		MustAddOrchestration("StatusKv", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetCustomStatus("starting")
			ctx.SetValue("X", "Y")
			r, err := ctx.ScheduleActivity("Work", "in").Get()
			if err != nil {
				return "", err
			}
			ctx.SetCustomStatus("done")
			ctx.ClearValue("X")
			return r, nil
		})
	h := newGoldenHarness(t, reg)
	h.start("inst-status-kv", "StatusKv", "")
	h.wantCompleted("inst-status-kv", "worked")
	h.checkGolden("custom_status_and_kv")
}

// TestGoldenSubOrchestrationFailure mirrors e2e_samples.rs
// sample_basic_error_handling_fs run as a child: the child's failure details reach
// the parent verbatim in SubOrchestrationFailed.
func TestGoldenSubOrchestrationFailure(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("ValidateInput", failOn("", "Input cannot be empty", "")).
		MustAddOrchestration("ChildFail", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			return ctx.ScheduleActivity("ValidateInput", input).Get()
		}).
		MustAddOrchestration("ParentFail", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			if _, err := ctx.ScheduleSubOrchestration("ChildFail", "").Get(); err != nil {
				return "child failed: " + err.Error(), nil
			}
			return "child succeeded", nil
		})
	h := newGoldenHarness(t, reg)
	h.start("inst-sub-fail", "ParentFail", "")
	h.wantCompleted("inst-sub-fail", "child failed: Input cannot be empty")
	h.checkGolden("sub_orchestration_failure")
}

// TestGoldenRetryWithBackoff mirrors schedule_with_retry_tests.rs
// test_retry_with_fixed_backoff: each retry is a new ActivityScheduled after a
// durable backoff timer.
func TestGoldenRetryWithBackoff(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	reg := durable.NewRegistry().
		MustAddActivity("FlakyActivity", flaky(&n, 3)).
		MustAddOrchestration("RetryOrch", retryOrch("FlakyActivity", durable.RetryPolicy{MaxAttempts: 5, Backoff: durable.Backoff{Kind: durable.BackoffFixed, Base: 50 * msec}}))
	h := newGoldenHarness(t, reg)
	h.start("retry-backoff-1", "RetryOrch", "")
	h.wantCompleted("retry-backoff-1", "done")
	h.checkGolden("retry_with_backoff")
}

// TestGoldenContinueAsNewCarryForward covers duroxide's carry-forward rule
// (runtime/execution.rs collect_unmatched_queue_messages, state_helpers.rs): queue
// messages nobody dequeued ride on the next execution's OrchestrationStarted and are
// recorded again, first, in its history.
func TestGoldenContinueAsNewCarryForward(t *testing.T) {
	t.Parallel()
	const inst = "inst-carry"
	reg := durable.NewRegistry().
		MustAddOrchestration("CarryForward", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			if input == "0" {
				if _, err := ctx.WaitForEvent("go").Get(); err != nil {
					return "", err
				}
				ctx.ContinueAsNew("1")
			}
			m1, err := ctx.Dequeue("inbox").Get()
			if err != nil {
				return "", err
			}
			m2, err := ctx.Dequeue("inbox").Get()
			return m1 + "," + m2, err
		})
	h := newGoldenHarness(t, reg)
	h.start(inst, "CarryForward", "0")
	h.awaitEvents(inst, 1, 2)
	h.shutdown() // the three messages must form one batch
	h.enqueueEvent(inst, "inbox", "m1")
	h.enqueueEvent(inst, "inbox", "m2")
	h.raise(inst, "go", "")
	h.restart(reg, durable.Options{})
	h.wantCompleted(inst, "m1,m2")
	h.checkGolden("continue_as_new_carry_forward")
}

// blocking binds harness.blockUntilCancelled to a harness created after the registry.
func blocking(h **harness) durable.ActivityFunc {
	return func(ctx *durable.ActivityContext, in string) (string, error) {
		return (*h).blockUntilCancelled(ctx, in)
	}
}

// joinOutputs joins the values of resolved futures, failing on the first error.
func joinOutputs(sep string, fs ...durable.Future[string]) (string, error) {
	var out []string
	for _, f := range fs {
		v, err := f.Get()
		if err != nil {
			return "", err
		}
		out = append(out, v)
	}
	return strings.Join(out, sep), nil
}

// checkGolden compares every execution the golden file lists with what the runtime
// wrote. Timer fire times and KV update times are compared relative to the harness's
// frozen clock, the instant every delay of the test was added to.
func (h *harness) checkGolden(name string) {
	h.t.Helper()
	m := &goldenMatcher{bound: map[string]string{}, clockMs: uint64(h.now.UnixMilli())}
	for _, want := range loadGolden(h.t, name) {
		got, err := h.client.Admin().ReadHistoryWithExecutionID(h.ctx, want.instance, want.execution)
		if err != nil {
			h.t.Fatalf("read %s execution %d: %v", want.instance, want.execution, err)
		}
		m.compare(h.t, want, got)
	}
}

// goldenHistory is the expected history of one execution of one instance.
type goldenHistory struct {
	instance  string
	execution uint64
	raw       []json.RawMessage
}

// loadGolden reads testdata/golden/<name>.json, checks every event decodes with the
// strict wire codec (so a typo in a golden cannot silently match nothing), and groups
// the events by instance and execution in file order. An event with an empty
// instance id (an OrchestrationFailed, which duroxide writes with the placeholders
// "" and 0) belongs to the execution listed before it.
func loadGolden(t *testing.T, name string) []goldenHistory {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "golden", name+".json"))
	if err != nil {
		t.Fatalf("golden %s: %v", name, err)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		t.Fatalf("golden %s: not a JSON array: %v", name, err)
	}
	var out []goldenHistory
	for i, raw := range raws {
		var ev duroxide.Event
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatalf("golden %s event #%d does not decode as a duroxide event: %v", name, i, err)
		}
		if n := len(out); n == 0 || ev.InstanceID != "" && (out[n-1].instance != ev.InstanceID || out[n-1].execution != ev.ExecutionID) {
			out = append(out, goldenHistory{instance: ev.InstanceID, execution: ev.ExecutionID})
		}
		out[len(out)-1].raw = append(out[len(out)-1].raw, raw)
	}
	return out
}

// placeholders are the golden spellings of values duroxide cannot know in advance.
var placeholders = map[string]string{
	"<ms>":   `[0-9]+`,
	"<guid>": `[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`,
}

var placeholderRE = regexp.MustCompile(`<ms>|<guid>`)

// goldenMatcher compares actual events with golden ones. One matcher is used for a
// whole golden file, so a placeholder bound in one event must repeat its value later.
type goldenMatcher struct {
	bound map[string]string
	// clockMs is the frozen clock reading; actual timer fire times and KV update times
	// minus clockMs are what the goldens hold.
	clockMs uint64
}

// matchString reports whether got matches want, binding placeholders on first use.
func (m *goldenMatcher) matchString(want, got string) bool {
	if !placeholderRE.MatchString(want) {
		return want == got
	}
	var names []string
	pattern := "^" + placeholderRE.ReplaceAllStringFunc(regexp.QuoteMeta(want), func(p string) string {
		names = append(names, p)
		return "(" + placeholders[p] + ")"
	}) + "$"
	sub := regexp.MustCompile(pattern).FindStringSubmatch(got)
	if sub == nil {
		return false
	}
	for i, name := range names {
		if prev, ok := m.bound[name]; ok && prev != sub[i+1] {
			return false
		}
		m.bound[name] = sub[i+1]
	}
	return true
}

// matchValue compares two decoded JSON values; strings go through placeholders.
func (m *goldenMatcher) matchValue(want, got any) bool {
	switch w := want.(type) {
	case string:
		g, ok := got.(string)
		return ok && m.matchString(w, g)
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !m.matchValue(wv, gv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !m.matchValue(w[i], g[i]) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(want, got)
	}
}

// normalize turns an actual event into the golden's terms: timestamp zeroed, version
// checked against the release this module implements, timer fire times and KV update
// times made relative to the harness clock.
func (m *goldenMatcher) normalize(t *testing.T, ev duroxide.Event) map[string]any {
	t.Helper()
	if ev.DuroxideVersion != duroxide.CurrentDuroxideVersion {
		t.Errorf("%s event %d: duroxide_version %q, want %q", ev.InstanceID, ev.EventID, ev.DuroxideVersion, duroxide.CurrentDuroxideVersion)
	}
	ev.TimestampMs = 0
	switch k := ev.Kind.(type) {
	case duroxide.TimerCreatedEvent:
		ev.Kind = duroxide.TimerCreatedEvent{FireAtMs: m.relativeToClock(k.FireAtMs)}
	case duroxide.TimerFiredEvent:
		ev.Kind = duroxide.TimerFiredEvent{FireAtMs: m.relativeToClock(k.FireAtMs)}
	case duroxide.KeyValueSetEvent:
		k.LastUpdatedAtMs = m.relativeToClock(k.LastUpdatedAtMs)
		ev.Kind = k
	}
	data, err := ev.MarshalJSON()
	if err != nil {
		t.Fatalf("%s event %d does not encode: %v", ev.InstanceID, ev.EventID, err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s event %d: %v", ev.InstanceID, ev.EventID, err)
	}
	return out
}

func (m *goldenMatcher) relativeToClock(ms uint64) uint64 { return ms - m.clockMs }

// compare checks one execution's actual history against its golden, event by event,
// and reports every mismatch with both events in wire form.
func (m *goldenMatcher) compare(t *testing.T, want goldenHistory, got []duroxide.Event) {
	t.Helper()
	n := max(len(want.raw), len(got))
	for i := 0; i < n; i++ {
		switch {
		case i >= len(got):
			t.Errorf("%s exec %d: missing event #%d, want %s", want.instance, want.execution, i+1, want.raw[i])
			continue
		case i >= len(want.raw):
			data, _ := got[i].MarshalJSON()
			t.Errorf("%s exec %d: unexpected extra event #%d: %s", want.instance, want.execution, i+1, data)
			continue
		}
		var w map[string]any
		if err := json.Unmarshal(want.raw[i], &w); err != nil {
			t.Fatalf("golden %s: %v", want.instance, err)
		}
		delete(w, "timestamp_ms")
		delete(w, "duroxide_version")
		g := m.normalize(t, got[i])
		delete(g, "timestamp_ms")
		delete(g, "duroxide_version")
		if !m.matchValue(w, g) {
			gotJSON, _ := json.Marshal(g)
			t.Errorf("%s exec %d event #%d differs\n want %s\n  got %s", want.instance, want.execution, i+1, want.raw[i], gotJSON)
		}
	}
}

// harness is a durabletest.Env seen through the helpers of the ported and golden
// tests. It runs on the last of durabletest's backends (the Cluster at
// DUROXIDE_REDIS_CLUSTER, else the Redis at DUROXIDE_REDIS_URL, else an embedded
// miniredis) without time skipping: the ported tests' short timers run on real time.
// The runtime's clock is real time unless frozen: a frozen clock makes every fire
// time, KV timestamp and UTCNow reading the same known instant, while timers still
// fire on the storage server's real time (a fire time in the past is due).
type harness struct {
	env    *durabletest.Env
	t      *testing.T
	ctx    context.Context
	p      duroxide.Provider // what the runtime sees of the Env's provider
	rt     *durable.Runtime
	client *durable.Client
	frozen bool
	now    time.Time
	// stop is closed when the test ends, before the runtime shuts down, so activities
	// that wait for a cancellation that never comes let the shutdown finish at once.
	stop chan struct{}
}

// newGoldenHarness starts a runtime for reg with a frozen clock.
func newGoldenHarness(t *testing.T, reg *durable.Registry) *harness {
	t.Helper()
	return startHarness(t, reg, durable.Options{}, true)
}

// newHarness starts a runtime for reg on real time and stops it when the test ends.
func newHarness(t *testing.T, reg *durable.Registry) *harness {
	t.Helper()
	return startHarness(t, reg, durable.Options{}, false)
}

// newHarnessWith is newHarness with runtime options (the harness sets Clock).
func newHarnessWith(t *testing.T, reg *durable.Registry, opts durable.Options) *harness {
	t.Helper()
	return startHarness(t, reg, opts, false)
}

// startHarness starts the Env; extra options (a provider wrapper, say) go to
// durabletest.Start.
func startHarness(t *testing.T, reg *durable.Registry, opts durable.Options, frozen bool, extra ...durabletest.Option) *harness {
	t.Helper()
	h := &harness{t: t, ctx: context.Background(), frozen: frozen, now: time.Now().Truncate(time.Millisecond), stop: make(chan struct{})}
	backends := durabletest.Backends(t)
	env := durabletest.Start(t, reg, append([]durabletest.Option{durabletest.WithBackend(backends[len(backends)-1]),
		durabletest.WithTimeSkipping(false), durabletest.WithOptions(h.options(opts))}, extra...)...)
	t.Cleanup(func() { close(h.stop) }) // before the Env's cleanup shuts the runtime down
	h.env, h.p = env, env.Client.Provider()
	h.rt, h.client = env.Runtime, env.Client
	return h
}

// options are opts with the harness's clock.
func (h *harness) options(opts durable.Options) durable.Options {
	opts.Clock = nil
	if h.frozen {
		opts.Clock = func() time.Time { return h.now }
	}
	return opts
}

// restart stops the running runtime and starts one for reg on the same provider: a
// process restart, or a deployment of new code.
func (h *harness) restart(reg *durable.Registry, opts durable.Options) {
	h.t.Helper()
	h.env.Restart(h.t, reg, h.options(opts))
	h.rt, h.client = h.env.Runtime, h.env.Client
}

// shutdown stops the runtime until the next restart.
func (h *harness) shutdown() { shutdownRuntime(h.t, h.rt) }

// blockUntilCancelled is an activity that ends only when the runtime cancels it or
// the test ends.
func (h *harness) blockUntilCancelled(ctx *durable.ActivityContext, _ string) (string, error) {
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case <-h.stop:
		return "", errors.New("test ended")
	}
}

func (h *harness) start(instance, name, input string) {
	h.t.Helper()
	if err := h.client.StartOrchestration(h.ctx, instance, name, input); err != nil {
		h.t.Fatalf("start %s: %v", instance, err)
	}
}

func (h *harness) raise(instance, name, data string) {
	h.t.Helper()
	if err := h.client.RaiseEvent(h.ctx, instance, name, data); err != nil {
		h.t.Fatalf("raise %s on %s: %v", name, instance, err)
	}
}

// wait returns the instance's terminal status, failing the test on timeout.
func (h *harness) wait(instance string) durable.OrchestrationStatus {
	h.t.Helper()
	return h.env.Wait(h.t, instance)
}

func (h *harness) wantCompleted(instance, output string) {
	h.t.Helper()
	st := h.wait(instance)
	if st.Status != durable.StatusCompleted || st.Output != output {
		h.t.Fatalf("%s: status %v output %q failure %q; want Completed %q", instance, st.Status, st.Output, st.FailureMessage(), output)
	}
}

// wantFailed waits for a failure whose display message contains msg.
func (h *harness) wantFailed(instance, msg string) durable.OrchestrationStatus {
	h.t.Helper()
	st := h.wait(instance)
	if st.Status != durable.StatusFailed || !strings.Contains(st.FailureMessage(), msg) {
		h.t.Fatalf("%s: status %v output %q failure %q; want Failed containing %q", instance, st.Status, st.Output, st.FailureMessage(), msg)
	}
	return st
}

// awaitEvents waits until execution exec of instance has at least n events. It may
// run inside an activity, so it reports a timeout with Errorf and returns.
func (h *harness) awaitEvents(instance string, exec uint64, n int) []duroxide.Event {
	deadline := time.Now().Add(10 * time.Second)
	for {
		hist, err := h.client.Admin().ReadHistoryWithExecutionID(h.ctx, instance, exec)
		if err == nil && len(hist) >= n {
			return hist
		}
		if time.Now().After(deadline) {
			h.t.Errorf("%s execution %d: %d events after 10s, want %d (err %v)", instance, exec, len(hist), n, err)
			return hist
		}
		time.Sleep(5 * time.Millisecond) // sleep: the poll interval of a wait on the history (in an activity: no Eventually, which calls Fatalf)
	}
}

// newTestProvider returns a Redis provider in a namespace of its own on the backend
// the harness runs on, for tests that seed storage before any runtime starts. On a
// real server the namespace's keys are deleted when the test ends.
func newTestProvider(t *testing.T) *redisprovider.Provider {
	t.Helper()
	p, _ := newTestProviderClient(t)
	return p
}

// newTestProviderClient is newTestProvider with its Redis client, for tests that
// write keys by hand.
func newTestProviderClient(t *testing.T) (*redisprovider.Provider, redis.UniversalClient) {
	t.Helper()
	backends := durabletest.Backends(t)
	b := backends[len(backends)-1]
	client := b.Client(t)
	p, err := redisprovider.New(context.Background(), redisprovider.Options{Client: client, Namespace: "golden-" + uuid.NewString()})
	if err != nil {
		t.Fatalf("redisprovider.New: %v", err)
	}
	t.Cleanup(func() {
		_ = p.Close()   // first: a fetch it still has waiting would write its registration again
		if !b.Clocked { // miniredis goes with its test
			if err := redistest.DropPrefix(context.Background(), client, p.Keys().Prefix()); err != nil {
				t.Logf("delete namespace %s: %v", p.Keys().Prefix(), err)
			}
		}
	})
	return p, client
}

// msec keeps the timers of ported tests short: their orchestrations run on real time.
const msec = time.Millisecond

func (h *harness) cancel(instance, reason string) {
	h.t.Helper()
	if err := h.client.CancelInstance(h.ctx, instance, reason); err != nil {
		h.t.Fatalf("cancel %s: %v", instance, err)
	}
}

// wantCancelled waits for a failure carrying duroxide's Cancelled{reason} details.
func (h *harness) wantCancelled(instance, reason string) {
	h.t.Helper()
	st := h.wait(instance)
	if d := st.Failure; st.Status != durable.StatusFailed || d == nil || d.Application == nil ||
		d.Application.Kind.Variant != duroxide.AppErrorCancelled || d.Application.Kind.Reason != reason {
		h.t.Fatalf("%s: status %v failure %+v; want Cancelled{%q}", instance, st.Status, st.Failure, reason)
	}
}

// wantNondeterminism waits for a failure with Configuration{Nondeterminism} details
// whose message contains every one of parts, and returns that message.
func (h *harness) wantNondeterminism(instance string, parts ...string) string {
	h.t.Helper()
	st := h.wait(instance)
	d := st.Failure
	if st.Status != durable.StatusFailed || d == nil || d.Configuration == nil || d.Configuration.Kind != duroxide.ConfigErrorNondeterminism {
		h.t.Fatalf("%s: status %v output %q failure %+v; want a nondeterminism failure", instance, st.Status, st.Output, d)
	}
	msg := ""
	if d.Configuration.Message != nil {
		msg = *d.Configuration.Message
	}
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			h.t.Errorf("%s: nondeterminism message %q does not mention %q", instance, msg, p)
		}
	}
	return msg
}

func (h *harness) wantExecutions(instance string, want ...uint64) {
	h.t.Helper()
	got, err := h.client.Admin().ListExecutions(h.ctx, instance)
	if err != nil || !reflect.DeepEqual(got, want) {
		h.t.Fatalf("%s: executions %v (%v), want %v", instance, got, err, want)
	}
}

// history is the latest execution's history.
func (h *harness) history(instance string) []duroxide.Event {
	h.t.Helper()
	hist, err := h.p.Read(h.ctx, instance)
	if err != nil {
		h.t.Fatalf("read %s: %v", instance, err)
	}
	return hist
}

func (h *harness) execHistory(instance string, exec uint64) []duroxide.Event {
	h.t.Helper()
	hist, err := h.client.Admin().ReadHistoryWithExecutionID(h.ctx, instance, exec)
	if err != nil || len(hist) == 0 {
		h.t.Fatalf("read %s execution %d: %d events, %v", instance, exec, len(hist), err)
	}
	return hist
}

// awaitEvent waits until the instance's latest execution holds an event of the given
// wire type and returns it. It may run inside an activity, so it reports a timeout
// with Errorf and returns a zero event.
func (h *harness) awaitEvent(instance, eventType string) duroxide.Event {
	deadline := time.Now().Add(10 * time.Second)
	for {
		hist, _ := h.p.Read(h.ctx, instance)
		for _, e := range hist {
			if e.Kind.EventType() == eventType {
				return e
			}
		}
		if time.Now().After(deadline) {
			h.t.Errorf("%s: no %s event after 10s", instance, eventType)
			return duroxide.Event{}
		}
		time.Sleep(5 * time.Millisecond) // sleep: the poll interval of a wait on the history (in an activity: no Eventually, which calls Fatalf)
	}
}

// countEvents counts the events of one wire type.
func countEvents(hist []duroxide.Event, eventType string) int {
	n := 0
	for _, e := range hist {
		if e.Kind.EventType() == eventType {
			n++
		}
	}
	return n
}

func hasEvent(hist []duroxide.Event, match func(duroxide.EventKind) bool) bool {
	for _, e := range hist {
		if match(e.Kind) {
			return true
		}
	}
	return false
}

// wantEventOrder checks that events labelled "<type>:<name>" (name of the activity,
// event or queue) appear in history in the given order.
func wantEventOrder(t *testing.T, hist []duroxide.Event, labels ...string) {
	t.Helper()
	pos := map[string]int{}
	for i, e := range hist {
		label := e.Kind.EventType()
		switch k := e.Kind.(type) {
		case duroxide.ActivityScheduledEvent:
			label += ":" + k.Name
		case duroxide.ExternalEventEvent:
			label += ":" + k.Name
		case duroxide.ExternalSubscribedEvent:
			label += ":" + k.Name
		case duroxide.QueueEventDeliveredEvent:
			label += ":" + k.Name
		}
		if _, seen := pos[label]; !seen {
			pos[label] = i
		}
	}
	for i, l := range labels {
		p, ok := pos[l]
		if !ok {
			t.Errorf("no %s event in history", l)
			continue
		}
		if i > 0 {
			if prev, ok := pos[labels[i-1]]; ok && prev > p {
				t.Errorf("%s (event #%d) comes after %s (event #%d), want it before", labels[i-1], prev+1, l, p+1)
			}
		}
	}
}

// enqueue puts a work item on the orchestrator queue directly, as duroxide's tests do
// with enqueue_for_orchestrator to simulate stray or forged messages.
func (h *harness) enqueue(item duroxide.WorkItem) {
	h.t.Helper()
	if err := h.p.EnqueueForOrchestrator(h.ctx, item, 0); err != nil {
		h.t.Fatalf("enqueue %T: %v", item, err)
	}
}

// awaitIdle waits until the provider's queues have stayed empty for a few polls, so a
// message just sent has been taken and, in all likelihood, processed. The provider
// counts only unlocked entries, so this is a barrier for "taken", not for "acked": a
// test using it to show that nothing happened can miss a late effect, never invent one.
func (h *harness) awaitIdle() {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for quiet := 0; ; {
		d, err := h.client.Admin().GetQueueDepths(h.ctx)
		if err == nil && d.OrchestratorQueue == 0 && d.WorkerQueue == 0 {
			if quiet++; quiet == 5 {
				return
			}
			time.Sleep(10 * time.Millisecond) // sleep: empty queues must stay empty a while; a message still on its way has no signal
			continue
		}
		quiet = 0
		if time.Now().After(deadline) {
			h.t.Fatalf("queues not idle after 10s: %+v, %v", d, err)
		}
		time.Sleep(5 * time.Millisecond) // sleep: the poll interval of a wait on the queue depths
	}
}

// awaitDue waits until no orchestrator message waits for a later time on
// Redis' clock (QueueDepths.TimerQueue is 0): a timer's firing or an
// abandon's backoff is due, visible to the next fetch, or already taken.
func (h *harness) awaitDue() {
	h.t.Helper()
	durabletest.Eventually(h.t, "every delayed orchestrator message due", func() (bool, error) {
		d, err := h.client.Admin().GetQueueDepths(h.ctx)
		return d.TimerQueue == 0, err
	})
}

func hasEventWithSource(hist []duroxide.Event, source uint64, match func(duroxide.EventKind) bool) bool {
	for _, e := range hist {
		if e.SourceEventID != nil && *e.SourceEventID == source && match(e.Kind) {
			return true
		}
	}
	return false
}

// awaitEventsOf waits until the latest execution holds at least n events of one wire
// type and returns the history. Like awaitEvent it reports a timeout with Errorf.
func (h *harness) awaitEventsOf(instance, eventType string, n int) []duroxide.Event {
	deadline := time.Now().Add(10 * time.Second)
	for {
		hist, _ := h.p.Read(h.ctx, instance)
		if countEvents(hist, eventType) >= n {
			return hist
		}
		if time.Now().After(deadline) {
			h.t.Errorf("%s: fewer than %d %s events after 10s", instance, n, eventType)
			return hist
		}
		time.Sleep(5 * time.Millisecond) // sleep: the poll interval of a wait on the history (in an activity: no Eventually, which calls Fatalf)
	}
}

// toJSON is an event kind in wire form (fields only), for assertions on optional keys.
func toJSON(t *testing.T, k duroxide.EventKind) string {
	t.Helper()
	data, err := duroxide.Event{EventID: 1, InstanceID: "x", ExecutionID: 1, Kind: k}.MarshalJSON()
	if err != nil {
		t.Fatalf("encode %T: %v", k, err)
	}
	return string(data)
}

// ev builds one event of a seeded history; src 0 means no source event.
func ev(id, src uint64, kind duroxide.EventKind) duroxide.Event {
	e := duroxide.Event{EventID: id, Kind: kind}
	if src != 0 {
		e.SourceEventID = &src
	}
	return e
}

// seed stops the runtime and makes instance exist with exactly the given history
// (execution 1, running), as if an earlier runtime had written it: the way duroxide's
// replay-engine tests hand the engine a baseline history. The first event must be the
// OrchestrationStarted. Restart the runtime afterwards to replay it.
func (h *harness) seed(instance string, events ...duroxide.Event) {
	h.t.Helper()
	started, ok := events[0].Kind.(duroxide.OrchestrationStartedEvent)
	if !ok {
		h.t.Fatalf("seed %s: first event must be OrchestrationStarted", instance)
	}
	h.shutdown()
	version := started.Version
	h.enqueue(duroxide.StartOrchestration{Instance: instance, Orchestration: started.Name, Version: &version, Input: started.Input, ExecutionID: 1})
	item, err := h.p.FetchOrchestrationItem(h.ctx, 30*time.Second, time.Second, nil)
	if err != nil || item == nil || item.Instance != instance {
		h.t.Fatalf("seed %s: fetch: %+v, %v", instance, item, err)
	}
	for i := range events {
		events[i].InstanceID, events[i].ExecutionID = instance, 1
		events[i].DuroxideVersion, events[i].TimestampMs = duroxide.CurrentDuroxideVersion, uint64(time.Now().UnixMilli())
	}
	pinned := semver.MustParse(duroxide.CurrentDuroxideVersion)
	commit := duroxide.OrchestrationCommit{ExecutionID: 1, HistoryDelta: events, Metadata: duroxide.ExecutionMetadata{
		Status: "Running", OrchestrationName: started.Name, OrchestrationVersion: version, PinnedDuroxideVersion: pinned,
	}}
	if err := h.p.AckOrchestrationItem(h.ctx, item.LockToken, commit); err != nil {
		h.t.Fatalf("seed %s: ack: %v", instance, err)
	}
}

// startedEv is the OrchestrationStarted of a seeded history at the default version.
func startedEv(name, input string) duroxide.Event {
	return ev(1, 0, duroxide.OrchestrationStartedEvent{Name: name, Version: "1.0.0", Input: input})
}

// eventIDs lists the ids of the events of one wire type.
func eventIDs(hist []duroxide.Event, eventType string) []uint64 {
	var ids []uint64
	for _, e := range hist {
		if e.Kind.EventType() == eventType {
			ids = append(ids, e.EventID)
		}
	}
	return ids
}
