package dxotel

import (
	"go.opentelemetry.io/otel/metric"
)

// Metric names; the Prometheus exporter turns dots into underscores, adds the
// unit suffix to the histogram (_seconds) and _total to the counters.
const (
	MetricCallDuration = "duroxide.provider.call.duration"
	MetricTurns        = "duroxide.orchestration.turns"
	MetricActivities   = "duroxide.activity.executions"
	MetricPoison       = "duroxide.poison.messages"
	MetricRenewals     = "duroxide.lock.renewals"
	MetricQueueDepth   = "duroxide.queue.depth"
	MetricInstances    = "duroxide.instances"
	MetricByStatus     = "duroxide.instances.by_status"
	MetricExecutions   = "duroxide.executions"
	MetricEvents       = "duroxide.history.events"
)

// callBuckets suit Redis round trips (sub-millisecond) as well as long polls
// (seconds); the SDK's default buckets start at 5ms and would lump every
// healthy call together.
var callBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// instruments are the synchronous instruments of one wrapped provider.
type instruments struct {
	calls      metric.Float64Histogram
	turns      metric.Int64Counter
	activities metric.Int64Counter
	poison     metric.Int64Counter
	renewals   metric.Int64Counter
}

func newInstruments(m metric.Meter) (instruments, error) {
	var in instruments
	var err error
	if in.calls, err = m.Float64Histogram(MetricCallDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of duroxide provider calls, by operation and outcome."),
		metric.WithExplicitBucketBoundaries(callBuckets...)); err != nil {
		return in, err
	}
	if in.turns, err = m.Int64Counter(MetricTurns, metric.WithUnit("{turn}"),
		metric.WithDescription("Committed orchestration turns, by the status the turn left the instance in.")); err != nil {
		return in, err
	}
	if in.activities, err = m.Int64Counter(MetricActivities, metric.WithUnit("{execution}"),
		metric.WithDescription("Acknowledged activity executions, by outcome (completed, failed, cancelled, poisoned).")); err != nil {
		return in, err
	}
	if in.poison, err = m.Int64Counter(MetricPoison, metric.WithUnit("{message}"),
		metric.WithDescription("Messages failed for exceeding their maximum attempts, by kind.")); err != nil {
		return in, err
	}
	in.renewals, err = m.Int64Counter(MetricRenewals, metric.WithUnit("{renewal}"),
		metric.WithDescription("Lock renewals, by lock kind and outcome."))
	return in, err
}
