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
