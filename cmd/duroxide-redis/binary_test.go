package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinary builds the command and runs it as a process, so main, the
// process exit code and the environment lookup are covered too.
func TestBinary(t *testing.T) {
	d := newDeployment(t)
	d.finish(t, "done-1", "Child", "x")
	bin := filepath.Join(t.TempDir(), "duroxide-redis")
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: cannot build the binary")
	}
	build := exec.Command(gobin, "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	exe := func(args ...string) result {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "DUROXIDE_REDIS_URL="+redisURL, "DUROXIDE_REDIS_NAMESPACE="+d.namespace)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("run %v: %v", args, err)
		}
		return result{out.String(), errb.String(), code}
	}

	expect(t, exe("help"), exitOK, "Exit codes:", "3  instance or execution not found")
	if s := decode[statsJSON](t, exe("stats", "--json")); s.Instances != 1 || s.Completed != 1 {
		t.Errorf("stats: %+v", s)
	}
	r := exe("show", "nope")
	expectFailure(t, r, exitNotFound, "instance nope not found")
	if !strings.HasPrefix(r.stderr, "duroxide-redis: ") {
		t.Errorf("errors must name the command: %q", r.stderr)
	}
	expectFailure(t, exe("raise", "done-1", "go", "--data", "not json"), exitInvalid, "--data is not valid JSON")
}
