package durabletest_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// The README's "Testing your workflows" test, verbatim (the repository
// root's docblocks_test.go checks it), on the workflow of its "Writing
// workflows" section (newRegistry); keep the two in step.

type Order struct {
	ID string `json:"id"`
}

// newRegistry registers the README's ProcessOrder (in raw form, without
// the retry policy); ChargeCard stands for a payment service a test must
// not call.
func newRegistry() *durable.Registry {
	reg := durable.NewRegistry()
	reg.MustAddActivity("ChargeCard", durable.Activity(func(ctx *durable.ActivityContext, o Order) (string, error) {
		return "", errors.New("no payment service in tests")
	}))
	reg.MustAddOrchestration("ProcessOrder", func(ctx *durable.OrchestrationContext, order string) (string, error) {
		receipt, err := ctx.ScheduleActivity("ChargeCard", order).Get()
		if err != nil {
			return "", err
		}
		approved := ctx.WaitForEvent("Approved") // an external event...
		timeout := ctx.Timer(24 * time.Hour)     // ...raced against a durable timer
		if ctx.Select(approved, timeout) == 1 {
			return "", fmt.Errorf("order %s: no approval in time", order)
		}
		return receipt, nil
	})
	return reg
}

func TestProcessOrder(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, newRegistry()) // runtime + client on an embedded miniredis; stopped by t.Cleanup
	charge := env.MockActivity("ChargeCard", durable.Activity(func(_ *durable.ActivityContext, o Order) (string, error) {
		return "receipt-" + o.ID, nil // instead of the payment service, for this test only
	}))
	ctx := t.Context()

	// No approval: while env.Wait waits and nothing else can run, the clock
	// skips to the 24 h timer. No sleeping, no Advance.
	if err := env.Client.StartOrchestrationJSON(ctx, "o-1", "ProcessOrder", Order{ID: "1"}); err != nil {
		t.Fatal(err)
	}
	if st := env.Wait(t, "o-1"); st.Status != durable.StatusFailed {
		t.Fatalf("o-1 is %v, want Failed: no approval in time", st.Status)
	}

	// Approval: raise the event once the orchestration waits for it (an
	// event raised earlier is kept in history but never delivered).
	if err := env.Client.StartOrchestrationJSON(ctx, "o-2", "ProcessOrder", Order{ID: "2"}); err != nil {
		t.Fatal(err)
	}
	env.WaitForEventSubscription(t, "o-2", "Approved")
	if err := env.Client.RaiseEvent(ctx, "o-2", "Approved", "true"); err != nil {
		t.Fatal(err)
	}
	st := env.Wait(t, "o-2")
	var receipt string
	if err := st.DecodeOutput(&receipt); err != nil || receipt != "receipt-2" {
		t.Fatalf("o-2 is %v with %q (%v), want Completed with receipt-2", st.Status, receipt, err)
	}
	if charge.Calls() != 2 {
		t.Fatalf("ChargeCard ran %d times, want once per order", charge.Calls())
	}
}
