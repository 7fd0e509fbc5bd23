package durable_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/queue_event_tests.rs (persistent queues: Dequeue /
// EnqueueEvent, and how they coexist with positional external events). The wire tags
// of the queue events are duroxide's serde names, so the Rust QueueSubscribed is
// "ExternalSubscribedPersistent" here, and so on (see the consts below).

const (
	queueSubscribed   = "ExternalSubscribedPersistent"
	queueDelivered    = "ExternalEventPersistent"
	queueSubCancelled = "ExternalSubscribedPersistentCancelled"
)

// dequeueN takes n messages from queue and joins them with commas.
func dequeueN(queue string, n int) durable.OrchestrationFunc {
	return func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		out := ""
		for i := 0; i < n; i++ {
			v, err := ctx.Dequeue(queue).Get()
			if err != nil {
				return "", err
			}
			if i > 0 {
				out += ","
			}
			out += v
		}
		return out, nil
	}
}

func (h *harness) enqueueEvent(instance, queue, data string) {
	h.t.Helper()
	if err := h.client.EnqueueEvent(h.ctx, instance, queue, data); err != nil {
		h.t.Fatalf("enqueue %s on %s: %v", queue, instance, err)
	}
}

// TestPersistentEventBasicDelivery mirrors persistent_event_basic_delivery.
func TestPersistentEventBasicDelivery(t *testing.T) {
	t.Parallel()
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("Q", dequeueN("Signal", 1)))
	h.start("inst-pers-basic", "Q", "")
	h.awaitEvent("inst-pers-basic", queueSubscribed)
	h.enqueueEvent("inst-pers-basic", "Signal", "hello")
	h.wantCompleted("inst-pers-basic", "hello")
}

// TestPersistentEventArrivesBeforeSubscription mirrors
// persistent_event_arrives_before_subscription: unlike an external event, a queue
// message waits for its subscriber.
func TestPersistentEventArrivesBeforeSubscription(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("Q", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if _, err := ctx.WaitForEvent("ready").Get(); err != nil {
			return "", err
		}
		return ctx.Dequeue("Signal").Get()
	})
	h := newHarness(t, reg)
	h.start("inst-pers-early", "Q", "")
	h.awaitEvent("inst-pers-early", "ExternalSubscribed")
	h.enqueueEvent("inst-pers-early", "Signal", "early")
	h.awaitEvent("inst-pers-early", queueDelivered)
	h.raise("inst-pers-early", "ready", "")
	h.wantCompleted("inst-pers-early", "early")
}

// TestPersistentEventFifoOrdering mirrors persistent_event_fifo_ordering.
func TestPersistentEventFifoOrdering(t *testing.T) {
	t.Parallel()
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("Q", dequeueN("Signal", 3)))
	h.start("inst-pers-fifo", "Q", "")
	for _, v := range []string{"first", "second", "third"} {
		h.enqueueEvent("inst-pers-fifo", "Signal", v)
	}
	h.wantCompleted("inst-pers-fifo", "first,second,third")
}

// persistentAfterLostSelect dequeues once racing a timer (the timer wins), then
// dequeues again.
func persistentAfterLostSelect(ctx *durable.OrchestrationContext, _ string) (string, error) {
	if ctx.Select(ctx.Dequeue("Signal"), ctx.Timer(50*msec)) == 0 {
		return "unexpected_phase1", nil
	}
	v, err := ctx.Dequeue("Signal").Get()
	return "got:" + v, err
}

// TestPersistentEventSurvivesSelectCancellationSameBatch mirrors
// persistent_event_survives_select_cancellation_same_batch: a cancelled queue
// subscription does not swallow a message; the next subscriber gets it.
func TestPersistentEventSurvivesSelectCancellationSameBatch(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("TestOrch", persistentAfterLostSelect)
	h := newHarness(t, reg)
	h.start("inst-pers-cancel-same", "TestOrch", "")
	h.awaitEventsOf("inst-pers-cancel-same", queueSubscribed, 2)
	h.shutdown()
	h.enqueueEvent("inst-pers-cancel-same", "Signal", "survived")
	h.enqueueEvent("inst-pers-cancel-same", "Signal", "extra")
	h.restart(reg, durable.Options{})
	h.wantCompleted("inst-pers-cancel-same", "got:survived")
	hist := h.history("inst-pers-cancel-same")
	if !hasEvent(hist, func(k duroxide.EventKind) bool {
		return k == duroxide.QueueSubscriptionCancelledEvent{Reason: "dropped_future"}
	}) {
		t.Error("no QueueSubscriptionCancelled(dropped_future) for the first dequeue")
	}
	if n := countEvents(hist, queueDelivered); n != 2 {
		t.Errorf("%d QueueEventDelivered, want both messages of the batch", n)
	}
}

