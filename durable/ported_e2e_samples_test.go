package durable_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/e2e_samples.rs: each test is named after the sample it
// mirrors (sample_x_fs -> TestSampleX). The hello-world, fan-out, timer-race,
// activity-vs-event, system-activity, sub-orchestration, continue-as-new, error
// handling and detached samples are also golden tests (golden_test.go), which check
// their full histories; the ports here check what the samples assert.

// The samples' registries, shared with the golden tests (golden_test.go), which run
// the same orchestrations and check their full histories.

func helloWorldSample() *durable.Registry {
	return durable.NewRegistry().
		MustAddActivity("Hello", func(_ *durable.ActivityContext, in string) (string, error) { return "Hello, " + in + "!", nil }).
		MustAddOrchestration("HelloWorld", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			if _, err := ctx.ScheduleActivity("Hello", "Rust").Get(); err != nil {
				return "", err
			}
			return ctx.ScheduleActivity("Hello", input).Get()
		})
}

// greetingsSample calls hold (if set) with each activity input before answering.
func greetingsSample(hold func(in string)) *durable.Registry {
	return durable.NewRegistry().
		MustAddActivity("Greetings", func(_ *durable.ActivityContext, in string) (string, error) {
			if hold != nil {
				hold(in)
			}
			return "Hello, " + in + "!", nil
		}).
		MustAddOrchestration("Greetings", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			a, b := ctx.ScheduleActivity("Greetings", "Gabbar"), ctx.ScheduleActivity("Greetings", "Samba")
			ctx.Join(a, b)
			return joinOutputs(", ", a, b)
		})
}

func statusPollingSample() *durable.Registry {
	return durable.NewRegistry().MustAddOrchestration("StatusSample", timerOrchestration("done", 20*msec))
}

func subOrchestrationBasicSample() *durable.Registry {
	return durable.NewRegistry().
		MustAddActivity("Upper", func(_ *durable.ActivityContext, in string) (string, error) { return strings.ToUpper(in), nil }).
		MustAddOrchestration("ChildUpper", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			return ctx.ScheduleActivity("Upper", input).Get()
		}).
		MustAddOrchestration("Parent", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			r, err := ctx.ScheduleSubOrchestration("ChildUpper", input).Get()
			return "parent:" + r, err
		})
}

func continueAsNewSample() *durable.Registry {
	return durable.NewRegistry().
		MustAddOrchestration("CanSample", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			var n int
			fmt.Sscan(input, &n)
			if n < 3 {
				ctx.ContinueAsNew(fmt.Sprint(n + 1))
			}
			return fmt.Sprintf("final:%d", n), nil
		})
}

// timeoutSample races activity LongOp (longOp) against a 100ms timer.
func timeoutSample(longOp durable.ActivityFunc) *durable.Registry {
	return durable.NewRegistry().
		MustAddActivity("LongOp", longOp).
		MustAddOrchestration("TimeoutSample", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			act := ctx.ScheduleActivity("LongOp", "")
			if ctx.Select(act, ctx.Timer(100*msec)) == 1 {
				return "", errors.New("timeout")
			}
			return act.Get()
		})
}

// activityVsEventSample races activity Sleep (sleep) against the external event Go.
func activityVsEventSample(sleep durable.ActivityFunc) *durable.Registry {
	return durable.NewRegistry().
		MustAddActivity("Sleep", sleep).
		MustAddOrchestration("Select2ActVsEvt", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			act, evt := ctx.ScheduleActivity("Sleep", ""), ctx.WaitForEvent("Go")
			if ctx.Select(act, evt) == 0 {
				v, err := act.Get()
				return "activity:" + v, err
			}
			v, err := evt.Get()
			return "event:" + v, err
		})
}

func systemActivitiesSample() *durable.Registry {
	return durable.NewRegistry().
		MustAddOrchestration("SystemActivities", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			now, err := ctx.UTCNow().Get()
			if err != nil {
				return "", err
			}
			guid, err := ctx.NewGUID().Get()
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("n=%d,g=%s", now.UnixMilli(), guid), nil
		})
}

func errorHandlingSample() *durable.Registry {
	return durable.NewRegistry().
		MustAddActivity("Fragile", failOn("bad", "boom", "ok")).
		MustAddActivity("Recover", constActivity("recovered")).
		MustAddOrchestration("ErrorHandling", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			if v, err := ctx.ScheduleActivity("Fragile", "bad").Get(); err == nil {
				return v, nil
			}
			return ctx.ScheduleActivity("Recover", "").Get()
		})
}

