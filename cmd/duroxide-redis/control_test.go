package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
)

func TestStartRaiseAndCancel(t *testing.T) {
	d := newDeployment(t)
	expect(t, d.cli("start", "Waiter", "w-1", "--input", `{"a":1}`, "--version", "1.0.0"), 0, "started: w-1 (orchestration Waiter)")
	d.waitRunning(t, "w-1")
	expectFailure(t, d.cli("start", "Waiter", "w-1"), exitConflict, "instance w-1 already exists (Waiter, Running): nothing was sent")

	got := decode[actionJSON](t, d.cli("raise", "w-1", "go", "--data", `"go!"`, "--json"))
	if got.Action != "raised" || got.Instance != "w-1" {
		t.Errorf("raise answer: %+v", got)
	}
	if st := d.wait(t, "w-1"); st.Status != durable.StatusCompleted || st.Output != `"go!"` {
		t.Fatalf("w-1 ended %v with %q", st.Status, st.Output)
	}
	expectFailure(t, d.cli("raise", "w-1", "go"), exitConflict, "instance w-1 is Completed, not Running: nothing was sent")

	expect(t, d.cli("start", "Waiter", "w-2"), 0)
	d.waitRunning(t, "w-2")
	expect(t, d.cli("cancel", "w-2", "--reason", "operator said so"), 0, "cancel requested: w-2")
	st := d.wait(t, "w-2")
	if st.Status != durable.StatusFailed || st.Failure == nil {
		t.Fatalf("w-2 ended %v", st.Status)
	}
	expect(t, d.cli("show", "w-2"), 0, "Failed")
}

