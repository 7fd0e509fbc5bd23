package durable_test

// The durable packages' doc-comment blocks, verbatim, in tests that run them;
// docblocks_test.go at the repository root checks that each block is here.

import (
	"context"
	"errors"
	"fmt"
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

// docOrder is the order of durabletest's doc blocks.
type docOrder struct {
	ID int `json:"id"`
}

// docOrderRegistry registers the orchestration durabletest's package block
// runs: charge the card, then wait a day before completing.
func docOrderRegistry() *durable.Registry {
	reg := durable.NewRegistry()
	reg.MustAddActivity("ChargeCard", durable.Activity(func(*durable.ActivityContext, docOrder) (string, error) {
		return "", errors.New("no payment service in tests")
	}))
	reg.MustAddOrchestration("ProcessOrder", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		receipt, err := ctx.ScheduleActivity("ChargeCard", in).Get()
		if err != nil {
			return "", err
		}
		if _, err := ctx.Timer(24 * time.Hour).Get(); err != nil {
			return "", err
		}
		return receipt, nil
	})
	return reg
}

// fakeCharge stands for the payment service in durabletest's package block.
func fakeCharge(_ *durable.ActivityContext, o docOrder) (string, error) {
	return fmt.Sprint("receipt-", o.ID), nil
}

// TestDocDurabletestStart runs durabletest's package block: the mock
// answers for the payment service and the day-long timer fires at once.
func TestDocDurabletestStart(t *testing.T) {
	t.Parallel()
	reg := docOrderRegistry()
	env := durabletest.Start(t, reg)
	charge := env.MockActivity("ChargeCard", durable.Activity(fakeCharge))
	st := env.StartAndWait(t, "order-1", "ProcessOrder", `{"id":1}`) // its day-long timer fires at once
	if st.Status != durable.StatusCompleted || charge.Calls() != 1 {
		t.Fatalf("status %v (%v), %d charges; want Completed after one", st.Status, st.Failure, charge.Calls())
	}
}

// TestDocMockActivity runs MockActivity's block.
func TestDocMockActivity(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, docOrderRegistry())
	charge := env.MockActivity("ChargeCard", durable.Activity(func(_ *durable.ActivityContext, o Order) (string, error) {
		return "test-receipt", nil
	}))
	st := env.StartAndWait(t, "order-1", "ProcessOrder", `{"id":"1"}`) // example_test.go's Order
	if st.Status != durable.StatusCompleted || st.Output != `"test-receipt"` {
		t.Fatalf("status %v output %q", st.Status, st.Output)
	}
	if charge.Calls() != 1 {
		t.Fatalf("%d calls, want 1", charge.Calls())
	}
}

// TestDocWaitForEventSubscription runs WaitForEventSubscription's block.
func TestDocWaitForEventSubscription(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Approve", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.WaitForEvent("Approved").Get()
	})
	env := durabletest.Start(t, reg)
	ctx := t.Context()
	if err := env.Client.StartOrchestration(ctx, "order-1", "Approve", ""); err != nil {
		t.Fatal(err)
	}
	env.WaitForEventSubscription(t, "order-1", "Approved")
	_ = env.Client.RaiseEvent(ctx, "order-1", "Approved", `true`)
	if st := env.Wait(t, "order-1"); st.Status != durable.StatusCompleted || st.Output != "true" {
		t.Fatalf("status %v output %q", st.Status, st.Output)
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

// TestDocEventually runs the block of durabletest.Eventually: a paused
// instance holds the event raised for it.
func TestDocEventually(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Hold", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.WaitForEvent("go").Get()
	})
	env := durabletest.Start(t, reg)
	ctx := context.Background()
	if err := env.Client.StartOrchestration(ctx, "order-1", "Hold", ""); err != nil {
		t.Fatal(err)
	}
	env.WaitForEventSubscription(t, "order-1", "go")
	if err := env.Client.PauseInstance(ctx, "order-1"); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.RaiseEvent(ctx, "order-1", "go", `"x"`); err != nil {
		t.Fatal(err)
	}
	durabletest.Eventually(t, "a message held for order-1", func() (bool, error) {
		st, err := env.Client.PauseState(ctx, "order-1")
		return st.Held > 0, err
	})
}
