package dxotel

import (
	"context"
	"errors"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// gauges are the observable instruments fed from one admin read per
// collection.
type gauges struct {
	depth, instances, byStatus, executions, events metric.Int64ObservableGauge
}

// registerGauges creates the gauges and one callback for all of them, so a
// collection costs one GetQueueDepths and one GetSystemMetrics however many
// series they produce (the SDK calls a multi-instrument callback once per
// collection). The inner admin is read directly: a scrape is not a provider
// call worth a span.
func registerGauges(m metric.Meter, a duroxide.ProviderAdmin) (metric.Registration, error) {
	g, err := newGauges(m)
	if err != nil {
		return nil, err
	}
	return m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		return g.observe(ctx, o, a)
	}, g.depth, g.instances, g.byStatus, g.executions, g.events)
}

func newGauges(m metric.Meter) (*gauges, error) {
	var g gauges
	var errs [5]error
	g.depth, errs[0] = m.Int64ObservableGauge(MetricQueueDepth, metric.WithUnit("{message}"),
		metric.WithDescription("Unlocked messages waiting in a queue (timer: orchestrator messages visible later)."))
	g.instances, errs[1] = m.Int64ObservableGauge(MetricInstances, metric.WithUnit("{instance}"),
		metric.WithDescription("Known orchestration instances."))
	g.byStatus, errs[2] = m.Int64ObservableGauge(MetricByStatus, metric.WithUnit("{instance}"),
		metric.WithDescription("Instances by the status of their current execution."))
	g.executions, errs[3] = m.Int64ObservableGauge(MetricExecutions, metric.WithUnit("{execution}"),
		metric.WithDescription("Stored executions of all instances."))
	g.events, errs[4] = m.Int64ObservableGauge(MetricEvents, metric.WithUnit("{event}"),
		metric.WithDescription("Stored history events of all executions."))
	return &g, errors.Join(errs[:]...)
}

// partitionedAdmin is the admin of a namespace spread over partitions
// (redisprovider.Provider): its gauges are reported per partition.
type partitionedAdmin interface {
	PartitionAdmins() []duroxide.ProviderAdmin
}

// observe reports every gauge: once, or, for a namespace of several
// partitions, once per partition with the duroxide.partition attribute (the
// same reads: the namespace's sums read every partition anyway), so a sum
// over that attribute is the namespace's figure and no series counts twice.
func (g *gauges) observe(ctx context.Context, o metric.Observer, a duroxide.ProviderAdmin) error {
	if p, ok := a.(partitionedAdmin); ok {
		if parts := p.PartitionAdmins(); len(parts) > 1 {
			var errs []error
			for i, pa := range parts {
				errs = append(errs, g.observeOne(ctx, o, pa, KeyPartition.Int(i)))
			}
			return errors.Join(errs...)
		}
	}
	return g.observeOne(ctx, o, a)
}

// observeOne reads the two admin summaries of a and reports every gauge with
// the attributes at. A failed read skips its gauges for this collection
// rather than reporting zeros that would look like an empty system.
func (g *gauges) observeOne(ctx context.Context, o metric.Observer, a duroxide.ProviderAdmin, at ...attribute.KeyValue) error {
	with := func(kv ...attribute.KeyValue) metric.ObserveOption {
		return metric.WithAttributes(append(kv, at...)...)
	}
	d, derr := a.GetQueueDepths(ctx)
	if derr == nil {
		o.ObserveInt64(g.depth, int64(d.OrchestratorQueue), with(KeyQueue.String("orchestrator")))
		o.ObserveInt64(g.depth, int64(d.WorkerQueue), with(KeyQueue.String("worker")))
		o.ObserveInt64(g.depth, int64(d.TimerQueue), with(KeyQueue.String("timer")))
	}
	s, serr := a.GetSystemMetrics(ctx)
	if serr == nil {
		o.ObserveInt64(g.instances, int64(s.TotalInstances), with())
		o.ObserveInt64(g.byStatus, int64(s.RunningInstances), with(KeyStatus.String("running")))
		o.ObserveInt64(g.byStatus, int64(s.CompletedInstances), with(KeyStatus.String("completed")))
		o.ObserveInt64(g.byStatus, int64(s.FailedInstances), with(KeyStatus.String("failed")))
		o.ObserveInt64(g.executions, int64(s.TotalExecutions), with())
		o.ObserveInt64(g.events, int64(s.TotalEvents), with())
	}
	return errors.Join(derr, serr)
}
