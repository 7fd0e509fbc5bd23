package durable_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// Ports of duroxide's tests/futures_tests.rs (select / join semantics).

// selectAB waits for events A and B and reports the first (shared with the golden
// select_two_externals).
func selectAB(ctx *durable.OrchestrationContext, _ string) (string, error) {
	a, b := ctx.WaitForEvent("A"), ctx.WaitForEvent("B")
	if ctx.Select(a, b) == 0 {
		v, err := a.Get()
		return "A:" + v, err
	}
	v, err := b.Get()
	return "B:" + v, err
}

// joinABSample joins two Delay activities; A calls hold before answering, so the
// test decides that B completes first (shared with the golden join_out_of_order).
func joinABSample(hold func()) *durable.Registry {
	return durable.NewRegistry().
		MustAddActivity("Delay", func(_ *durable.ActivityContext, in string) (string, error) {
			if strings.Contains(in, `"A"`) {
				hold()
				return "A", nil
			}
			return "B", nil
		}).
		MustAddOrchestration("JoinAB", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			a, b := ctx.ScheduleActivity("Delay", `["A",100]`), ctx.ScheduleActivity("Delay", `["B",10]`)
			ctx.Join(a, b)
			return joinOutputs(",", a, b)
		})
}

// deliverInOneBatch stops the runtime, raises the events in order and restarts it,
// so the events reach the instance in one batch, as the Rust tests arrange by
// shutting their runtime down.
func (h *harness) deliverInOneBatch(reg *durable.Registry, instance string, events ...[2]string) {
	h.t.Helper()
	h.shutdown()
	for _, e := range events {
		h.raise(instance, e[0], e[1])
	}
	h.restart(reg, durable.Options{})
}

// TestSelect2TwoExternalsFirstDeliveryWins mirrors
// select2_two_externals_first_delivery_wins: with both events in one batch, the one
// first in history wins, and history keeps the enqueue order.
func TestSelect2TwoExternalsFirstDeliveryWins(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("ABSelect2", selectAB)
	h := newHarness(t, reg)
	h.start("inst-ab2", "ABSelect2", "")
	h.awaitEvents("inst-ab2", 1, 3)
	h.deliverInOneBatch(reg, "inst-ab2", [2]string{"B", "vb"}, [2]string{"A", "va"})
	h.wantCompleted("inst-ab2", "B:vb")
	wantEventOrder(t, h.history("inst-ab2"), "ExternalEvent:B", "ExternalEvent:A")
}

// TestSelect3MixedBranchOrderWinner mirrors select3_mixed_branch_order_winner: a
// wait, a timer and a wait; B is delivered first and wins over A and the timer.
func TestSelect3MixedBranchOrderWinner(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddOrchestration("ATBSelect", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			a, tm, b := ctx.WaitForEvent("A"), ctx.Timer(5*time.Second), ctx.WaitForEvent("B")
			switch ctx.Select(a, tm, b) {
			case 0:
				v, err := a.Get()
				return "A:" + v, err
			case 1:
				return "T", nil
			default:
				v, err := b.Get()
				return "B:" + v, err
			}
		})
	h := newHarness(t, reg)
	h.start("inst-atb", "ATBSelect", "")
	h.awaitEvents("inst-atb", 1, 4)
	h.deliverInOneBatch(reg, "inst-atb", [2]string{"B", "vb"}, [2]string{"A", "va"})
	h.wantCompleted("inst-atb", "B:vb")
	wantEventOrder(t, h.history("inst-atb"), "ExternalEvent:B", "ExternalEvent:A")
}

// TestJoinReturnsScheduleOrder mirrors join_returns_schedule_order.
func TestJoinReturnsScheduleOrder(t *testing.T) {
	t.Parallel()
	var h *harness
	h = newHarness(t, joinABSample(func() { h.awaitEvents("inst-join", 1, 4) }))
	h.start("inst-join", "JoinAB", "")
	h.wantCompleted("inst-join", "A,B")
}

