package durable_test

import (
	"strings"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// The limit test of duroxide's tests/custom_status_tests.rs, kept apart while the Go
// runtime does not enforce duroxide's limits (RUNTIME-BUGS.md, entry 1).

// TestCustomStatusExceedingSizeLimitFailsOrchestration mirrors
// custom_status_exceeding_size_limit_fails_orchestration.
func TestCustomStatusExceedingSizeLimitFailsOrchestration(t *testing.T) {
	_, st := statusOrch(t, "cs-oversize", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetCustomStatus(strings.Repeat("x", maxCustomStatusBytes+1))
		return "should-not-reach", nil
	})
	if st.Status != durable.StatusFailed || !strings.Contains(st.FailureMessage(), "Custom status size") || !strings.Contains(st.FailureMessage(), "exceeds limit") {
		t.Fatalf("status %v output %q failure %q; want Failed with a custom status size error", st.Status, st.Output, st.FailureMessage())
	}
}
