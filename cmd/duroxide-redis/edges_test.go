package main

import (
	"strings"
	"testing"
)

// TestGlobalFlagsBeforeTheCommand: "--redis URL stats" and "--json
// instances" work as kubectl and cobra tools accept them, and mean the same
// as the flags written after the command.
func TestGlobalFlagsBeforeTheCommand(t *testing.T) {
	d := newDeployment(t)
	d.finish(t, "done-1", "Child", "x")
	env := map[string]string{} // everything from the flags
	s := decode[statsJSON](t, runCLI(env, "--redis", redisURL, "--namespace="+d.namespace, "--json", "stats"))
	if s.Instances != 1 || s.Completed != 1 {
		t.Errorf("stats: %+v", s)
	}
	r := runCLI(env, "--json", "--redis="+redisURL, "instances", "--namespace", d.namespace, "--limit", "1")
	expect(t, r, exitOK, `"instance": "done-1"`)
	expectFailure(t, runCLI(env, "--colour", "stats"), exitInvalid, "flag provided but not defined: -colour")
	expect(t, runCLI(env, "--json"), exitOK, "Commands:")
}

// TestErrorsNameTheCommand: an operator reads the command they typed, not
// the provider call inside it.
func TestErrorsNameTheCommand(t *testing.T) {
	d := newDeployment(t)
	for _, cmd := range []string{"show", "history", "tree"} {
		r := d.cli(cmd, "order-99")
		want := "duroxide-redis: " + cmd + ": instance order-99 not found\n"
		if r.code != exitNotFound || r.stderr != want {
			t.Errorf("%s: exit %d, stderr %q, want %q", cmd, r.code, r.stderr, want)
		}
	}
}

// TestHelpForOneCommand: "help stats" is the stats command's own help.
func TestHelpForOneCommand(t *testing.T) {
	r := runCLI(nil, "help", "stats")
	expect(t, r, exitOK, "Usage: duroxide-redis stats", "-watch", "-count")
	if strings.Contains(r.stdout, "Commands:") {
		t.Errorf("help stats printed the general help:\n%s", r.stdout)
	}
	expectFailure(t, runCLI(nil, "help", "frobnicate"), exitInvalid, `unknown command "frobnicate"`)
}
