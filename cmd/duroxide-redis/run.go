package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Exit codes, documented in the help text and the README: scripts branch on
// them, so they only ever grow.
const (
	exitOK          = 0
	exitFailure     = 1 // anything not classified below
	exitInvalid     = 2 // bad usage or input; nothing was changed
	exitNotFound    = 3 // the instance or execution does not exist
	exitConflict    = 4 // it exists, but its state forbids the operation
	exitUnavailable = 5 // Redis could not be reached or was busy
)

// command is one subcommand: its synopsis for the help text and its body.
type command struct {
	args    string
	summary string
	run     func(c *cli, args []string) error
}

// commandOrder is the order in which help lists the commands.
var commandOrder = []string{"instances", "show", "history", "tree", "stats", "ui", "start", "raise", "enqueue", "cancel", "pause", "resume", "delete", "prune", "schedules", "limits", "flow", "functions"}

// commands is the subcommand table.
func commands() map[string]command {
	return map[string]command{
		"instances": {"[--status S] [--name N] [--prefix P] [--limit N] [--cursor C]", "list instances, newest first, a page at a time", runInstances},
		"show":      {"INSTANCE", "instance info, executions, custom status, KV, children", runShow},
		"history":   {"INSTANCE [--execution N | --all]", "the events of an execution (default: current), or of all", runHistory},
		"tree":      {"INSTANCE", "the instance and its sub-orchestrations", runTree},
		"stats":     {"[--watch [--interval D] [--count N]]", "system counters and queue depths", runStats},
		"ui":        {"[--listen ADDR] [--read-only] [--token T]", "serve a web dashboard (overview, instances, timelines, actions)", runUI},
		"start":     {"NAME INSTANCE [--input JSON] [--version V]", "start an orchestration", runStart},
		"raise":     {"INSTANCE EVENT [--data JSON]", "raise an external event; one raised before the orchestration waits for it is recorded but not delivered (see enqueue)", runRaise},
		"enqueue":   {"INSTANCE QUEUE [--data JSON]", "queue a message for the instance's ctx.Dequeue(QUEUE), kept until the code reads it", runEnqueue},
		"cancel":    {"INSTANCE [--reason R]", "cancel a running instance", runCancel},
		"pause":     {"INSTANCE", "hold a started instance: events, results and fired timers sent to it are stored, not delivered, until resume", runPause},
		"resume":    {"INSTANCE", "resume a paused instance: what it held is delivered in order", runResume},
		"delete":    {"INSTANCE [--force] | --completed-before T", "delete an instance tree, or old terminal ones", runDelete},
		"prune":     {"INSTANCE|--all --keep-last N", "delete old executions, keeping the newest N", runPrune},
		"schedules": {"list | VERB ID [--cron C | --every D ...]", "schedules that start an orchestration on cron times or an interval; VERB: describe, create, update, pause, resume, trigger, delete", runSchedules},
		"limits":    {"list | set NAME [--orchestration] [--concurrency N] [--rate R [--burst B]] | delete NAME [--orchestration]", "flow-control limits per activity name (running at once, started per second) and per orchestration name (instances running at once), held by every runtime of the namespace", runLimits},
		"flow":      {"list | priority activity|orchestration NAME P | window N | pause NAME | resume NAME", "priorities by activity and orchestration name (0..10, higher fetched first, aged by the window), and pausing every instance of an orchestration name", runFlow},
		"functions": {"[--delete-stale]", "list (or delete) function libraries of older versions", runFunctions},
	}
}

// cli holds the global options and the process environment of one run.
type cli struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	now            func() time.Time
	// base is cancelled by Ctrl-C only; commands that run for long (stats
	// --watch) derive their own deadlines from it.
	base context.Context

	redis      stringList
	namespace  string
	partitions int
	tlsCA      string
	json       bool
	timeout    time.Duration
}

// run executes one command line and returns the process exit code.
func run(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c := &cli{stdout: stdout, stderr: stderr, getenv: getenv, now: time.Now, base: ctx}
	name, args, err := splitCommand(args)
	if err != nil {
		return c.report("", err)
	}
	if name == "help" && len(args) > 0 {
		name, args = args[0], []string{"-help"} // "help stats" is "stats -help"
	}
	if name == "" || name == "help" {
		c.usage(stdout)
		return exitOK
	}
	cmd, ok := commands()[name]
	if !ok {
		fmt.Fprintf(stderr, "duroxide-redis: unknown command %q (run duroxide-redis help)\n", name)
		return exitInvalid
	}
	return c.report(name, cmd.run(c, args))
}

// splitCommand finds the command in a command line whose global flags may
// come before it ("--redis URL stats", as kubectl and cobra tools accept)
// and moves those flags after it, where the command's flag set parses them
// with its own. An empty name asks for the general help.
func splitCommand(args []string) (name string, rest []string, err error) {
	fs := (&cli{}).flags("global")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", nil, nil
		}
		return "", nil, usageErr("duroxide-redis", "%v", err)
	}
	after := fs.Args()
	if len(after) == 0 {
		return "", nil, nil
	}
	leading := args[:len(args)-len(after)]
	rest = append(append([]string{}, after[1:]...), leading...)
	return after[0], rest, nil
}

// report prints err, naming the command, with a hint for the common
// mistakes, and returns the exit code.
func (c *cli) report(name string, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "duroxide-redis: %s\n", errorText(name, err))
		if hint := hintFor(err); hint != "" {
			fmt.Fprintln(c.stderr, hint)
		}
	}
	return exitCode(err)
}