func detachedThenActivitySample() *durable.Registry {
	return durable.NewRegistry().
		MustAddActivity("Echo", func(_ *durable.ActivityContext, in string) (string, error) { return in, nil }).
		MustAddOrchestration("Child", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			_, err := ctx.Timer(5 * msec).Get()
			return "child-" + input, err
		}).
		MustAddOrchestration("Parent", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.StartOrchestration("detached-child", "Child", "payload")
			return ctx.ScheduleActivity("Echo", "hello").Get()
		})
}

// TestSamples runs those of duroxide's e2e samples that run to completion on their
// own, one subtest each: on real time, and where a golden of the history exists
// (not where the completion order is the runtime's choice), again on a frozen clock,
// comparing the history with the golden.
func TestSamples(t *testing.T) {
	t.Parallel()
	type sample struct {
		name                  string // the duroxide test it mirrors
		reg                   func() *durable.Registry
		instance, orch, input string
		outputs               [][2]string // instance, output: it and the instances it starts
		executions            []uint64    // of instance, when it continues as new
		golden                string
	}
	for _, s := range []sample{
		{name: "sample_hello_world_fs", reg: helloWorldSample, instance: "inst-sample-hello-1", orch: "HelloWorld", input: "World",
			outputs: [][2]string{{"inst-sample-hello-1", "Hello, World!"}}, golden: "hello_world"},
		{name: "sample_status_polling_fs", reg: statusPollingSample, instance: "inst-status-sample", orch: "StatusSample",
			outputs: [][2]string{{"inst-status-sample", "done"}}, golden: "timer"},
		{name: "sample_sub_orchestration_basic_fs", reg: subOrchestrationBasicSample, instance: "inst-sub-basic", orch: "Parent", input: "hi",
			outputs: [][2]string{{"inst-sub-basic", "parent:HI"}, {"inst-sub-basic::sub::2", "HI"}}, golden: "sub_orchestration"},
		{name: "sample_continue_as_new_fs", reg: continueAsNewSample, instance: "inst-sample-can", orch: "CanSample", input: "0",
			outputs: [][2]string{{"inst-sample-can", "final:3"}}, executions: []uint64{1, 2, 3, 4}, golden: "continue_as_new"},
		{name: "sample_error_handling_fs", reg: errorHandlingSample, instance: "inst-sample-err-1", orch: "ErrorHandling",
			outputs: [][2]string{{"inst-sample-err-1", "recovered"}}, golden: "activity_failure"},
		{name: "sample_detached_then_activity_fs", reg: detachedThenActivitySample, instance: "ParentInstance", orch: "Parent",
			outputs: [][2]string{{"ParentInstance", "hello"}, {"detached-child", "child-payload"}}, golden: "detached_orchestration"},
		// completion order left to the runtime: the output is sorted, as in the Rust sample
		{name: "dtf_legacy_gabbar_greetings_fs", reg: func() *durable.Registry { return greetingsSample(nil) }, instance: "inst-dtf-greetings", orch: "Greetings",
			outputs: [][2]string{{"inst-dtf-greetings", "Hello, Gabbar!, Hello, Samba!"}}},
	} {
		run := func(h *harness) {
			h.t.Helper()
			h.start(s.instance, s.orch, s.input)
			for _, o := range s.outputs {
				h.wantCompleted(o[0], o[1])
			}
			if s.executions != nil {
				h.wantExecutions(s.instance, s.executions...)
			}
		}
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			t.Run("real_time", func(t *testing.T) {
				t.Parallel()
				run(newHarness(t, s.reg()))
			})
			if s.golden == "" {
				return
			}
			t.Run("golden", func(t *testing.T) {
				t.Parallel()
				h := newGoldenHarness(t, s.reg())
				run(h)
				h.checkGolden(s.golden)
			})
		})
	}
}

// TestSampleBasicControlFlow mirrors sample_basic_control_flow_fs.
func TestSampleBasicControlFlow(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("GetFlag", constActivity("yes")).
		MustAddActivity("SayYes", constActivity("picked_yes")).
		MustAddActivity("SayNo", constActivity("picked_no")).
		MustAddOrchestration("ControlFlow", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			flag, err := ctx.ScheduleActivity("GetFlag", "").Get()
			if err != nil {
				return "", err
			}
			if flag == "yes" {
				return ctx.ScheduleActivity("SayYes", "").Get()
			}
			return ctx.ScheduleActivity("SayNo", "").Get()
		})
	h := newHarness(t, reg)
	h.start("inst-sample-cflow-1", "ControlFlow", "")
	h.wantCompleted("inst-sample-cflow-1", "picked_yes")
}

