package durable_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// loggingRegistry logs from an activity and from orchestration code.
func loggingRegistry() *durable.Registry {
	reg := durable.NewRegistry()
	reg.MustAddActivity("Note", func(ac *durable.ActivityContext, in string) (string, error) {
		ac.Logger().Warn("activity-says", "in", in)
		return in, nil
	})
	reg.MustAddOrchestration("Noting", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		ctx.Logger().Warn("orchestration-says")
		return ctx.ScheduleActivity("Note", in).Get()
	})
	return reg
}

// Not parallel: it swaps the process-wide default logger.
func TestLogsGoToTheCallersLoggerNeverTheGlobalOne(t *testing.T) {
	var global bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&global, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })

	env := durabletest.Start(t, loggingRegistry())
	if st := env.StartAndWait(t, "quiet", "Noting", "x"); st.Status != durable.StatusCompleted {
		t.Fatalf("status %v", st)
	}
	if global.Len() != 0 {
		t.Errorf("a runtime without Options.Logger wrote to slog.Default():\n%s", global.String())
	}

	var mine bytes.Buffer
	opts := durable.Options{LongPollTimeout: durabletest.ShutdownGrace / 10,
		Logger: slog.New(slog.NewTextHandler(&mine, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	env2 := durabletest.Start(t, loggingRegistry(), durabletest.WithOptions(opts))
	if st := env2.StartAndWait(t, "loud", "Noting", "y"); st.Status != durable.StatusCompleted {
		t.Fatalf("status %v", st)
	}
	for _, want := range []string{"activity-says", "orchestration-says"} {
		if !strings.Contains(mine.String(), want) {
			t.Errorf("the caller's logger lacks %q:\n%s", want, mine.String())
		}
	}
	if strings.Contains(mine.String(), "level=INFO") {
		t.Errorf("the runtime logged at Info during a plain run:\n%s", mine.String())
	}
	if global.Len() != 0 {
		t.Errorf("slog.Default() received records:\n%s", global.String())
	}
}

// TestNondeterminismIsLoggedAtError: a deploy inserts an activity before a
// custom-status update under a running instance. The instance fails for
// good (duroxide's Nondeterminism) with a message that says in words what
// history holds and what the code did, and the runtime logs it at ERROR
// with the instance, execution and event (it logged nothing before, and
// the message read "custom status mismatch: ... Status:0x2283c049ae70").
func TestNondeterminismIsLoggedAtError(t *testing.T) {
	t.Parallel()
	var deployed atomic.Bool
	reg := durable.NewRegistry()
	reg.MustAddActivity("Reserve", func(*durable.ActivityContext, string) (string, error) { return "ok", nil })
	reg.MustAddActivity("Charge", func(*durable.ActivityContext, string) (string, error) { return "ok", nil })
	reg.MustAddOrchestration("Order", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if _, err := ctx.ScheduleActivity("Reserve", "1").Get(); err != nil {
			return "", err
		}
		if deployed.Load() {
			if _, err := ctx.ScheduleActivity("Charge", "12").Get(); err != nil {
				return "", err
			}
		}
		ctx.SetCustomStatus("reserved")
		return ctx.WaitForEvent("go").Get()
	})
	noCache := durable.Options{InstanceCacheEntries: -1, LongPollTimeout: durabletest.ShutdownGrace / 10}
	env := durabletest.Start(t, reg, durabletest.WithOptions(noCache))
	if err := env.Client.StartOrchestration(t.Context(), "drift", "Order", ""); err != nil {
		t.Fatal(err)
	}
	env.WaitForEventSubscription(t, "drift", "go")

	shutdown(t, env.Runtime)
	deployed.Store(true)
	logs := newRecordingHandler()
	withLogs := noCache
	withLogs.Logger = slog.New(logs)
	env.NewRuntime(t, reg, withLogs)
	if err := env.Client.RaiseEvent(t.Context(), "drift", "go", ""); err != nil {
		t.Fatal(err)
	}
	st := env.Wait(t, "drift")
	want := `nondeterministic: schedule mismatch: event 4 in history is CustomStatusUpdated(status "reserved"), but the code scheduled activity "Charge" (input "12")`
	if st.Status != durable.StatusFailed || st.FailureMessage() != want {
		t.Fatalf("status %v, failure\n %q\nwant\n %q", st.Status, st.FailureMessage(), want)
	}
	var ne *durable.NondeterminismError
	if err := st.Err(); !errors.As(err, &ne) || ne.EventID != 4 {
		t.Fatalf("err %v (%+v), want a *NondeterminismError at event 4", err, ne)
	}
	errs := logs.find(slog.LevelError, "instance", "drift")
	if len(errs) != 1 {
		t.Fatalf("%d ERROR records for drift, want 1: %v", len(errs), errs)
	}
	if a := errs[0].attrs; a["execution_id"] != "1" || a["event_id"] != "4" || a["error"] != want {
		t.Fatalf("ERROR record %v, want execution_id 1, event_id 4 and the failure message", a)
	}
}
