package durable_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// More ports of duroxide's tests/kv_store_tests.rs, on durabletest.Env.
// duroxide's orchestrations branch on a process-wide counter to tell their
// executions apart; these branch on the input continue-as-new passes on.

// kvOf reads a key through the client: its value, or "<none>".
func kvOf(t *testing.T, env *durabletest.Env, instance, key string) string {
	t.Helper()
	v, ok, err := env.Client.KVValue(t.Context(), instance, key)
	if err != nil {
		t.Fatalf("KV %s/%s: %v", instance, key, err)
	}
	if !ok {
		return "<none>"
	}
	return v
}

func wantKVs(t *testing.T, env *durabletest.Env, instance string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := kvOf(t, env, instance, k); got != v {
			t.Errorf("%s KV %q = %q, want %q", instance, k, got, v)
		}
	}
}

func noop(*durable.ActivityContext, string) (string, error) { return "ok", nil }

// TestKVStoreSingleInstance mirrors the kv_store_tests.rs cases that run one
// instance and read its KV afterwards, one subtest each.
func TestKVStoreSingleInstance(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		orch    durable.OrchestrationFunc
		input   string
		output  string
		want    map[string]string
		wantAll map[string]string // KVAllValues, when set
	}{
		{"kv_get_value_reads_local_state", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			steps := kvGet(ctx, "x", "none")
			ctx.SetValue("x", "hello")
			steps += "," + kvGet(ctx, "x", "none")
			ctx.ClearValue("x")
			return steps + "," + kvGet(ctx, "x", "none"), nil
		}, "", "none,hello,none", map[string]string{"x": "<none>"}, nil},
		{"kv_clear_value_then_reset", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("key", "old")
			ctx.ClearValue("key")
			ctx.SetValue("key", "new")
			return "done", nil
		}, "", "done", map[string]string{"key": "new"}, nil},
		{"kv_get_value_from_instance_self", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("key", "local_val")
			if _, err := ctx.ScheduleActivity("Noop", "").Get(); err != nil {
				return "", err
			}
			v, err := ctx.ValueFromInstance(ctx.InstanceID(), "key").Get()
			if err != nil || v == nil {
				return "missing", err
			}
			return *v, nil
		}, "", "local_val", nil, nil},
		{"kv_single_thread_basic", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("key", "val")
			if _, err := ctx.ScheduleActivity("Noop", "").Get(); err != nil {
				return "", err
			}
			return kvGet(ctx, "key", ""), nil
		}, "", "val", map[string]string{"key": "val"}, nil},
		{"kv_single_thread_can_with_kv", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			if in == "" {
				ctx.SetValue("count", "1")
				ctx.ContinueAsNew("next")
				return "", nil
			}
			return "count=" + kvGet(ctx, "count", "none"), nil
		}, "", "count=1", map[string]string{"count": "1"}, nil},
		{"kv_client_get_all_values", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("a", "1")
			ctx.SetValue("b", "2")
			ctx.SetValue("c", "3")
			return "done", nil
		}, "", "done", nil, map[string]string{"a": "1", "b": "2", "c": "3"}},
		{"kv_client_get_all_values_after_overwrite", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("x", "old")
			ctx.SetValue("y", "keep")
			ctx.SetValue("x", "new")
			return "done", nil
		}, "", "done", nil, map[string]string{"x": "new", "y": "keep"}},
		{"kv_client_get_all_values_after_clear", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("a", "1")
			ctx.SetValue("b", "2")
			ctx.SetValue("c", "3")
			ctx.ClearValue("b")
			return "done", nil
		}, "", "done", nil, map[string]string{"a": "1", "c": "3"}},
		{"kv_read_modify_write_every_turn", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			for range 5 {
				n, err := strconv.Atoi(kvGet(ctx, "counter", "0"))
				if err != nil {
					return "", err
				}
				ctx.SetValue("counter", strconv.Itoa(n+1))
				if _, err := ctx.ScheduleActivity("Noop", "").Get(); err != nil {
					return "", err
				}
			}
			return kvGet(ctx, "counter", "0"), nil
		}, "", "5", map[string]string{"counter": "5"}, nil},
		{"kv_clear_all_then_set_across_turns", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			if in == "" {
				ctx.SetValue("old_key", "old_val")
				ctx.SetValue("shared", "from_exec_1")
				ctx.ContinueAsNew("next")
				return "", nil
			}
			ctx.ClearAllValues()
			ctx.SetValue("new_key", "new_val")
			if _, err := ctx.ScheduleActivity("Noop", "").Get(); err != nil {
				return "", err
			}
			out := fmt.Sprintf("old=%s,shared=%s,new=%s", kvGet(ctx, "old_key", "none"), kvGet(ctx, "shared", "none"), kvGet(ctx, "new_key", "none"))
			ctx.SetValue("final", "done")
			return out, nil
		}, "", "old=none,shared=none,new=new_val", map[string]string{"old_key": "<none>", "final": "done", "new_key": "new_val"}, nil},
		{"kv_clear_single_with_prior_execution_value", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			if in == "" {
				ctx.SetValue("session_token", "abc123")
				ctx.SetValue("keep_me", "alive")
				ctx.ContinueAsNew("next")
				return "", nil
			}
			ctx.ClearValue("session_token")
			if _, err := ctx.ScheduleActivity("Noop", "").Get(); err != nil {
				return "", err
			}
			return "token=" + kvGet(ctx, "session_token", "none") + ",kept=" + kvGet(ctx, "keep_me", "none"), nil
		}, "", "token=none,kept=alive", nil, nil},
		{"kv_stress_can_throughput", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			i, _ := strconv.Atoi(in)
			ctx.SetValue("iter", strconv.Itoa(i))
			if i < 4 {
				ctx.ContinueAsNew(strconv.Itoa(i + 1))
				return "", nil
			}
			return "done", nil
		}, "0", "done", map[string]string{"iter": "4"}, nil},
		{"kv_stress_high_key_count", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			for turn := range 6 {
				for i := range durable.MaxKVKeys {
					ctx.SetValue("k"+strconv.Itoa(i), "v"+strconv.Itoa(i))
				}
				if turn < 5 {
					if _, err := ctx.ScheduleActivity("Noop", "").Get(); err != nil {
						return "", err
					}
				}
			}
			return "done", nil
		}, "", "done", map[string]string{"k0": "v0",
			"k" + strconv.Itoa(durable.MaxKVKeys-1): "v" + strconv.Itoa(durable.MaxKVKeys-1)}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := durabletest.Start(t, durable.NewRegistry().MustAddActivity("Noop", noop).MustAddOrchestration("KV", c.orch))
			mustComplete(t, env.StartAndWait(t, "kv-"+c.name, "KV", c.input), c.output)
			wantKVs(t, env, "kv-"+c.name, c.want)
			if c.wantAll != nil {
				all, err := env.Client.KVAllValues(t.Context(), "kv-"+c.name)
				if err != nil || !maps.Equal(all, c.wantAll) {
					t.Errorf("all values %v (%v), want %v", all, err, c.wantAll)
				}
			}
		})
	}
}

