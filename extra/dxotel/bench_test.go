//go:build unix

package dxotel_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/extra/dxotel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// BenchmarkFanOut5 is durable's BenchmarkFanOut5 (whole orchestrations of
// five activities, all in flight at once, 4 orchestration and 8 worker
// slots) on the bare provider and through the wrapper with a recording SDK
// (every span built and ended, every instrument aggregated; nothing
// exported), back to back on each backend of durabletest.Backends
// (miniredis, and the Redis at DUROXIDE_REDIS_URL when set), so the two are
// compared on a machine in the same state. Besides throughput it reports the
// CPU time this process (runtime, client and instrumentation, not the Redis
// server) spent per orchestration, which other loads on a shared machine
// disturb much less. DUROXIDE_ACK_FETCH=off runs both on the plain
// ack-then-fetch path.
func BenchmarkFanOut5(b *testing.B) {
	for _, be := range durabletest.Backends(b) {
		for _, otel := range []bool{false, true} {
			name := be.Name + "/bare"
			if otel {
				name = be.Name + "/otel"
			}
			b.Run(name, func(b *testing.B) {
				opts := durable.Options{LongPollTimeout: 100 * time.Millisecond, OrchestrationConcurrency: 4, WorkerConcurrency: 8}
				envOpts := []durabletest.Option{durabletest.WithBackend(be)}
				if otel {
					var obs dxotel.Provider
					tel := recordingSDK(b)
					opts.Observer = lateObserver{&obs}
					envOpts = append(envOpts, durabletest.WithProviderWrapper(func(p duroxide.Provider) duroxide.Provider {
						w, err := dxotel.WrapProvider(p, tel)
						if err != nil {
							b.Fatal(err)
						}
						obs = w
						return w
					}))
				}
				env := durabletest.Start(b, fanOutRegistry(5), append(envOpts, durabletest.WithOptions(opts))...)
				b.ResetTimer()
				began, cpu := time.Now(), cpuTime(b)
				for i := range b.N {
					if err := env.Client.StartOrchestration(b.Context(), fmt.Sprint("fan-", i), "Fan", "1"); err != nil {
						b.Fatal(err)
					}
				}
				for i := range b.N {
					if st := env.Wait(b, fmt.Sprint("fan-", i)); st.Status != durable.StatusCompleted {
						b.Fatalf("fan-%d: %v", i, st)
					}
				}
				b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "orch/s")
				b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/float64(b.N), "cpu-us/orch")
			})
		}
	}
}

// recordingSDK is an SDK pipeline that records everything and exports
// nothing, so the benchmark measures the instrumentation, not an exporter.
func recordingSDK(b *testing.B) dxotel.Options {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	return dxotel.Options{TracerProvider: tp, MeterProvider: mp}
}

// cpuTime is the user and system CPU time this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
