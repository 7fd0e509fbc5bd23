package durable_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/capability_filtering_tests.rs. Instances are
// seeded straight through the provider, pinned to a chosen duroxide version,
// before any runtime starts (duroxide's seed_instance_with_pinned_version):
// a started execution with one pending "ping" event. Where duroxide sleeps
// two seconds and then checks nothing happened, these start a compatible
// instance after the seeded one and wait for it: the dispatcher fetches the
// oldest visible work first, so once the later instance completed, the
// seeded one was passed over, not merely not reached yet.

// seedPinned makes instance exist on p, running orchestration orch at
// version 1.0.0, pinned to duroxide version pinned, with a "ping" event
// waiting to be processed.
func seedPinned(t *testing.T, p duroxide.Provider, instance, orch, pinned string) {
	t.Helper()
	ctx := context.Background()
	version := "1.0.0"
	if err := p.EnqueueForOrchestrator(ctx, duroxide.StartOrchestration{Instance: instance, Orchestration: orch, Input: "{}",
		Version: &version, ExecutionID: duroxide.InitialExecutionID}, 0); err != nil {
		t.Fatal(err)
	}
	// Earlier seeds' pings are queued too: hand those back untouched.
	var others []string
	defer func() {
		for _, tok := range others {
			if err := p.AbandonOrchestrationItem(ctx, tok, 0, true); err != nil {
				t.Errorf("seed %s: hand back: %v", instance, err)
			}
		}
	}()
	var item *duroxide.OrchestrationItem
	for {
		it, err := p.FetchOrchestrationItem(ctx, 30*time.Second, time.Second, nil)
		if err != nil || it == nil {
			t.Fatalf("seed %s: fetched %+v, %v", instance, it, err)
		}
		if it.Instance == instance {
			item = it
			break
		}
		others = append(others, it.LockToken)
	}
	started := duroxide.Event{EventID: 1, InstanceID: instance, ExecutionID: 1, DuroxideVersion: pinned,
		TimestampMs: uint64(time.Now().UnixMilli()),
		Kind:        duroxide.OrchestrationStartedEvent{Name: orch, Version: version, Input: "{}"}}
	commit := duroxide.OrchestrationCommit{ExecutionID: 1, HistoryDelta: []duroxide.Event{started},
		OrchestratorItems: []duroxide.WorkItem{duroxide.ExternalRaised{Instance: instance, Name: "ping", Data: "{}"}},
		Metadata: duroxide.ExecutionMetadata{Status: "Running", OrchestrationName: orch, OrchestrationVersion: version,
			PinnedDuroxideVersion: semver.MustParse(pinned)}}
	if err := p.AckOrchestrationItem(ctx, item.LockToken, commit); err != nil {
		t.Fatalf("seed %s: ack: %v", instance, err)
	}
}

// versionRange is the SupportedReplayVersions [lo, hi].
func versionRange(lo, hi string) *duroxide.SemverRange {
	return &duroxide.SemverRange{Min: semver.MustParse(lo), Max: semver.MustParse(hi)}
}

// capRuntime starts a runtime on p, shut down when the test ends.
func capRuntime(t *testing.T, p duroxide.Provider, reg *durable.Registry, o durable.Options) *durable.Runtime {
	t.Helper()
	o.LongPollTimeout = 100 * time.Millisecond
	rt, err := durable.NewRuntime(p, reg, durabletest.EnvOptions(o))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), durabletest.ShutdownGrace)
		defer cancel()
		_ = rt.Shutdown(ctx)
	})
	return rt
}

// returns is an orchestration answering out.
func returns(out string) durable.OrchestrationFunc {
	return func(*durable.OrchestrationContext, string) (string, error) { return out, nil }
}

// waitCompleted waits until instance's history ends with OrchestrationCompleted.
func waitCompleted(t *testing.T, c *durable.Client, instance string) {
	t.Helper()
	st, err := c.WaitForOrchestration(t.Context(), instance, durabletest.DefaultWaitTimeout)
	if err != nil || st.Status != durable.StatusCompleted {
		t.Fatalf("%s: %v %s (%v)", instance, st.Status, st.FailureMessage(), err)
	}
}

