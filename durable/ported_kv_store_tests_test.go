package durable_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// Ports of duroxide's tests/kv_store_tests.rs (instance key-value store). duroxide's
// limits: 100 keys per instance, 16 KiB per value.

const (
	maxKVKeys       = 100
	maxKVValueBytes = 16 * 1024
)

func (h *harness) wantKV(instance, key, value string, found bool) {
	h.t.Helper()
	v, ok, err := h.client.KVValue(h.ctx, instance, key)
	if err != nil || ok != found || v != value {
		h.t.Errorf("%s KV %q = %q, found %v (%v); want %q, found %v", instance, key, v, ok, err, value, found)
	}
}

func (h *harness) wantAllKV(instance string, want map[string]string) {
	h.t.Helper()
	got, err := h.client.KVAllValues(h.ctx, instance)
	if err != nil || !(len(got) == 0 && len(want) == 0 || reflect.DeepEqual(got, want)) {
		h.t.Errorf("%s KV = %v (%v), want %v", instance, got, err, want)
	}
}

// kvOrch registers one orchestration and runs it to completion with output out.
func kvOrch(t *testing.T, instance string, fn durable.OrchestrationFunc, out string) *harness {
	t.Helper()
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("KV", fn))
	h.start(instance, "KV", "")
	h.wantCompleted(instance, out)
	return h
}

// TestKVSetValueVisibleViaClient mirrors kv_set_value_visible_via_client.
func TestKVSetValueVisibleViaClient(t *testing.T) {
	t.Parallel()
	h := kvOrch(t, "kv-set", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetValue("greeting", "hello")
		return "done", nil
	}, "done")
	h.wantKV("kv-set", "greeting", "hello", true)
	if countEvents(h.history("kv-set"), "KeyValueSet") != 1 {
		t.Error("no KeyValueSet event in history")
	}
}

// TestKVGetMissingKeyReturnsNone mirrors kv_get_missing_key_returns_none.
func TestKVGetMissingKeyReturnsNone(t *testing.T) {
	t.Parallel()
	h := kvOrch(t, "kv-missing", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		_, ok := ctx.Value("nope")
		return fmt.Sprint(ok), nil
	}, "false")
	h.wantKV("kv-missing", "nope", "", false)
}

// TestKVSetMultipleValuesSameTurn mirrors kv_set_multiple_values_same_turn.
func TestKVSetMultipleValuesSameTurn(t *testing.T) {
	t.Parallel()
	h := kvOrch(t, "kv-multi", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetValue("a", "1")
		ctx.SetValue("b", "2")
		ctx.SetValue("c", "3")
		return "done", nil
	}, "done")
	h.wantAllKV("kv-multi", map[string]string{"a": "1", "b": "2", "c": "3"})
}

// TestKVOverwriteSameKey mirrors kv_overwrite_same_key.
func TestKVOverwriteSameKey(t *testing.T) {
	t.Parallel()
	h := kvOrch(t, "kv-overwrite", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetValue("k", "first")
		ctx.SetValue("k", "second")
		v, _ := ctx.Value("k")
		return v, nil
	}, "second")
	h.wantKV("kv-overwrite", "k", "second", true)
}

// TestKVClearSingleValue mirrors kv_clear_single_value.
func TestKVClearSingleValue(t *testing.T) {
	t.Parallel()
	h := kvOrch(t, "kv-clear", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetValue("keep", "1")
		ctx.SetValue("drop", "2")
		ctx.ClearValue("drop")
		return "done", nil
	}, "done")
	h.wantAllKV("kv-clear", map[string]string{"keep": "1"})
}

// TestKVClearAllValues mirrors kv_clear_all_values.
func TestKVClearAllValues(t *testing.T) {
	t.Parallel()
	h := kvOrch(t, "kv-clear-all", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetValue("a", "1")
		ctx.SetValue("b", "2")
		ctx.ClearAllValues()
		return fmt.Sprint(len(ctx.Values())), nil
	}, "0")
	h.wantAllKV("kv-clear-all", nil)
}

