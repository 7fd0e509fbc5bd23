package dxotel

import (
	"context"
	"reflect"
	"sync"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Provider is a duroxide.Provider that records telemetry around another one,
// as WrapProvider returns it. It is safe for concurrent use, like the
// provider it wraps.
//
// Its dynamic type implements exactly those of duroxide's optional provider
// interfaces (duroxide.OrchestrationAckFetcher, duroxide.WorkAckFetcher,
// duroxide.BatchEnqueuer, duroxide.LazyHistoryFetcher) that the wrapped
// provider implements, so a runtime's type assertions find the same fast
// paths with and without the wrapper; see the package documentation.
type Provider interface {
	duroxide.Provider
	// Observer returns the durable.Observer that gives each orchestration
	// turn and activity execution a span (see the package documentation).
	Observer() durable.Observer
	// Unwrap returns the instrumented provider.
	Unwrap() duroxide.Provider
	// Close unregisters the gauges; spans and counters keep working.
	Close() error
}

// provider is the instrumentation of every call of duroxide.Provider. The
// value WrapProvider returns embeds it, with one pass-through per optional
// interface of duroxide's, present exactly when the inner provider has that
// interface (see optional.go).
type provider struct {
	inner  duroxide.Provider
	admin  duroxide.ProviderAdmin // wrapped inner admin; nil when inner has none
	tracer trace.Tracer
	in     instruments
	gauges metric.Registration // nil when no gauges are registered
	// live maps the lock token of a running turn or activity to its span, so
	// the ack, abandon and renew calls of that unit become its children and the
	// ack can record its outcome on it. Entries live exactly as long as the
	// unit (durable.Observer's end function removes them).
	live sync.Map
}

var _ Provider = (*provider)(nil)

// WrapProvider returns p instrumented as opts says, implementing the same
// optional interfaces as p. It fails only when an instrument cannot be
// created. Call Close to stop the gauges when the provider is discarded
// before its MeterProvider.
func WrapProvider(p duroxide.Provider, opts Options) (Provider, error) {
	if p == nil {
		return nil, duroxide.Errorf("dxotel.WrapProvider", duroxide.ErrInvalidInput, "provider is nil")
	}
	m := opts.meter()
	in, err := newInstruments(m)
	if err != nil {
		return nil, err
	}
	w := &provider{inner: p, tracer: opts.tracer(), in: in}
	if a := p.Admin(); a != nil {
		w.admin = instrumentAdmin(w, a)
		if !opts.DisableGauges {
			if w.gauges, err = registerGauges(m, a); err != nil {
				return nil, err
			}
		}
	}
	return withCapabilities(w, capabilities(p)), nil
}

// Close unregisters the gauges; spans and counters keep working.
func (w *provider) Close() error {
	if w.gauges == nil {
		return nil
	}
	return w.gauges.Unregister()
}

// Unwrap returns the instrumented provider.
func (w *provider) Unwrap() duroxide.Provider { return w.inner }

// call is the state of one instrumented provider call that the operation
// may refine: a fetch marks itself empty and names what it locked.
type call struct {
	span    trace.Span
	outcome string
}

// fetched records on the span what a fetch returned: outcome empty when it
// found no work, else the attributes of the unit it locked. A call that acked
// before fetching (asEvent) puts them on a "fetched" event instead, because
// its own attributes name the unit it acked.
func (c *call) fetched(err error, locked []attribute.KeyValue, asEvent bool) {
	switch {
	case err == nil && locked == nil:
		c.outcome = OutcomeEmpty
	case locked == nil:
	case asEvent:
		c.span.AddEvent("fetched", trace.WithAttributes(locked...))
	default:
		c.span.SetAttributes(locked...)
	}
}

// do runs fn inside a span named op and records its duration. lockToken, when
// it belongs to a live turn or activity, makes that unit the span's parent.
func do[T any](w *provider, ctx context.Context, op, lockToken string, fn func(context.Context, *call) (T, error), attrs ...attribute.KeyValue) (T, error) {
	ctx = w.parentFor(ctx, lockToken)
	ctx, span := w.tracer.Start(ctx, op, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(append(attrs, KeyOperation.String(op))...))
	defer span.End()
	c := &call{span: span, outcome: OutcomeOK}
	start := time.Now()
	v, err := fn(ctx, c)
	mattrs := []attribute.KeyValue{KeyOperation.String(op)}
	if err != nil {
		c.outcome = OutcomeError
		kind := ErrorType(err)
		mattrs = append(mattrs, KeyErrorType.String(kind))
		span.SetAttributes(KeyErrorType.String(kind))
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	mattrs = append(mattrs, KeyOutcome.String(c.outcome))
	span.SetAttributes(KeyOutcome.String(c.outcome))
	w.in.calls.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(mattrs...))
	return v, err
}

// do0 is do for operations that return only an error.
func do0(w *provider, ctx context.Context, op, lockToken string, fn func(context.Context) error, attrs ...attribute.KeyValue) error {
	_, err := do(w, ctx, op, lockToken, func(ctx context.Context, _ *call) (struct{}, error) {
		return struct{}{}, fn(ctx)
	}, attrs...)
	return err
}

// parentFor puts the span of the unit holding lockToken into ctx, unless ctx
// already carries a span (the caller's own tracing wins).
func (w *provider) parentFor(ctx context.Context, lockToken string) context.Context {
	if lockToken == "" || trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	if s, ok := w.live.Load(lockToken); ok {
		return trace.ContextWithSpan(ctx, s.(trace.Span))
	}
	return ctx
}

// unitSpan is the span of the live turn or activity holding lockToken, or a
// no-op span.
func (w *provider) unitSpan(lockToken string) trace.Span {
	if s, ok := w.live.Load(lockToken); ok {
		return s.(trace.Span)
	}
	return trace.SpanFromContext(context.Background())
}

// Name reports the inner provider's name.
func (w *provider) Name() string { return w.inner.Name() }

// Version reports the inner provider's version.
func (w *provider) Version() string { return w.inner.Version() }

// Admin returns the instrumented admin of the inner provider, nil when it has
// none.
func (w *provider) Admin() duroxide.ProviderAdmin {
	if w.admin == nil {
		// A typed nil would make callers' "Admin() != nil" checks lie.
		return nil
	}
	return w.admin
}

func instanceAttrs(instance string, execution uint64) []attribute.KeyValue {
	return []attribute.KeyValue{KeyInstance.String(instance), KeyExecution.Int64(int64(execution))}
}

// workItemAttrs names the instance a work item is for, and the activity when
// it is one.
func workItemAttrs(item duroxide.WorkItem) []attribute.KeyValue {
	if item == nil || isNilPointer(item) {
		// Invalid input is the inner provider's to reject with a typed error;
		// naming it must not panic first.
		return nil
	}
	attrs := []attribute.KeyValue{KeyInstance.String(item.InstanceID())}
	if a, ok := item.(duroxide.ActivityExecute); ok {
		attrs = append(attrs, KeyExecution.Int64(int64(a.ExecutionID)), KeyActivityName.String(a.Name), KeyActivityID.Int64(int64(a.ID)))
	}
	return attrs
}

// isNilPointer reports a typed nil pointer inside an interface, whose value
// methods would panic.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// SupportsStickyRouting answers for the inner provider: sticky routes travel
// in the context, which the wrapper hands on unchanged, so a runtime behind
// the wrapper routes exactly as it would without it.
func (w *provider) SupportsStickyRouting() bool {
	sr, ok := w.inner.(duroxide.StickyRouter)
	return ok && sr.SupportsStickyRouting()
}
