package dxotel_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/extra/dxotel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// countingAdmin answers the two summary reads with fixed values and counts
// them; any other admin call panics through the nil embedded interface.
type countingAdmin struct {
	duroxide.ProviderAdmin
	depthReads, metricReads atomic.Int64
}

func (a *countingAdmin) GetQueueDepths(context.Context) (duroxide.QueueDepths, error) {
	a.depthReads.Add(1)
	return duroxide.QueueDepths{OrchestratorQueue: 3, WorkerQueue: 5, TimerQueue: 7}, nil
}

func (a *countingAdmin) GetSystemMetrics(context.Context) (duroxide.SystemMetrics, error) {
	a.metricReads.Add(1)
	return duroxide.SystemMetrics{TotalInstances: 100, TotalExecutions: 120, RunningInstances: 60,
		CompletedInstances: 30, FailedInstances: 10, TotalEvents: 900}, nil
}

type withAdmin struct {
	duroxide.Provider
	admin *countingAdmin
}

func (p withAdmin) Admin() duroxide.ProviderAdmin { return p.admin }

// gaugeValue is the value of the gauge point whose attributes include want.
func gaugeValue(t *testing.T, data metricdata.Aggregation, want map[attribute.Key]string) int64 {
	t.Helper()
	g := as[metricdata.Gauge[int64]](t, data)
	for _, dp := range g.DataPoints {
		if hasAttrs(dp.Attributes, want) {
			return dp.Value
		}
	}
	t.Fatalf("no gauge point with %v", want)
	return 0
}

func TestGaugesReadEachSummaryOncePerCollection(t *testing.T) {
	tel := newTelemetry(t)
	a := &countingAdmin{}
	w := wrap(t, withAdmin{admin: a}, tel)
	checks := []struct {
		name string
		want map[attribute.Key]string
		val  int64
	}{
		{dxotel.MetricQueueDepth, attrs{dxotel.KeyQueue: "orchestrator"}, 3},
		{dxotel.MetricQueueDepth, attrs{dxotel.KeyQueue: "worker"}, 5},
		{dxotel.MetricQueueDepth, attrs{dxotel.KeyQueue: "timer"}, 7},
		{dxotel.MetricInstances, attrs{}, 100},
		{dxotel.MetricByStatus, attrs{dxotel.KeyStatus: "running"}, 60},
		{dxotel.MetricByStatus, attrs{dxotel.KeyStatus: "completed"}, 30},
		{dxotel.MetricByStatus, attrs{dxotel.KeyStatus: "failed"}, 10},
		{dxotel.MetricExecutions, attrs{}, 120},
		{dxotel.MetricEvents, attrs{}, 900},
	}
	for i, c := range checks {
		if got := gaugeValue(t, tel.collect(t, c.name), c.want); got != c.val {
			t.Errorf("%s%v = %d, want %d", c.name, c.want, got, c.val)
		}
		// One collection per check: each must have cost exactly one read of
		// each summary, however many gauges and series it produced.
		if d, m := a.depthReads.Load(), a.metricReads.Load(); d != int64(i+1) || m != int64(i+1) {
			t.Fatalf("after %d collections: %d depth reads, %d metric reads", i+1, d, m)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tel.collected(t, dxotel.MetricInstances)
	if d := a.depthReads.Load(); d != int64(len(checks)) {
		t.Errorf("gauges still read after Close: %d reads", d)
	}
}

func TestGaugesFollowTheRedisProvider(t *testing.T) {
	ctx := context.Background()
	tel := newTelemetry(t)
	w := wrap(t, newRedisProvider(t), tel)
	start := duroxide.StartOrchestration{Instance: "late", Orchestration: "O", Input: "{}"}
	if err := w.EnqueueForOrchestrator(ctx, start, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := w.EnqueueForWorker(ctx, duroxide.ActivityExecute{Instance: "late", ExecutionID: 1, ID: 1, Name: "A"}); err != nil {
		t.Fatal(err)
	}
	depth := tel.collect(t, dxotel.MetricQueueDepth)
	if gaugeValue(t, depth, attrs{dxotel.KeyQueue: "timer"}) != 1 || gaugeValue(t, depth, attrs{dxotel.KeyQueue: "worker"}) != 1 ||
		gaugeValue(t, depth, attrs{dxotel.KeyQueue: "orchestrator"}) != 0 {
		t.Errorf("queue depths: %+v", depth)
	}
	if n := len(tel.spansNamed("get_queue_depths")); n != 0 {
		t.Errorf("a collection must not create spans, got %d", n)
	}
}

// TestGaugesOfAPartitionedNamespaceArePerPartition: a namespace of 4
// partitions reports each gauge once per partition (duroxide.partition),
// and the series add up to the namespace's figures.
func TestGaugesOfAPartitionedNamespaceArePerPartition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tel := newTelemetry(t)
	p := newPartitionedProvider(t, 4)
	wrap(t, p, tel)
	for i := range 12 {
		runningInstance(t, p, fmt.Sprint("g-", i))
	}
	want, err := p.GetSystemMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g := as[metricdata.Gauge[int64]](t, tel.collect(t, dxotel.MetricByStatus))
	var sum int64
	perPartition := map[string]int64{}
	for _, dp := range g.DataPoints {
		part, ok := dp.Attributes.Value(dxotel.KeyPartition)
		status, _ := dp.Attributes.Value(dxotel.KeyStatus)
		if !ok {
			t.Fatalf("a by-status point without %s: %v", dxotel.KeyPartition, dp.Attributes.ToSlice())
		}
		if status.AsString() == "running" {
			sum += dp.Value
			perPartition[part.Emit()] += dp.Value
		}
	}
	if len(perPartition) != 4 || sum != int64(want.RunningInstances) || sum != 12 {
		t.Fatalf("running per partition %v (sum %d), namespace %d, want 12 over 4 partitions", perPartition, sum, want.RunningInstances)
	}
	for i := range 4 {
		want := int64(0)
		for j := range 12 {
			if p.PartitionOf(fmt.Sprint("g-", j)) == i {
				want++
			}
		}
		if got := perPartition[fmt.Sprint(i)]; got != want {
			t.Errorf("partition %d reports %d running, holds %d", i, got, want)
		}
	}
}
