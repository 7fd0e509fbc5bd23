package dxotel_test

import (
	"context"
	"flag"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/extra/dxotel"
	"github.com/duroxide-go/duroxide-redis/providertest"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// TestWrappedProviderPassesTheConformanceSuite proves the decorator changes
// nothing a caller can observe: the whole provider suite runs through it,
// with a recording SDK so every span and instrument is live.
func TestWrappedProviderPassesTheConformanceSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance suite takes a while")
	}
	m := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: m.Addr()})
	tel := newTelemetry(t)
	providertest.Run(t, providertest.Harness{
		New: func(t *testing.T) duroxide.Provider {
			p, err := redisprovider.New(context.Background(), redisprovider.Options{Client: client, Namespace: "c-" + uuid.NewString()})
			if err != nil {
				t.Fatalf("redisprovider.New: %v", err)
			}
			t.Cleanup(func() { p.Close() })
			return wrap(t, p, tel)
		},
		CorruptHistory: func(t *testing.T, p duroxide.Provider, instance string, executionID uint64) {
			inner := p.(dxotel.Provider).Unwrap().(*redisprovider.Provider)
			if err := client.RPush(context.Background(), inner.Keys().History(instance, executionID), `{"event_id":`).Err(); err != nil {
				t.Fatal(err)
			}
		},
	})
	if len(tel.spans.Ended()) == 0 {
		t.Errorf("the suite ran through the wrapper without a single span")
	}
	// The sections of the optional interfaces skip a provider without them:
	// their spans show they ran through the wrapper (when -run selected no
	// sections, so they all ran).
	if run := flag.Lookup("test.run"); run != nil && strings.Contains(run.Value.String(), "/") {
		return
	}
	for _, op := range []string{"ack_work_item_and_fetch", "ack_orchestration_item_and_fetch",
		"enqueue_for_worker_batch", "enqueue_for_orchestrator_batch"} {
		if len(tel.spansNamed(op)) == 0 {
			t.Errorf("no %s span: the suite's section for it did not run through the wrapper", op)
		}
	}
}
