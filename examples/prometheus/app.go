package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/extra/dxotel"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// app is a durable runtime whose telemetry goes to a Prometheus registry of
// its own (never the global one, so tests and other libraries cannot collide
// with it).
type app struct {
	runtime *durable.Runtime
	metrics http.Handler
	close   func()
}

// namespace keeps the example's instances apart from a deployment's on the
// same Redis; it is logged at start, so the CLI can be pointed at them.
const namespace = "dxexample"

// newApp connects to Redis, instruments the provider and starts the runtime.
func newApp(ctx context.Context, redisURL string, logger *slog.Logger) (*app, error) {
	p, err := redisprovider.New(ctx, redisprovider.Options{URL: redisURL, Namespace: namespace, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", redisURL, err)
	}
	logger.Info("storage", "redis", redisURL, "namespace", namespace, "inspect", "duroxide-redis --namespace "+namespace+" instances")
	promReg := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(promReg))
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("prometheus exporter: %w", err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	// No TracerProvider: spans go to the global one, a no-op until the
	// application installs an SDK with an exporter.
	obs, err := dxotel.WrapProvider(p, dxotel.Options{MeterProvider: mp})
	if err != nil {
		p.Close()
		return nil, err
	}
	rt, err := durable.NewRuntime(obs, registry(), durable.Options{Observer: obs.Observer(), Logger: logger})
	if err != nil {
		p.Close()
		return nil, err
	}
	return &app{
		runtime: rt,
		metrics: promhttp.HandlerFor(promReg, promhttp.HandlerOpts{}),
		close: func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = rt.Shutdown(sctx)
			_ = obs.Close()
			_ = mp.Shutdown(sctx)
			p.Close()
		},
	}, nil
}

// registry holds the demo workflow: a greeting built by one activity, and a
// second activity that fails for every other user so failures show up too.
func registry() *durable.Registry {
	reg := durable.NewRegistry()
	reg.MustAddActivity("Greet", func(_ *durable.ActivityContext, name string) (string, error) {
		return "hello " + name, nil
	})
	reg.MustAddActivity("Audit", func(_ *durable.ActivityContext, name string) (string, error) {
		if name != "" && name[len(name)-1]%2 == 1 { // user1, user3, ...
			return "", errors.New("audit service rejected " + name)
		}
		return "audited", nil
	})
	reg.MustAddOrchestration("Greeting", func(ctx *durable.OrchestrationContext, name string) (string, error) {
		greeting, err := ctx.ScheduleActivity("Greet", name).Get()
		if err != nil {
			return "", err
		}
		if _, err := ctx.ScheduleActivity("Audit", name).Get(); err != nil {
			ctx.Logger().Warn("audit failed, greeting anyway", "error", err)
		}
		return greeting, nil
	})
	return reg
}

// runGreetings starts n Greeting instances and waits for all of them.
func (a *app) runGreetings(ctx context.Context, n int) error {
	c := a.runtime.Client()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("greeting-%d-%d", time.Now().UnixNano(), i)
		if err := c.StartOrchestration(ctx, ids[i], "Greeting", fmt.Sprintf("user%d", i)); err != nil {
			return err
		}
	}
	for _, id := range ids {
		st, err := c.WaitForOrchestration(ctx, id, 30*time.Second)
		if err != nil {
			return fmt.Errorf("wait for %s: %w", id, err)
		}
		if st.Status != durable.StatusCompleted {
			return fmt.Errorf("%s ended %v", id, st.Status)
		}
	}
	return nil
}
