// Command orders is the first program to run: one order goes through a
// durable workflow, on an embedded Redis emulation (miniredis) by default.
//
//	go run ./examples/orders                                   # embedded, nothing to install
//	go run ./examples/orders -redis redis://127.0.0.1:6379/0   # a real Redis
//
// ProcessOrder (orders.go) fans out one stock reservation per item and fans
// in, charges the payment through a flaky gateway with retries, waits for a
// manager's approval (an external event the program raises) raced against
// a durable timer, and ships through the ShipOrder sub-orchestration, which
// waits for the courier on a durable timer. The program prints what happens
// as it happens, then the final status and the history of both
// orchestrations.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// config is one run of the example.
type config struct {
	redisURL    string        // "": embedded miniredis
	order       Order         // the order to process (its ID is made unique per run)
	failCharges int           // charge attempts the gateway rejects first
	approve     bool          // whether the "manager" approves at all
	approveIn   time.Duration // how long the manager takes
	timeout     time.Duration // bound of the whole run
}

func defaultConfig() config {
	return config{
		order: Order{
			ID: "order-1", Customer: "Ada", Items: []string{"keyboard", "mouse", "monitor"}, TotalCents: 42999,
			ApprovalTimeout: 30 * time.Second, PickupDelay: 2 * time.Second, RetryDelay: 500 * time.Millisecond,
		},
		failCharges: 2,
		approve:     true,
		approveIn:   time.Second,
		timeout:     2 * time.Minute,
	}
}

func main() {
	cfg := defaultConfig()
	flag.StringVar(&cfg.redisURL, "redis", "", "Redis URL, e.g. redis://127.0.0.1:6379/0 (default: an embedded miniredis)")
	items := flag.String("items", strings.Join(cfg.order.Items, ","), "comma-separated items of the order, one reservation activity each")
	flag.IntVar(&cfg.failCharges, "fail-charges", cfg.failCharges, "charge attempts the payment gateway rejects before one succeeds (4 or more: the order fails)")
	flag.BoolVar(&cfg.approve, "approve", cfg.approve, "whether the manager approves the order (false: the approval timer fires and the order fails)")
	flag.DurationVar(&cfg.order.ApprovalTimeout, "approval-timeout", cfg.order.ApprovalTimeout, "how long the order waits for the approval")
	flag.DurationVar(&cfg.order.PickupDelay, "pickup", cfg.order.PickupDelay, "the courier's pickup delay (a durable timer in ShipOrder)")
	flag.Parse()
	cfg.order.Items = strings.Split(*items, ",")

	st, err := run(context.Background(), cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "orders:", err)
		os.Exit(1)
	}
	if st.Status != durable.StatusCompleted {
		os.Exit(2)
	}
}

// printer writes timestamped progress lines from any goroutine.
type printer struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

func (p *printer) say(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "[%6.3fs] %s\n", time.Since(p.start).Seconds(), fmt.Sprintf(format, args...))
}

// namespace keeps the example's instances apart from a deployment's on the
// same Redis (which use the default namespace); the program prints it, so
// the CLI can be pointed at them.
const namespace = "examples-orders"

// run processes cfg.order to its end and prints everything on out. The
// error is the program's own (Redis, runtime); the order's outcome is the
// returned status.
func run(ctx context.Context, cfg config, out io.Writer) (durable.OrchestrationStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	pr := &printer{w: out, start: time.Now()}
	url, where, stopRedis, err := redisURL(cfg.redisURL)
	if err != nil {
		return durable.OrchestrationStatus{}, err
	}
	defer stopRedis()
	p, err := redisprovider.New(ctx, redisprovider.Options{URL: url, Namespace: namespace})
	if err != nil {
		return durable.OrchestrationStatus{}, err
	}
	defer p.Close()
	pr.say("storage: %s, namespace %s (duroxide-redis --namespace %s instances)", where, namespace, namespace)

	s := &shop{say: pr.say, failCharges: cfg.failCharges, attempts: map[string]int{}}
	reg, err := s.registry()
	if err != nil {
		return durable.OrchestrationStatus{}, err
	}
	rt, err := durable.NewRuntime(p, reg, durable.Options{
		// the runtime's own warnings (a retried activity logs one) would
		// interleave with the progress lines: errors only
		Logger: slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelError})),
	})
	if err != nil {
		return durable.OrchestrationStatus{}, err
	}
	defer shutdown(rt, pr)

	order := cfg.order
	// a fresh instance per run: on a real Redis an earlier run's instance
	// would otherwise be found completed
	order.ID = fmt.Sprintf("%s-%d", order.ID, time.Now().UnixMilli())
	c := rt.Client()
	if err := c.StartOrchestrationJSON(ctx, order.ID, orchProcessOrder, order); err != nil {
		return durable.OrchestrationStatus{}, err
	}
	pr.say("started %s %s: %d items for %s", orchProcessOrder, order.ID, len(order.Items), order.Customer)
	st, err := follow(ctx, c, order.ID, cfg, pr)
	if err != nil {
		return st, err
	}
	return st, report(ctx, c, p, order.ID, st, out)
}

