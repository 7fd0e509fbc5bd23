package durable_test

import (
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// Session ownership per worker slot and the per-runtime session cap: these two
// failed until each slot became its own owner and the cap was rechecked after a fetch.

// TestEphemeralSameSessionSerialized mirrors test_ephemeral_same_session_serialized:
// without a node id each slot is its own session owner (duroxide's work-{idx}-{id}),
// so one slot owns the session and its activities run one after the other.
func TestEphemeralSameSessionSerialized(t *testing.T) {
	t.Parallel()
	p := &overlapProbe{}
	reg := durable.NewRegistry().
		MustAddActivity("SlowTask", p.activity("slow:")).
		MustAddActivity("FastTask", p.activity("fast:")).
		MustAddOrchestration("SerialSessionOrch", sessionPair)
	h := newHarnessWith(t, reg, durable.Options{WorkerConcurrency: 2})
	h.start("test-serial-session", "SerialSessionOrch", "")
	h.wantCompleted("test-serial-session", "slow:a|fast:b")
	if got := p.maxInFlight(); got != 1 {
		t.Errorf("%d activities of one session ran at once without a node id, want 1", got)
	}
}

// TestMaxSessionsPerRuntimeEnforced mirrors test_max_sessions_per_runtime_enforced:
// with room for one session, activities of two sessions do not run at once.
func TestMaxSessionsPerRuntimeEnforced(t *testing.T) {
	t.Parallel()
	p := &overlapProbe{}
	reg := durable.NewRegistry().
		MustAddActivity("SlowSession", p.activity("")).
		MustAddOrchestration("TwoSessions", twoSessions)
	h := newHarnessWith(t, reg, durable.Options{WorkerConcurrency: 2, MaxSessionsPerRuntime: 1, OrchestrationConcurrency: 1})
	h.start("test-max-sessions", "TwoSessions", "")
	h.wantCompleted("test-max-sessions", "a|b")
	if got := p.maxInFlight(); got != 1 {
		t.Errorf("%d sessions' activities ran at once, want 1 (MaxSessionsPerRuntime 1)", got)
	}
}