// TestSelect2LoserEventConsumedDuringReplay mirrors
// test_select2_loser_event_consumed_during_replay: the losing timer's TimerCreated
// must be matched on replay, or the activity scheduled after the select would be
// taken for nondeterminism.
func TestSelect2LoserEventConsumedDuringReplay(t *testing.T) {
	t.Parallel()
	var attempts atomic.Int32
	reg := durable.NewRegistry().
		MustAddActivity("FastFailActivity", func(*durable.ActivityContext, string) (string, error) {
			return "", fmt.Errorf("fast failure on attempt %d", attempts.Add(1))
		}).
		MustAddOrchestration("SelectLoserOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			timer := ctx.Timer(500 * msec)
			act := ctx.ScheduleActivity("FastFailActivity", "")
			if ctx.Select(act, timer) != 0 {
				return "", fmt.Errorf("timer won unexpectedly")
			}
			_, first := act.Get()
			if first == nil {
				return "unexpected success", nil
			}
			_, second := ctx.ScheduleActivity("FastFailActivity", "").Get()
			return fmt.Sprintf("first: %v, second: %v", first, second), nil
		})
	h := newHarness(t, reg)
	h.start("select-loser-1", "SelectLoserOrch", "")
	h.wantCompleted("select-loser-1", "first: fast failure on attempt 1, second: fast failure on attempt 2")
	if n := attempts.Load(); n != 2 {
		t.Errorf("activity ran %d times, want 2", n)
	}
	hist := h.history("select-loser-1")
	if n := countEvents(hist, "TimerCreated"); n != 1 {
		t.Errorf("%d TimerCreated, want 1 (the loser's)", n)
	}
}

// TestSelect2ScheduleAfterWinnerReturns mirrors test_select2_schedule_after_winner_returns.
func TestSelect2ScheduleAfterWinnerReturns(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Instant", constActivity("done")).
		MustAddOrchestration("MinimalOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			timer := ctx.Timer(time.Second)
			act := ctx.ScheduleActivity("Instant", "")
			if ctx.Select(act, timer) != 0 {
				return "", fmt.Errorf("timer won unexpectedly")
			}
			return ctx.ScheduleActivity("Instant", "").Get()
		})
	h := newHarness(t, reg)
	h.start("minimal-1", "MinimalOrch", "")
	h.wantCompleted("minimal-1", "done")
}

// TestSimplifiedFuturesUnawaitedCompletionDoesNotBlock mirrors
// simplified_futures_unawaited_completion_does_not_block: A completes while the code
// waits on B, and is still there to be read afterwards.
func TestSimplifiedFuturesUnawaitedCompletionDoesNotBlock(t *testing.T) {
	t.Parallel()
	var h *harness
	var aRuns, bRuns atomic.Int32
	reg := durable.NewRegistry().
		MustAddActivity("ActivityA", func(_ *durable.ActivityContext, in string) (string, error) {
			aRuns.Add(1)
			return "A:" + in, nil
		}).
		MustAddActivity("ActivityB", func(_ *durable.ActivityContext, in string) (string, error) {
			bRuns.Add(1)
			h.awaitEvent("unawaited-first-1", "ActivityCompleted") // A's result is in first
			return "B:" + in, nil
		}).
		MustAddOrchestration("UnawaitedFirst", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			a := ctx.ScheduleActivity("ActivityA", "first")
			b, err := ctx.ScheduleActivity("ActivityB", "second").Get()
			if err != nil {
				return "", err
			}
			av, err := a.Get()
			return "B=" + b + ",A=" + av, err
		})
	h = newHarnessWith(t, reg, durable.Options{OrchestrationConcurrency: 1, WorkerConcurrency: 2})
	h.start("unawaited-first-1", "UnawaitedFirst", "")
	h.wantCompleted("unawaited-first-1", "B=B:second,A=A:first")
	if aRuns.Load() != 1 || bRuns.Load() != 1 {
		t.Errorf("A ran %d times, B %d times; want once each", aRuns.Load(), bRuns.Load())
	}
	wantEventOrder(t, h.history("unawaited-first-1"), "ActivityScheduled:ActivityA", "ActivityScheduled:ActivityB")
}
