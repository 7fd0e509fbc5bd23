package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// quick is the program's configuration with waits short enough for a test.
func quick() config {
	cfg := defaultConfig()
	cfg.order.PickupDelay = 50 * time.Millisecond
	cfg.order.RetryDelay = 10 * time.Millisecond
	cfg.approveIn = 10 * time.Millisecond
	cfg.timeout = time.Minute
	return cfg
}

// backends are the Redis servers the example is run on: the embedded one
// always, a real one when DUROXIDE_REDIS_URL names it.
func backends() map[string]string {
	b := map[string]string{"miniredis": ""}
	if url := os.Getenv("DUROXIDE_REDIS_URL"); url != "" {
		b["redis"] = url
	}
	return b
}

// runOrder runs the program with cfg and returns the order's status and
// everything the program printed.
func runOrder(t *testing.T, cfg config) (durable.OrchestrationStatus, string) {
	t.Helper()
	var out bytes.Buffer
	st, err := run(context.Background(), cfg, &out)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	return st, out.String()
}

func TestOrderCompletes(t *testing.T) {
	for name, url := range backends() {
		t.Run(name, func(t *testing.T) {
			cfg := quick()
			cfg.redisURL = url
			st, text := runOrder(t, cfg)
			if st.Status != durable.StatusCompleted {
				t.Fatalf("status %s (%s), want Completed\n%s", st.Status, st.FailureMessage(), text)
			}
			var r Receipt
			if err := st.DecodeOutput(&r); err != nil {
				t.Fatal(err)
			}
			if len(r.Reserved) != 3 || r.ApprovedBy != "Grace" || !strings.HasPrefix(r.Tracking, "TRK-ORDER-1-") ||
				!strings.HasSuffix(r.Payment, "-3") {
				t.Errorf("receipt %+v: want 3 reservations, Grace's approval, a tracking number and the third charge attempt", r)
			}
			for _, want := range []string{
				"activity ReserveStock(keyboard)", "activity ReserveStock(monitor)",
				"attempt 1: payment gateway timed out", "attempt 2: payment gateway timed out", "attempt 3: charged 429.99",
				"status: awaiting approval", "raising ManagerApproval", "activity CreateShippingLabel",
				"final status: Completed", "history of ProcessOrder", "history of ShipOrder",
				"ExternalEvent", "TimerFired", "SubOrchestrationCompleted", "OrchestrationCompleted",
				"namespace examples-orders (duroxide-redis --namespace examples-orders instances)",
			} {
				if !strings.Contains(text, want) {
					t.Errorf("output lacks %q\n%s", want, text)
				}
			}
			parent := text[strings.Index(text, "history of ProcessOrder"):strings.Index(text, "history of ShipOrder")]
			child := text[strings.Index(text, "history of ShipOrder"):]
			// the courier's timer and the label, then the tracking number
			for _, want := range []string{"-shipping (6 events)", "child of " + r.Order, "CreateShippingLabel(", "TimerFired",
				"OrchestrationCompleted     output \"TRK-"} {
				if !strings.Contains(child, want) {
					t.Errorf("ShipOrder history lacks %q\n%s", want, child)
				}
			}
			// three reservations and three charge attempts, two of which failed
			if n := strings.Count(parent, "ActivityScheduled"); n != 6 {
				t.Errorf("ProcessOrder history has %d ActivityScheduled, want 6\n%s", n, parent)
			}
			if n := strings.Count(parent, "ActivityFailed"); n != 2 {
				t.Errorf("ProcessOrder history has %d ActivityFailed, want 2\n%s", n, parent)
			}
		})
	}
}

func TestOrderFailsWithoutApproval(t *testing.T) {
	cfg := quick()
	cfg.approve = false
	cfg.order.ApprovalTimeout = 200 * time.Millisecond
	st, text := runOrder(t, cfg)
	if st.Status != durable.StatusFailed || !strings.Contains(st.FailureMessage(), "no approval within 200ms") {
		t.Fatalf("status %s %q, want Failed for the missing approval\n%s", st.Status, st.FailureMessage(), text)
	}
	for _, want := range []string{"nobody approves", "final status: Failed", "TimerFired"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q\n%s", want, text)
		}
	}
	if strings.Contains(text, "history of ShipOrder") || strings.Contains(text, "CreateShippingLabel") {
		t.Errorf("an unapproved order was shipped\n%s", text)
	}
}

func TestPaymentGivesUpAfterFourAttempts(t *testing.T) {
	cfg := quick()
	cfg.failCharges = 4
	st, text := runOrder(t, cfg)
	if st.Status != durable.StatusFailed || !strings.Contains(st.FailureMessage(), "attempt 4") {
		t.Fatalf("status %s %q, want Failed with the fourth attempt's error\n%s", st.Status, st.FailureMessage(), text)
	}
	if strings.Contains(text, "attempt 5") {
		t.Errorf("the payment was tried a fifth time\n%s", text)
	}
}