// TestKVDeletedWithInstance mirrors kv_deleted_with_instance and
// kv_delete_parent_cascades_child_kv.
func TestKVDeletedWithInstance(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, durable.NewRegistry().
		MustAddOrchestration("ChildDel", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("child_key", "child_val")
			return "done", nil
		}).
		MustAddOrchestration("ParentDel", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("parent_key", "parent_val")
			return ctx.ScheduleSubOrchestration("ChildDel", "").Get()
		}))
	a := env.Client.Admin()
	t.Run("kv_deleted_with_instance", func(t *testing.T) {
		mustComplete(t, env.StartAndWait(t, "kv-del", "ChildDel", ""), "done")
		wantKVs(t, env, "kv-del", map[string]string{"child_key": "child_val"})
		must(a.DeleteInstance(t.Context(), "kv-del", true))(t)
		wantKVs(t, env, "kv-del", map[string]string{"child_key": "<none>"})
	})
	t.Run("kv_delete_parent_cascades_child_kv", func(t *testing.T) {
		mustComplete(t, env.StartAndWait(t, "kv-pdel", "ParentDel", ""), "done")
		child := "kv-pdel::sub::3"
		wantKVs(t, env, child, map[string]string{"child_key": "child_val"})
		must(a.DeleteInstance(t.Context(), "kv-pdel", false))(t)
		wantKVs(t, env, "kv-pdel", map[string]string{"parent_key": "<none>"})
		wantKVs(t, env, child, map[string]string{"child_key": "<none>"})
	})
}

