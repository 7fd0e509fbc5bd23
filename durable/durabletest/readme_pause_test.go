package durabletest_test

import (
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// The "Pausing an instance" test of docs/schedules.md, verbatim (the
// repository root's docblocks_test.go checks it).

func TestPauseAnApproval(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Approval", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.WaitForEvent("approved").Get()
	})
	env := durabletest.Start(t, reg)
	ctx := t.Context()
	if err := env.Client.StartOrchestration(ctx, "order-7", "Approval", ""); err != nil {
		t.Fatal(err)
	}
	env.WaitForEventSubscription(t, "order-7", "approved")

	if err := env.Client.PauseInstance(ctx, "order-7"); err != nil { // hold it
		t.Fatal(err)
	}
	if err := env.Client.RaiseEvent(ctx, "order-7", "approved", `"yes"`); err != nil { // stored, not delivered
		t.Fatal(err)
	}
	st, err := env.Client.Status(ctx, "order-7")
	if err != nil || st.Status != durable.StatusRunning || !st.Paused {
		t.Fatalf("%+v %v", st, err)
	}
	if ps, err := env.Client.PauseState(ctx, "order-7"); err != nil || ps.Held != 1 { // the event waits
		t.Fatalf("%+v %v", ps, err)
	}
	if err := env.Client.ResumeInstance(ctx, "order-7"); err != nil { // deliver what it held, in order
		t.Fatal(err)
	}
	if st := env.Wait(t, "order-7"); st.Output != `"yes"` {
		t.Fatalf("%v %q", st.Status, st.Output)
	}
}
