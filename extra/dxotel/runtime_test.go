package dxotel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/extra/dxotel"
	"go.opentelemetry.io/otel/trace"
)

func TestRuntimeTurnAndActivitySpansCarryOutcomes(t *testing.T) {
	tel := newTelemetry(t)
	var userSpan trace.SpanContext
	reg := durable.NewRegistry()
	reg.MustAddActivity("Greet", func(ac *durable.ActivityContext, in string) (string, error) {
		// The activity's context carries its span, so user code nests under it.
		userSpan = trace.SpanContextFromContext(ac)
		return "hello " + in, nil
	})
	reg.MustAddActivity("Boom", func(*durable.ActivityContext, string) (string, error) {
		return "", errors.New("boom")
	})
	reg.MustAddOrchestration("Hello", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		out, err := ctx.ScheduleActivity("Greet", in).Get()
		if err != nil {
			return "", err
		}
		_, _ = ctx.ScheduleActivity("Boom", in).Get()
		return out, nil
	})
	var obs dxotel.Provider
	env := durabletest.Start(t, reg, durabletest.WithProviderWrapper(func(p duroxide.Provider) duroxide.Provider {
		obs = wrap(t, p, tel)
		return obs
	}), durabletest.WithOptions(durable.Options{LongPollTimeout: 100 * time.Millisecond, Observer: lateObserver{&obs}}))
	if st := env.StartAndWait(t, "hello-1", "Hello", "world"); st.Status != durable.StatusCompleted {
		t.Fatalf("status %v", st)
	}
	stop(t, env)

	greet := tel.spansNamed("activity Greet")
	if len(greet) != 1 {
		t.Fatalf("want one Greet span, got %d", len(greet))
	}
	g := greet[0]
	if attr(g, dxotel.KeyInstance) != "hello-1" || attr(g, dxotel.KeyAttempt) != "1" || attr(g, dxotel.KeyOutcome) != "completed" {
		t.Errorf("Greet span attributes: %v", g.Attributes())
	}
	if userSpan.SpanID() != g.SpanContext().SpanID() {
		t.Errorf("the activity's context does not carry its span")
	}
	if boom := tel.spansNamed("activity Boom"); len(boom) != 1 || attr(boom[0], dxotel.KeyOutcome) != "failed" {
		t.Errorf("Boom span missing or without outcome failed")
	}
	ackParent := false
	// The ack is combined with the next fetch unless DUROXIDE_ACK_FETCH=off.
	for _, op := range []string{"ack_work_item", "ack_work_item_and_fetch"} {
		for _, s := range tel.spansNamed(op) {
			ackParent = ackParent || s.Parent().SpanID() == g.SpanContext().SpanID()
		}
	}
	if !ackParent {
		t.Errorf("the Greet ack is not a child of the Greet span")
	}
	turns := tel.spansNamed("orchestration_turn")
	if len(turns) < 3 {
		t.Fatalf("want at least 3 turns (start, after Greet, after Boom), got %d", len(turns))
	}
	// The turns' spans end on other slots' goroutines, so the order they are
	// recorded in need not be the order of their end times.
	last := turns[0]
	for _, s := range turns {
		if s.EndTime().After(last.EndTime()) {
			last = s
		}
	}
	if attr(last, dxotel.KeyOutcome) != "completed" || attr(last, dxotel.KeyInstance) != "hello-1" {
		t.Errorf("last turn: %v", last.Attributes())
	}
	acts := tel.collect(t, dxotel.MetricActivities)
	if sumCount(t, acts, attrs{dxotel.KeyOutcome: "completed"}) != 1 || sumCount(t, acts, attrs{dxotel.KeyOutcome: "failed"}) != 1 {
		t.Errorf("activity counters: %+v", acts)
	}
	if n := sumCount(t, tel.collect(t, dxotel.MetricTurns), attrs{dxotel.KeyStatus: "completed"}); n != 1 {
		t.Errorf("completed turns = %d, want 1", n)
	}
}

// lateObserver forwards to the observer of a wrapped provider that
// durabletest creates only after the options are set.
type lateObserver struct{ p *dxotel.Provider }

func (l lateObserver) StartTurn(t durable.TurnInfo) func() { return (*l.p).Observer().StartTurn(t) }

func (l lateObserver) StartActivity(ctx context.Context, a durable.ActivityInfo) (context.Context, func()) {
	return (*l.p).Observer().StartActivity(ctx, a)
}