// TestKVSurvivesPrune mirrors kv_prune_execution_removes_orphan_keys and
// kv_bulk_prune: KV is the instance's, so pruning the execution that wrote
// a key keeps the key.
func TestKVSurvivesPrune(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"kv_prune_execution_removes_orphan_keys", "kv_bulk_prune"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := durabletest.Start(t, durable.NewRegistry().MustAddOrchestration("PruneKv", func(ctx *durable.OrchestrationContext, in string) (string, error) {
				if in == "0" {
					ctx.SetValue("ephemeral", "from_exec_1")
					ctx.SetValue("persistent", "from_exec_1")
					ctx.ContinueAsNew("1")
					return "", nil
				}
				ctx.SetValue("persistent", "from_exec_2")
				return "done", nil
			}))
			mustComplete(t, env.StartAndWait(t, "kv-prune", "PruneKv", "0"), "done")
			want := map[string]string{"ephemeral": "from_exec_1", "persistent": "from_exec_2"}
			wantKVs(t, env, "kv-prune", want)
			if r := must(env.Client.Admin().PruneExecutions(t.Context(), "kv-prune", duroxide.PruneOptions{KeepLast: 1}))(t); r.ExecutionsDeleted != 1 {
				t.Fatalf("prune: %+v", r)
			}
			wantKVs(t, env, "kv-prune", want)
		})
	}
}

// TestClientGetValueRunning mirrors client_get_value_running: a running
// instance's committed KV is readable. duroxide waits with
// wait_for_kv_value; here the value is committed with the turn that
// subscribes, so the test waits for the subscription.
func TestClientGetValueRunning(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, durable.NewRegistry().MustAddOrchestration("RunningKV", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetValue("progress", "initialized")
		_, err := ctx.WaitForEvent("finish").Get()
		return "done", err
	}))
	if err := env.Client.StartOrchestration(t.Context(), "kv-running", "RunningKV", ""); err != nil {
		t.Fatal(err)
	}
	env.WaitForEventSubscription(t, "kv-running", "finish")
	wantKVs(t, env, "kv-running", map[string]string{"progress": "initialized"})
	if err := env.Client.RaiseEvent(t.Context(), "kv-running", "finish", ""); err != nil {
		t.Fatal(err)
	}
	mustComplete(t, env.Wait(t, "kv-running"), "done")
}

// kvWriter sets the given keys, then waits for "done".
func kvWriter(kv ...string) durable.OrchestrationFunc {
	return func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		for i := 0; i < len(kv); i += 2 {
			ctx.SetValue(kv[i], kv[i+1])
		}
		_, err := ctx.WaitForEvent("done").Get()
		return "done", err
	}
}

// readFrom is an orchestration returning key of instance, or "none".
func readFrom(instance, key string) durable.OrchestrationFunc {
	return func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		v, err := ctx.ValueFromInstance(instance, key).Get()
		if err != nil || v == nil {
			return "none", err
		}
		return *v, nil
	}
}

// TestKVReadsFromOtherInstances mirrors kv_get_value_from_instance_key_missing,
// kv_get_value_from_instance_unknown_instance, kv_get_value_from_instance_typed_e2e
// and kv_stress_cross_instance_reads.
func TestKVReadsFromOtherInstances(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, durable.NewRegistry().
		MustAddOrchestration("Writer", kvWriter("exists", "yes", "shared", "producer_value")).
		MustAddOrchestration("TypedWriter", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			durable.SetValue(ctx, "config", []uint32{1, 2, 3})
			_, err := ctx.WaitForEvent("done").Get()
			return "done", err
		}).
		MustAddOrchestration("ReadMissing", readFrom("kv-writer", "nonexistent")).
		MustAddOrchestration("ReadUnknown", readFrom("no-such-inst", "key")).
		MustAddOrchestration("ReadShared", readFrom("kv-writer", "shared")).
		MustAddOrchestration("TypedReader", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			v, err := ctx.ValueFromInstance("kv-tw", "config").Get()
			if err != nil || v == nil {
				return "None", err
			}
			var cfg []uint32
			if err := json.Unmarshal([]byte(*v), &cfg); err != nil {
				return "", err
			}
			return fmt.Sprintf("Some(%v)", cfg), nil
		}))
	for _, w := range [][2]string{{"kv-writer", "Writer"}, {"kv-tw", "TypedWriter"}} {
		if err := env.Client.StartOrchestration(t.Context(), w[0], w[1], ""); err != nil {
			t.Fatal(err)
		}
		env.WaitForEventSubscription(t, w[0], "done")
	}
	t.Run("kv_get_value_from_instance_key_missing", func(t *testing.T) {
		mustComplete(t, env.StartAndWait(t, "kv-reader2", "ReadMissing", ""), "none")
	})
	t.Run("kv_get_value_from_instance_unknown_instance", func(t *testing.T) {
		mustComplete(t, env.StartAndWait(t, "kv-unknown", "ReadUnknown", ""), "none")
	})
	t.Run("kv_get_value_from_instance_typed_e2e", func(t *testing.T) {
		mustComplete(t, env.StartAndWait(t, "kv-tr", "TypedReader", ""), "Some([1 2 3])")
	})
	t.Run("kv_stress_cross_instance_reads", func(t *testing.T) {
		for i := range 10 {
			if err := env.Client.StartOrchestration(t.Context(), "kv-reader-"+strconv.Itoa(i), "ReadShared", ""); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 10 {
			mustComplete(t, env.Wait(t, "kv-reader-"+strconv.Itoa(i)), "producer_value")
		}
	})
	for _, w := range []string{"kv-writer", "kv-tw"} {
		if err := env.Client.RaiseEvent(t.Context(), w, "done", ""); err != nil {
			t.Fatal(err)
		}
		mustComplete(t, env.Wait(t, w), "done")
	}
}

