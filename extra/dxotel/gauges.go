package dxotel

import (
	"context"
	"errors"

	"github.com/duroxide-go/duroxide-redis/duroxide"
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

// observe reads the two admin summaries and reports every gauge. A failed
// read skips its gauges for this collection rather than reporting zeros that
// would look like an empty system.
func (g *gauges) observe(ctx context.Context, o metric.Observer, a duroxide.ProviderAdmin) error {
	d, derr := a.GetQueueDepths(ctx)
	if derr == nil {
		o.ObserveInt64(g.depth, int64(d.OrchestratorQueue), metric.WithAttributes(KeyQueue.String("orchestrator")))
		o.ObserveInt64(g.depth, int64(d.WorkerQueue), metric.WithAttributes(KeyQueue.String("worker")))
		o.ObserveInt64(g.depth, int64(d.TimerQueue), metric.WithAttributes(KeyQueue.String("timer")))
	}
	s, serr := a.GetSystemMetrics(ctx)
	if serr == nil {
		o.ObserveInt64(g.instances, int64(s.TotalInstances))
		o.ObserveInt64(g.byStatus, int64(s.RunningInstances), metric.WithAttributes(KeyStatus.String("running")))
		o.ObserveInt64(g.byStatus, int64(s.CompletedInstances), metric.WithAttributes(KeyStatus.String("completed")))
		o.ObserveInt64(g.byStatus, int64(s.FailedInstances), metric.WithAttributes(KeyStatus.String("failed")))
		o.ObserveInt64(g.executions, int64(s.TotalExecutions))
		o.ObserveInt64(g.events, int64(s.TotalEvents))
	}
	return errors.Join(derr, serr)
}
