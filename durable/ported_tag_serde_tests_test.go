package durable_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/tag_serde_tests.rs: activity tags on the wire
// (the duroxide package's codec, serde's twin) and through the runtime.

// eventJSON is an event of kind as the codec writes it.
func eventJSON(t *testing.T, kind duroxide.EventKind) string {
	t.Helper()
	b, err := json.Marshal(duroxide.Event{EventID: 2, InstanceID: "i", ExecutionID: 1, Kind: kind})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func decodeEvent(t *testing.T, s string) duroxide.EventKind {
	t.Helper()
	var e duroxide.Event
	if err := json.Unmarshal([]byte(s), &e); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return e.Kind
}

// eventEnvelope is the event fields around a kind's JSON fields, for
// hand-written older events.
const eventEnvelope = `{"event_id":2,"source_event_id":null,"instance_id":"i","execution_id":1,"timestamp_ms":0,"duroxide_version":"0.1.0",`

// TestTagSerde mirrors the serde tests of tag_serde_tests.rs, one subtest each.
func TestTagSerde(t *testing.T) {
	t.Parallel()
	gpu := "gpu"
	t.Run("activity_scheduled_with_tag_roundtrips", func(t *testing.T) {
		k := decodeEvent(t, eventJSON(t, duroxide.ActivityScheduledEvent{Name: "Build", Input: "{}", Tag: &gpu}))
		if a, ok := k.(duroxide.ActivityScheduledEvent); !ok || a.Tag == nil || *a.Tag != "gpu" {
			t.Fatalf("decoded %#v", k)
		}
	})
	t.Run("activity_scheduled_none_tag_omitted_in_json", func(t *testing.T) {
		if s := eventJSON(t, duroxide.ActivityScheduledEvent{Name: "Build", Input: "{}"}); strings.Contains(s, `"tag"`) {
			t.Fatalf("no tag written as a key: %s", s)
		}
	})
	t.Run("activity_scheduled_missing_tag_deserializes_as_none", func(t *testing.T) {
		k := decodeEvent(t, eventEnvelope+`"type":"ActivityScheduled","name":"Build","input":"{}"}`)
		if a, ok := k.(duroxide.ActivityScheduledEvent); !ok || a.Tag != nil {
			t.Fatalf("decoded %#v", k)
		}
	})
	t.Run("work_item_activity_execute_with_tag_roundtrips", func(t *testing.T) {
		item := duroxide.ActivityExecute{Instance: "i", ExecutionID: 1, ID: 1, Name: "Build", Input: "{}", Tag: &gpu}
		b, err := duroxide.MarshalWorkItem(item)
		if err != nil {
			t.Fatal(err)
		}
		back, err := duroxide.UnmarshalWorkItem(b)
		if a, ok := back.(duroxide.ActivityExecute); err != nil || !ok || a.Tag == nil || *a.Tag != "gpu" || a.Name != "Build" || a.ID != 1 {
			t.Fatalf("round trip of %s: %#v, %v", b, back, err)
		}
	})
	t.Run("work_item_activity_execute_none_tag_omitted_in_json", func(t *testing.T) {
		b, err := duroxide.MarshalWorkItem(duroxide.ActivityExecute{Instance: "i", ExecutionID: 1, ID: 1, Name: "Build", Input: "{}"})
		if err != nil || strings.Contains(string(b), `"tag"`) {
			t.Fatalf("%s (%v): no tag must be no key", b, err)
		}
	})
	t.Run("work_item_activity_execute_missing_tag_deserializes_as_none", func(t *testing.T) {
		back, err := duroxide.UnmarshalWorkItem([]byte(`{"ActivityExecute":{"instance":"i","execution_id":1,"id":1,"name":"Build","input":"{}"}}`))
		if a, ok := back.(duroxide.ActivityExecute); err != nil || !ok || a.Tag != nil {
			t.Fatalf("decoded %#v, %v", back, err)
		}
	})
	t.Run("kv_event_kinds_roundtrip", func(t *testing.T) {
		for _, k := range []duroxide.EventKind{
			duroxide.KeyValueSetEvent{Key: "my_key", Value: "my_value"},
			duroxide.KeyValueClearedEvent{Key: "clear_me"},
			duroxide.KeyValuesClearedEvent{},
		} {
			if back := decodeEvent(t, eventJSON(t, k)); back != k {
				t.Errorf("%#v came back as %#v", k, back)
			}
		}
	})
	t.Run("kv_event_kinds_backward_compat", func(t *testing.T) {
		for s, want := range map[string]duroxide.EventKind{
			`"type":"KeyValueSet","key":"k","value":"v"}`: duroxide.KeyValueSetEvent{Key: "k", Value: "v"},
			`"type":"KeyValueCleared","key":"k"}`:         duroxide.KeyValueClearedEvent{Key: "k"},
			`"type":"KeyValuesCleared"}`:                  duroxide.KeyValuesClearedEvent{},
		} {
			if k := decodeEvent(t, eventEnvelope+s); k != want {
				t.Errorf("%s decoded as %#v, want %#v", s, k, want)
			}
		}
	})
}

// tagEnv starts an Env whose worker takes the activities filter accepts.
func tagEnv(t *testing.T, reg *durable.Registry, filter duroxide.TagFilter) *durabletest.Env {
	t.Helper()
	return durabletest.Start(t, reg, durabletest.WithOptions(durable.Options{LongPollTimeout: 100 * time.Millisecond, WorkerTagFilter: filter}))
}

// TestTaggedActivitiesE2E mirrors the end-to-end tests of tag_serde_tests.rs
// on one worker, one subtest each.
func TestTaggedActivitiesE2E(t *testing.T) {
	t.Parallel()
	compute := prefixActivity("computed")
	echoTag := func(ctx *durable.ActivityContext, _ string) (string, error) {
		if tag, ok := ctx.Tag(); ok {
			return tag, nil
		}
		return "none", nil
	}
	cases := []struct {
		name   string
		filter duroxide.TagFilter
		orch   durable.OrchestrationFunc
		input  string
		want   string
		check  func(t *testing.T, env *durabletest.Env, instance string)
	}{
		{"e2e_tagged_activity_runs_on_matching_worker", duroxide.TagsOnly("gpu"), func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			r, err := ctx.ScheduleActivity("Compute", "gpu-work", durable.WithTag("gpu")).Get()
			if err != nil {
				return "", err
			}
			untagged := ctx.ScheduleActivity("Compute", "default-work")
			if ctx.Select(untagged, ctx.Timer(500*msec)) == 0 {
				return r + "|untagged_completed", nil
			}
			return r + "|untagged_timed_out", nil
		}, "", "computed:gpu-work|untagged_timed_out", nil},
		{"e2e_with_tag_persists_tag_in_event_history", duroxide.DefaultAndTags("gpu"), func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleActivity("Compute", "frame1", durable.WithTag("gpu")).Get()
		}, "", "computed:frame1", func(t *testing.T, env *durabletest.Env, instance string) {
			if !hasEvent(read(t, env, instance), func(k duroxide.EventKind) bool {
				a, ok := k.(duroxide.ActivityScheduledEvent)
				return ok && a.Tag != nil && *a.Tag == "gpu"
			}) {
				t.Errorf("no ActivityScheduled tagged gpu in %v", kindsOf(read(t, env, instance)))
			}
		}},
		{"e2e_tagged_activity_starvation_times_out", duroxide.DefaultOnly(), func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			act := ctx.ScheduleActivity("Compute", "frame1", durable.WithTag("gpu"))
			if ctx.Select(act, ctx.Timer(500*msec)) == 0 {
				r, err := act.Get()
				return "completed:" + r, err
			}
			return "timeout:no_gpu_worker", nil
		}, "", "timeout:no_gpu_worker", nil},
		{"e2e_tag_at_boundary_succeeds", duroxide.AnyTag(), func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleActivity("Compute", "data", durable.WithTag(strings.Repeat("x", 256))).Get()
		}, "", "computed:data", nil},
		{"e2e_activity_context_tag_visible_in_handler", duroxide.DefaultAndTags("gpu"), func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleActivity("EchoTag", "", durable.WithTag("gpu")).Get()
		}, "", "gpu", nil},
		{"e2e_activity_context_tag_none_for_untagged", duroxide.DefaultOnly(), func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleActivity("EchoTag", "").Get()
		}, "", "none", nil},
		{"e2e_tag_routing_survives_continue_as_new", duroxide.DefaultAndTags("gpu"), func(ctx *durable.OrchestrationContext, in string) (string, error) {
			if in == "0" {
				ctx.ContinueAsNew("1")
				return "", nil
			}
			return ctx.ScheduleActivity("Compute", "iter"+in, durable.WithTag("gpu")).Get()
		}, "0", "computed:iter1", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			reg := durable.NewRegistry().MustAddActivity("Compute", compute).MustAddActivity("EchoTag", echoTag).MustAddOrchestration("TagTest", c.orch)
			env := tagEnv(t, reg, c.filter)
			mustComplete(t, env.StartAndWait(t, "tag-"+c.name, "TagTest", c.input), c.want)
			if c.check != nil {
				c.check(t, env, "tag-"+c.name)
			}
		})
	}
}

