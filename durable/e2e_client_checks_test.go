package durable_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// gatedEnv is an Env whose "Gate" orchestration waits for the "go" event.
func gatedEnv(t *testing.T) *durabletest.Env {
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Gate", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		return ctx.WaitForEvent("go").Get()
	})
	return durabletest.Start(t, reg)
}

// Starting an id that exists, or whose start is waiting, used to return nil
// and do nothing: now it is ErrAlreadyExists, running or finished, and
// UseExisting turns it into nil; nothing is started twice.
func TestE2EClientStartOfAnExistingInstanceFails(t *testing.T) {
	t.Parallel()
	env := gatedEnv(t)
	ctx := context.Background()
	if err := env.Client.StartOrchestration(ctx, "dup", "Gate", "a"); err != nil {
		t.Fatal(err)
	}
	// the start may still wait in the queue: it counts as existing
	if err := env.Client.StartOrchestration(ctx, "dup", "Gate", "b"); !errors.Is(err, durable.ErrAlreadyExists) {
		t.Fatalf("second start while the first waits = %v, want ErrAlreadyExists", err)
	}
	env.WaitForEventSubscription(t, "dup", "go")
	if err := env.Client.StartOrchestration(ctx, "dup", "Gate", "c"); !errors.Is(err, durable.ErrAlreadyExists) {
		t.Fatalf("start of a running instance = %v, want ErrAlreadyExists", err)
	}
	if err := env.Client.StartOrchestration(ctx, "dup", "Gate", "d", durable.UseExisting()); err != nil {
		t.Fatalf("start of a running instance with UseExisting = %v, want nil", err)
	}
	if err := env.Client.RaiseEvent(ctx, "dup", "go", "done"); err != nil {
		t.Fatal(err)
	}
	if st := env.Wait(t, "dup"); st.Output != "done" {
		t.Fatalf("output %q, want done", st.Output)
	}
	err := env.Client.StartOrchestration(ctx, "dup", "Gate", "e")
	if !errors.Is(err, durable.ErrAlreadyExists) || !errors.Is(err, duroxide.ErrAlreadyExists) {
		t.Fatalf("start of a completed instance = %v, want ErrAlreadyExists", err)
	}
	hist, err := env.Provider.Read(ctx, "dup")
	if err != nil {
		t.Fatal(err)
	}
	started := hist[0].Kind.(duroxide.OrchestrationStartedEvent)
	if started.Input != "a" {
		t.Fatalf("the instance runs input %q, want the first start's", started.Input)
	}
}

// Raising, enqueueing to or cancelling an id that never existed used to
// return nil and queue a message nobody reads: now ErrNotFound, nothing
// queued. An instance whose start waits counts as existing.
func TestE2EClientSignalsOfAnUnknownInstanceFail(t *testing.T) {
	t.Parallel()
	env := gatedEnv(t)
	ctx := context.Background()
	calls := map[string]func(id string) error{
		"raise":   func(id string) error { return env.Client.RaiseEvent(ctx, id, "go", "x") },
		"enqueue": func(id string) error { return env.Client.EnqueueEvent(ctx, id, "q", "x") },
		"cancel":  func(id string) error { return env.Client.CancelInstance(ctx, id, "why") },
	}
	for name, call := range calls {
		err := call("never-" + name)
		if !errors.Is(err, durable.ErrNotFound) {
			t.Errorf("%s of an unknown instance = %v, want ErrNotFound", name, err)
		} else if want := "never-" + name; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %q does not name the operation and the instance", name, err)
		}
	}
	d, err := env.Provider.GetQueueDepths(ctx)
	if err != nil || d.OrchestratorQueue != 0 {
		t.Fatalf("queue depths after the refused calls: %+v, %v; want nothing queued", d, err)
	}
	if err := env.Client.StartOrchestration(ctx, "known", "Gate", ""); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.RaiseEvent(ctx, "known", "early", "x"); err != nil {
		t.Fatalf("raise to an instance whose start waits = %v, want nil", err)
	}
}

// lossyProvider applies the first checked enqueues and then reports them
// lost (a retryable error, as when the reply of an applied call is lost),
// and fails the first reads of status (history, record, custom status)
// with a retryable error (Redis restarting).
type lossyProvider struct {
	duroxide.Provider
	checked      duroxide.CheckedEnqueuer
	lostReplies  atomic.Int32 // applied, then reported failed
	failedReads  atomic.Int32 // not applied, reported failed
	checkedCalls atomic.Int32
}

func (l *lossyProvider) EnqueueForOrchestratorChecked(ctx context.Context, item duroxide.WorkItem, opts duroxide.CheckedEnqueue) error {
	l.checkedCalls.Add(1)
	err := l.checked.EnqueueForOrchestratorChecked(ctx, item, opts)
	if err == nil && l.lostReplies.Add(-1) >= 0 {
		return duroxide.Retryable("enqueue_for_orchestrator_checked", "EOF")
	}
	return err
}

func (l *lossyProvider) Read(ctx context.Context, instance string) ([]duroxide.Event, error) {
	if l.failedReads.Add(-1) >= 0 {
		return nil, duroxide.Retryable("read", "dial tcp: connection refused")
	}
	return l.Provider.Read(ctx, instance)
}

// Admin fails the first reads of the instance record as Read does: Status
// reads the record first.
func (l *lossyProvider) Admin() duroxide.ProviderAdmin {
	return lossyAdmin{ProviderAdmin: l.Provider.Admin(), l: l}
}

type lossyAdmin struct {
	duroxide.ProviderAdmin
	l *lossyProvider
}

