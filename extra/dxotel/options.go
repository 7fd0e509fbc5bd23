package dxotel

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of every span and instrument.
const ScopeName = "github.com/duroxide-go/duroxide-redis/extra/dxotel"

// Options selects where telemetry goes.
type Options struct {
	// TracerProvider creates the spans; nil means otel.GetTracerProvider(), the
	// usual default of OTel instrumentation libraries (a no-op until the
	// application installs an SDK).
	TracerProvider trace.TracerProvider
	// MeterProvider creates the instruments; nil means otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// DisableGauges skips the queue-depth and instance-count gauges, for a
	// process that shares a namespace with another one already exporting them
	// (every process would otherwise report the same namespace-wide values).
	DisableGauges bool
}

func (o Options) tracer() trace.Tracer {
	tp := o.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(ScopeName)
}

func (o Options) meter() metric.Meter {
	mp := o.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	return mp.Meter(ScopeName)
}
