package durable_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// The limit tests of duroxide's tests/kv_store_tests.rs, kept apart while the Go
// runtime does not enforce duroxide's limits (RUNTIME-BUGS.md, entry 1).

// TestKVExceedingKeyLimitFailsOrchestration mirrors
// kv_exceeding_key_limit_fails_orchestration.
func TestKVExceedingKeyLimitFailsOrchestration(t *testing.T) {
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
