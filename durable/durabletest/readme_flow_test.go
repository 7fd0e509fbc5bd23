package durabletest_test

import (
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// The block of docs/flow-control.md, verbatim (the repository root's
// docblocks_test.go checks it), then what it does: the settings read back,
// a start of the paused name held until the name is resumed.
func TestFlowControlDoc(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Billing", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		return in, nil
	})
	env := durabletest.Start(t, reg)
	client, ctx := env.Client, t.Context()

	// activities called "SendInvoice" go before every other
	if err := client.SetActivityPriority(ctx, "SendInvoice", 5); err != nil {
		t.Fatal(err)
	}
	// hold every instance of "Billing", running ones and new starts
	if err := client.PauseOrchestrationName(ctx, "Billing"); err != nil {
		t.Fatal(err)
	}

	if err := client.StartOrchestration(ctx, "bill-1", "Billing", `"x"`); err != nil {
		t.Fatal(err)
	}
	durabletest.Eventually(t, "bill-1 held by its name", func() (bool, error) {
		fs, err := client.FlowSettings(ctx)
		return fs.PausedNames["Billing"].Held == 1, err
	})
	fs, err := client.FlowSettings(ctx)
	if err != nil || fs.ActivityPriorities["SendInvoice"] != 5 {
		t.Fatalf("%+v %v", fs, err)
	}
	if err := client.ResumeOrchestrationName(ctx, "Billing"); err != nil {
		t.Fatal(err)
	}
	if st := env.Wait(t, "bill-1"); st.Status != durable.StatusCompleted || st.Output != `"x"` {
		t.Fatalf("%v %q", st.Status, st.Output)
	}
}