// wantPassedOver checks that the runtime on c took other work after seeded
// (the later-started "Probe" orchestration completes) while seeded stayed
// Running with only its seeded start.
func wantPassedOver(t *testing.T, c *durable.Client, seeded string) {
	t.Helper()
	probe := seeded + "-probe"
	if err := c.StartOrchestration(t.Context(), probe, "Probe", ""); err != nil {
		t.Fatal(err)
	}
	waitCompleted(t, c, probe)
	st, err := c.Status(t.Context(), seeded)
	if err != nil || st.Status != durable.StatusRunning {
		t.Fatalf("%s: status %v (%v), want Running (never processed)", seeded, st.Status, err)
	}
	hist, err := c.Provider().Read(t.Context(), seeded)
	if err != nil || len(hist) != 1 {
		t.Fatalf("%s: history %v (%v), want the seeded start alone", seeded, kindsOf(hist), err)
	}
}

// TestRuntimeSkipsIncompatibleExecution mirrors runtime_abandons_incompatible_execution,
// runtime_abandon_reaches_max_attempts_and_poisons (whose body, like
// duroxide's, checks the item stays untouched: the provider's filter never
// hands it out, so no attempt is counted), default_supported_range_excludes_future_versions
// and custom_supported_replay_versions_narrows_range.
func TestRuntimeSkipsIncompatibleExecution(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, pinned string
		support      *duroxide.SemverRange
	}{
		{"runtime_abandons_incompatible_execution", "99.0.0", nil},
		{"runtime_abandon_reaches_max_attempts_and_poisons", "99.0.0", nil},
		{"default_supported_range_excludes_future_versions", "99.0.0", nil},
		{"custom_supported_replay_versions_narrows_range", "1.0.0", versionRange("2.0.0", "2.99.99")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := newTestProvider(t)
			seedPinned(t, p, "incompat", "TestOrch", c.pinned)
			reg := durable.NewRegistry().MustAddOrchestration("TestOrch", returns("should-not-reach")).MustAddOrchestration("Probe", returns("ok"))
			rt := capRuntime(t, p, reg, durable.Options{MaxAttempts: 3, SupportedReplayVersions: c.support})
			wantPassedOver(t, rt.Client(), "incompat")
		})
	}
}

// TestRuntimeProcessesCompatibleExecutions mirrors runtime_processes_compatible_execution_normally,
// default_supported_range_includes_current_and_older_versions and
// execution_metadata_includes_pinned_version_on_new_orchestration: a new
// instance is pinned to this build's duroxide version (its
// OrchestrationStarted's duroxide_version, as duroxide checks) and runs.
func TestRuntimeProcessesCompatibleExecutions(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"runtime_processes_compatible_execution_normally",
		"default_supported_range_includes_current_and_older_versions",
		"execution_metadata_includes_pinned_version_on_new_orchestration"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := durabletest.Start(t, durable.NewRegistry().MustAddOrchestration("CompatOrch", returns("compatible-ok")))
			mustComplete(t, env.StartAndWait(t, "compat", "CompatOrch", "{}"), "compatible-ok")
			if v := read(t, env, "compat")[0].DuroxideVersion; v != duroxide.CurrentDuroxideVersion {
				t.Fatalf("OrchestrationStarted pinned to %q, want %q", v, duroxide.CurrentDuroxideVersion)
			}
		})
	}
}

// TestUnpinnedStartRemainsFetchable mirrors existing_executions_without_pinned_version_remain_fetchable:
// a start queued with no execution yet (data from before pinning) is run.
func TestUnpinnedStartRemainsFetchable(t *testing.T) {
	t.Parallel()
	p := newTestProvider(t)
	version := "1.0.0"
	if err := p.EnqueueForOrchestrator(context.Background(), duroxide.StartOrchestration{Instance: "null-20", Orchestration: "NullOrch",
		Input: "{}", Version: &version, ExecutionID: duroxide.InitialExecutionID}, 0); err != nil {
		t.Fatal(err)
	}
	rt := capRuntime(t, p, durable.NewRegistry().MustAddOrchestration("NullOrch", returns("null-ok")), durable.Options{})
	waitCompleted(t, rt.Client(), "null-20")
}