// TestPersistentAndPositionalAreIndependent mirrors
// persistent_and_positional_are_independent: same name, different mechanisms.
func TestPersistentAndPositionalAreIndependent(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("Both", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		q, e := ctx.Dequeue("Sig"), ctx.WaitForEvent("Sig")
		ctx.Join(q, e)
		return joinOutputs("|", q, e)
	})
	h := newHarness(t, reg)
	h.start("inst-indep", "Both", "")
	h.awaitEvent("inst-indep", "ExternalSubscribed")
	h.raise("inst-indep", "Sig", "positional")
	h.enqueueEvent("inst-indep", "Sig", "persistent")
	h.wantCompleted("inst-indep", "persistent|positional")
}

// TestPersistentCancelledSubscriptionEmitsBreadcrumb mirrors
// persistent_cancelled_subscription_emits_breadcrumb.
func TestPersistentCancelledSubscriptionEmitsBreadcrumb(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("TestOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if ctx.Select(ctx.Dequeue("Signal"), ctx.Timer(50*msec)) == 0 {
			return "unexpected", nil
		}
		return "timer_won", nil
	})
	h := newHarness(t, reg)
	h.start("inst-pers-breadcrumb", "TestOrch", "")
	h.wantCompleted("inst-pers-breadcrumb", "timer_won")
	if e := h.awaitEvent("inst-pers-breadcrumb", queueSubCancelled); e.Kind != (duroxide.QueueSubscriptionCancelledEvent{Reason: "dropped_future"}) || e.SourceEventID == nil || *e.SourceEventID != 2 {
		t.Errorf("breadcrumb %+v (source %v), want dropped_future for event 2", e.Kind, e.SourceEventID)
	}
}

// TestPersistentOutstandingSubscriptionCancelledOnCompletion mirrors
// persistent_outstanding_subscription_cancelled_on_completion.
func TestPersistentOutstandingSubscriptionCancelledOnCompletion(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("TestOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		_ = ctx.Dequeue("NeverResolved")
		_, err := ctx.Timer(50 * msec).Get()
		return "done_early", err
	})
	h := newHarness(t, reg)
	h.start("inst-pers-terminal", "TestOrch", "")
	h.wantCompleted("inst-pers-terminal", "done_early")
	e := h.awaitEvent("inst-pers-terminal", queueSubCancelled)
	if k, ok := e.Kind.(duroxide.QueueSubscriptionCancelledEvent); !ok || (k.Reason != "dropped_future" && k.Reason != "orchestration_terminal") {
		t.Errorf("breadcrumb %+v, want a queue subscription cancelled as dropped or at termination", e.Kind)
	}
}

// TestPersistentMultipleCancelledSubscriptionsOnlyActiveReceives mirrors
// persistent_multiple_cancelled_subscriptions_only_active_receives.
func TestPersistentMultipleCancelledSubscriptionsOnlyActiveReceives(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("Multi", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		for i := 0; i < 3; i++ {
			if ctx.Select(ctx.Dequeue("Signal"), ctx.Timer(20*msec)) == 0 {
				return fmt.Sprintf("unexpected in round %d", i), nil
			}
		}
		v, err := ctx.Dequeue("Signal").Get()
		return "active:" + v, err
	})
	h := newHarness(t, reg)
	h.start("inst-pers-multi", "Multi", "")
	h.awaitEventsOf("inst-pers-multi", queueSubscribed, 4)
	h.enqueueEvent("inst-pers-multi", "Signal", "only-one")
	h.wantCompleted("inst-pers-multi", "active:only-one")
	if n := countEvents(h.history("inst-pers-multi"), queueSubCancelled); n != 3 {
		t.Errorf("%d QueueSubscriptionCancelled, want the 3 lost rounds", n)
	}
}

// TestEnqueueEventTypedRoundTrip mirrors enqueue_event_typed_round_trip.
func TestEnqueueEventTypedRoundTrip(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("Typed", durable.Orchestration(func(ctx *durable.OrchestrationContext, _ struct{}) (addReq, error) {
		return durable.Dequeue[addReq](ctx, "typed").Get()
	}))
	h := newHarness(t, reg)
	h.start("inst-typed-q", "Typed", "{}")
	h.enqueueEvent("inst-typed-q", "typed", `{"a":1,"b":2}`)
	h.wantCompleted("inst-typed-q", `{"a":1,"b":2}`)
}

// TestMultiQueueIsolationAndIndependentFifo mirrors
// multi_queue_isolation_and_independent_fifo.
func TestMultiQueueIsolationAndIndependentFifo(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("MultiQueue", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		var got []string
		for _, q := range []string{"orders", "orders", "payments", "payments", "notifications"} {
			v, err := ctx.Dequeue(q).Get()
			if err != nil {
				return "", err
			}
			got = append(got, v)
		}
		return fmt.Sprintf("%s,%s|%s,%s|%s", got[0], got[1], got[2], got[3], got[4]), nil
	})
	h := newHarness(t, reg)
	h.start("inst-multi-q", "MultiQueue", "")
	for _, m := range [][2]string{{"payments", "pay_first"}, {"orders", "order_first"}, {"notifications", "alert_1"}, {"orders", "order_second"}, {"payments", "pay_second"}} {
		h.enqueueEvent("inst-multi-q", m[0], m[1])
	}
	h.wantCompleted("inst-multi-q", "order_first,order_second|pay_first,pay_second|alert_1")
}