func (a lossyAdmin) GetInstanceInfo(ctx context.Context, instance string) (duroxide.InstanceInfo, error) {
	if a.l.failedReads.Add(-1) >= 0 {
		return duroxide.InstanceInfo{}, duroxide.Retryable("get_instance_info", "dial tcp: connection refused")
	}
	return a.ProviderAdmin.GetInstanceInfo(ctx, instance)
}

func (l *lossyProvider) GetCustomStatus(ctx context.Context, instance string, v uint64) (*duroxide.CustomStatus, error) {
	if l.failedReads.Add(-1) >= 0 {
		return nil, duroxide.Retryable("get_custom_status", "EOF")
	}
	return l.Provider.GetCustomStatus(ctx, instance, v)
}

// A client call whose reply was lost is repeated under its request id: the
// start, raise and cancel each return nil and are applied once (a repeat
// without the id would start twice or deliver the event twice); a wait
// rides over failed reads instead of returning the first one.
func TestE2EClientCallsRideOverLostReplies(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Two", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		return ctx.WaitForEvent("go").Get()
	})
	env := durabletest.Start(t, reg)
	ctx := context.Background()
	lossy := &lossyProvider{Provider: env.Provider, checked: env.Provider}
	client := durable.NewClient(lossy)
	lossy.lostReplies.Store(2)
	if err := client.StartOrchestration(ctx, "lossy", "Two", "in"); err != nil {
		t.Fatalf("start whose first replies were lost = %v, want nil", err)
	}
	if n := lossy.checkedCalls.Load(); n != 3 {
		t.Fatalf("the start was sent %d times, want 3 (two lost replies)", n)
	}
	env.WaitForEventSubscription(t, "lossy", "go")
	lossy.lostReplies.Store(1)
	if err := client.RaiseEvent(ctx, "lossy", "go", "once"); err != nil {
		t.Fatalf("raise whose first reply was lost = %v, want nil", err)
	}
	lossy.failedReads.Store(3)
	st, err := client.WaitForOrchestration(ctx, "lossy", time.Minute)
	if err != nil {
		t.Fatalf("wait over failed reads = %v, want the status", err)
	}
	if st.Status != durable.StatusCompleted || st.Output != "once" {
		t.Fatalf("status %+v", st)
	}
	hist, err := env.Provider.Read(ctx, "lossy")
	if err != nil {
		t.Fatal(err)
	}
	var starts, raised int
	for _, e := range hist {
		switch e.Kind.(type) {
		case duroxide.OrchestrationStartedEvent:
			starts++
		case duroxide.ExternalEventEvent:
			raised++
		}
	}
	if starts != 1 || raised != 1 {
		t.Fatalf("history has %d starts and %d raised events, want 1 and 1 (a repeated call was applied twice)", starts, raised)
	}
}

// A caller that makes a call again (an activity run a second time) names it
// with WithRequestID: the repeat returns nil and is not applied.
func TestE2EClientRequestIDAppliesARepeatedCallOnce(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Inbox", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		a, err := ctx.Dequeue("q").Get()
		if err != nil {
			return "", err
		}
		ev := ctx.Dequeue("q")
		if ctx.Select(ev, ctx.Timer(time.Hour)) == 0 {
			b, _ := ev.Get()
			return a + "+" + b, nil
		}
		return a, nil
	})
	env := durabletest.Start(t, reg)
	ctx := context.Background()
	if err := env.Client.StartOrchestration(ctx, "inbox", "Inbox", ""); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := env.Client.EnqueueEvent(ctx, "inbox", "q", "m", durable.WithRequestID("order-7")); err != nil {
			t.Fatal(err)
		}
	}
	if st := env.Wait(t, "inbox"); st.Output != "m" {
		t.Fatalf("output %q: the named enqueue was applied more than once", st.Output)
	}
	long := strings.Repeat("x", 151)
	if err := env.Client.RaiseEvent(ctx, "inbox", "e", "", durable.WithRequestID(long)); !errors.Is(err, durable.ErrInvalidInput) {
		t.Fatalf("a 151-byte request id = %v, want ErrInvalidInput", err)
	}
}

// flakyWorkerAcks fails the first activity acks with a retryable error
// before they reach the storage.
type flakyWorkerAcks struct {
	duroxide.Provider
	fail atomic.Int32
}

func (f *flakyWorkerAcks) AckWorkItem(ctx context.Context, token string, c duroxide.WorkItem) error {
	if f.fail.Add(-1) >= 0 {
		return duroxide.Retryable("ack_work_item", "EOF")
	}
	return f.Provider.AckWorkItem(ctx, token, c)
}

// An activity ack that failed transiently used to abandon the item at
// once, so the activity ran again (its side effects twice); the ack is now
// tried again first.
func TestE2EActivityAckIsRetriedBeforeTheActivityRunsAgain(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	reg := durable.NewRegistry()
	reg.MustAddActivity("Once", func(_ *durable.ActivityContext, in string) (string, error) {
		runs.Add(1)
		return in, nil
	})
	reg.MustAddOrchestration("O", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		return ctx.ScheduleActivity("Once", in).Get()
	})
	flaky := &flakyWorkerAcks{}
	flaky.fail.Store(2)
	env := durabletest.Start(t, reg, durabletest.WithProviderWrapper(func(p duroxide.Provider) duroxide.Provider {
		flaky.Provider = p
		return flaky
	}))
	mustComplete(t, env.StartAndWait(t, "acked", "O", "x"), "x")
	if n := runs.Load(); n != 1 {
		t.Fatalf("the activity ran %d times after two transient ack failures, want once", n)
	}
}