// TestSampleLoop mirrors sample_loop_fs.
func TestSampleLoop(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Append", func(_ *durable.ActivityContext, in string) (string, error) { return in + "x", nil }).
		MustAddOrchestration("LoopOrchestration", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			acc := "start"
			for i := 0; i < 3; i++ {
				var err error
				if acc, err = ctx.ScheduleActivity("Append", acc).Get(); err != nil {
					return "", err
				}
			}
			return acc, nil
		})
	h := newHarness(t, reg)
	h.start("inst-sample-loop-1", "LoopOrchestration", "")
	h.wantCompleted("inst-sample-loop-1", "startxxx")
}

// TestSampleTimeoutWithTimerRace mirrors sample_timeout_with_timer_race_fs.
func TestSampleTimeoutWithTimerRace(t *testing.T) {
	t.Parallel()
	var h *harness
	h = newHarness(t, timeoutSample(blocking(&h)))
	h.start("inst-timeout-sample", "TimeoutSample", "")
	if st := h.wantFailed("inst-timeout-sample", "timeout"); st.FailureMessage() != "timeout" {
		t.Errorf("failure %q, want exactly \"timeout\"", st.FailureMessage())
	}
}

// TestSampleSelect2ActivityVsExternal mirrors sample_select2_activity_vs_external_fs.
func TestSampleSelect2ActivityVsExternal(t *testing.T) {
	t.Parallel()
	var h *harness
	h = newHarness(t, activityVsEventSample(blocking(&h)))
	h.start("inst-s2-mixed", "Select2ActVsEvt", "")
	h.awaitEvent("inst-s2-mixed", "ExternalSubscribed")
	h.raise("inst-s2-mixed", "Go", "ok")
	h.wantCompleted("inst-s2-mixed", "event:ok")
}

// TestSampleSystemActivities mirrors sample_system_activities_fs.
func TestSampleSystemActivities(t *testing.T) {
	t.Parallel()
	h := newHarness(t, systemActivitiesSample())
	h.start("inst-system-acts", "SystemActivities", "")
	st := h.wait("inst-system-acts")
	var nowMs int64
	var guid string
	if _, err := fmt.Sscanf(strings.Replace(st.Output, ",g=", " ", 1), "n=%d %s", &nowMs, &guid); err != nil || nowMs <= 0 {
		t.Fatalf("output %q: want n=<positive ms>,g=<guid> (%v)", st.Output, err)
	}
	if len(guid) != 36 || strings.Trim(strings.ReplaceAll(guid, "-", ""), "0123456789abcdefABCDEF") != "" {
		t.Errorf("guid %q is not a 36-character hyphenated hex id", guid)
	}
}

// TestSampleSubOrchestrationFanout mirrors sample_sub_orchestration_fanout_fs.
func TestSampleSubOrchestrationFanout(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Add", func(_ *durable.ActivityContext, in string) (string, error) {
			var a, b int
			_, err := fmt.Sscanf(in, "%d,%d", &a, &b)
			return fmt.Sprint(a + b), err
		}).
		MustAddOrchestration("ChildSum", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			return ctx.ScheduleActivity("Add", input).Get()
		}).
		MustAddOrchestration("ParentFan", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			a, b := ctx.ScheduleSubOrchestration("ChildSum", "1,2"), ctx.ScheduleSubOrchestration("ChildSum", "3,4")
			ctx.Join(a, b)
			total := 0
			for _, f := range []durable.Future[string]{a, b} {
				s, err := f.Get()
				if err != nil {
					return "", err
				}
				var n int
				fmt.Sscan(s, &n)
				total += n
			}
			return fmt.Sprintf("total=%d", total), nil
		})
	h := newHarness(t, reg)
	h.start("inst-sub-fan", "ParentFan", "")
	h.wantCompleted("inst-sub-fan", "total=10")
}

// TestSampleSubOrchestrationChained mirrors sample_sub_orchestration_chained_fs.
func TestSampleSubOrchestrationChained(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("AppendX", func(_ *durable.ActivityContext, in string) (string, error) { return in + "x", nil }).
		MustAddOrchestration("Leaf", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			return ctx.ScheduleActivity("AppendX", input).Get()
		}).
		MustAddOrchestration("Mid", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			r, err := ctx.ScheduleSubOrchestration("Leaf", input).Get()
			return r + "-mid", err
		}).
		MustAddOrchestration("Root", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			r, err := ctx.ScheduleSubOrchestration("Mid", input).Get()
			return "root:" + r, err
		})
	h := newHarness(t, reg)
	h.start("inst-sub-chain", "Root", "a")
	h.wantCompleted("inst-sub-chain", "root:ax-mid")
	// The grandchild is named after its parent, which is named after the root.
	h.wantCompleted("inst-sub-chain::sub::2::sub::2", "ax")
}

