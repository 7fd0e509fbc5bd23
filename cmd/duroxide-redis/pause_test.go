package main

import (
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// pause holds a running instance (an event raised to it waits, shown by
// show), resume delivers it; both are idempotent and name an unknown
// instance's failure.
func TestPauseAndResumeCommands(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	expectFailure(t, d.cli("pause", "nope"), exitNotFound, "pause: instance nope not found")
	expectFailure(t, d.cli("resume", ""), exitInvalid, "empty instance id")
	expect(t, d.cli("start", "Waiter", "p-1"), 0)
	d.waitRunning(t, "p-1")
	expect(t, d.cli("pause", "p-1"), 0, "paused: p-1 (held: 0)")
	expect(t, d.cli("pause", "p-1"), 0, "already paused: p-1")
	expect(t, d.cli("raise", "p-1", "go", "--data", `"x"`), 0, "raised: p-1")
	expect(t, d.cli("show", "p-1"), 0, "Paused:", "held: 1")
	got := decode[instanceDetail](t, d.cli("show", "p-1", "--json"))
	if got.Paused == nil || got.Paused.Held != 1 || got.Paused.Since == nil || got.Status != "Running" {
		t.Fatalf("show --json of a paused instance: %+v", got.Paused)
	}
	expect(t, d.cli("resume", "p-1"), 0, "resumed: p-1")
	if st := d.wait(t, "p-1"); st.Status != durable.StatusCompleted || st.Output != `"x"` {
		t.Fatalf("p-1 ended %v with %q", st.Status, st.Output)
	}
	expect(t, d.cli("resume", "p-1"), 0, "not paused: p-1")
	if got := decode[instanceDetail](t, d.cli("show", "p-1", "--json")); got.Paused != nil {
		t.Fatalf("show --json after resume: paused %+v", got.Paused)
	}
}
