package durable

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Exit codes of ReplayMain.
const (
	ReplayExitOK               = 0 // every history replays clean
	ReplayExitNondeterministic = 1 // some history no longer fits the code
	ReplayExitUnusable         = 2 // some history could not be replayed: unreadable, invalid, or its orchestration not registered
)

// ReplayMain is a replay command for the user's own binary: only it knows
// the orchestration code, so the duroxide-redis CLI exports histories
// (`history INSTANCE --all --json > FILE`) and a program of a few lines
// replays them:
//
//	func main() {
//		os.Exit(durable.ReplayMain(myapp.Registry(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
//	}
//
// Each argument is a file of such an export ("-" reads stdin). It prints
// one line per file to stdout, "ok FILE" or "nondeterministic FILE: ...",
// and problems that stopped a replay to stderr, and returns the exit code
// (ReplayExitOK, ReplayExitNondeterministic, ReplayExitUnusable: the worst
// of all files).
func ReplayMain(reg *Registry, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: replay FILE... (histories exported by duroxide-redis history INSTANCE --all --json; - for stdin)")
		return ReplayExitUnusable
	}
	code := ReplayExitOK
	for _, name := range args {
		err := replayFile(reg, name, stdin)
		switch c := replayExitCode(err); c {
		case ReplayExitOK:
			fmt.Fprintf(stdout, "ok %s\n", name)
		case ReplayExitNondeterministic:
			fmt.Fprintf(stdout, "nondeterministic %s: %v\n", name, err)
			code = max(code, c)
		default:
			fmt.Fprintf(stderr, "replay %s: %v\n", name, err)
			code = c
		}
	}
	return code
}

func replayFile(reg *Registry, name string, stdin io.Reader) error {
	if name == "-" {
		return ReplayHistoryJSON(reg, stdin)
	}
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return ReplayHistoryJSON(reg, f)
}

// replayExitCode classifies a replay's error: nondeterministic only when
// every error it joins is a *ReplayError.
func replayExitCode(err error) int {
	if err == nil {
		return ReplayExitOK
	}
	parts := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		parts = j.Unwrap()
	}
	for _, p := range parts {
		var re *ReplayError
		if !errors.As(p, &re) {
			return ReplayExitUnusable
		}
	}
	return ReplayExitNondeterministic
}