// TestKVPersistsAcrossTurns mirrors kv_persists_across_turns: a value set before an
// activity is read after it, from the replayed history.
func TestKVPersistsAcrossTurns(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Noop", constActivity("")).
		MustAddOrchestration("KV", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("counter", "1")
			if _, err := ctx.ScheduleActivity("Noop", "").Get(); err != nil {
				return "", err
			}
			v, ok := ctx.Value("counter")
			return fmt.Sprint(v, ok), nil
		})
	h := newHarness(t, reg)
	h.start("kv-turns", "KV", "")
	h.wantCompleted("kv-turns", "1true")
}

// TestKVTypedRoundTrip mirrors kv_typed_round_trip.
func TestKVTypedRoundTrip(t *testing.T) {
	t.Parallel()
	kvOrch(t, "kv-typed", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		durable.SetValue(ctx, "req", addReq{A: 4, B: 5})
		r, ok, err := durable.Value[addReq](ctx, "req")
		return fmt.Sprintf("%d%t", r.A+r.B, ok), err
	}, "9true")
}

// TestKVSurvivesContinueAsNew mirrors kv_survives_continue_as_new.
func TestKVSurvivesContinueAsNew(t *testing.T) {
	t.Parallel()
	h := kvOrch(t, "kv-can", func(ctx *durable.OrchestrationContext, input string) (string, error) {
		if input == "" {
			ctx.SetValue("carried", "yes")
			ctx.ContinueAsNew("second")
		}
		v, ok := ctx.Value("carried")
		return fmt.Sprint(input, ":", v, ok), nil
	}, "second:yestrue")
	h.wantKV("kv-can", "carried", "yes", true)
}

// TestKVGetValueFromInstance mirrors kv_get_value_from_instance (and the missing-key
// and unknown-instance variants): another instance's value through the system
// activity, nil when absent.
func TestKVGetValueFromInstance(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("Source", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("shared", "from-source")
			return "set", nil
		}).
		MustAddOrchestration("Reader", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			parts := strings.SplitN(input, "/", 2)
			v, err := ctx.ValueFromInstance(parts[0], parts[1]).Get()
			if err != nil || v == nil {
				return fmt.Sprint("none:", err), nil
			}
			return *v, nil
		})
	h := newHarness(t, reg)
	h.start("kv-source", "Source", "")
	h.wantCompleted("kv-source", "set")
	for input, want := range map[string]string{"kv-source/shared": "from-source", "kv-source/missing": "none:<nil>", "no-such-instance/shared": "none:<nil>"} {
		inst := "kv-reader-" + strings.ReplaceAll(input, "/", "-")
		h.start(inst, "Reader", input)
		h.wantCompleted(inst, want)
	}
}

// TestKVExceedingKeyLimitFailsOrchestration mirrors
// kv_exceeding_key_limit_fails_orchestration.
func TestKVExceedingKeyLimitFailsOrchestration(t *testing.T) {
	t.Parallel()
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("TooManyKeys", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		for i := 0; i <= maxKVKeys; i++ {
			ctx.SetValue(fmt.Sprint("key_", i), fmt.Sprint("val_", i))
		}
		return "done", nil
	}))
	h.start("kv-limit", "TooManyKeys", "")
	h.wantFailed("kv-limit", "KV key count")
}

// TestKVExceedingValueSizeLimitFailsOrchestration mirrors
// kv_exceeding_value_size_limit_fails_orchestration.
func TestKVExceedingValueSizeLimitFailsOrchestration(t *testing.T) {
	t.Parallel()
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("BigValue", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetValue("big", strings.Repeat("x", maxKVValueBytes+1))
		return "done", nil
	}))
	h.start("kv-big", "BigValue", "")
	st := h.wantFailed("kv-big", "KV value")
	if !strings.Contains(st.FailureMessage(), "exceeds limit") {
		t.Errorf("failure %q does not say the value exceeds the limit", st.FailureMessage())
	}
}

