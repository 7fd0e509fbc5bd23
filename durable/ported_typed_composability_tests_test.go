package durable_test

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// Ports of duroxide's tests/typed_composability_tests.rs: typed futures
// (durable.ScheduleActivity[T]) in Join and Select. Rust's DurableFuture::map
// is a ctx.Go block here: Go has no method type parameters, and a block is
// how a sequence of steps becomes one future.

type tcAddReq struct{ A, B int }
type tcAddRes struct{ Sum int }
type tcMulReq struct{ A, B int }
type tcMulRes struct{ Product int }

// mathActivities registers Add, Mul and FailDiv (which fails dividing by
// zero); SlowAdd blocks until cancelled.
func mathActivities() *durable.Registry {
	return durable.NewRegistry().
		MustAddActivity("Add", durable.Activity(func(_ *durable.ActivityContext, r tcAddReq) (tcAddRes, error) { return tcAddRes{r.A + r.B}, nil })).
		MustAddActivity("Mul", durable.Activity(func(_ *durable.ActivityContext, r tcMulReq) (tcMulRes, error) { return tcMulRes{r.A * r.B}, nil })).
		MustAddActivity("SlowAdd", durable.Activity(func(ctx *durable.ActivityContext, _ tcAddReq) (tcAddRes, error) {
			<-ctx.Done()
			return tcAddRes{}, ctx.Err()
		})).
		MustAddActivity("FailDiv", durable.Activity(func(_ *durable.ActivityContext, r tcMulReq) (tcMulRes, error) {
			if r.B == 0 {
				return tcMulRes{}, errors.New("division by zero")
			}
			return tcMulRes{r.A / r.B}, nil
		}))
}

// runTyped runs orch as "O" on reg and returns its completed raw output.
func runTyped(t *testing.T, reg *durable.Registry, instance string, orch durable.OrchestrationFunc) string {
	t.Helper()
	// A cancelled activity's worker learns of it when it renews the lock:
	// renew every 200ms instead of after 25s, so losers stop at once.
	env := durabletest.Start(t, reg.MustAddOrchestration("O", orch), durabletest.WithOptions(durable.Options{
		LongPollTimeout: 100 * time.Millisecond, WorkerLockTimeout: time.Second, WorkerLockRenewalBuffer: 800 * time.Millisecond}))
	st := env.StartAndWait(t, instance, "O", "")
	if st.Status != durable.StatusCompleted {
		t.Fatalf("status %v: %s", st.Status, st.FailureMessage())
	}
	return st.Output
}

// TestTypedActivityJoinFanOut mirrors typed_activity_join_fan_out.
func TestTypedActivityJoinFanOut(t *testing.T) {
	t.Parallel()
	out := runTyped(t, mathActivities(), "tj-1", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		fs := []durable.Future[tcAddRes]{
			durable.ScheduleActivity[tcAddRes](ctx, "Add", tcAddReq{1, 2}),
			durable.ScheduleActivity[tcAddRes](ctx, "Add", tcAddReq{10, 20}),
			durable.ScheduleActivity[tcAddRes](ctx, "Add", tcAddReq{100, 200}),
		}
		ctx.Join(fs[0], fs[1], fs[2])
		total := 0
		for _, f := range fs {
			r, err := f.Get()
			if err != nil {
				return "", err
			}
			total += r.Sum
		}
		return strconv.Itoa(total), nil
	})
	if out != "333" {
		t.Fatalf("output %q, want 333", out)
	}
}

// TestTypedActivityJoin2Heterogeneous mirrors typed_activity_join2_heterogeneous:
// futures of different types joined together.
func TestTypedActivityJoin2Heterogeneous(t *testing.T) {
	t.Parallel()
	out := runTyped(t, mathActivities(), "tj2-1", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		add := durable.ScheduleActivity[tcAddRes](ctx, "Add", tcAddReq{5, 3})
		mul := durable.ScheduleActivity[tcMulRes](ctx, "Mul", tcMulReq{5, 3})
		ctx.Join(add, mul)
		a, err := add.Get()
		if err != nil {
			return "", err
		}
		m, err := mul.Get()
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("sum=%d,product=%d", a.Sum, m.Product), nil
	})
	if out != "sum=8,product=15" {
		t.Fatalf("output %q", out)
	}
}