// TestRejectedCommandsChangeNothing feeds every kind of bad input and checks
// the exit code, the message, and that the deployment is exactly as before.
func TestRejectedCommandsChangeNothing(t *testing.T) {
	d := newDeployment(t)
	d.finish(t, "done-1", "Child", "x")
	before := d.snapshot(t)
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"unknown command", []string{"frobnicate"}, exitInvalid, `unknown command "frobnicate"`},
		{"missing argument", []string{"show"}, exitInvalid, "expected INSTANCE"},
		{"extra argument", []string{"show", "a", "b"}, exitInvalid, "expected INSTANCE"},
		{"unknown flag", []string{"show", "done-1", "--colour"}, exitInvalid, "flag provided but not defined: -colour"},
		{"unknown instance", []string{"show", "nope"}, exitNotFound, "instance nope not found"},
		{"history of unknown instance", []string{"history", "nope"}, exitNotFound, "instance nope not found"},
		{"tree of unknown instance", []string{"tree", "nope"}, exitNotFound, "instance nope not found"},
		{"empty instance id", []string{"show", ""}, exitInvalid, "empty instance id"},
		{"unknown status", []string{"instances", "--status", "Sleeping"}, exitInvalid, `unknown status "Sleeping"`},
		{"bad page", []string{"instances", "--limit", "0"}, exitInvalid, "--limit must be at least 1"},
		{"malformed input", []string{"start", "Child", "new-1", "--input", `{"a":`}, exitInvalid, "--input is not valid JSON"},
		{"bad version", []string{"start", "Child", "new-1", "--version", "one"}, exitInvalid, `--version "one" is not a semantic version`},
		{"start existing", []string{"start", "Child", "done-1"}, exitConflict, "instance done-1 already exists"},
		{"malformed data", []string{"raise", "done-1", "go", "--data", "{"}, exitInvalid, "--data is not valid JSON"},
		{"raise to unknown", []string{"raise", "nope", "go"}, exitNotFound, "instance nope not found"},
		{"raise to finished", []string{"raise", "done-1", "go"}, exitConflict, "is Completed, not Running"},
		{"enqueue without queue", []string{"enqueue", "done-1"}, exitInvalid, "expected INSTANCE QUEUE"},
		{"malformed enqueue data", []string{"enqueue", "done-1", "inbox", "--data", "{"}, exitInvalid, "enqueue: --data is not valid JSON"},
		{"enqueue to unknown", []string{"enqueue", "nope", "inbox"}, exitNotFound, "enqueue: instance nope not found"},
		{"enqueue to finished", []string{"enqueue", "done-1", "inbox"}, exitConflict, "instance done-1 is Completed, not Running: nothing was sent"},
		{"cancel unknown", []string{"cancel", "nope"}, exitNotFound, "instance nope not found"},
		{"cancel finished", []string{"cancel", "done-1"}, exitConflict, "is Completed, not Running"},
		{"delete unknown", []string{"delete", "nope"}, exitNotFound, "instance nope not found"},
		{"delete both ways", []string{"delete", "done-1", "--completed-before", "1h"}, exitInvalid, "either INSTANCE or --completed-before"},
		{"delete bad time", []string{"delete", "--completed-before", "yesterday"}, exitInvalid, `--completed-before "yesterday" is neither`},
		{"prune without keep", []string{"prune", "done-1"}, exitInvalid, "--keep-last N is required"},
		{"prune both ways", []string{"prune", "done-1", "--all", "--keep-last", "1"}, exitInvalid, "either INSTANCE or --all"},
		{"prune unknown", []string{"prune", "nope", "--keep-last", "1"}, exitNotFound, "instance nope not found"},
		{"bad interval", []string{"stats", "--watch", "--interval", "0s"}, exitInvalid, "--interval must be positive"},
		{"bad URL", []string{"stats", "--redis", "http://127.0.0.1:1"}, exitInvalid, `redis URL "http://127.0.0.1:1"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expectFailure(t, d.cli(c.args...), c.code, c.msg)
		})
	}
	if after := d.snapshot(t); after.String() != before.String() {
		t.Fatalf("state changed:\nbefore %v\nafter  %v", before, after)
	}
	if info, err := d.prov.GetInstanceInfo(context.Background(), "new-1"); err == nil {
		t.Fatalf("a rejected start created %+v", info)
	}
}

func TestUnreachableRedisIsItsOwnExitCode(t *testing.T) {
	port, err := freePort() // nothing listens there once freePort returns
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("redis://127.0.0.1:%d", port)
	r := runCLI(map[string]string{"DUROXIDE_REDIS_URL": url}, "stats", "--timeout", "5s")
	expectFailure(t, r, exitUnavailable, "connect to "+url)
	if !strings.Contains(r.stderr, "hint: is Redis running there?") {
		t.Errorf("no hint:\n%s", r.stderr)
	}
}

// An event raised while the instance waits for another is recorded and
// delivered to nothing (duroxide's rule): raise says so on stderr, and
// history marks that event and no other.
func TestRaiseWarnsOfAnEventNobodyWaitsForAndHistoryMarksIt(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	if err := d.client.StartOrchestration(context.Background(), "early-1", "Waiter", ""); err != nil {
		t.Fatal(err)
	}
	d.waitRunning(t, "early-1") // its first turn subscribed to "go"
	r := d.cli("raise", "early-1", "stop", "--data", `"halt"`)
	expect(t, r, exitOK, "raised: early-1 (event stop)")
	for _, w := range []string{"warning: instance early-1 is not waiting for event stop now", "recorded but not delivered", "use enqueue"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("raise's stderr lacks %q:\n%s", w, r.stderr)
		}
	}
	if got := decode[actionJSON](t, d.cli("raise", "early-1", "go", "--data", `"went"`, "--json")); got.Action != "raised" || got.Warning != "" {
		t.Errorf("a raise the instance waits for: %+v", got)
	}
	if st := d.wait(t, "early-1"); st.Status != durable.StatusCompleted || st.Output != `"went"` {
		t.Fatalf("early-1 ended %v with %q", st.Status, st.Output)
	}
	out := d.cli("history", "early-1")
	expect(t, out, exitOK)
	var marked []string
	for _, line := range strings.Split(out.stdout, "\n") {
		if strings.Contains(line, "not delivered: no subscription was waiting") {
			marked = append(marked, line)
		}
	}
	if len(marked) != 1 || !strings.Contains(marked[0], "ExternalEvent") || !strings.Contains(marked[0], "stop") || !strings.Contains(marked[0], `data="halt"`) {
		t.Fatalf("want exactly stop's event marked, got %q in:\n%s", marked, out.stdout)
	}
	if help := d.cli("help", "raise"); !strings.Contains(help.stdout, "raised before the orchestration waits for it is recorded but not delivered (see enqueue)") {
		t.Errorf("raise's help does not say what happens to an early event:\n%s", help.stdout)
	}
}

// enqueue is raise's buffered alternative: a message sent before the code
// dequeues it waits for it.
func TestEnqueueKeepsAMessageUntilTheCodeDequeuesIt(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	if err := d.client.StartOrchestration(context.Background(), "buf-1", "Buffered", ""); err != nil {
		t.Fatal(err)
	}
	d.waitRunning(t, "buf-1") // waiting for "go", not yet for the queue
	r := d.cli("enqueue", "buf-1", "inbox", "--data", `"kept"`)
	expect(t, r, exitOK, "enqueued: buf-1 (queue inbox)")
	if r.stderr != "" {
		t.Errorf("enqueue warned: %s", r.stderr)
	}
	if got := decode[actionJSON](t, d.cli("raise", "buf-1", "go", "--json")); got.Action != "raised" || got.Warning != "" {
		t.Errorf("raise: %+v", got)
	}
	if st := d.wait(t, "buf-1"); st.Status != durable.StatusCompleted || st.Output != `"kept"` {
		t.Fatalf("buf-1 ended %v with %q", st.Status, st.Output)
	}
	expectFailure(t, d.cli("enqueue", "buf-1", "inbox"), exitConflict, "enqueue: instance buf-1 is Completed, not Running: nothing was sent")
}
