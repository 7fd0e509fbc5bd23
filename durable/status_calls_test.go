package durable_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// callLog records the provider methods a client calls.
type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *callLog) add(method string) {
	l.mu.Lock()
	l.calls = append(l.calls, method)
	l.mu.Unlock()
}

// take returns the calls logged since the last take, sorted.
func (l *callLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.calls
	l.calls = nil
	slices.Sort(out)
	return out
}

// loggedProvider logs every read a client's Status can make: the base
// reads, the management reads, the pause and pending-start reads. Other
// optional interfaces are hidden, so Status cannot reach the provider
// unlogged; the Redis round-trip count checks that too.
type loggedProvider struct {
	duroxide.Provider
	pauser duroxide.InstancePauser
	noter  duroxide.PendingStartNoter
	log    *callLog
}

func (p loggedProvider) Read(ctx context.Context, instance string) ([]duroxide.Event, error) {
	p.log.add("Read")
	return p.Provider.Read(ctx, instance)
}

func (p loggedProvider) ReadWithExecution(ctx context.Context, instance string, execution uint64) ([]duroxide.Event, error) {
	p.log.add("ReadWithExecution")
	return p.Provider.ReadWithExecution(ctx, instance, execution)
}

func (p loggedProvider) GetCustomStatus(ctx context.Context, instance string, v uint64) (*duroxide.CustomStatus, error) {
	p.log.add("GetCustomStatus")
	return p.Provider.GetCustomStatus(ctx, instance, v)
}

func (p loggedProvider) GetInstanceStats(ctx context.Context, instance string) (*duroxide.InstanceStats, error) {
	p.log.add("GetInstanceStats")
	return p.Provider.GetInstanceStats(ctx, instance)
}

func (p loggedProvider) PauseInstance(ctx context.Context, instance string) (bool, error) {
	p.log.add("PauseInstance")
	return p.pauser.PauseInstance(ctx, instance)
}

func (p loggedProvider) ResumeInstance(ctx context.Context, instance string) (bool, error) {
	p.log.add("ResumeInstance")
	return p.pauser.ResumeInstance(ctx, instance)
}

func (p loggedProvider) InstancePauseState(ctx context.Context, instance string) (duroxide.PauseState, error) {
	p.log.add("InstancePauseState")
	return p.pauser.InstancePauseState(ctx, instance)
}

func (p loggedProvider) PendingStart(ctx context.Context, instance string) (*duroxide.PendingStart, error) {
	p.log.add("PendingStart")
	return p.noter.PendingStart(ctx, instance)
}

func (p loggedProvider) AbandonOrchestrationItemWithNote(ctx context.Context, token string, delay time.Duration, ignore bool, note duroxide.PendingStart) error {
	p.log.add("AbandonOrchestrationItemWithNote")
	return p.noter.AbandonOrchestrationItemWithNote(ctx, token, delay, ignore, note)
}

func (p loggedProvider) ListPendingStarts(ctx context.Context, limit int) ([]duroxide.PendingStart, error) {
	p.log.add("ListPendingStarts")
	return p.noter.ListPendingStarts(ctx, limit)
}

func (p loggedProvider) Admin() duroxide.ProviderAdmin {
	return loggedAdmin{ProviderAdmin: p.Provider.Admin(), log: p.log}
}

// loggedAdmin logs the management reads of one instance.
type loggedAdmin struct {
	duroxide.ProviderAdmin
	log *callLog
}

func (a loggedAdmin) GetInstanceInfo(ctx context.Context, instance string) (duroxide.InstanceInfo, error) {
	a.log.add("GetInstanceInfo")
	return a.ProviderAdmin.GetInstanceInfo(ctx, instance)
}

func (a loggedAdmin) GetExecutionInfo(ctx context.Context, instance string, execution uint64) (duroxide.ExecutionInfo, error) {
	a.log.add("GetExecutionInfo")
	return a.ProviderAdmin.GetExecutionInfo(ctx, instance, execution)
}

func (a loggedAdmin) ReadHistory(ctx context.Context, instance string) ([]duroxide.Event, error) {
	a.log.add("ReadHistory")
	return a.ProviderAdmin.ReadHistory(ctx, instance)
}

func (a loggedAdmin) LatestExecutionID(ctx context.Context, instance string) (uint64, error) {
	a.log.add("LatestExecutionID")
	return a.ProviderAdmin.LatestExecutionID(ctx, instance)
}

func (a loggedAdmin) ListExecutions(ctx context.Context, instance string) ([]uint64, error) {
	a.log.add("ListExecutions")
	return a.ProviderAdmin.ListExecutions(ctx, instance)
}

// roundTrips counts the commands and pipelines a Redis client sends.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmd)
	}
}

func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmds)
	}
}

