package dxotel_test

import (
	"context"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/extra/dxotel"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// telemetry is an in-memory SDK pipeline: every ended span and a metric
// reader the test collects from explicitly.
type telemetry struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	opts   dxotel.Options
}

func newTelemetry(t *testing.T) *telemetry {
	t.Helper()
	tel := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tel.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	tel.opts = dxotel.Options{TracerProvider: tp, MeterProvider: mp}
	return tel
}

// collect returns the metrics of the named instrument, failing when absent.
func (tel *telemetry) collect(t *testing.T, name string) metricdata.Aggregation {
	t.Helper()
	data := tel.find(t, name)
	if data == nil {
		t.Fatalf("metric %s not collected", name)
	}
	return data
}

// collected reports whether a collection includes the named instrument (an
// instrument nothing was recorded on is left out).
func (tel *telemetry) collected(t *testing.T, name string) bool {
	t.Helper()
	return tel.find(t, name) != nil
}

func (tel *telemetry) find(t *testing.T, name string) metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("collect: %v", err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m.Data
			}
		}
	}
	return nil
}

// spansNamed returns the ended spans called name.
func (tel *telemetry) spansNamed(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range tel.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// attr returns the value of key on s as a string ("" when missing).
func attr(s sdktrace.ReadOnlySpan, key attribute.Key) string {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

// hasAttrs reports whether set holds every key/value of want.
func hasAttrs(set attribute.Set, want map[attribute.Key]string) bool {
	for k, v := range want {
		got, ok := set.Value(k)
		if !ok || got.Emit() != v {
			return false
		}
	}
	return true
}

// sumCount adds the Int64 sum points whose attributes include want.
func sumCount(t *testing.T, data metricdata.Aggregation, want map[attribute.Key]string) int64 {
	t.Helper()
	sum := as[metricdata.Sum[int64]](t, data)
	return addMatching(sum.DataPoints, want, func(dp metricdata.DataPoint[int64]) (attribute.Set, int64) { return dp.Attributes, dp.Value })
}

// histCount adds the histogram counts whose attributes include want.
func histCount(t *testing.T, data metricdata.Aggregation, want map[attribute.Key]string) uint64 {
	t.Helper()
	h := as[metricdata.Histogram[float64]](t, data)
	return addMatching(h.DataPoints, want, func(dp metricdata.HistogramDataPoint[float64]) (attribute.Set, uint64) {
		return dp.Attributes, dp.Count
	})
}

// wantOneOkOneEmpty asserts that the call histogram recorded op once with
// outcome ok and once with outcome empty.
func wantOneOkOneEmpty(t *testing.T, tel *telemetry, op string) {
	t.Helper()
	calls := tel.collect(t, dxotel.MetricCallDuration)
	for _, outcome := range []string{"ok", "empty"} {
		if n := histCount(t, calls, map[attribute.Key]string{dxotel.KeyOperation: op, dxotel.KeyOutcome: outcome}); n != 1 {
			t.Errorf("%s %s: %d calls recorded, want 1", op, outcome, n)
		}
	}
}

// as asserts the aggregation's type.
func as[A metricdata.Aggregation](t *testing.T, data metricdata.Aggregation) A {
	t.Helper()
	a, ok := data.(A)
	if !ok {
		t.Fatalf("want %T, got %T", a, data)
	}
	return a
}

// addMatching adds the values of the points whose attributes include want.
func addMatching[P any, N int64 | uint64](points []P, want map[attribute.Key]string, read func(P) (attribute.Set, N)) N {
	var n N
	for _, p := range points {
		if set, v := read(p); hasAttrs(set, want) {
			n += v
		}
	}
	return n
}

// newRedisProvider is the Redis provider on a fresh miniredis.
func newRedisProvider(t *testing.T) *redisprovider.Provider {
	t.Helper()
	return newPartitionedProvider(t, 0)
}

// newPartitionedProvider is the Redis provider of a namespace of
// partitions partitions on a fresh miniredis.
func newPartitionedProvider(t *testing.T, partitions int) *redisprovider.Provider {
	t.Helper()
	m := miniredis.RunT(t)
	p, err := redisprovider.New(context.Background(), redisprovider.Options{URL: "redis://" + m.Addr(), Namespace: "dxotel", Partitions: partitions})
	if err != nil {
		t.Fatalf("provider: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// wrap instruments p for tel, failing the test on error.
func wrap(t *testing.T, p duroxide.Provider, tel *telemetry) dxotel.Provider {
	t.Helper()
	w, err := dxotel.WrapProvider(p, tel.opts)
	if err != nil {
		t.Fatalf("WrapProvider: %v", err)
	}
	return w
}

// stop shuts env's runtime down, which ends every call and unit it was
// running: an instance completes before the spans of its last units and of
// the ack-and-fetch calls still polling for more have ended.
func stop(t *testing.T, env *durabletest.Env) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), durabletest.ShutdownGrace)
	defer cancel()
	if err := env.Runtime.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}