// redisURL returns the URL to use, a description of it and how to stop the
// embedded server when one was started.
func redisURL(url string) (string, string, func(), error) {
	if url != "" {
		return url, url, func() {}, nil
	}
	m, err := miniredis.Run()
	if err != nil {
		return "", "", nil, fmt.Errorf("starting the embedded miniredis: %w", err)
	}
	return "redis://" + m.Addr() + "/0", "embedded miniredis at " + m.Addr() + " (-redis URL for a real Redis)", m.Close, nil
}

// follow prints every custom status change until the order ends, and
// raises the approval when the order asks for it.
func follow(ctx context.Context, c *durable.Client, id string, cfg config, pr *printer) (durable.OrchestrationStatus, error) {
	var seen uint64
	raised := false
	for {
		st, err := c.WaitForStatusChange(ctx, id, seen, time.Until(deadline(ctx)))
		if err != nil {
			return st, fmt.Errorf("following %s: %w", id, err)
		}
		if st.CustomStatusVersion > seen && st.CustomStatus != nil {
			seen = st.CustomStatusVersion
			pr.say("status: %s", *st.CustomStatus)
		}
		if st.IsTerminal() {
			pr.say("%s %s", id, st.Status)
			return st, nil
		}
		if !raised && st.CustomStatus != nil && *st.CustomStatus == statusApproval {
			raised = true
			if cfg.approve {
				go approve(ctx, c, id, cfg.approveIn, pr)
			} else {
				pr.say("nobody approves: the %v approval timer will fire", cfg.order.ApprovalTimeout)
			}
		}
	}
}

// approve raises the manager's approval after a delay, as a person would.
func approve(ctx context.Context, c *durable.Client, id string, after time.Duration, pr *printer) {
	select {
	case <-time.After(after):
	case <-ctx.Done():
		return
	}
	pr.say("raising %s on %s (approved by Grace)", eventApproval, id)
	if err := c.RaiseEvent(ctx, id, eventApproval, "Grace"); err != nil {
		pr.say("raising %s: %v", eventApproval, err)
	}
}

// report prints the outcome and the history of the order and of its
// sub-orchestration.
func report(ctx context.Context, c *durable.Client, p duroxide.Provider, id string, st durable.OrchestrationStatus, out io.Writer) error {
	fmt.Fprintf(out, "\nfinal status: %s\n", st.Status)
	if st.Status == durable.StatusCompleted {
		var r Receipt
		if err := st.DecodeOutput(&r); err != nil {
			return fmt.Errorf("decoding the receipt: %w", err)
		}
		b, _ := json.MarshalIndent(r, "  ", "  ")
		fmt.Fprintf(out, "receipt:\n  %s\n", b)
	} else {
		fmt.Fprintf(out, "failure: %s\n", st.FailureMessage())
	}
	hist, err := p.Read(ctx, id)
	if err != nil {
		return err
	}
	writeHistory(out, orchProcessOrder+" "+id, hist)
	for _, ev := range hist {
		if sub, ok := ev.Kind.(duroxide.SubOrchestrationScheduledEvent); ok {
			child, err := p.Read(ctx, sub.Instance)
			if err != nil {
				return err
			}
			writeHistory(out, sub.Name+" "+sub.Instance, child)
		}
	}
	return nil
}

func shutdown(rt *durable.Runtime, pr *printer) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		pr.say("runtime shutdown: %v", err)
	}
}

func deadline(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}