// TestKVAtKeyLimitSucceeds mirrors kv_at_key_limit_succeeds.
func TestKVAtKeyLimitSucceeds(t *testing.T) {
	t.Parallel()
	h := kvOrch(t, "kv-exact", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		for i := 0; i < maxKVKeys; i++ {
			ctx.SetValue(fmt.Sprint("key_", i), fmt.Sprint("val_", i))
		}
		return "done", nil
	}, "done")
	if all, err := h.client.KVAllValues(h.ctx, "kv-exact"); err != nil || len(all) != maxKVKeys {
		t.Errorf("%d keys stored (%v), want %d", len(all), err, maxKVKeys)
	}
}

// TestKVClearAllResetsKeyCount mirrors kv_clear_all_resets_key_count.
func TestKVClearAllResetsKeyCount(t *testing.T) {
	t.Parallel()
	kvOrch(t, "kv-reset-count", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		for i := 0; i < maxKVKeys; i++ {
			ctx.SetValue(fmt.Sprint("a_", i), "v")
		}
		ctx.ClearAllValues()
		for i := 0; i < maxKVKeys; i++ {
			ctx.SetValue(fmt.Sprint("b_", i), "v")
		}
		return "done", nil
	}, "done")
}

// TestKVAccessibleAfterFailure mirrors kv_accessible_after_failure.
func TestKVAccessibleAfterFailure(t *testing.T) {
	t.Parallel()
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("KV", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetValue("before_fail", "kept")
		return "", fmt.Errorf("deliberate")
	}))
	h.start("kv-fail", "KV", "")
	h.wantFailed("kv-fail", "deliberate")
	h.wantKV("kv-fail", "before_fail", "kept", true)
}

// TestKVDeleteInstanceRemovesAllKV mirrors kv_delete_instance_removes_all_kv.
func TestKVDeleteInstanceRemovesAllKV(t *testing.T) {
	t.Parallel()
	h := kvOrch(t, "kv-del", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetValue("a", "1")
		return "done", nil
	}, "done")
	if _, err := h.client.Admin().DeleteInstance(h.ctx, "kv-del", false); err != nil {
		t.Fatal(err)
	}
	h.wantKV("kv-del", "a", "", false)
}

// TestKVReadModifyWriteAcrossTurns mirrors kv_read_modify_write_across_turns.
func TestKVReadModifyWriteAcrossTurns(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Noop", constActivity("")).
		MustAddOrchestration("KV", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			for i := 0; i < 3; i++ {
				v, _ := ctx.Value("n")
				var n int
				fmt.Sscan(v, &n)
				ctx.SetValue("n", fmt.Sprint(n+1))
				if _, err := ctx.ScheduleActivity("Noop", "").Get(); err != nil {
					return "", err
				}
			}
			v, _ := ctx.Value("n")
			return v, nil
		})
	h := newHarness(t, reg)
	h.start("kv-rmw", "KV", "")
	h.wantCompleted("kv-rmw", "3")
	h.wantKV("kv-rmw", "n", "3", true)
}

// TestKVRmwAcrossCanBoundary mirrors kv_rmw_across_can_boundary.
func TestKVRmwAcrossCanBoundary(t *testing.T) {
	t.Parallel()
	h := kvOrch(t, "kv-rmw-can", func(ctx *durable.OrchestrationContext, input string) (string, error) {
		v, _ := ctx.Value("n")
		var n int
		fmt.Sscan(v, &n)
		ctx.SetValue("n", fmt.Sprint(n+1))
		if n+1 < 3 {
			ctx.ContinueAsNew("")
		}
		return fmt.Sprint(n + 1), nil
	}, "3")
	h.wantExecutions("kv-rmw-can", 1, 2, 3)
}

// TestKVParentChildIsolation mirrors kv_parent_child_isolation.
func TestKVParentChildIsolation(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("Child", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("who", "child")
			_, parentVisible := ctx.Value("parent_only")
			return fmt.Sprint(parentVisible), nil
		}).
		MustAddOrchestration("Parent", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("who", "parent")
			ctx.SetValue("parent_only", "x")
			r, err := ctx.ScheduleSubOrchestration("Child", "").Get()
			who, _ := ctx.Value("who")
			return who + ":" + r, err
		})
	h := newHarness(t, reg)
	h.start("kv-parent", "Parent", "")
	h.wantCompleted("kv-parent", "parent:false")
	h.wantAllKV("kv-parent::sub::4", map[string]string{"who": "child"})
}