// TestKVGetValueFromInstanceAfterSourceUpdate mirrors
// kv_get_value_from_instance_after_source_update: a second read sees the
// source's later write.
func TestKVGetValueFromInstanceAfterSourceUpdate(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, durable.NewRegistry().
		MustAddOrchestration("LiveSource", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("v", "1")
			if _, err := ctx.WaitForEvent("update").Get(); err != nil {
				return "", err
			}
			ctx.SetValue("v", "2")
			_, err := ctx.WaitForEvent("done").Get()
			return "done", err
		}).
		MustAddOrchestration("LiveReader", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			read := func() string {
				v, _ := ctx.ValueFromInstance("kv-lsrc", "v").Get()
				if v == nil {
					return ""
				}
				return *v
			}
			v1 := read()
			ctx.SetValue("read1", v1)
			if _, err := ctx.WaitForEvent("source_updated").Get(); err != nil {
				return "", err
			}
			v2 := read()
			ctx.SetValue("read2", v2)
			return v1 + "," + v2, nil
		}))
	start := func(id, name string) {
		if err := env.Client.StartOrchestration(t.Context(), id, name, ""); err != nil {
			t.Fatal(err)
		}
	}
	raise := func(id, name string) {
		if err := env.Client.RaiseEvent(t.Context(), id, name, ""); err != nil {
			t.Fatal(err)
		}
	}
	start("kv-lsrc", "LiveSource")
	env.WaitForEventSubscription(t, "kv-lsrc", "update")
	start("kv-lrdr", "LiveReader")
	env.WaitForEventSubscription(t, "kv-lrdr", "source_updated")
	raise("kv-lsrc", "update")
	env.WaitForEventSubscription(t, "kv-lsrc", "done")
	raise("kv-lrdr", "source_updated")
	mustComplete(t, env.Wait(t, "kv-lrdr"), "1,2")
	wantKVs(t, env, "kv-lrdr", map[string]string{"read1": "1", "read2": "2"})
	raise("kv-lsrc", "done")
	mustComplete(t, env.Wait(t, "kv-lsrc"), "done")
}

// TestKVStressConcurrentWrites mirrors kv_stress_concurrent_writes: ten
// instances writing the same key names keep their own values.
func TestKVStressConcurrentWrites(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, durable.NewRegistry().MustAddOrchestration("ConcWrite", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		for i := range 5 {
			ctx.SetValue("key_"+strconv.Itoa(i), "val_"+in+"_"+strconv.Itoa(i))
		}
		return "wrote_" + in, nil
	}))
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := env.Client.StartOrchestration(t.Context(), "kv-conc-"+strconv.Itoa(i), "ConcWrite", strconv.Itoa(i)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i := range 10 {
		id := "kv-conc-" + strconv.Itoa(i)
		mustComplete(t, env.Wait(t, id), "wrote_"+strconv.Itoa(i))
		wantKVs(t, env, id, map[string]string{"key_0": "val_" + strconv.Itoa(i) + "_0", "key_4": "val_" + strconv.Itoa(i) + "_4"})
	}
}