// TestVersionRangesRoute mirrors two_runtimes_different_version_ranges_route_correctly,
// overlapping_version_ranges_both_can_process and mixed_cluster_compatible_and_incompatible_items:
// each seeded instance completes on the runtime whose range holds its pin.
func TestVersionRangesRoute(t *testing.T) {
	t.Parallel()
	type rng struct{ lo, hi string }
	cases := []struct {
		name    string
		ranges  [2]rng
		pins    map[string]string // instance -> pinned version
		runtime map[string]int    // instance -> the runtime that must run it (-1: either)
	}{
		{"two_runtimes_different_version_ranges_route_correctly", [2]rng{{"1.0.0", "1.99.99"}, {"2.0.0", "2.99.99"}},
			map[string]string{"v1-inst": "1.0.0", "v2-inst": "2.0.0"}, map[string]int{"v1-inst": 0, "v2-inst": 1}},
		{"overlapping_version_ranges_both_can_process", [2]rng{{"1.0.0", "2.99.99"}, {"2.0.0", "3.99.99"}},
			map[string]string{"overlap-17": "2.5.0"}, map[string]int{"overlap-17": -1}},
		{"mixed_cluster_compatible_and_incompatible_items", [2]rng{{"1.0.0", "1.99.99"}, {"2.0.0", "2.99.99"}},
			map[string]string{"v1-mixed-0": "1.0.0", "v1-mixed-1": "1.1.0", "v1-mixed-2": "1.2.0", "v2-mixed-0": "2.0.0", "v2-mixed-1": "2.1.0"},
			map[string]int{"v1-mixed-0": 0, "v1-mixed-1": 0, "v1-mixed-2": 0, "v2-mixed-0": 1, "v2-mixed-1": 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := newTestProvider(t)
			for inst, pin := range c.pins {
				seedPinned(t, p, inst, "RoutingOrch", pin)
			}
			var mu sync.Mutex
			ranBy := map[string]int{}
			var rts [2]*durable.Runtime
			for i, r := range c.ranges {
				reg := durable.NewRegistry().MustAddOrchestration("RoutingOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
					mu.Lock()
					defer mu.Unlock()
					ranBy[ctx.InstanceID()] = i
					return "routed", nil
				})
				rts[i] = capRuntime(t, p, reg, durable.Options{MaxAttempts: 50, SupportedReplayVersions: versionRange(r.lo, r.hi)})
			}
			for inst := range c.pins {
				waitCompleted(t, rts[0].Client(), inst)
			}
			mu.Lock()
			defer mu.Unlock()
			for inst, want := range c.runtime {
				if got, ok := ranBy[inst]; !ok || (want >= 0 && got != want) {
					t.Errorf("%s (pinned %s) ran on runtime %d (ran: %v), want runtime %d", inst, c.pins[inst], got, ok, want)
				}
			}
		})
	}
}

// TestSubOrchestrationGetsOwnPinnedVersion mirrors sub_orchestration_gets_own_pinned_version.
func TestSubOrchestrationGetsOwnPinnedVersion(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("ParentOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			r, err := ctx.ScheduleSubOrchestration("ChildOrch", "child-input").Get()
			return "parent-done:" + r, err
		}).
		MustAddOrchestration("ChildOrch", returns("child-done"))
	env := durabletest.Start(t, reg)
	mustComplete(t, env.StartAndWait(t, "parent-24", "ParentOrch", "{}"), "parent-done:child-done")
	child := childOf(t, env, "parent-24", "ChildOrch")
	if v := read(t, env, child)[0].DuroxideVersion; v != duroxide.CurrentDuroxideVersion {
		t.Fatalf("child %s pinned to %q, want %q", child, v, duroxide.CurrentDuroxideVersion)
	}
}