// loggedClient is a client on env's namespace through a provider of its
// own, on a Redis connection of its own (the runtime's traffic is not
// counted), whose calls are logged and whose round trips are counted.
func loggedClient(t *testing.T, env *durabletest.Env) (*durable.Client, *callLog, *roundTrips) {
	t.Helper()
	rt := &roundTrips{}
	rdb := redis.NewClient(&redis.Options{Addr: env.Redis.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	ns := strings.TrimSuffix(strings.TrimPrefix(env.Provider.Keys().Prefix(), "{"), "}:")
	p, err := redisprovider.New(t.Context(), redisprovider.Options{Client: rdb, Namespace: ns, OpenOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	rdb.AddHook(rt)
	log := &callLog{}
	return durable.NewClient(loggedProvider{Provider: p, pauser: p, noter: p, log: log}), log, rt
}

// Status of a Running instance reads its record, which carries the pause
// flag, and its custom status: two provider calls, two round trips (it was
// three: the history, the custom status and the pause state). A completed
// one costs the same; a failed one reads its history too (the failure's
// details); one without record, its history and pending-start note. The
// paused flag is right for a paused instance holding a message, a resumed
// one and one never paused.
func TestStatusReadsThePauseFlagWithTheRecord(t *testing.T) {
	t.Parallel()
	reg := pauseRegistry()
	reg.MustAddOrchestration("Boom", func(*durable.OrchestrationContext, string) (string, error) {
		return "", errors.New("boom")
	})
	env := durabletest.Start(t, reg)
	ctx := t.Context()
	gate := func(id string) {
		t.Helper()
		if err := env.Client.StartOrchestration(ctx, id, "Gate", ""); err != nil {
			t.Fatal(err)
		}
		env.WaitForEventSubscription(t, id, "go")
	}
	gate("paused")
	if err := env.Client.PauseInstance(ctx, "paused"); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.RaiseEvent(ctx, "paused", "go", `"held"`); err != nil {
		t.Fatal(err)
	}
	waitHeld(t, env.Client, "paused", 1)
	gate("resumed")
	if err := env.Client.PauseInstance(ctx, "resumed"); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.ResumeInstance(ctx, "resumed"); err != nil {
		t.Fatal(err)
	}
	gate("never")
	env.StartAndWait(t, "done", "Ping", "x")
	env.StartAndWait(t, "failed", "Boom", "")

	c, log, trips := loggedClient(t, env)
	for _, id := range []string{"paused", "never"} { // the record carries what InstancePauseState reads
		info, err := c.Admin().GetInstanceInfo(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		ps, err := env.Client.PauseState(ctx, id)
		if err != nil || info.Pause == nil || *info.Pause != ps {
			t.Fatalf("%s: record's pause %+v, PauseState %+v %v", id, info.Pause, ps, err)
		}
		if id == "paused" && (!ps.Paused || ps.Held != 1) {
			t.Fatalf("paused: pause state %+v, want paused with 1 held", ps)
		}
	}
	for _, tc := range []struct {
		id     string
		status durable.RuntimeStatus
		paused bool
		calls  []string
	}{
		{"paused", durable.StatusRunning, true, []string{"GetCustomStatus", "GetInstanceInfo"}},
		{"resumed", durable.StatusRunning, false, []string{"GetCustomStatus", "GetInstanceInfo"}},
		{"never", durable.StatusRunning, false, []string{"GetCustomStatus", "GetInstanceInfo"}},
		{"done", durable.StatusCompleted, false, []string{"GetCustomStatus", "GetInstanceInfo"}},
		{"failed", durable.StatusFailed, false, []string{"GetCustomStatus", "GetInstanceInfo", "Read"}},
		{"unknown", durable.StatusNotFound, false, []string{"GetInstanceInfo", "PendingStart", "Read"}},
	} {
		if _, err := c.Status(ctx, tc.id); err != nil { // loads the scripts and the connection
			t.Fatal(err)
		}
		log.take()
		before := trips.n.Load()
		st, err := c.Status(ctx, tc.id)
		calls, sent := log.take(), trips.n.Load()-before
		if err != nil || st.Status != tc.status || st.Paused != tc.paused {
			t.Fatalf("%s: status %v paused %v (%v), want %v paused %v", tc.id, st.Status, st.Paused, err, tc.status, tc.paused)
		}
		if !slices.Equal(calls, tc.calls) || sent != int64(len(calls)) {
			t.Errorf("%s: Status made calls %v in %d round trips, want %v, one round trip each", tc.id, calls, sent, tc.calls)
		}
	}
	// the Completed output is the record's, the OrchestrationCompleted event's
	if st, err := c.Status(ctx, "done"); err != nil || st.Output != "x" {
		t.Fatalf("done: output %q %v, want x", st.Output, err)
	}
	if st, err := c.Status(ctx, "failed"); err != nil || st.Failure == nil || !strings.Contains(st.FailureMessage(), "boom") {
		t.Fatalf("failed: %+v %v, want the failure details", st, err)
	}
}

var (
	_ duroxide.InstancePauser    = loggedProvider{}
	_ duroxide.PendingStartNoter = loggedProvider{}
)
