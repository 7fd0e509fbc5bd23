package durable_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// downProvider fails the first fetches with a retryable error, as while
// Redis is down.
type downProvider struct {
	duroxide.Provider
	down atomic.Int32 // fetches left to fail
}

func (d *downProvider) FetchOrchestrationItem(ctx context.Context, lock, poll time.Duration, f *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	if d.down.Add(-1) >= 0 {
		return nil, duroxide.Retryable("fetch_orchestration_item", "dial tcp 127.0.0.1:6379: connect: connection refused")
	}
	return d.Provider.FetchOrchestrationItem(ctx, lock, poll, f)
}

func (d *downProvider) FetchWorkItem(ctx context.Context, lock, poll time.Duration, s *duroxide.SessionFetchConfig, tags duroxide.TagFilter) (*duroxide.LockedWorkItem, error) {
	if d.down.Add(-1) >= 0 {
		return nil, duroxide.Retryable("fetch_work_item", "dial tcp 127.0.0.1:6379: connect: connection refused")
	}
	return d.Provider.FetchWorkItem(ctx, lock, poll, s, tags)
}

// Every failed fetch of every slot used to log a line (a few a second per
// slot while Redis is down); an outage is now one Warn when it starts and
// one Info when a fetch succeeds again.
func TestE2EOutageLogsAFewLines(t *testing.T) {
	t.Parallel()
	rec := newRecordingHandler()
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Echo", func(_ *durable.OrchestrationContext, in string) (string, error) { return in, nil })
	down := &downProvider{}
	down.down.Store(8)
	env := durabletest.Start(t, reg,
		durabletest.WithOptions(durable.Options{Logger: slog.New(rec), OrchestrationConcurrency: 2, WorkerConcurrency: 2}),
		durabletest.WithProviderWrapper(func(p duroxide.Provider) duroxide.Provider {
			down.Provider = p
			return down
		}))
	// a fetch that returns after the outage ends it: work makes the long
	// polls return at once
	mustComplete(t, env.StartAndWait(t, "after", "Echo", "x"), "x")
	deadline := time.After(30 * time.Second)
	for rec.count("reachable again") == 0 {
		select {
		case <-rec.seen:
		case <-deadline:
			t.Fatalf("no line says the storage is reachable again; lines: %v", rec.messages())
		}
	}
	if n := rec.count("storage unavailable"); n != 1 {
		t.Errorf("%d 'storage unavailable' lines for one outage of 8 failed fetches, want 1: %v", n, rec.messages())
	}
	if n := rec.count("fetch failed"); n != 0 {
		t.Errorf("%d lines per failed fetch, want none: %v", n, rec.messages())
	}
}
