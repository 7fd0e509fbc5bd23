package durable_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// More ports of duroxide's tests/queue_event_tests.rs and e2e_samples.rs.

// TestComplexMultiTurnPersistentAndPositionalWithActivities mirrors
// complex_multi_turn_persistent_and_positional_with_activities: positional
// waits, queued events and activities interleaved over many turns; a
// positional wait that loses to a timer is recorded as cancelled. Queued
// events wait in their queue until dequeued, so they are enqueued up front.
func TestComplexMultiTurnPersistentAndPositionalWithActivities(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, durable.NewRegistry().
		MustAddActivity("Echo", prefixActivity("echo")).
		MustAddOrchestration("ComplexOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			var out []string
			step := func(s string, err error) error {
				out = append(out, s)
				return err
			}
			pos1, err := ctx.WaitForEvent("PosFirst").Get()
			if err = step("pos1:"+pos1, err); err != nil {
				return "", err
			}
			for _, s := range []struct{ act, queue, label string }{{"step2", "PersA", "pers1"}, {"step3", "", ""}} {
				r, err := ctx.ScheduleActivity("Echo", s.act).Get()
				if err = step(r, err); err != nil {
					return "", err
				}
				if s.queue != "" {
					d, err := ctx.Dequeue(s.queue).Get()
					if err = step(s.label+":"+d, err); err != nil {
						return "", err
					}
				}
			}
			doomed := ctx.WaitForEvent("PosDoomed")
			if ctx.Select(doomed, ctx.Timer(50*time.Millisecond)) == 0 {
				d, _ := doomed.Get()
				out = append(out, "pos_doomed_unexpected:"+d)
			} else {
				out = append(out, "pos_cancelled")
			}
			d, err := ctx.Dequeue("PersB").Get()
			if err = step("pers2:"+d, err); err != nil {
				return "", err
			}
			r, err := ctx.ScheduleActivity("Echo", "step4").Get()
			if err = step(r, err); err != nil {
				return "", err
			}
			d, err = ctx.Dequeue("PersC").Get()
			if err = step("pers3:"+d, err); err != nil {
				return "", err
			}
			return strings.Join(out, ","), nil
		}))
	const id = "inst-complex-multi"
	if err := env.Client.StartOrchestration(t.Context(), id, "ComplexOrch", ""); err != nil {
		t.Fatal(err)
	}
	env.WaitForEventSubscription(t, id, "PosFirst")
	if err := env.Client.RaiseEvent(t.Context(), id, "PosFirst", "alpha"); err != nil {
		t.Fatal(err)
	}
	for _, q := range [][2]string{{"PersA", "beta"}, {"PersB", "gamma"}, {"PersC", "delta"}} {
		if err := env.Client.EnqueueEvent(t.Context(), id, q[0], q[1]); err != nil {
			t.Fatal(err)
		}
	}
	mustComplete(t, env.Wait(t, id), "pos1:alpha,echo:step2,pers1:beta,echo:step3,pos_cancelled,pers2:gamma,echo:step4,pers3:delta")
	if !hasEvent(read(t, env, id), func(k duroxide.EventKind) bool {
		c, ok := k.(duroxide.ExternalSubscribedCancelledEvent)
		return ok && c.Reason == "dropped_future"
	}) {
		t.Fatalf("no ExternalSubscribedCancelled(dropped_future) for the doomed wait: %v", kindsOf(read(t, env, id)))
	}
}

