package durable_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Issue 28: a parent never hangs on a child id collision.

// childThenContinue runs one child per execution, with the options given,
// for rounds executions, and returns the last child's output.
func childThenContinue(rounds string, opts ...durable.OrchestrationOption) durable.OrchestrationFunc {
	return func(ctx *durable.OrchestrationContext, in string) (string, error) {
		out, err := ctx.ScheduleSubOrchestration("Child", in, opts...).Get()
		if err != nil {
			return "", err
		}
		if in != rounds {
			ctx.ContinueAsNew(in + "+")
		}
		return out, nil
	}
}

func childRegistry() *durable.Registry {
	return durable.NewRegistry().MustAddOrchestration("Child", func(_ *durable.OrchestrationContext, in string) (string, error) {
		return "child:" + in, nil
	})
}

// An auto-named child of execution 2 gets an id of its own: the same code
// path as execution 1 schedules it at the same event id, and under duroxide's
// "{parent}::sub::{event id}" it was execution 1's finished child, so its
// start was dropped and the parent stayed Running forever.
func TestE2EAutoNamedChildAfterContinueAsNew(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, func(t *testing.T, backend durabletest.Backend) {
		reg := childRegistry().MustAddOrchestration("Loop", childThenContinue("x++"))
		env := durabletest.Start(t, reg, durabletest.WithBackend(backend))
		mustComplete(t, env.StartAndWait(t, "loop", "Loop", "x"), "child:x++")
		// Execution 1 keeps duroxide's name (recorded histories stay equal);
		// later ones name their execution.
		for _, c := range []struct{ child, out string }{
			{"loop::sub::2", "child:x"}, {"loop::sub::2.exec2", "child:x+"}, {"loop::sub::2.exec3", "child:x++"},
		} {
			mustComplete(t, env.Wait(t, c.child), c.out)
		}
		h := read(t, env, "loop") // the current (third) execution
		if s, ok := h[1].Kind.(duroxide.SubOrchestrationScheduledEvent); !ok || s.Instance != "sub::2.exec3" {
			t.Fatalf("execution 3 schedules %+v, want the child sub::2.exec3", h[1].Kind)
		}
	})
}

// wantCollision requires instance to have failed because its child's id
// named an existing instance, with a message that says so.
func wantCollision(t *testing.T, st durable.OrchestrationStatus, child, state string) {
	t.Helper()
	if st.Status != durable.StatusFailed {
		t.Fatalf("status %v output %q, want Failed on the child id collision", st.Status, st.Output)
	}
	msg := st.FailureMessage()
	for _, want := range []string{`sub-orchestration instance "` + child + `" already exists`, "is " + state, "not started"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("failure %q does not say %q", msg, want)
		}
	}
}

// failOnChildError returns the child's error as the parent's, after
// checking it is a *ChildError for child.
func failOnChildError(child string) durable.OrchestrationFunc {
	return func(ctx *durable.OrchestrationContext, in string) (string, error) {
		out, err := ctx.ScheduleSubOrchestration("Child", in, durable.WithInstanceID(child)).Get()
		var ce *durable.ChildError
		if err != nil && (!errors.As(err, &ce) || !errors.Is(err, durable.ErrChildFailed) || ce.Instance != child) {
			return "", errors.New("not a ChildError for " + child + ": " + err.Error())
		}
		return out, err
	}
}

// An explicit child id naming a finished instance fails the parent with a
// message naming the collision, instead of leaving it waiting forever.
func TestE2EExplicitChildIDOfAFinishedInstanceFailsTheParent(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, func(t *testing.T, backend durabletest.Backend) {
		reg := childRegistry().MustAddOrchestration("Parent", failOnChildError("taken"))
		env := durabletest.Start(t, reg, durabletest.WithBackend(backend))
		mustComplete(t, env.StartAndWait(t, "taken", "Child", "first"), "child:first")
		wantCollision(t, env.StartAndWait(t, "p-done", "Parent", "second"), "taken", "Completed")
		// the finished instance is untouched
		mustComplete(t, env.Wait(t, "taken"), "child:first")
	})
}

// The same for an instance still running: its completion goes to its own
// starter, never to this parent.
func TestE2EExplicitChildIDOfARunningInstanceFailsTheParent(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, func(t *testing.T, backend durabletest.Backend) {
		reg := durable.NewRegistry().
			MustAddOrchestration("Child", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
				return ctx.WaitForEvent("go").Get()
			}).
			MustAddOrchestration("Parent", failOnChildError("busy"))
		env := durabletest.Start(t, reg, durabletest.WithBackend(backend))
		if err := env.Client.StartOrchestration(t.Context(), "busy", "Child", ""); err != nil {
			t.Fatal(err)
		}
		env.WaitForEventSubscription(t, "busy", "go")
		wantCollision(t, env.StartAndWait(t, "p-busy", "Parent", ""), "busy", "Running")
		if err := env.Client.RaiseEvent(t.Context(), "busy", "go", "done"); err != nil {
			t.Fatal(err)
		}
		mustComplete(t, env.Wait(t, "busy"), "done")
	})
}

// An explicit child id reused by the next execution, at the same event id,
// names execution 1's finished child: the parent fails with the collision.
func TestE2EExplicitChildIDReusedAfterContinueAsNewFailsTheParent(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, func(t *testing.T, backend durabletest.Backend) {
		reg := childRegistry().MustAddOrchestration("Loop", childThenContinue("x+", durable.WithInstanceID("fixed")))
		env := durabletest.Start(t, reg, durabletest.WithBackend(backend))
		wantCollision(t, env.StartAndWait(t, "loop-fixed", "Loop", "x"), "fixed", "Completed")
		mustComplete(t, env.Wait(t, "fixed"), "child:x")
	})
}
