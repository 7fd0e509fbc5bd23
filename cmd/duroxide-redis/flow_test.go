package main

import (
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// flow sets priorities and the aging window and lists them; flow pause
// holds every instance of an orchestration name (show says so and how to
// resume it), flow resume delivers what they held; bad input is refused.
func TestFlowCommands(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	expectFailure(t, d.cli("flow", "priority", "activity", "Send", "11"), exitInvalid, "outside 0..10")
	expectFailure(t, d.cli("flow", "priority", "queue", "Send", "1"), exitInvalid, "want activity or orchestration")
	expectFailure(t, d.cli("flow", "bogus"), exitInvalid, "expected list")
	expect(t, d.cli("flow", "priority", "activity", "Send", "3"), 0, "priority set: Send")
	expect(t, d.cli("flow", "window", "200"), 0, "aging window set: 200")
	expect(t, d.cli("flow", "list"), 0, "aging window: 200", "activity", "Send", "3")
	got := decode[flowJSON](t, d.cli("flow", "list", "--json"))
	if got.ActivityPriorities["Send"] != 3 || got.AgingWindow != 200 {
		t.Fatalf("flow list --json: %+v", got)
	}

	expect(t, d.cli("start", "Waiter", "fw-1"), 0)
	d.waitRunning(t, "fw-1")
	expect(t, d.cli("flow", "pause", "Waiter"), 0, "orchestration paused: Waiter")
	expect(t, d.cli("raise", "fw-1", "go", "--data", `"x"`), 0, "raised: fw-1")
	expect(t, d.cli("show", "fw-1"), 0, "Paused:", "flow resume Waiter")
	detail := decode[instanceDetail](t, d.cli("show", "fw-1", "--json"))
	if detail.Paused == nil || !detail.Paused.ByName || detail.Status != "Running" {
		t.Fatalf("show --json of an instance of a paused name: %+v", detail.Paused)
	}
	if got := decode[flowJSON](t, d.cli("flow", "list", "--json")); got.PausedNames["Waiter"].Since == nil {
		t.Fatalf("flow list --json while Waiter is paused: %+v", got)
	}
	ts, _ := d.ui(t, uiOptions{})
	get(t, ts, "/instances/fw-1", 200, `id="paused"`, "Paused (orchestration)")
	expect(t, d.cli("flow", "resume", "Waiter"), 0, "orchestration resumed: Waiter")
	if st := d.wait(t, "fw-1"); st.Status != durable.StatusCompleted || st.Output != `"x"` {
		t.Fatalf("fw-1 ended %v with %q", st.Status, st.Output)
	}
}