// TestSampleDetachedOrchestrationScheduling mirrors
// sample_detached_orchestration_scheduling_fs.
func TestSampleDetachedOrchestrationScheduling(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Echo", func(_ *durable.ActivityContext, in string) (string, error) { return in, nil }).
		MustAddOrchestration("Chained", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			if _, err := ctx.Timer(5 * msec).Get(); err != nil {
				return "", err
			}
			return ctx.ScheduleActivity("Echo", input).Get()
		}).
		MustAddOrchestration("Coordinator", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.StartOrchestration("W1", "Chained", "A")
			ctx.StartOrchestration("W2", "Chained", "B")
			return "scheduled", nil
		})
	h := newHarness(t, reg)
	h.start("CoordinatorRoot", "Coordinator", "")
	h.wantCompleted("CoordinatorRoot", "scheduled")
	h.wantCompleted("W1", "A")
	h.wantCompleted("W2", "B")
}

type addReq struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addRes struct {
	Sum int `json:"sum"`
}

// TestSampleTypedActivityAndOrchestration mirrors
// sample_typed_activity_and_orchestration_fs.
func TestSampleTypedActivityAndOrchestration(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Add", durable.Activity(func(_ *durable.ActivityContext, r addReq) (addRes, error) {
			return addRes{Sum: r.A + r.B}, nil
		})).
		MustAddOrchestration("Adder", durable.Orchestration(func(ctx *durable.OrchestrationContext, r addReq) (addRes, error) {
			return durable.ScheduleActivity[addRes](ctx, "Add", r).Get()
		}))
	h := newHarness(t, reg)
	if err := h.client.StartOrchestrationJSON(h.ctx, "inst-typed-add", "Adder", addReq{A: 2, B: 3}); err != nil {
		t.Fatal(err)
	}
	var res addRes
	if err := h.wait("inst-typed-add").DecodeOutput(&res); err != nil || res.Sum != 5 {
		t.Fatalf("output %+v (%v), want sum 5", res, err)
	}
}

// TestSampleTypedEvent mirrors sample_typed_event_fs.
func TestSampleTypedEvent(t *testing.T) {
	t.Parallel()
	type ack struct {
		OK bool `json:"ok"`
	}
	reg := durable.NewRegistry().
		MustAddOrchestration("WaitAck", durable.Orchestration(func(ctx *durable.OrchestrationContext, _ struct{}) (ack, error) {
			return durable.WaitForEvent[ack](ctx, "Ready").Get()
		}))
	h := newHarness(t, reg)
	h.start("inst-typed-ack", "WaitAck", "{}")
	h.awaitEvent("inst-typed-ack", "ExternalSubscribed")
	h.raise("inst-typed-ack", "Ready", `{"ok":true}`)
	h.wantCompleted("inst-typed-ack", `{"ok":true}`)
}

// TestSampleMixedStringAndTypedStringOrch mirrors
// sample_mixed_string_and_typed_string_orch_fs.
func TestSampleMixedStringAndTypedStringOrch(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Upper", func(_ *durable.ActivityContext, in string) (string, error) { return strings.ToUpper(in), nil }).
		MustAddActivity("Add", durable.Activity(func(_ *durable.ActivityContext, r addReq) (addRes, error) {
			return addRes{Sum: r.A + r.B}, nil
		})).
		MustAddOrchestration("MixedStringOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			typed := durable.ScheduleActivity[addRes](ctx, "Add", addReq{A: 5, B: 7})
			str := ctx.ScheduleActivity("Upper", "race")
			if ctx.Select(typed, str) == 0 {
				r, err := typed.Get()
				return fmt.Sprintf("sum=%d", r.Sum), err
			}
			s, err := str.Get()
			return "up=" + s, err
		})
	h := newHarness(t, reg)
	h.start("inst-mixed-string", "MixedStringOrch", "")
	if st := h.wait("inst-mixed-string"); st.Output != "sum=12" && st.Output != "up=RACE" {
		t.Fatalf("status %v output %q failure %q; want sum=12 or up=RACE", st.Status, st.Output, st.FailureMessage())
	}
}

// TestSampleVersioningStartLatestVsExact mirrors
// sample_versioning_start_latest_vs_exact_fs (the exact start is a client option here
// rather than a registry policy).
func TestSampleVersioningStartLatestVsExact(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("Versioned", func(*durable.OrchestrationContext, string) (string, error) { return "v1", nil }).
		MustAddOrchestrationVersion("Versioned", "2.0.0", func(*durable.OrchestrationContext, string) (string, error) { return "v2", nil })
	h := newHarness(t, reg)
	h.start("inst-vers-latest", "Versioned", "")
	h.wantCompleted("inst-vers-latest", "v2")
	if err := h.client.StartOrchestration(h.ctx, "inst-vers-exact", "Versioned", "", durable.WithVersion("1.0.0")); err != nil {
		t.Fatal(err)
	}
	h.wantCompleted("inst-vers-exact", "v1")
}