// TestPinnedVersionExtractedFromOrchestrationStartedEvent mirrors
// pinned_version_extracted_from_orchestration_started_event: an instance
// pinned to 3.1.4 runs on a runtime accepting 0.0.0-99.99.99 and keeps its pin.
func TestPinnedVersionExtractedFromOrchestrationStartedEvent(t *testing.T) {
	t.Parallel()
	p := newTestProvider(t)
	seedPinned(t, p, "pinned-21", "PinnedOrch", "3.1.4")
	rt := capRuntime(t, p, durable.NewRegistry().MustAddOrchestration("PinnedOrch", returns("pinned-ok")),
		durable.Options{SupportedReplayVersions: versionRange("0.0.0", "99.99.99")})
	waitCompleted(t, rt.Client(), "pinned-21")
	hist, err := p.Read(t.Context(), "pinned-21")
	if err != nil || hist[0].DuroxideVersion != "3.1.4" {
		t.Fatalf("started pinned to %q (%v), want 3.1.4", hist[0].DuroxideVersion, err)
	}
}

// TestActivityCompletionAfterContinueAsNewIsDiscarded mirrors
// activity_completion_after_continue_as_new_is_discarded: a completion
// addressed to the execution before a continue-as-new is dropped.
func TestActivityCompletionAfterContinueAsNewIsDiscarded(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("CANOrch", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		if in == "start" {
			ctx.ContinueAsNew("second")
			return "", nil
		}
		_, err := ctx.WaitForEvent("done_signal").Get()
		return "can-complete", err
	})
	env := durabletest.Start(t, reg)
	if err := env.Client.StartOrchestration(t.Context(), "can-25", "CANOrch", "start"); err != nil {
		t.Fatal(err)
	}
	env.WaitForEventSubscription(t, "can-25", "done_signal")
	if err := env.Provider.EnqueueForOrchestrator(t.Context(), duroxide.ActivityCompleted{Instance: "can-25", ExecutionID: 1, ID: 999, Result: "stale-result"}, 0); err != nil {
		t.Fatal(err)
	}
	// Raised after the stale completion, so processed in its turn or a later one.
	if err := env.Client.RaiseEvent(t.Context(), "can-25", "done_signal", "go"); err != nil {
		t.Fatal(err)
	}
	mustComplete(t, env.Wait(t, "can-25"), "can-complete")
	if hasEvent(read(t, env, "can-25"), func(k duroxide.EventKind) bool {
		c, ok := k.(duroxide.ActivityCompletedEvent)
		return ok && c.Result == "stale-result"
	}) {
		t.Fatal("the stale completion of execution 1 reached execution 2's history")
	}
}

// filterBypass fetches orchestration items without the runtime's capability
// filter (duroxide's FilterBypassProvider), so the runtime's own check is
// what stands between an incompatible execution and its code; it records
// the delays of the abandons.
type filterBypass struct {
	duroxide.Provider
	mu       sync.Mutex
	abandons []time.Duration
	abandon  chan struct{}
}

func (p *filterBypass) FetchOrchestrationItem(ctx context.Context, lock, poll time.Duration, _ *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return p.Provider.FetchOrchestrationItem(ctx, lock, poll, nil)
}

func (p *filterBypass) AbandonOrchestrationItem(ctx context.Context, token string, delay time.Duration, ignoreAttempt bool) error {
	p.mu.Lock()
	p.abandons = append(p.abandons, delay)
	p.mu.Unlock()
	select {
	case p.abandon <- struct{}{}:
	default:
	}
	return p.Provider.AbandonOrchestrationItem(ctx, token, delay, ignoreAttempt)
}

