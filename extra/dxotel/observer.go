package dxotel

import (
	"context"

	"github.com/duroxide-go/duroxide-redis/durable"
	"go.opentelemetry.io/otel/trace"
)

// Observer returns the durable.Observer that gives each orchestration turn
// and activity execution a span. Pass it in durable.Options.Observer of a
// runtime built on this same Provider: the provider's ack, abandon and renew
// calls of a unit then become children of the unit's span, and the ack
// records the unit's outcome on it.
func (w *provider) Observer() durable.Observer { return runtimeObserver{w} }

type runtimeObserver struct{ w *provider }

// StartTurn opens the turn's span. Turns are not given a context by the
// runtime, so the span is a root unless the ack links into it.
func (r runtimeObserver) StartTurn(t durable.TurnInfo) func() {
	_, span := r.w.tracer.Start(context.Background(), "orchestration_turn",
		trace.WithAttributes(append(instanceAttrs(t.Instance, t.ExecutionID),
			KeyOrchestration.String(t.Orchestration), KeyAttempt.Int64(int64(t.Attempt)))...))
	return r.w.track(t.LockToken, span)
}

// StartActivity opens the activity's span in ctx, so spans the user's code
// starts from its ActivityContext are its children.
func (r runtimeObserver) StartActivity(ctx context.Context, a durable.ActivityInfo) (context.Context, func()) {
	ctx, span := r.w.tracer.Start(ctx, "activity "+a.Name,
		trace.WithAttributes(append(instanceAttrs(a.Instance, a.ExecutionID),
			KeyActivityName.String(a.Name), KeyActivityID.Int64(int64(a.ActivityID)), KeyAttempt.Int64(int64(a.Attempt)))...))
	return ctx, r.w.track(a.LockToken, span)
}

// track registers span under lockToken until the returned end function
// runs, or an ack-and-fetch hands the unit over first (handedOver).
func (w *provider) track(lockToken string, span trace.Span) func() {
	w.live.Store(lockToken, span)
	return func() {
		if _, live := w.live.LoadAndDelete(lockToken); live {
			span.End()
		}
	}
}

// handedOver ends the span of the unit holding lockToken, whose ack an
// ack-and-fetch call has just applied, before the call waits for the next
// unit (see ackfetch.go).
func (w *provider) handedOver(lockToken string) {
	if s, live := w.live.LoadAndDelete(lockToken); live {
		s.(trace.Span).End()
	}
}