// TestSampleMixedStringAndTypedTypedOrch mirrors sample_mixed_string_and_typed_typed_orch_fs:
// a typed orchestration racing a typed activity against a string one.
func TestSampleMixedStringAndTypedTypedOrch(t *testing.T) {
	t.Parallel()
	type addReq struct{ A, B int }
	type addRes struct{ Sum int }
	env := durabletest.Start(t, durable.NewRegistry().
		MustAddActivity("Upper", func(_ *durable.ActivityContext, in string) (string, error) { return strings.ToUpper(in), nil }).
		MustAddActivity("Add", durable.Activity(func(_ *durable.ActivityContext, r addReq) (addRes, error) { return addRes{r.A + r.B}, nil })).
		MustAddOrchestration("MixedTypedOrch", durable.Orchestration(func(ctx *durable.OrchestrationContext, req addReq) (string, error) {
			typed := durable.Go(ctx, func(ctx *durable.OrchestrationContext) (string, error) {
				r, err := durable.ScheduleActivity[addRes](ctx, "Add", req).Get()
				return "sum=" + strconv.Itoa(r.Sum), err
			})
			str := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
				r, err := ctx.ScheduleActivity("Upper", "hello").Get()
				return "up=" + r, err
			})
			return []durable.Future[string]{typed, str}[ctx.Select(typed, str)].Get()
		})))
	if err := env.Client.StartOrchestrationJSON(t.Context(), "inst-mixed-typed", "MixedTypedOrch", addReq{1, 2}); err != nil {
		t.Fatal(err)
	}
	var out string
	if st := env.Wait(t, "inst-mixed-typed"); st.DecodeOutput(&out) != nil || (out != "sum=3" && out != "up=HELLO") {
		t.Fatalf("status %v output %q, want sum=3 or up=HELLO", st.Status, st.Output)
	}
}

// TestSampleConfigHotReloadPersistentEvents mirrors sample_config_hot_reload_persistent_events_fs:
// queued config updates are applied in FIFO order, and one enqueued while a
// cycle runs is drained after that cycle.
func TestSampleConfigHotReloadPersistentEvents(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, durable.NewRegistry().
		MustAddActivity("ApplyConfig", prefixActivity("applied")).
		MustAddOrchestration("ConfigHotReload", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			var log []string
			drain := func() error {
				for {
					upd := ctx.Dequeue("ConfigUpdate")
					if ctx.Select(upd, ctx.Timer(100*time.Millisecond)) == 1 {
						return nil
					}
					cfg, err := upd.Get()
					if err != nil {
						return err
					}
					r, err := ctx.ScheduleActivity("ApplyConfig", cfg).Get()
					if err != nil {
						return err
					}
					log = append(log, r)
				}
			}
			for cycle := range 3 {
				if err := drain(); err != nil {
					return "", err
				}
				if _, err := ctx.Timer(time.Second).Get(); err != nil {
					return "", err
				}
				if _, err := ctx.ScheduleActivity("ApplyConfig", "cycle_"+strconv.Itoa(cycle)).Get(); err != nil {
					return "", err
				}
				log = append(log, "cycle:"+strconv.Itoa(cycle))
			}
			if err := drain(); err != nil {
				return "", err
			}
			return strings.Join(log, ","), nil
		}))
	const id = "inst-hot-reload"
	if err := env.Client.StartOrchestration(t.Context(), id, "ConfigHotReload", ""); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"v1", "v2"} {
		if err := env.Client.EnqueueEvent(t.Context(), id, "ConfigUpdate", v); err != nil {
			t.Fatal(err)
		}
	}
	// v3 arrives once cycle 0's activity is scheduled: mid-flight.
	durabletest.Eventually(t, "cycle 0 scheduling its activity", func() (bool, error) {
		return hasEvent(read(t, env, id), func(k duroxide.EventKind) bool {
			a, ok := k.(duroxide.ActivityScheduledEvent)
			return ok && a.Input == "cycle_0"
		}), nil
	})
	if err := env.Client.EnqueueEvent(t.Context(), id, "ConfigUpdate", "v3"); err != nil {
		t.Fatal(err)
	}
	st := env.Wait(t, id)
	if st.Status != durable.StatusCompleted {
		t.Fatalf("status %v: %s", st.Status, st.FailureMessage())
	}
	pos := map[string]int{}
	for i, e := range strings.Split(st.Output, ",") {
		pos[e] = i + 1
	}
	v1, v2, v3, c0 := pos["applied:v1"], pos["applied:v2"], pos["applied:v3"], pos["cycle:0"]
	if v1 == 0 || v2 == 0 || v3 == 0 || c0 == 0 || !(v1 < v2 && v2 < v3 && v3 > c0) {
		t.Fatalf("output %q: want v1, v2, v3 in order and v3 after cycle:0", st.Output)
	}
}