// TestRuntimeAbandonsIncompatibleItemItWasHanded mirrors runtime_abandon_uses_short_delay
// and runtime_logs_warning_on_incompatible_abandon: handed an execution
// pinned outside its range (a provider ignoring the filter), the runtime
// does not run it, logs a warning naming the instance, and abandons it with
// a 1s delay rather than at once, so it cannot spin.
func TestRuntimeAbandonsIncompatibleItemItWasHanded(t *testing.T) {
	t.Parallel()
	inner := newTestProvider(t)
	seedPinned(t, inner, "warn-30", "WarnOrch", "99.0.0")
	p := &filterBypass{Provider: inner, abandon: make(chan struct{}, 1)}
	logs := newRecordingHandler()
	rt := capRuntime(t, p, durable.NewRegistry().MustAddOrchestration("WarnOrch", returns("should-not-reach")),
		durable.Options{MaxAttempts: 100, Logger: slog.New(logs)})
	select {
	case <-p.abandon:
	case <-time.After(durabletest.DefaultWaitTimeout):
		t.Fatal("the incompatible execution was never abandoned")
	}
	t.Run("runtime_abandon_uses_short_delay", func(t *testing.T) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.abandons[0] != time.Second {
			t.Fatalf("abandoned with delay %v, want 1s", p.abandons[0])
		}
		st, err := rt.Client().Status(t.Context(), "warn-30")
		if err != nil || st.Status != durable.StatusRunning {
			t.Fatalf("status %v (%v), want Running", st.Status, err)
		}
	})
	t.Run("runtime_logs_warning_on_incompatible_abandon", func(t *testing.T) {
		recs := logs.find(slog.LevelWarn, "instance", "warn-30")
		if len(recs) == 0 || !strings.Contains(recs[0].msg, "unsupported duroxide version") || recs[0].attrs["pinned"] != "99.0.0" {
			t.Fatalf("warnings naming warn-30: %+v; all: %v", recs, logs.messages())
		}
	})
}

// TestRuntimeLogsCapabilityDeclarationAtStartup mirrors
// runtime_logs_capability_declaration_at_startup: a starting runtime logs
// the duroxide versions it replays. At Debug, not Info as duroxide does: a
// plain run logs nothing at Info here (TestLogsGoToTheCallersLoggerNeverTheGlobalOne).
func TestRuntimeLogsCapabilityDeclarationAtStartup(t *testing.T) {
	t.Parallel()
	logs := newRecordingHandler()
	capRuntime(t, newTestProvider(t), durable.NewRegistry(), durable.Options{Logger: slog.New(logs),
		SupportedReplayVersions: versionRange("0.1.0", "0.1.27")})
	recs := logs.find(slog.LevelDebug, "supported_replay_versions", ">=0.1.0 <=0.1.27")
	if len(recs) != 1 {
		t.Fatalf("startup records with the supported range: %+v; all: %v", recs, logs.messages())
	}
}

// TestWideSupportedRangeDrainsStuckItemsViaDeserializationError mirrors
// wide_supported_range_drains_stuck_items_via_deserialization_error: an
// execution whose history no longer decodes, fetched by a runtime with a
// wide range, is abandoned until it is poisoned, which fails the instance
// for good (the drain procedure).
func TestWideSupportedRangeDrainsStuckItemsViaDeserializationError(t *testing.T) {
	t.Parallel()
	p, client := newTestProviderClient(t)
	seedPinned(t, p, "drain-29", "DrainOrch", "99.0.0")
	if err := client.RPush(context.Background(), p.Keys().History("drain-29", 1), `{"kind":"UnknownFutureEvent","data":"garbage"}`).Err(); err != nil {
		t.Fatal(err)
	}
	capRuntime(t, p, durable.NewRegistry().MustAddOrchestration("DrainOrch", returns("should-not-reach")),
		durable.Options{MaxAttempts: 3, OrchestratorLockTimeout: 500 * time.Millisecond, SupportedReplayVersions: versionRange("0.0.0", "99.99.99")})
	ctx, cancel := context.WithTimeout(t.Context(), durabletest.DefaultWaitTimeout)
	defer cancel()
	for {
		info, err := p.Admin().GetInstanceInfo(ctx, "drain-29")
		if err == nil && info.Status == "Failed" {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("drain-29 not failed: %+v, %v", info, err)
		case <-time.After(20 * time.Millisecond): // a poll interval
		}
	}
}