// TestSampleVersioningSubOrchestrationExplicitVsPolicy mirrors
// sample_versioning_sub_orchestration_explicit_vs_policy_fs.
func TestSampleVersioningSubOrchestrationExplicitVsPolicy(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("Child", func(*durable.OrchestrationContext, string) (string, error) { return "c1", nil }).
		MustAddOrchestrationVersion("Child", "2.0.0", func(*durable.OrchestrationContext, string) (string, error) { return "c2", nil }).
		MustAddOrchestration("ParentVers", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			a, err := ctx.ScheduleSubOrchestration("Child", "exp", durable.WithVersion("1.0.0")).Get()
			if err != nil {
				return "", err
			}
			b, err := ctx.ScheduleSubOrchestration("Child", "pol").Get()
			return a + "-" + b, err
		})
	h := newHarness(t, reg)
	h.start("inst-sub-vers", "ParentVers", "")
	h.wantCompleted("inst-sub-vers", "c1-c2")
}

// TestSampleVersioningContinueAsNewUpgrade mirrors
// sample_versioning_continue_as_new_upgrade_fs: a continue-as-new without a version
// moves to the latest registered one.
func TestSampleVersioningContinueAsNewUpgrade(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("LongRunner", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			ctx.ContinueAsNew("v1:" + input)
			return "", nil
		}).
		MustAddOrchestrationVersion("LongRunner", "2.0.0", func(_ *durable.OrchestrationContext, input string) (string, error) {
			return "upgraded:" + input, nil
		})
	h := newHarness(t, reg)
	if err := h.client.StartOrchestration(h.ctx, "inst-can-upgrade", "LongRunner", "state", durable.WithVersion("1.0.0")); err != nil {
		t.Fatal(err)
	}
	h.wantCompleted("inst-can-upgrade", "upgraded:v1:state")
	h.wantExecutions("inst-can-upgrade", 1, 2)
	if !hasEvent(h.execHistory("inst-can-upgrade", 1), func(k duroxide.EventKind) bool {
		_, ok := k.(duroxide.OrchestrationContinuedAsNewEvent)
		return ok
	}) {
		t.Error("execution 1 has no OrchestrationContinuedAsNew")
	}
	started, _ := h.execHistory("inst-can-upgrade", 2)[0].Kind.(duroxide.OrchestrationStartedEvent)
	if started.Input != "v1:state" || started.Version != "2.0.0" {
		t.Errorf("execution 2 started with input %q version %q, want v1:state at 2.0.0", started.Input, started.Version)
	}
}

// TestSampleCancellationParentCascadesToChildren mirrors
// sample_cancellation_parent_cascades_to_children_fs.
func TestSampleCancellationParentCascadesToChildren(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("ChildSample", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			_, _ = ctx.WaitForEvent("Go").Get()
			return "done", nil
		}).
		MustAddOrchestration("ParentSample", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			if _, err := ctx.ScheduleSubOrchestration("ChildSample", "seed").Get(); err != nil {
				return "", err
			}
			return "parent_done", nil
		})
	h := newHarness(t, reg)
	h.start("inst-sample-cancel", "ParentSample", "")
	h.awaitEvent("inst-sample-cancel::sub::2", "ExternalSubscribed")
	h.cancel("inst-sample-cancel", "user_request")
	h.wantCancelled("inst-sample-cancel", "user_request")
	h.wantCancelled("inst-sample-cancel::sub::2", "parent canceled")
}

// TestSampleBasicErrorHandling mirrors sample_basic_error_handling_fs.
func TestSampleBasicErrorHandling(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("ValidateInput", func(_ *durable.ActivityContext, in string) (string, error) {
			if in == "" {
				return "", errors.New("Input cannot be empty")
			}
			return "Valid: " + in, nil
		}).
		MustAddOrchestration("BasicErrorHandling", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			return ctx.ScheduleActivity("ValidateInput", input).Get()
		})
	h := newHarness(t, reg)
	h.start("inst-basic-error-1", "BasicErrorHandling", "test")
	h.wantCompleted("inst-basic-error-1", "Valid: test")
	h.start("inst-basic-error-2", "BasicErrorHandling", "")
	h.wantFailed("inst-basic-error-2", "Input cannot be empty")
}

