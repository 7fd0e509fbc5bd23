package main

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// Order is the input of ProcessOrder.
type Order struct {
	ID         string   `json:"id"`
	Customer   string   `json:"customer"`
	Items      []string `json:"items"`
	TotalCents int      `json:"total_cents"`
	// The waits are part of the input, not read from the process's
	// configuration, so every replay of the orchestration sees the same ones.
	ApprovalTimeout time.Duration `json:"approval_timeout"`
	PickupDelay     time.Duration `json:"pickup_delay"`
	RetryDelay      time.Duration `json:"retry_delay"`
}

// Shipment is the input of the ShipOrder sub-orchestration.
type Shipment struct {
	Order       string        `json:"order"`
	Customer    string        `json:"customer"`
	Items       []string      `json:"items"`
	PickupDelay time.Duration `json:"pickup_delay"`
}

// Receipt is the output of ProcessOrder.
type Receipt struct {
	Order      string   `json:"order"`
	Reserved   []string `json:"reserved"`
	Payment    string   `json:"payment"`
	ApprovedBy string   `json:"approved_by"`
	Tracking   string   `json:"tracking"`
}

// Names of everything the example registers and the event it waits for.
const (
	orchProcessOrder = "ProcessOrder"
	orchShipOrder    = "ShipOrder"
	actReserveStock  = "ReserveStock"
	actChargePayment = "ChargePayment"
	actCreateLabel   = "CreateShippingLabel"
	eventApproval    = "ManagerApproval"
)

// Custom statuses ProcessOrder publishes; the program watches them.
const (
	statusReserving = "reserving stock"
	statusCharging  = "charging payment"
	statusApproval  = "awaiting approval"
	statusShipping  = "shipping"
)

// ProcessOrder reserves every item at once (fan-out) and waits for all of
// them (fan-in), charges the payment with retries, waits for a manager's
// approval raced against a durable timer, and ships through a
// sub-orchestration.
func ProcessOrder(ctx *durable.OrchestrationContext, o Order) (Receipt, error) {
	ctx.SetCustomStatus(statusReserving)
	reservations := make([]durable.Future[string], len(o.Items))
	waits := make([]durable.Awaitable, len(o.Items))
	for i, item := range o.Items {
		reservations[i] = durable.ScheduleActivity[string](ctx, actReserveStock, item)
		waits[i] = reservations[i]
	}
	ctx.Join(waits...)
	r := Receipt{Order: o.ID}
	for _, f := range reservations {
		id, err := f.Get()
		if err != nil {
			return Receipt{}, fmt.Errorf("reserving stock: %w", err)
		}
		r.Reserved = append(r.Reserved, id)
	}

	ctx.SetCustomStatus(statusCharging)
	policy := durable.RetryPolicy{MaxAttempts: 4, Backoff: durable.Backoff{Kind: durable.BackoffFixed, Base: o.RetryDelay}}
	payment, err := durable.ScheduleActivityWithRetry[string](ctx, actChargePayment, o, policy).Get()
	if err != nil {
		return Receipt{}, fmt.Errorf("charging payment: %w", err)
	}
	r.Payment = payment

	ctx.SetCustomStatus(statusApproval)
	approval := ctx.WaitForEvent(eventApproval)
	if ctx.Select(approval, ctx.Timer(o.ApprovalTimeout)) == 1 {
		return Receipt{}, fmt.Errorf("order %s: no approval within %v", o.ID, o.ApprovalTimeout)
	}
	if r.ApprovedBy, err = approval.Get(); err != nil {
		return Receipt{}, err
	}

	ctx.SetCustomStatus(statusShipping)
	ship := Shipment{Order: o.ID, Customer: o.Customer, Items: o.Items, PickupDelay: o.PickupDelay}
	// an explicit child id, readable in history and for clients
	shipping := durable.WithInstanceID(o.ID + "-shipping")
	if r.Tracking, err = durable.ScheduleSubOrchestration[string](ctx, orchShipOrder, ship, shipping).Get(); err != nil {
		return Receipt{}, fmt.Errorf("shipping: %w", err)
	}
	return r, nil
}

// ShipOrder creates the shipping label, then waits (a durable timer) for
// the courier's pickup, and returns the tracking number.
func ShipOrder(ctx *durable.OrchestrationContext, s Shipment) (string, error) {
	tracking, err := durable.ScheduleActivity[string](ctx, actCreateLabel, s).Get()
	if err != nil {
		return "", err
	}
	if _, err := ctx.Timer(s.PickupDelay).Get(); err != nil {
		return "", err
	}
	return tracking, nil
}

// shop holds the activities: the side effects, each announced on the
// program's output as it happens.
type shop struct {
	say func(format string, args ...any)
	// failCharges is how many charge attempts per order the payment gateway
	// rejects before it accepts one, to show a retried activity.
	failCharges int

	mu       sync.Mutex
	attempts map[string]int // order id -> charge attempts so far
}

func (s *shop) reserveStock(_ *durable.ActivityContext, item string) (string, error) {
	id := "rsv-" + strings.ReplaceAll(item, " ", "-")
	s.say("activity %s(%s): reserved as %s", actReserveStock, item, id)
	return id, nil
}

func (s *shop) chargePayment(_ *durable.ActivityContext, o Order) (string, error) {
	s.mu.Lock()
	s.attempts[o.ID]++
	n := s.attempts[o.ID]
	s.mu.Unlock()
	if n <= s.failCharges {
		s.say("activity %s(%s) attempt %d: payment gateway timed out", actChargePayment, o.ID, n)
		return "", fmt.Errorf("payment gateway timed out (attempt %d)", n)
	}
	s.say("activity %s(%s) attempt %d: charged %d.%02d", actChargePayment, o.ID, n, o.TotalCents/100, o.TotalCents%100)
	return fmt.Sprintf("pay-%s-%d", o.ID, n), nil
}

func (s *shop) createLabel(_ *durable.ActivityContext, sh Shipment) (string, error) {
	tracking := "TRK-" + strings.ToUpper(sh.Order)
	s.say("activity %s(%s): %d parcels for %s, tracking %s", actCreateLabel, sh.Order, len(sh.Items), sh.Customer, tracking)
	return tracking, nil
}

// registry registers the two orchestrations and the shop's activities.
func (s *shop) registry() (*durable.Registry, error) {
	r := durable.NewRegistry()
	for _, err := range []error{
		r.AddOrchestration(orchProcessOrder, durable.Orchestration(ProcessOrder)),
		r.AddOrchestration(orchShipOrder, durable.Orchestration(ShipOrder)),
		r.AddActivity(actReserveStock, durable.Activity(s.reserveStock)),
		r.AddActivity(actChargePayment, durable.Activity(s.chargePayment)),
		r.AddActivity(actCreateLabel, durable.Activity(s.createLabel)),
	} {
		if err != nil {
			return nil, err
		}
	}
	return r, nil
}