// TestOversizedTagFailsOrchestration mirrors e2e_oversized_tag_fails_orchestration.
func TestOversizedTagFailsOrchestration(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddActivity("Work", prefixActivity("done")).
		MustAddOrchestration("OversizedTagTest", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleActivity("Work", "data", durable.WithTag(strings.Repeat("x", 257))).Get()
		})
	env := tagEnv(t, reg, duroxide.AnyTag())
	st := env.StartAndWait(t, "oversized-1", "OversizedTagTest", "")
	if msg := st.FailureMessage(); st.Status != durable.StatusFailed || !strings.Contains(msg, "tag size") || !strings.Contains(msg, "exceeds limit") {
		t.Fatalf("status %v %q, want a failure naming the tag size limit", st.Status, msg)
	}
}

// TestTwoWorkersDifferentTagsNoOverlap mirrors e2e_two_workers_different_tags_no_overlap:
// a default-only runtime and a gpu-only worker split one orchestration's
// activities between them.
func TestTwoWorkersDifferentTagsNoOverlap(t *testing.T) {
	t.Parallel()
	ran := make(chan string, 4)
	worker := func(pool string) durable.ActivityFunc {
		return func(_ *durable.ActivityContext, in string) (string, error) {
			ran <- pool + ":" + in
			return "done:" + in, nil
		}
	}
	orch := func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		cpu, err := ctx.ScheduleActivity("Work", "cpu").Get()
		if err != nil {
			return "", err
		}
		g, err := ctx.ScheduleActivity("Work", "gpu", durable.WithTag("gpu")).Get()
		return cpu + "|" + g, err
	}
	env := tagEnv(t, durable.NewRegistry().MustAddActivity("Work", worker("default")).MustAddOrchestration("TwoPoolOrch", orch), duroxide.DefaultOnly())
	env.NewRuntime(t, durable.NewRegistry().MustAddActivity("Work", worker("gpu")).MustAddOrchestration("TwoPoolOrch", orch),
		durable.Options{LongPollTimeout: 100 * time.Millisecond, WorkerTagFilter: duroxide.TagsOnly("gpu")})
	mustComplete(t, env.StartAndWait(t, "two-pool-1", "TwoPoolOrch", ""), "done:cpu|done:gpu")
	close(ran)
	var got []string
	for r := range ran {
		got = append(got, r)
	}
	if strings.Join(got, ",") != "default:cpu,gpu:gpu" {
		t.Fatalf("ran %v, want cpu on the default worker and gpu on the gpu worker", got)
	}
}

// TestDroppedTaggedFutureTriggersCancellation mirrors
// e2e_dropped_tagged_future_triggers_cancellation.
func TestDroppedTaggedFutureTriggersCancellation(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddActivity("SlowGpu", untilCancelled).
		MustAddOrchestration("CancelTagOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			gpu := ctx.ScheduleActivity("SlowGpu", "data", durable.WithTag("gpu"))
			if ctx.Select(gpu, ctx.Timer(200*msec)) == 0 {
				r, err := gpu.Get()
				return "gpu_won:" + r, err
			}
			return "timeout_won", nil
		})
	env := tagEnv(t, reg, duroxide.DefaultAndTags("gpu"))
	mustComplete(t, env.StartAndWait(t, "cancel-tag-1", "CancelTagOrch", ""), "timeout_won")
	if n := countEvents(read(t, env, "cancel-tag-1"), "ActivityCancelRequested"); n != 1 {
		t.Fatalf("%d ActivityCancelRequested, want the tagged loser's", n)
	}
}