// TestKVClientGetAllValuesAcrossCan mirrors kv_client_get_all_values_across_can.
func TestKVClientGetAllValuesAcrossCan(t *testing.T) {
	t.Parallel()
	h := kvOrch(t, "kv-all-can", func(ctx *durable.OrchestrationContext, input string) (string, error) {
		if input == "" {
			ctx.SetValue("first", "1")
			ctx.ContinueAsNew("again")
		}
		ctx.SetValue("second", "2")
		return "done", nil
	}, "done")
	h.wantAllKV("kv-all-can", map[string]string{"first": "1", "second": "2"})
}

// TestKVStoreMoreCases mirrors the remaining single-instance kv_store_tests.rs cases,
// one subtest each: the orchestration runs to completion and the client then sees
// exactly want.
func TestKVStoreMoreCases(t *testing.T) {
	t.Parallel()
	noop := func(ctx *durable.OrchestrationContext) error {
		_, err := ctx.ScheduleActivity("Noop", "").Get()
		return err
	}
	cases := []struct {
		name string
		code func(ctx *durable.OrchestrationContext, input string) (string, error)
		out  string
		want map[string]string
	}{
		{"kv_json_value", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("doc", `{"a":[1,2],"b":{"c":null}}`)
			v, _ := ctx.Value("doc")
			return v, nil
		}, `{"a":[1,2],"b":{"c":null}}`, map[string]string{"doc": `{"a":[1,2],"b":{"c":null}}`}},
		{"kv_empty_key", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("", "empty-key")
			v, ok := ctx.Value("")
			return fmt.Sprint(v, ok), nil
		}, "empty-keytrue", map[string]string{"": "empty-key"}},
		{"kv_clear_value_then_set_same_key", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("k", "1")
			ctx.ClearValue("k")
			ctx.SetValue("k", "2")
			return "done", nil
		}, "done", map[string]string{"k": "2"}},
		{"kv_update_across_turns", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("k", "turn1")
			if err := noop(ctx); err != nil {
				return "", err
			}
			ctx.SetValue("k", "turn2")
			return "done", nil
		}, "done", map[string]string{"k": "turn2"}},
		{"kv_works_in_select_branch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			act := ctx.ScheduleActivity("Noop", "")
			if ctx.Select(act, ctx.Timer(time.Minute)) == 0 {
				ctx.SetValue("winner", "activity")
			} else {
				ctx.SetValue("winner", "timer")
			}
			return "done", nil
		}, "done", map[string]string{"winner": "activity"}},
		{"kv_interleaved_with_activities_and_timers", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("step", "1")
			if err := noop(ctx); err != nil {
				return "", err
			}
			ctx.SetValue("step", "2")
			if _, err := ctx.Timer(10 * msec).Get(); err != nil {
				return "", err
			}
			ctx.SetValue("step", "3")
			v, _ := ctx.Value("step")
			return v, nil
		}, "3", map[string]string{"step": "3"}},
		{"kv_in_fan_out_fan_in", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			var fs []durable.Awaitable
			var futs []durable.Future[string]
			for i := 0; i < 3; i++ {
				f := ctx.ScheduleActivity("Noop", fmt.Sprint(i))
				fs, futs = append(fs, f), append(futs, f)
			}
			ctx.Join(fs...)
			for i := range futs {
				ctx.SetValue(fmt.Sprint("result_", i), "ok")
			}
			return fmt.Sprint(len(ctx.Values())), nil
		}, "3", map[string]string{"result_0": "ok", "result_1": "ok", "result_2": "ok"}},
		{"kv_overwrite_after_can", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			if input == "" {
				ctx.SetValue("k", "exec1")
				ctx.ContinueAsNew("2")
			}
			old, _ := ctx.Value("k")
			ctx.SetValue("k", "exec2")
			return old, nil
		}, "exec1", map[string]string{"k": "exec2"}},
		{"kv_clear_after_can", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			if input == "" {
				ctx.SetValue("k", "exec1")
				ctx.SetValue("keep", "yes")
				ctx.ContinueAsNew("2")
			}
			ctx.ClearValue("k")
			return "done", nil
		}, "done", map[string]string{"keep": "yes"}},
		{"kv_can_chain_accumulation", func(ctx *durable.OrchestrationContext, input string) (string, error) {
			var n int
			fmt.Sscan(input, &n)
			ctx.SetValue(fmt.Sprint("exec_", n), fmt.Sprint(n))
			if n < 2 {
				ctx.ContinueAsNew(fmt.Sprint(n + 1))
			}
			return fmt.Sprint(len(ctx.Values())), nil
		}, "3", map[string]string{"exec_0": "0", "exec_1": "1", "exec_2": "2"}},
		{"kv_client_get_all_values_empty", func(*durable.OrchestrationContext, string) (string, error) { return "done", nil }, "done", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			reg := durable.NewRegistry().
				MustAddActivity("Noop", constActivity("")).
				MustAddOrchestration("KV", c.code)
			h := newHarness(t, reg)
			h.start("kv-case", "KV", "")
			h.wantCompleted("kv-case", c.out)
			h.wantAllKV("kv-case", c.want)
		})
	}
}

