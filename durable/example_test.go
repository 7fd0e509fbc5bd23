package durable_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

type Order struct {
	ID    string  `json:"id"`
	Total float64 `json:"total"`
}

func chargeCard(_ *durable.ActivityContext, o Order) (string, error) {
	return "receipt-" + o.ID, nil // call the payment service here
}

func processOrder(ctx *durable.OrchestrationContext, o Order) (string, error) {
	ctx.SetCustomStatus("charging")
	receipt, err := durable.ScheduleActivityWithRetry[string](ctx, "ChargeCard", o,
		durable.RetryPolicy{MaxAttempts: 3, Timeout: time.Minute}).Get()
	if err != nil {
		return "", err
	}
	ctx.SetCustomStatus("awaiting shipment")
	// Wait up to a day for shipping, whichever comes first.
	shipped := ctx.WaitForEvent("Shipped")
	deadline := ctx.Timer(24 * time.Hour)
	if ctx.Select(shipped, deadline) == 1 {
		return "", fmt.Errorf("order %s not shipped in time", o.ID)
	}
	tracking, _ := shipped.Get()
	ctx.Logger().Info("shipped", "tracking", tracking)
	return receipt, nil
}

var redisURL = "redis://127.0.0.1:6379/0"

func main() {
	ctx := context.Background()
	reg := durable.NewRegistry()
	reg.MustAddActivity("ChargeCard", durable.Activity(chargeCard))
	reg.MustAddOrchestration("ProcessOrder", durable.Orchestration(processOrder))

	p, err := redisprovider.New(ctx, redisprovider.Options{URL: redisURL})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	rt, err := durable.NewRuntime(p, reg, durable.Options{WorkerConcurrency: 8})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Shutdown(context.Background())

	c := rt.Client()
	if err := c.StartOrchestrationJSON(ctx, "order-42", "ProcessOrder", Order{ID: "42", Total: 9.5}); err != nil {
		log.Fatal(err)
	}
	// Raise "Shipped" once the order waits for it (its custom status says
	// so): an event that arrives before the orchestration subscribes is kept
	// in history but never delivered, as in duroxide.
	var seen uint64
	for {
		st, err := c.WaitForStatusChange(ctx, "order-42", seen, time.Minute)
		if err != nil {
			log.Fatal(err)
		}
		if st.IsTerminal() || st.CustomStatus != nil && *st.CustomStatus == "awaiting shipment" {
			break
		}
		seen = st.CustomStatusVersion
	}
	if err := c.RaiseEvent(ctx, "order-42", "Shipped", "1Z999"); err != nil {
		log.Fatal(err)
	}
	st, err := c.WaitForOrchestration(ctx, "order-42", time.Minute)
	if err != nil {
		log.Fatal(err)
	}
	var receipt string
	_ = st.DecodeOutput(&receipt)
	fmt.Println(st.Status, receipt)
}

// The package documentation's program (everything above, which doc.go
// shows verbatim), run on an embedded Redis: Example points redisURL at it.
func Example() {
	srv, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	redisURL = "redis://" + srv.Addr() + "/0"
	main()
	// Output: Completed receipt-42
}
