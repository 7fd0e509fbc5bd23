package durable_test

import (
	"strings"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// More ports of duroxide's tests/poison_message_tests.rs: the poison error's
// display message and the MaxAttempts option. (ErrorDetails::category and
// is_retryable are Rust methods; here a poison is the Poison field, which has
// no retryable flag: it never is.)

// TestPoisonMessageTypeDisplay mirrors poison_message_type_orchestration and
// poison_message_type_activity.
func TestPoisonMessageTypeDisplay(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		p     duroxide.PoisonError
		parts []string
	}{
		{"poison_message_type_orchestration", duroxide.PoisonError{AttemptCount: 11, MaxAttempts: 10, Message: "{}",
			MessageType: duroxide.PoisonMessageType{Orchestration: &duroxide.PoisonOrchestration{Instance: "test-instance", ExecutionID: 1}}},
			[]string{"orchestration", "test-instance", "11", "10"}},
		{"poison_message_type_activity", duroxide.PoisonError{AttemptCount: 5, MaxAttempts: 3, Message: "{}",
			MessageType: duroxide.PoisonMessageType{Activity: &duroxide.PoisonActivity{Instance: "test-instance", ExecutionID: 1, ActivityName: "TestActivity", ActivityID: 42}}},
			[]string{"activity", "TestActivity", "42", "5", "3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			st := durable.OrchestrationStatus{Status: durable.StatusFailed, Failure: &duroxide.ErrorDetails{Poison: &c.p}}
			msg := st.FailureMessage()
			if !strings.HasPrefix(msg, "poison") {
				t.Errorf("message %q is not a poison message", msg)
			}
			for _, part := range c.parts {
				if !strings.Contains(msg, part) {
					t.Errorf("message %q lacks %q", msg, part)
				}
			}
		})
	}
}

// TestRuntimeOptionsMaxAttempts mirrors runtime_options_default_max_attempts
// and runtime_options_configurable_max_attempts.
func TestRuntimeOptionsMaxAttempts(t *testing.T) {
	t.Parallel()
	if n := durable.EffectiveOptions(durable.Options{}).MaxAttempts; n != 10 {
		t.Errorf("default MaxAttempts %d, want 10", n)
	}
	if n := durable.EffectiveOptions(durable.Options{MaxAttempts: 5}).MaxAttempts; n != 5 {
		t.Errorf("MaxAttempts 5 became %d", n)
	}
}
