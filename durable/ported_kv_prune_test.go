package durable_test

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of the prune_kv_values_updated_before tests of duroxide's
// tests/kv_store_tests.rs: PruneValuesUpdatedBefore clears keys by the time
// of their last SetValue, each with a KeyValueCleared event, and the client
// no longer sees them once the turn is acked.

// clearedKeys lists the keys of the KeyValueCleared events of hist, in order.
func clearedKeys(hist []duroxide.Event) []string {
	var keys []string
	for _, e := range hist {
		if k, ok := e.Kind.(duroxide.KeyValueClearedEvent); ok {
			keys = append(keys, k.Key)
		}
	}
	return keys
}

func (h *harness) wantCleared(instance string, want ...string) {
	h.t.Helper()
	if got := clearedKeys(h.history(instance)); fmt.Sprint(got) != fmt.Sprint(want) {
		h.t.Errorf("%s: KeyValueCleared keys %v, want %v", instance, got, want)
	}
}

// maxCutoff is duroxide's u64::MAX cutoff: later than any key's time.
var maxCutoff = time.UnixMilli(math.MaxInt64)

// TestKVPruneOldValuesByTimestamp mirrors kv_prune_old_values_by_timestamp:
// keys carried over ContinueAsNew keep the time they were set, so a cutoff
// taken in the next execution prunes them and keeps a key set after it.
func TestKVPruneOldValuesByTimestamp(t *testing.T) {
	t.Parallel()
	h := kvOrch(t, "kv-prune-ts", func(ctx *durable.OrchestrationContext, input string) (string, error) {
		if input == "" {
			ctx.SetValue("old1", "v1")
			ctx.SetValue("old2", "v2")
			ctx.ContinueAsNew("1")
		}
		if _, err := ctx.Timer(50 * msec).Get(); err != nil {
			return "", err
		}
		now, err := ctx.UTCNow().Get()
		if err != nil {
			return "", err
		}
		ctx.SetValue("fresh", "v3")
		return fmt.Sprintf("removed:%d", ctx.PruneValuesUpdatedBefore(now)), nil
	}, "removed:2")
	h.wantKV("kv-prune-ts", "old1", "", false)
	h.wantKV("kv-prune-ts", "old2", "", false)
	h.wantKV("kv-prune-ts", "fresh", "v3", true)
	h.wantCleared("kv-prune-ts", "old1", "old2")
}

// TestKVPruneWithZeroThresholdDoesNothing mirrors
// kv_prune_with_zero_threshold_does_nothing: no key is older than the epoch.
func TestKVPruneWithZeroThresholdDoesNothing(t *testing.T) {
	t.Parallel()
	h := kvOrch(t, "kv-prune-0", func(ctx *durable.OrchestrationContext, input string) (string, error) {
		if input == "" {
			ctx.SetValue("a", "1")
			ctx.SetValue("b", "2")
			ctx.ContinueAsNew("1")
		}
		removed := ctx.PruneValuesUpdatedBefore(time.UnixMilli(0))
		a, _ := ctx.Value("a")
		b, _ := ctx.Value("b")
		return fmt.Sprintf("removed:%d,a:%s,b:%s", removed, a, b), nil
	}, "removed:0,a:1,b:2")
	h.wantAllKV("kv-prune-0", map[string]string{"a": "1", "b": "2"})
	h.wantCleared("kv-prune-0")
}

// TestKVPruneEmptyReturnsZero mirrors kv_prune_empty_returns_zero.
func TestKVPruneEmptyReturnsZero(t *testing.T) {
	t.Parallel()
	h := kvOrch(t, "kv-prune-empty", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return fmt.Sprintf("removed:%d", ctx.PruneValuesUpdatedBefore(maxCutoff)), nil
	}, "removed:0")
	h.wantCleared("kv-prune-empty")
}

// TestKVPruneCurrentTurnKeysWithMaxThreshold mirrors
// kv_prune_current_turn_keys_with_max_threshold: keys set in this turn are
// prunable too.
func TestKVPruneCurrentTurnKeysWithMaxThreshold(t *testing.T) {
	t.Parallel()
	h := kvOrch(t, "kv-prune-max", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetValue("x", "1")
		ctx.SetValue("y", "2")
		removed := ctx.PruneValuesUpdatedBefore(maxCutoff)
		x, ok := ctx.Value("x")
		if !ok {
			x = "gone"
		}
		y, ok := ctx.Value("y")
		if !ok {
			y = "gone"
		}
		return fmt.Sprintf("removed:%d,x:%s,y:%s", removed, x, y), nil
	}, "removed:2,x:gone,y:gone")
	h.wantAllKV("kv-prune-max", nil)
	h.wantCleared("kv-prune-max", "x", "y")
}

