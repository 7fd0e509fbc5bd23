package durable_test

// The durable packages' doc-comment blocks, verbatim, in tests that run them;
// docblocks_test.go at the repository root checks that each block is here.

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// docRegistry has what the doc blocks start: ProcessOrder echoes its input;
// Charge is the activity of OrchestrationContext.Go's block.
func docRegistry() *durable.Registry {
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("ProcessOrder", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		return in, nil
	})
	reg.MustAddActivity("Charge", func(ctx *durable.ActivityContext, in string) (string, error) {
		return "charged " + in, nil
	})
	return reg
}

// TestDocGoBlock runs the block of OrchestrationContext.Go: the charge wins
// the race against the minute's timer.
func TestDocGoBlock(t *testing.T) {
	t.Parallel()
	reg := docRegistry()
	reg.MustAddOrchestration("Pay", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		policy := durable.RetryPolicy{MaxAttempts: 2}
		charge := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
			return ctx.ScheduleActivityWithRetry("Charge", in, policy).Get()
		})
		if ctx.Select(charge, ctx.Timer(time.Minute)) == 1 {
			return "", errors.New("charge: no result within a minute")
		}
		return charge.Get()
	})
	env := durabletest.Start(t, reg)
	st := env.StartAndWait(t, "pay-1", "Pay", "order-1")
	if st.Status != durable.StatusCompleted || st.Output != "charged order-1" {
		t.Fatalf("status %v output %q, want Completed \"charged order-1\"", st.Status, st.Output)
	}
}

// TestDocDurabletestStart runs durabletest's package block.
func TestDocDurabletestStart(t *testing.T) {
	t.Parallel()
	reg := docRegistry()
	env := durabletest.Start(t, reg)
	st := env.StartAndWait(t, "order-1", "ProcessOrder", `{"id":1}`)
	if st.Status != durable.StatusCompleted {
		t.Fatalf("status %v (%v), want Completed", st.Status, st.Failure)
	}
	if st.Output != `{"id":1}` {
		t.Fatalf("output %q, want the input back", st.Output)
	}
}

// TestDocDurabletestEach runs the block of durabletest.Each: on miniredis,
// and on the Redis and Cluster the environment names.
func TestDocDurabletestEach(t *testing.T) {
	t.Parallel()
	reg := docRegistry()
	durabletest.Each(t, func(t *testing.T, b durabletest.Backend) {
		env := durabletest.Start(t, reg, durabletest.WithBackend(b))
		st := env.StartAndWait(t, "order-1", "ProcessOrder", "each")
		if st.Status != durable.StatusCompleted || st.Output != "each" {
			t.Fatalf("%s: status %v output %q", b.Name, st.Status, st.Output)
		}
	})
}

// myapp stands for the user's package in ReplayMain's block.
var myapp = struct{ Registry func() *durable.Registry }{Registry: docRegistry}

// main holds ReplayMain's block (also in cmd/duroxide-redis/README.md). In
// this package it is an ordinary function, only compiled: as a program's main
// it reads os.Args and os.Stdin; TestReplayMain runs ReplayMain itself.
func main() {
	os.Exit(durable.ReplayMain(myapp.Registry(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

var _ = main