// TestKVGetValueTypedWrongType mirrors kv_get_value_typed_wrong_type: decoding a value
// into the wrong type is an error the code sees, not a failure of the instance.
func TestKVGetValueTypedWrongType(t *testing.T) {
	t.Parallel()
	kvOrch(t, "kv-wrong-type", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetValue("n", "not a number")
		_, ok, err := durable.Value[int](ctx, "n")
		return fmt.Sprint(ok, err != nil), nil
	}, "true true")
}

// TestKVNotAccessibleAfterDeletion mirrors kv_not_accessible_after_deletion (and
// kv_accessible_after_completion): values outlive completion, not deletion.
func TestKVNotAccessibleAfterDeletion(t *testing.T) {
	t.Parallel()
	h := kvOrch(t, "kv-lifetime", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetValue("a", "1")
		ctx.SetValue("b", "2")
		return "done", nil
	}, "done")
	h.wantAllKV("kv-lifetime", map[string]string{"a": "1", "b": "2"})
	if _, err := h.client.Admin().DeleteInstance(h.ctx, "kv-lifetime", false); err != nil {
		t.Fatal(err)
	}
	h.wantAllKV("kv-lifetime", nil)
}

// TestKVGetValueFromInstanceReplaySafe mirrors kv_get_value_from_instance_replay_safe:
// a value read from another instance is recorded, so a replay after the source changed
// still sees the old value.
func TestKVGetValueFromInstanceReplaySafe(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("Source", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("shared", "v1")
			if _, err := ctx.WaitForEvent("update").Get(); err != nil {
				return "", err
			}
			ctx.SetValue("shared", "v2")
			_, err := ctx.WaitForEvent("stop").Get()
			return "source done", err
		}).
		MustAddOrchestration("Reader", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			v, err := ctx.ValueFromInstance("kv-src", "shared").Get()
			if err != nil || v == nil {
				return "missing", err
			}
			if _, err := ctx.WaitForEvent("go").Get(); err != nil {
				return "", err
			}
			return *v, nil
		})
	h := newHarness(t, reg)
	h.start("kv-src", "Source", "")
	h.awaitEvent("kv-src", "ExternalSubscribed")
	h.start("kv-reader", "Reader", "")
	h.awaitEvent("kv-reader", "ExternalSubscribed")
	h.raise("kv-src", "update", "")
	h.awaitEventsOf("kv-src", "ExternalSubscribed", 2) // the source now holds v2
	h.raise("kv-reader", "go", "")
	h.wantCompleted("kv-reader", "v1")
}