// TestSampleNestedFunctionErrorHandling mirrors sample_nested_function_error_handling_fs.
func TestSampleNestedFunctionErrorHandling(t *testing.T) {
	t.Parallel()
	processAndFormat := func(ctx *durable.OrchestrationContext, data string) (string, error) {
		processed, err := ctx.ScheduleActivity("ProcessData", data).Get()
		if err != nil {
			return "", err
		}
		return ctx.ScheduleActivity("FormatOutput", processed).Get()
	}
	reg := durable.NewRegistry().
		MustAddActivity("ProcessData", func(_ *durable.ActivityContext, in string) (string, error) {
			if strings.Contains(in, "error") {
				return "", errors.New("Processing failed")
			}
			return "Processed: " + in, nil
		}).
		MustAddActivity("FormatOutput", func(_ *durable.ActivityContext, in string) (string, error) { return "Final: " + in, nil }).
		MustAddOrchestration("NestedErrorHandling", processAndFormat)
	h := newHarness(t, reg)
	h.start("inst-nested-error-1", "NestedErrorHandling", "test")
	h.wantCompleted("inst-nested-error-1", "Final: Processed: test")
	h.start("inst-nested-error-2", "NestedErrorHandling", "error")
	h.wantFailed("inst-nested-error-2", "Processing failed")
}

// TestSampleErrorRecovery mirrors sample_error_recovery_fs.
func TestSampleErrorRecovery(t *testing.T) {
	t.Parallel()
	logged := make(chan string, 4)
	reg := durable.NewRegistry().
		MustAddActivity("ProcessData", failOn("error", "Processing failed", "Processed: error-free")).
		MustAddActivity("LogError", func(_ *durable.ActivityContext, in string) (string, error) {
			logged <- in
			return "Logged: " + in, nil
		}).
		MustAddOrchestration("ErrorRecovery", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			r, err := ctx.ScheduleActivity("ProcessData", input).Get()
			if err == nil {
				return r, nil
			}
			_, _ = ctx.ScheduleActivity("LogError", err.Error()).Get()
			return "", fmt.Errorf("Failed to process '%s': %v", input, err)
		})
	h := newHarness(t, reg)
	h.start("inst-recovery-2", "ErrorRecovery", "error")
	h.wantFailed("inst-recovery-2", "Failed to process 'error': Processing failed")
	var got []string
	for len(logged) > 0 {
		got = append(got, <-logged)
	}
	if !reflect.DeepEqual(got, []string{"Processing failed"}) {
		t.Errorf("LogError saw %q, want the activity's error message once", got)
	}
}

// constActivity returns an activity that always answers out.
func constActivity(out string) durable.ActivityFunc {
	return func(*durable.ActivityContext, string) (string, error) { return out, nil }
}

// failOn returns an activity that fails with msg when its input is (or contains) bad
// and answers ok otherwise.
func failOn(bad, msg, ok string) durable.ActivityFunc {
	return func(_ *durable.ActivityContext, in string) (string, error) {
		if strings.Contains(in, bad) {
			return "", errors.New(msg)
		}
		return ok, nil
	}
}

// TestSampleHeterogeneousWorkersWithTags mirrors sample_heterogeneous_workers_with_tags.
func TestSampleHeterogeneousWorkersWithTags(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Render", func(_ *durable.ActivityContext, in string) (string, error) { return "rendered:" + in, nil }).
		MustAddActivity("Encode", func(_ *durable.ActivityContext, in string) (string, error) { return "encoded:" + in, nil }).
		MustAddActivity("Upload", func(_ *durable.ActivityContext, in string) (string, error) { return "uploaded:" + in, nil }).
		MustAddOrchestration("VideoPipeline", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			rendered, err := ctx.ScheduleActivity("Render", "frame42", durable.WithTag("gpu")).Get()
			if err != nil {
				return "", err
			}
			encoded, err := ctx.ScheduleActivity("Encode", rendered, durable.WithTag("cpu")).Get()
			if err != nil {
				return "", err
			}
			return ctx.ScheduleActivity("Upload", encoded).Get()
		})
	h := newHarnessWith(t, reg, durable.Options{WorkerTagFilter: duroxide.DefaultAndTags("gpu", "cpu")})
	h.start("video-1", "VideoPipeline", "")
	h.wantCompleted("video-1", "uploaded:encoded:rendered:frame42")
	var tags []string
	for _, e := range h.history("video-1") {
		if k, ok := e.Kind.(duroxide.ActivityScheduledEvent); ok {
			tag := "<none>"
			if k.Tag != nil {
				tag = *k.Tag
			}
			tags = append(tags, tag)
		}
	}
	if strings.Join(tags, ",") != "gpu,cpu,<none>" {
		t.Errorf("recorded tags %v, want gpu, cpu, none", tags)
	}
}