// TestKVPruneUnpersistedCurrentTurnKeyWithWallClock mirrors
// kv_prune_unpersisted_current_turn_key_with_wall_clock: a key set in this
// turn, not yet acked, carries the clock time of its SetValue. duroxide
// sleeps a millisecond and reads the wall clock; a cutoff one millisecond
// past the wall clock read after the SetValue is the same bound without the
// sleep. (Reading the wall clock in orchestration code is not replay safe;
// the test runs a single turn, as duroxide's does.)
func TestKVPruneUnpersistedCurrentTurnKeyWithWallClock(t *testing.T) {
	t.Parallel()
	h := kvOrch(t, "kv-prune-wall", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetValue("ephemeral", "will_be_pruned")
		removed := ctx.PruneValuesUpdatedBefore(time.Now().Add(time.Millisecond))
		v, ok := ctx.Value("ephemeral")
		if !ok {
			v = "gone"
		}
		return fmt.Sprintf("removed:%d,ephemeral:%s", removed, v), nil
	}, "removed:1,ephemeral:gone")
	h.wantKV("kv-prune-wall", "ephemeral", "", false)
	h.wantCleared("kv-prune-wall", "ephemeral")
}

// TestKVPruneSelectiveByAge mirrors kv_prune_selective_by_age: of two keys
// carried over ContinueAsNew, only the one set before the cutoff goes.
func TestKVPruneSelectiveByAge(t *testing.T) {
	t.Parallel()
	h := kvOrch(t, "kv-prune-sel", func(ctx *durable.OrchestrationContext, input string) (string, error) {
		phase, arg, _ := strings.Cut(input, ":")
		switch phase {
		case "":
			ctx.SetValue("old_key", "old_val")
			ctx.ContinueAsNew("1")
		case "1":
			if _, err := ctx.Timer(50 * msec).Get(); err != nil {
				return "", err
			}
			boundary, err := ctx.UTCNow().Get()
			if err != nil {
				return "", err
			}
			ctx.SetValue("recent_key", "recent_val")
			ctx.ContinueAsNew(fmt.Sprintf("2:%d", boundary.UnixMilli()))
		}
		ms, err := strconv.ParseInt(arg, 10, 64)
		if err != nil {
			return "", err
		}
		if _, err := ctx.Timer(10 * msec).Get(); err != nil {
			return "", err
		}
		removed := ctx.PruneValuesUpdatedBefore(time.UnixMilli(ms))
		old, ok := ctx.Value("old_key")
		if !ok {
			old = "gone"
		}
		recent, ok := ctx.Value("recent_key")
		if !ok {
			recent = "gone"
		}
		return fmt.Sprintf("removed:%d,old:%s,recent:%s", removed, old, recent), nil
	}, "removed:1,old:gone,recent:recent_val")
	h.wantAllKV("kv-prune-sel", map[string]string{"recent_key": "recent_val"})
	h.wantCleared("kv-prune-sel", "old_key")
	h.wantExecutions("kv-prune-sel", 1, 2, 3)
}

// TestKVPruneReplaysTheRecordedTimes: a key set in an earlier turn of this
// execution is pruned by the time its KeyValueSet event recorded, not by
// the time a replay re-ran its SetValue, so a turn that replays (here every
// turn: no instance cache) chooses as a cached one would. duroxide, which
// replays every turn, re-stamps a replayed set_kv_value with the replay's
// wall clock: there this key counts as set in the pruning turn and stays
// (removed:0), and a later replay of a prune can choose differently from
// the first run. Fails if replayed SetValues keep their replay-time stamps.
func TestKVPruneReplaysTheRecordedTimes(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Noop", constActivity("")).
		MustAddOrchestration("KV", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.SetValue("k", "v")
			if _, err := ctx.Timer(10 * msec).Get(); err != nil {
				return "", err
			}
			cutoff, err := ctx.UTCNow().Get()
			if err != nil {
				return "", err
			}
			removed := ctx.PruneValuesUpdatedBefore(cutoff)
			if _, err := ctx.ScheduleActivity("Noop", "").Get(); err != nil {
				return "", err
			}
			return fmt.Sprintf("removed:%d", removed), nil
		})
	h := newHarnessWith(t, reg, durable.Options{InstanceCacheEntries: -1})
	h.start("kv-prune-replay", "KV", "")
	h.wantCompleted("kv-prune-replay", "removed:1")
	h.wantKV("kv-prune-replay", "k", "", false)
	h.wantCleared("kv-prune-replay", "k")
}