// errorText names the command the operator typed rather than the provider
// call that failed inside it ("show: instance x not found", not
// "get_instance_info: ..."). Only a classified error drops the call's name:
// an unclassified one keeps it, as the clue to what broke.
func errorText(name string, err error) string {
	pe, ok := err.(*duroxide.ProviderError)
	if !ok || name == "" || pe.Operation == name {
		return err.Error()
	}
	if pe.Kind == duroxide.ErrNotFound || pe.Kind == duroxide.ErrConflict || pe.Kind == duroxide.ErrInvalidInput {
		return name + ": " + pe.Message
	}
	return name + ": " + err.Error()
}

// exitCode classifies err by its kind, never by its text.
func exitCode(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, duroxide.ErrInvalidInput):
		return exitInvalid
	case errors.Is(err, duroxide.ErrNotFound):
		return exitNotFound
	case errors.Is(err, duroxide.ErrConflict), errors.Is(err, duroxide.ErrAlreadyExists):
		return exitConflict
	case untrustedServer(err), errors.As(err, new(errNoTLSAnswer)):
		// checked before retryable: a failed dial is retryable, but waiting
		// never makes a certificate trusted
		return exitFailure
	case errors.Is(err, duroxide.ErrUnavailable), duroxide.IsRetryable(err):
		return exitUnavailable
	}
	return exitFailure
}

// hintFor adds the next step for errors people commonly hit.
func hintFor(err error) string {
	if untrustedServer(err) {
		return "hint: the server's TLS certificate is not trusted; pass its CA with --tls-ca FILE."
	}
	if errors.As(err, new(errNoTLSAnswer)) {
		return "hint: use a redis:// URL for a server without TLS."
	}
	switch exitCode(err) {
	case exitUnavailable:
		return "hint: is Redis running there? Set --redis URL or DUROXIDE_REDIS_URL."
	case exitInvalid:
		return "hint: duroxide-redis help shows the usage of every command."
	}
	return ""
}

// usageErr is a mistake on the command line: invalid input, nothing done.
func usageErr(cmd, format string, args ...any) error {
	return duroxide.Errorf(cmd, duroxide.ErrInvalidInput, format, args...)
}

// flags returns a flag set with the global flags every command accepts, so
// they may be written before or after the command's own.
func (c *cli) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(&c.redis, "redis", "Redis URL (redis:// or rediss:// for TLS); repeat for a Cluster's seed nodes (default $DUROXIDE_REDIS_URL, comma-separated)")
	fs.StringVar(&c.namespace, "namespace", "", "key namespace of the deployment (default $DUROXIDE_REDIS_NAMESPACE or \"duroxide\")")
	fs.IntVar(&c.partitions, "partitions", 0, "partitions to create a new namespace with (0: one); a namespace that exists keeps its count, and another count than it has is refused")
	fs.StringVar(&c.tlsCA, "tls-ca", "", "PEM file of the CA that signed the server's certificate, for rediss:// URLs (default: the system's roots)")
	fs.BoolVar(&c.json, "json", false, "print JSON for scripts instead of tables")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "give up on Redis after this long")
	return fs
}

// parse parses flags interleaved with positional arguments ("show X --json"),
// which the flag package alone stops at, and checks the positional count.
func (c *cli) parse(fs *flag.FlagSet, args []string, minPos, maxPos int) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				c.commandUsage(fs)
				return nil, err
			}
			return nil, usageErr(fs.Name(), "%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos, args = append(pos, args[0]), args[1:]
	}
	if len(pos) < minPos || len(pos) > maxPos {
		return nil, usageErr(fs.Name(), "expected %s", commands()[fs.Name()].args)
	}
	return pos, nil
}

// parseAndOpen parses the command line, then connects: the start of every
// command that needs no checks of its flags in between.
func (c *cli) parseAndOpen(fs *flag.FlagSet, args []string, minPos, maxPos int) ([]string, *session, error) {
	pos, err := c.parse(fs, args, minPos, maxPos)
	if err != nil {
		return nil, nil, err
	}
	s, err := c.open()
	return pos, s, err
}

func (c *cli) usage(w io.Writer) {
	fmt.Fprint(w, `duroxide-redis inspects and operates duroxide workflows stored in Redis.

Usage: duroxide-redis COMMAND [ARGS] [FLAGS]

Commands:
`)
	cmds := commands()
	for _, name := range commandOrder {
		fmt.Fprintf(w, "  %-10s %-62s %s\n", name, cmds[name].args, cmds[name].summary)
	}
	fmt.Fprint(w, `
Flags accepted by every command:
`)
	fs := c.flags("global")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprintf(w, `
Exit codes:
  %d  success
  %d  failure of another kind
  %d  invalid usage or input (nothing was changed)
  %d  instance or execution not found
  %d  conflict: the instance's (or schedule's) state forbids the operation, or it already exists
  %d  Redis unreachable or busy (retrying later may work)
`, exitOK, exitFailure, exitInvalid, exitNotFound, exitConflict, exitUnavailable)
}

func (c *cli) commandUsage(fs *flag.FlagSet) {
	cmd := commands()[fs.Name()]
	fmt.Fprintf(c.stdout, "Usage: duroxide-redis %s %s\n\n%s.\n\nFlags:\n", fs.Name(), cmd.args, cmd.summary)
	fs.SetOutput(c.stdout)
	fs.PrintDefaults()
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// sortedKeys returns m's keys in order, so output is stable.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