// TestEventsEnqueuedBeforeStartOrchestrationAreDropped mirrors
// events_enqueued_before_start_orchestration_are_dropped.
func TestEventsEnqueuedBeforeStartOrchestrationAreDropped(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("OrphanTest", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ev := ctx.Dequeue("pre-start-q")
		if ctx.Select(ev, ctx.Timer(300*msec)) == 0 {
			v, _ := ev.Get()
			return "unexpected:" + v, nil
		}
		return "timeout_as_expected", nil
	})
	h := newHarness(t, reg)
	// our client refuses it (ErrNotFound); duroxide's client sends it,
	// straight to the provider, which must drop it
	if err := h.client.EnqueueEvent(h.ctx, "inst-orphan", "pre-start-q", "x"); !errors.Is(err, durable.ErrNotFound) {
		t.Fatalf("enqueue to an unknown instance = %v, want ErrNotFound", err)
	}
	h.enqueue(duroxide.QueueMessage{Instance: "inst-orphan", Name: "pre-start-q", Data: "should-be-dropped"})
	h.awaitIdle()
	h.start("inst-orphan", "OrphanTest", "")
	h.wantCompleted("inst-orphan", "timeout_as_expected")
}

// TestPersistentEventSurvivesSelectCancellationLateExtraDiscarded mirrors
// persistent_event_survives_select_cancellation_late_extra_discarded: a message sent
// after the instance completed is not recorded.
func TestPersistentEventSurvivesSelectCancellationLateExtraDiscarded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, durable.NewRegistry().MustAddOrchestration("TestOrch", persistentAfterLostSelect))
	h.start("inst-pers-cancel-late", "TestOrch", "")
	h.awaitEventsOf("inst-pers-cancel-late", queueSubscribed, 2)
	h.enqueueEvent("inst-pers-cancel-late", "Signal", "survived")
	h.wantCompleted("inst-pers-cancel-late", "got:survived")
	h.enqueueEvent("inst-pers-cancel-late", "Signal", "extra")
	h.awaitIdle()
	if n := countEvents(h.history("inst-pers-cancel-late"), queueDelivered); n != 1 {
		t.Errorf("%d messages recorded, want only the one sent while the instance ran", n)
	}
}

// TestRaiseEventTypedRoundTrip mirrors raise_event_typed_round_trip.
func TestRaiseEventTypedRoundTrip(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("Typed", durable.Orchestration(func(ctx *durable.OrchestrationContext, _ struct{}) (addRes, error) {
		r, err := durable.WaitForEvent[addReq](ctx, "typed").Get()
		return addRes{Sum: r.A + r.B}, err
	}))
	h := newHarness(t, reg)
	h.start("inst-typed-ev", "Typed", "{}")
	h.awaitEvent("inst-typed-ev", "ExternalSubscribed")
	h.raise("inst-typed-ev", "typed", `{"a":20,"b":22}`)
	h.wantCompleted("inst-typed-ev", `{"sum":42}`)
}

// TestMultiQueueStaggeredDelivery mirrors multi_queue_staggered_delivery: messages
// arriving one per turn, across queues, each reach their own queue's next dequeue.
func TestMultiQueueStaggeredDelivery(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("Staggered", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		a, b := ctx.Dequeue("qa"), ctx.Dequeue("qb")
		ctx.Join(a, b)
		first, err := joinOutputs("+", a, b)
		if err != nil {
			return "", err
		}
		c, err := ctx.Dequeue("qa").Get()
		return first + "|" + c, err
	})
	h := newHarness(t, reg)
	h.start("inst-stagger", "Staggered", "")
	h.enqueueEvent("inst-stagger", "qb", "b1")
	h.awaitEventsOf("inst-stagger", queueDelivered, 1)
	h.enqueueEvent("inst-stagger", "qa", "a1")
	h.awaitEventsOf("inst-stagger", queueDelivered, 2)
	h.enqueueEvent("inst-stagger", "qa", "a2")
	h.wantCompleted("inst-stagger", "a1+b1|a2")
}

// TestSelectThenJoinPersistentAndPositional mirrors
// select_then_join_persistent_and_positional.
func TestSelectThenJoinPersistentAndPositional(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("Mix", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		q, e := ctx.Dequeue("work"), ctx.WaitForEvent("signal")
		winner := ctx.Select(q, e)
		q2, e2 := ctx.Dequeue("work"), ctx.WaitForEvent("signal")
		ctx.Join(q2, e2)
		rest, err := joinOutputs(",", q2, e2)
		return fmt.Sprint(winner, ":", rest), err
	})
	h := newHarness(t, reg)
	h.start("inst-mix", "Mix", "")
	h.enqueueEvent("inst-mix", "work", "w1")
	h.awaitEventsOf("inst-mix", queueSubscribed, 2)
	h.awaitEventsOf("inst-mix", "ExternalSubscribed", 2)
	h.enqueueEvent("inst-mix", "work", "w2")
	h.raise("inst-mix", "signal", "s1")
	h.wantCompleted("inst-mix", "0:w2,s1")
}
