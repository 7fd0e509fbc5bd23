package dxotel_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/extra/dxotel"
)

// TestDocReadme runs the README's block verbatim (the repository root's
// docblocks_test.go checks it is here): a wrapped provider and its observer
// under a runtime that completes an instance and records its turns.
func TestDocReadme(t *testing.T) {
	tel := newTelemetry(t)
	tp, mp := tel.opts.TracerProvider, tel.opts.MeterProvider
	provider := newRedisProvider(t)
	registry := durable.NewRegistry()
	registry.MustAddOrchestration("Hello", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		return "hello " + in, nil
	})
	logger := slog.New(slog.DiscardHandler)

	obs, err := dxotel.WrapProvider(provider, dxotel.Options{TracerProvider: tp, MeterProvider: mp})
	rt, err := durable.NewRuntime(obs, registry, durable.Options{
		Observer: obs.Observer(), // a span per turn and per activity execution
		Logger:   logger,         // the default discards; the global slog logger is never used
	})
	if err != nil {
		t.Fatalf("NewRuntime: %v", err)
	}
	ctx := context.Background()
	if err := rt.Client().StartOrchestration(ctx, "doc-1", "Hello", "otel"); err != nil {
		t.Fatal(err)
	}
	st, err := rt.Client().WaitForOrchestration(ctx, "doc-1", durabletest.DefaultWaitTimeout)
	if err != nil || st.Status != durable.StatusCompleted || st.Output != "hello otel" {
		t.Fatalf("status %+v, err %v; want Completed \"hello otel\"", st, err)
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := rt.Shutdown(sctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if len(tel.spans.Ended()) == 0 {
		t.Fatal("no span ended: the observer and the wrapped provider recorded nothing")
	}
}