// TestTypedActivitySelect2Timeout mirrors typed_activity_select2_timeout. Rust
// accepts either winner (its activity sleeps 200ms); here the activity only
// ends when cancelled, so the timer must win.
func TestTypedActivitySelect2Timeout(t *testing.T) {
	t.Parallel()
	out := runTyped(t, mathActivities(), "ts2-1", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		slow := durable.ScheduleActivity[tcAddRes](ctx, "SlowAdd", tcAddReq{1, 2})
		if ctx.Select(slow, ctx.Timer(10*time.Millisecond)) == 0 {
			r, err := slow.Get()
			return fmt.Sprintf("completed:%d", r.Sum), err
		}
		return "timeout", nil
	})
	if out != "timeout" {
		t.Fatalf("output %q, want timeout", out)
	}
}

// TestDurableFutureMapTransformsResult mirrors durable_future_map_transforms_result.
func TestDurableFutureMapTransformsResult(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddActivity("Double", func(_ *durable.ActivityContext, in string) (string, error) {
		n, err := strconv.Atoi(in)
		return strconv.Itoa(2 * n), err
	})
	out := runTyped(t, reg, "mc-1", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
			s, err := ctx.ScheduleActivity("Double", "21").Get()
			if err != nil {
				return "", err
			}
			n, err := strconv.Atoi(s)
			return strconv.Itoa(n + 1), err
		}).Get()
	})
	if out != "43" {
		t.Fatalf("output %q, want 43", out)
	}
}

// TestTypedMapThenJoin mirrors typed_map_then_join.
func TestTypedMapThenJoin(t *testing.T) {
	t.Parallel()
	out := runTyped(t, mathActivities(), "tmj-1", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		sum := func(a, b int) durable.Future[int] {
			return durable.Go(ctx, func(ctx *durable.OrchestrationContext) (int, error) {
				r, err := durable.ScheduleActivity[tcAddRes](ctx, "Add", tcAddReq{a, b}).Get()
				return r.Sum, err
			})
		}
		f1, f2 := sum(1, 2), sum(10, 20)
		ctx.Join(f1, f2)
		a, err := f1.Get()
		if err != nil {
			return "", err
		}
		b, err := f2.Get()
		return strconv.Itoa(a + b), err
	})
	if out != "33" {
		t.Fatalf("output %q, want 33", out)
	}
}

// TestMapPreservesCancellationOnDrop mirrors map_preserves_cancellation_on_drop:
// a mapped activity that loses a select is cancelled (its worker sees its
// context end), not left running.
func TestMapPreservesCancellationOnDrop(t *testing.T) {
	t.Parallel()
	cancelled := make(chan struct{})
	reg := durable.NewRegistry().MustAddActivity("SlowWork", func(ctx *durable.ActivityContext, _ string) (string, error) {
		<-ctx.Done()
		close(cancelled)
		return "", ctx.Err()
	})
	out := runTyped(t, reg, "mcan-1", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		mapped := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
			s, err := ctx.ScheduleActivity("SlowWork", "").Get()
			return "mapped:" + s, err
		})
		if ctx.Select(mapped, ctx.Timer(50*time.Millisecond)) == 0 {
			r, err := mapped.Get()
			return "work:" + r, err
		}
		return "cancelled", nil
	})
	if out != "cancelled" {
		t.Fatalf("output %q, want cancelled", out)
	}
	select {
	case <-cancelled:
	case <-time.After(durabletest.DefaultWaitTimeout):
		t.Fatal("the losing activity's context was never cancelled")
	}
}

// TestTypedErrorPropagationThroughJoin mirrors typed_error_propagation_through_join:
// one failed future in a join does not hide the others' results.
func TestTypedErrorPropagationThroughJoin(t *testing.T) {
	t.Parallel()
	out := runTyped(t, mathActivities(), "tej-1", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ok := durable.ScheduleActivity[tcMulRes](ctx, "FailDiv", tcMulReq{10, 2})
		bad := durable.ScheduleActivity[tcMulRes](ctx, "FailDiv", tcMulReq{10, 0})
		ctx.Join(ok, bad)
		r, err := ok.Get()
		if err != nil {
			return "", err
		}
		_, err = bad.Get()
		if err == nil {
			return "", errors.New("division by zero succeeded")
		}
		return fmt.Sprintf("ok=%d,err=%s", r.Product, err), nil
	})
	if out != "ok=5,err=division by zero" {
		t.Fatalf("output %q", out)
	}
}