// TestSampleStarvationSafeTaggedActivity mirrors sample_starvation_safe_tagged_activity:
// no worker serves "gpu", so the timer wins and the fallback runs.
func TestSampleStarvationSafeTaggedActivity(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("GpuInference", func(_ *durable.ActivityContext, in string) (string, error) { return "inference:" + in, nil }).
		MustAddActivity("CpuFallback", func(_ *durable.ActivityContext, in string) (string, error) { return "cpu_fallback:" + in, nil }).
		MustAddOrchestration("InferenceWithFallback", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			gpu := ctx.ScheduleActivity("GpuInference", input, durable.WithTag("gpu"))
			if ctx.Select(gpu, ctx.Timer(200*msec)) == 0 {
				return gpu.Get()
			}
			return ctx.ScheduleActivity("CpuFallback", input).Get()
		})
	h := newHarness(t, reg)
	h.start("infer-1", "InferenceWithFallback", "model-v3")
	h.wantCompleted("infer-1", "cpu_fallback:model-v3")
}

// TestSampleDualRuntimeTagCooperation mirrors sample_dual_runtime_tag_cooperation: one
// runtime serves untagged activities, another only "gpu" ones, on one store.
func TestSampleDualRuntimeTagCooperation(t *testing.T) {
	t.Parallel()
	gpuWorkers := make(chan string, 4)
	reg := func() *durable.Registry {
		return durable.NewRegistry().
			MustAddActivity("PreProcess", func(_ *durable.ActivityContext, in string) (string, error) { return "preprocessed:" + in, nil }).
			MustAddActivity("GpuTrain", func(ctx *durable.ActivityContext, in string) (string, error) {
				gpuWorkers <- ctx.WorkerID()
				return "trained:" + in, nil
			}).
			MustAddActivity("SaveModel", func(_ *durable.ActivityContext, in string) (string, error) { return "saved:" + in, nil }).
			MustAddOrchestration("MLPipeline", func(ctx *durable.OrchestrationContext, input string) (string, error) {
				pre, err := ctx.ScheduleActivity("PreProcess", input).Get()
				if err != nil {
					return "", err
				}
				model, err := ctx.ScheduleActivity("GpuTrain", pre, durable.WithTag("gpu")).Get()
				if err != nil {
					return "", err
				}
				return ctx.ScheduleActivity("SaveModel", model).Get()
			})
	}
	h := newHarness(t, reg())
	gpu, err := durable.NewRuntime(h.p, reg(), durable.Options{WorkerTagFilter: duroxide.TagsOnly("gpu"), WorkerNodeID: "gpu-node"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdownRuntime(t, gpu) })
	h.start("ml-1", "MLPipeline", "data")
	h.wantCompleted("ml-1", "saved:trained:preprocessed:data")
	if w := <-gpuWorkers; !strings.Contains(w, "gpu-node") {
		t.Errorf("GpuTrain ran on worker %q, want the gpu runtime", w)
	}
}

// awaitKV polls the instance's KV store until key is set (duroxide's client
// wait_for_kv_value) and returns its value.
func (h *harness) awaitKV(instance, key string) string {
	h.t.Helper()
	var v string
	durabletest.Eventually(h.t, fmt.Sprintf("%s: KV key %q set", instance, key), func() (bool, error) {
		got, ok, err := h.client.KVValue(h.ctx, instance, key)
		v = got
		return ok, err
	})
	return v
}

// TestSampleKVRequestResponse mirrors sample_kv_request_response: a server answers
// requests (external events) through its KV store, which clients read while it runs.
func TestSampleKVRequestResponse(t *testing.T) {
	t.Parallel()
	type request struct {
		OpID    string `json:"op_id"`
		Command string `json:"command"`
	}
	reg := durable.NewRegistry().
		MustAddActivity("ProcessCommand", func(_ *durable.ActivityContext, in string) (string, error) {
			r := []rune(in)
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
			return string(r), nil
		}).
		MustAddOrchestration("RequestServer", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("status", "ready")
			for i := 0; i < 3; i++ {
				req, err := durable.WaitForEvent[request](ctx, "request").Get()
				if err != nil {
					return "", err
				}
				ctx.SetValue("status", "processing")
				result, err := ctx.ScheduleActivity("ProcessCommand", req.Command).Get()
				if err != nil {
					result = "error: " + err.Error()
				}
				ctx.SetValue("response:"+req.OpID, result)
				ctx.SetValue("status", "ready")
			}
			ctx.SetValue("status", "shutdown")
			return "served 3 requests", nil
		})
	h := newHarness(t, reg)
	h.start("req-resp-server", "RequestServer", "")
	if s := h.awaitKV("req-resp-server", "status"); s != "ready" {
		t.Fatalf("status %q, want ready", s)
	}
	for _, r := range []request{{"op-1", "hello"}, {"op-2", "world"}, {"op-3", "rust"}} {
		data, _ := json.Marshal(r)
		h.raise("req-resp-server", "request", string(data))
		if got := h.awaitKV("req-resp-server", "response:"+r.OpID); got != map[string]string{"hello": "olleh", "world": "dlrow", "rust": "tsur"}[r.Command] {
			t.Errorf("response to %s = %q", r.OpID, got)
		}
	}
	h.wantCompleted("req-resp-server", "served 3 requests")
	h.wantKV("req-resp-server", "status", "shutdown", true)
}

