package dxredis_test

// The README's and the doc comments' Go blocks, verbatim, in code that
// compiles (and, for the Test functions, runs); docblocks_test.go checks that
// each block is here, so editing one means editing its holder.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/providertest"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
	"github.com/redis/go-redis/v9"
)

// Order is the README's order.
type Order struct {
	ID string `json:"id"`
}

// payments stands for the README's payment service.
var payments paymentService

type paymentService struct{}

func (paymentService) Charge(ctx context.Context, o Order) (string, error) {
	return "receipt-" + o.ID, ctx.Err()
}

// readmeWritingWorkflows holds the README's "Writing workflows" block. It is
// only compiled: it dials the Redis the README names.
func readmeWritingWorkflows(ctx context.Context) (durable.OrchestrationStatus, error) {
	reg := durable.NewRegistry()
	reg.MustAddActivity("ChargeCard", durable.Activity(func(ctx *durable.ActivityContext, o Order) (string, error) {
		return payments.Charge(ctx, o) // ctx is a context.Context, cancelled when the result is no longer wanted
	}))
	reg.MustAddOrchestration("ProcessOrder", durable.Orchestration(func(ctx *durable.OrchestrationContext, o Order) (string, error) {
		receipt, err := durable.ScheduleActivityWithRetry[string](ctx, "ChargeCard", o,
			durable.RetryPolicy{MaxAttempts: 3, Timeout: time.Minute}).Get()
		if err != nil {
			return "", err
		}
		approved := ctx.WaitForEvent("Approved") // an external event...
		timeout := ctx.Timer(24 * time.Hour)     // ...raced against a durable timer
		if ctx.Select(approved, timeout) == 1 {
			return "", fmt.Errorf("order %s: no approval in time", o.ID)
		}
		return receipt, nil
	}))

	p, _ := redisprovider.New(ctx, redisprovider.Options{URL: "redis://127.0.0.1:6379/0"})
	rt, _ := durable.NewRuntime(p, reg, durable.Options{WorkerConcurrency: 8})
	defer rt.Shutdown(context.Background())
	c := rt.Client()
	_ = c.StartOrchestrationJSON(ctx, "order-42", "ProcessOrder", Order{ID: "42"})
	st, _ := c.WaitForOrchestration(ctx, "order-42", time.Minute)
	return st, nil
}

// readmeUsingTheProviderDirectly holds the "Using the provider directly"
// block of docs/internals.md. It is only compiled: it dials the Redis the
// block names.
func readmeUsingTheProviderDirectly(ctx context.Context) error {
	p, err := redisprovider.New(ctx, redisprovider.Options{
		URL:       "redis://127.0.0.1:6379/0", // or Client: an existing redis.UniversalClient
		Namespace: "orders",                   // key prefix; one hash slot per namespace
	})
	if err != nil {
		return err
	}
	defer p.Close()
	var _ duroxide.Provider = p      // the runtime's storage
	var _ duroxide.ProviderAdmin = p // management: p.Admin()
	return nil
}

// TestReadmeScaleOut holds the README's "Redis Cluster and partitions" block and
// runs it on miniredis: a 12-partition namespace that a runtime serves.
func TestReadmeScaleOut(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	cluster := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
	defer cluster.Close()
	reg := durable.NewRegistry().MustAddOrchestration("Hello", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		return "hello " + in, nil
	})
	err := func(ctx context.Context) error {
		pp, err := redisprovider.New(ctx, redisprovider.Options{
			Client:     cluster, // a *redis.ClusterClient with ContextTimeoutEnabled: true
			Namespace:  "orders",
			Partitions: 12, // fixed when the namespace is created; 0 opens it with the count it has
		})
		if err != nil {
			return err
		}
		defer pp.Close()
		rt, err := durable.NewRuntime(pp, reg, durable.Options{})
		if err != nil {
			return err
		}
		defer rt.Shutdown(context.Background())
		if err := rt.Client().StartOrchestration(ctx, "greet", "Hello", "world"); err != nil {
			return err
		}
		st, err := rt.Client().WaitForOrchestration(ctx, "greet", time.Minute)
		if err != nil {
			return err
		}
		if st.Output != "hello world" || pp.Partitions() != 12 {
			return fmt.Errorf("output %q, %d partitions", st.Output, pp.Partitions())
		}
		return nil
	}(context.Background())
	if err != nil {
		t.Fatal(err)
	}
}

// The compile-only holders are referenced, so no linter calls them unused.
var _ = []any{readmeWritingWorkflows, readmeUsingTheProviderDirectly}

// TestProvider holds the "The validation suite" block of docs/internals.md. The suite
// itself runs on miniredis in TestMiniredis (validation_test.go), so here
// newEmptyProvider skips: running it twice would only cost CI time.
func TestProvider(t *testing.T) {
	providertest.Run(t, providertest.Harness{
		New: func(t *testing.T) duroxide.Provider { return newEmptyProvider(t) }, // required
		// optional hooks; a case that needs a missing one is skipped and says which:
		// CorruptHistory (undecodable history), StoredKeys (nothing left after delete),
		// Advance (a settable storage clock: the suite moves it instead of sleeping),
		// PartitionOf (a partitioned namespace: enqueue order is asserted per partition)
	})
}

func newEmptyProvider(t *testing.T) duroxide.Provider {
	t.Skip("docs/internals.md's validation-suite block; the suite runs in TestMiniredis")
	return nil
}

// TestDocErrorKinds holds the block of duroxide's error kinds: errors.Is
// finds the kind through a ProviderError and a %w layer around it.
func TestDocErrorKinds(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("renew: %w", duroxide.Errorf("renew_orchestration_item_lock", duroxide.ErrLockLost, "token %q", "t-1"))
	if errors.Is(err, duroxide.ErrLockLost) { /* another dispatcher owns the work now */
	}
	if !errors.Is(err, duroxide.ErrLockLost) {
		t.Fatalf("errors.Is(%v, ErrLockLost) = false", err)
	}
}

// docRedisLogger holds RedisLogger's block. It is only compiled: it sets
// go-redis's process-wide logger.
func docRedisLogger(logger *slog.Logger) {
	redis.SetLogger(redisprovider.RedisLogger(logger))
}