// TestSampleKVCrossOrchestrationRead mirrors sample_kv_cross_orchestration_read: one
// orchestration reads another's KV store through ValueFromInstance.
func TestSampleKVCrossOrchestrationRead(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("ConfigHolder", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("config", `{"threshold":7}`)
			_, err := ctx.WaitForEvent("stop").Get()
			return "stopped", err
		}).
		MustAddOrchestration("Reader", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			v, err := ctx.ValueFromInstance("config-holder", "config").Get()
			if err != nil || v == nil {
				return "missing", err
			}
			return *v, nil
		})
	h := newHarness(t, reg)
	h.start("config-holder", "ConfigHolder", "")
	h.awaitKV("config-holder", "config")
	h.start("config-reader", "Reader", "")
	h.wantCompleted("config-reader", `{"threshold":7}`)
	h.awaitEvent("config-holder", "ExternalSubscribed")
	h.raise("config-holder", "stop", "")
	h.wantCompleted("config-holder", "stopped")
}

// TestSampleKVReadModifyWriteCounter mirrors sample_kv_read_modify_write_counter.
func TestSampleKVReadModifyWriteCounter(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("Counter", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			for i := 0; i < 3; i++ {
				if _, err := ctx.WaitForEvent("inc").Get(); err != nil {
					return "", err
				}
				n, _, err := durable.Value[int](ctx, "count")
				if err != nil {
					return "", err
				}
				durable.SetValue(ctx, "count", n+1)
			}
			n, _, err := durable.Value[int](ctx, "count")
			return fmt.Sprint(n), err
		})
	h := newHarness(t, reg)
	h.start("kv-counter", "Counter", "")
	for i := 1; i <= 3; i++ {
		h.awaitEventsOf("kv-counter", "ExternalSubscribed", i)
		h.raise("kv-counter", "inc", "")
	}
	h.wantCompleted("kv-counter", "3")
	h.wantKV("kv-counter", "count", "3", true)
}

// TestSampleSelfPruningEternalOrchestration mirrors
// sample_self_pruning_eternal_orchestration: an eternal orchestration prunes its own
// old executions from an activity, through the activity's client.
func TestSampleSelfPruningEternalOrchestration(t *testing.T) {
	t.Parallel()
	type state struct {
		BatchNum     int `json:"batch_num"`
		TotalBatches int `json:"total_batches"`
	}
	var pruned atomic.Uint64
	reg := durable.NewRegistry().
		MustAddActivity("ProcessBatch", func(_ *durable.ActivityContext, in string) (string, error) { return "Processed batch " + in, nil }).
		MustAddActivity("PruneSelf", func(ctx *durable.ActivityContext, _ string) (string, error) {
			res, err := ctx.Client().Admin().PruneExecutions(ctx, ctx.InstanceID(), duroxide.PruneOptions{KeepLast: 1})
			if err != nil {
				return "", err
			}
			pruned.Add(res.ExecutionsDeleted)
			return fmt.Sprintf("Pruned %d executions", res.ExecutionsDeleted), nil
		}).
		MustAddOrchestration("SelfPruningOrch", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			s := state{TotalBatches: 5}
			_ = json.Unmarshal([]byte(input), &s)
			if _, err := ctx.ScheduleActivity("ProcessBatch", fmt.Sprint(s.BatchNum)).Get(); err != nil {
				return "", err
			}
			if _, err := ctx.ScheduleActivity("PruneSelf", "").Get(); err != nil {
				return "", err
			}
			if s.BatchNum >= s.TotalBatches-1 {
				return fmt.Sprintf("Completed %d batches", s.TotalBatches), nil
			}
			s.BatchNum++
			durable.ContinueAsNew(ctx, s)
			return "", nil
		})
	h := newHarness(t, reg)
	h.start("self-pruning", "SelfPruningOrch", "")
	h.wantCompleted("self-pruning", "Completed 5 batches")
	h.wantExecutions("self-pruning", 5)
	if pruned.Load() != 4 {
		t.Errorf("%d executions pruned in all, want the 4 earlier ones", pruned.Load())
	}
}
