package durable_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/errors_tests.rs. duroxide runs several of them
// twice (_inmem and _fs, both on SQLite today); each pair is one Go test
// whose subtests carry the two names.

// bankRegistry is the Debit/Ship/Credit activity set of the error-handling
// samples: Debit fails for input "fail", Ship for "fail_ship".
func bankRegistry() *durable.Registry {
	return durable.NewRegistry().
		MustAddActivity("Debit", func(_ *durable.ActivityContext, in string) (string, error) {
			if in == "fail" {
				return "", errors.New("bad:" + in)
			}
			return "debited:" + in, nil
		}).
		MustAddActivity("Ship", func(_ *durable.ActivityContext, in string) (string, error) {
			if in == "fail_ship" {
				return "", errors.New("courier_down")
			}
			return "shipped", nil
		}).
		MustAddActivity("Credit", func(_ *durable.ActivityContext, in string) (string, error) {
			return "credited:" + in, nil
		})
}

// TestErrorHandlingSamples mirrors error_handling_compensation_on_ship_failure_inmem,
// error_handling_success_path_inmem and error_handling_early_debit_failure_inmem
// (and their _fs twins): an activity's failure reaches orchestration code as an
// error it can compensate for or report.
func TestErrorHandlingSamples(t *testing.T) {
	t.Parallel()
	compensate := func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		deb, err := ctx.ScheduleActivity("Debit", "ok").Get()
		if err != nil {
			return "debit_failed:" + err.Error(), nil
		}
		if _, err := ctx.ScheduleActivity("Ship", "fail_ship").Get(); err == nil {
			return "ok", nil
		}
		cred, err := ctx.ScheduleActivity("Credit", deb).Get()
		if err != nil {
			return "", err
		}
		return "rolled_back:" + cred, nil
	}
	success := func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if _, err := ctx.ScheduleActivity("Debit", "ok").Get(); err != nil {
			return "", err
		}
		if _, err := ctx.ScheduleActivity("Ship", "ok").Get(); err != nil {
			return "", err
		}
		return "ok", nil
	}
	earlyDebit := func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if _, err := ctx.ScheduleActivity("Debit", "fail").Get(); err != nil {
			return "debit_failed:" + err.Error(), nil
		}
		return "", errors.New("debit of \"fail\" succeeded")
	}
	cases := []struct {
		names []string
		orch  durable.OrchestrationFunc
		want  string
	}{
		{[]string{"error_handling_compensation_on_ship_failure_inmem", "error_handling_compensation_on_ship_failure_fs"}, compensate, "rolled_back:credited:debited:ok"},
		{[]string{"error_handling_success_path_inmem", "error_handling_success_path_fs"}, success, "ok"},
		{[]string{"error_handling_early_debit_failure_inmem", "error_handling_early_debit_failure_fs"}, earlyDebit, "debit_failed:bad:fail"},
	}
	for _, c := range cases {
		for _, name := range c.names {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				env := durabletest.Start(t, bankRegistry().MustAddOrchestration("O", c.orch))
				mustComplete(t, env.StartAndWait(t, "inst-"+name, "O", ""), c.want)
			})
		}
	}
}

// TestUnknownActivityFails mirrors unknown_activity_fails_fs: an activity no
// worker registered is retried with the unregistered backoff and then
// poisoned, which fails the orchestration waiting for it.
func TestUnknownActivityFails(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("MissingActivityTest", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		v, err := ctx.ScheduleActivity("Missing", "foo").Get()
		if err != nil {
			return "err=" + err.Error(), nil
		}
		return "unexpected_ok:" + v, nil
	})
	env := durabletest.Start(t, reg, durabletest.WithOptions(durable.Options{
		LongPollTimeout: 100 * time.Millisecond, MaxAttempts: 3,
		UnregisteredBackoffBase: 10 * time.Millisecond, UnregisteredBackoffMax: 50 * time.Millisecond,
	}))
	st := env.StartAndWait(t, "inst-unknown-act-1", "MissingActivityTest", "")
	// duroxide accepts either the orchestration failing (Application or
	// Poison) or its code seeing the poisoned activity as an error; in both
	// the instance must not silently succeed and the failure must be a
	// poison of activity Missing.
	switch st.Status {
	case durable.StatusFailed:
		if st.Failure.Application == nil && st.Failure.Poison == nil {
			t.Fatalf("failure %+v is neither Application nor Poison", st.Failure)
		}
	case durable.StatusCompleted:
		if !strings.HasPrefix(st.Output, "err=") || !strings.Contains(st.Output, "Missing") {
			t.Fatalf("output %q: want the orchestration to see the poisoned activity Missing as an error", st.Output)
		}
	default:
		t.Fatalf("status %v", st.Status)
	}
}

// terminalAcks passes calls to the provider and signals every orchestration
// ack that ends no execution (no terminal event in its delta): after an
// instance completed, those are the acks of messages it received late.
type terminalAcks struct {
	duroxide.Provider
	acked chan []duroxide.Event
}

func (p *terminalAcks) AckOrchestrationItem(ctx context.Context, token string, c duroxide.OrchestrationCommit) error {
	err := p.Provider.AckOrchestrationItem(ctx, token, c)
	for _, e := range c.HistoryDelta {
		switch e.Kind.EventType() {
		case "OrchestrationCompleted", "OrchestrationFailed", "OrchestrationContinuedAsNew":
			return err
		}
	}
	if err == nil {
		p.acked <- c.HistoryDelta
	}
	return err
}

// TestEventAfterCompletionIsIgnored mirrors event_after_completion_is_ignored_fs:
// an event raised after the instance completed is taken and dropped, its
// history unchanged.
func TestEventAfterCompletionIsIgnored(t *testing.T) {
	t.Parallel()
	const instance = "inst-post-complete-1"
	acks := &terminalAcks{acked: make(chan []duroxide.Event, 16)}
	reg := durable.NewRegistry().MustAddOrchestration("PostCompleteTest", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		_, _ = ctx.WaitForEvent("Once").Get()
		return "done", nil
	})
	env := durabletest.Start(t, reg, durabletest.WithAckFetch(false),
		durabletest.WithProviderWrapper(func(p duroxide.Provider) duroxide.Provider { acks.Provider = p; return acks }))
	if err := env.Client.StartOrchestration(t.Context(), instance, "PostCompleteTest", ""); err != nil {
		t.Fatal(err)
	}
	env.WaitForEventSubscription(t, instance, "Once")
	if err := env.Client.RaiseEvent(t.Context(), instance, "Once", "go"); err != nil {
		t.Fatal(err)
	}
	mustComplete(t, env.Wait(t, instance), "done")
	before := read(t, env, instance)
	if before[len(before)-1].Kind.EventType() != "OrchestrationCompleted" {
		t.Fatalf("history ends with %s, want OrchestrationCompleted", before[len(before)-1].Kind.EventType())
	}
	// Every non-terminal ack so far was made before the completing turn
	// began; what arrives after the drain is the late event's.
	for len(acks.acked) > 0 {
		<-acks.acked
	}
	if err := env.Client.RaiseEvent(t.Context(), instance, "Once", "late"); err != nil {
		t.Fatal(err)
	}
	select {
	case delta := <-acks.acked:
		if len(delta) != 0 {
			t.Fatalf("the late event's turn appended %d events", len(delta))
		}
	case <-time.After(durabletest.DefaultWaitTimeout):
		t.Fatal("the late event was never taken")
	}
	if after := read(t, env, instance); len(after) != len(before) {
		t.Fatalf("history grew from %d to %d events after completion", len(before), len(after))
	}
}

// TestEventBeforeSubscriptionAfterStartIsIgnored mirrors
// event_before_subscription_after_start_is_ignored: an event raised while
// the orchestration is still in its first timer is recorded but never
// delivered to the subscription made later, so the deadline wins. The first
// timer is an hour of skipped time, not duroxide's 10 ms of real time: the
// event must be recorded before the timer fires, and a raise slower than the
// timer (a loaded machine) made the event arrive after the subscription.
func TestEventBeforeSubscriptionAfterStartIsIgnored(t *testing.T) {
	t.Parallel()
	const instance = "inst-pre-sub-drop-1"
	reg := durable.NewRegistry().MustAddOrchestration("PreSubscriptionTest", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if _, err := ctx.Timer(time.Hour).Get(); err != nil {
			return "", err
		}
		ev := ctx.WaitForEvent("Evt")
		if ctx.Select(ev, ctx.Timer(500*time.Millisecond)) == 0 {
			return ev.Get()
		}
		return "early-event-dropped", nil
	})
	env := durabletest.Start(t, reg)
	if err := env.Client.StartOrchestration(t.Context(), instance, "PreSubscriptionTest", ""); err != nil {
		t.Fatal(err)
	}
	env.WaitForTimer(t, instance) // the first timer, before any subscription
	if err := env.Client.RaiseEvent(t.Context(), instance, "Evt", "early"); err != nil {
		t.Fatal(err)
	}
	mustComplete(t, env.Wait(t, instance), "early-event-dropped")
	if countEvents(read(t, env, instance), "ExternalEvent") != 1 {
		t.Fatalf("the early event is not kept in history: %v", kindsOf(read(t, env, instance)))
	}
}

// TestOrchestrationImmediateFail mirrors orchestration_immediate_fail_fs: an
// orchestration returning an error fails with an Application
// OrchestrationFailed error carrying its message, in a two-event history.
func TestOrchestrationImmediateFail(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("AlwaysErr", func(*durable.OrchestrationContext, string) (string, error) {
		return "", errors.New("oops")
	})
	env := durabletest.Start(t, reg)
	st := env.StartAndWait(t, "inst-fail-imm", "AlwaysErr", "")
	wantAppFailure(t, st, duroxide.AppErrorOrchestrationFailed, "oops")
	hist := read(t, env, "inst-fail-imm")
	if len(hist) != 2 || hist[0].Kind.EventType() != "OrchestrationStarted" || hist[1].Kind.EventType() != "OrchestrationFailed" {
		t.Fatalf("history %v, want OrchestrationStarted, OrchestrationFailed", kindsOf(hist))
	}
}

// TestOrchestrationPropagatesActivityFailure mirrors
// orchestration_propagates_activity_failure_fs: returning an activity's
// error fails the orchestration with that error's message, as an
// OrchestrationFailed error (the kind of the orchestration's own failure).
func TestOrchestrationPropagatesActivityFailure(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Fail", func(*durable.ActivityContext, string) (string, error) { return "", errors.New("bad") }).
		MustAddOrchestration("PropagateFail", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			if _, err := ctx.ScheduleActivity("Fail", "x").Get(); err != nil {
				return "", err
			}
			return "ok", nil
		})
	env := durabletest.Start(t, reg)
	st := env.StartAndWait(t, "inst-fail-prop", "PropagateFail", "")
	wantAppFailure(t, st, duroxide.AppErrorOrchestrationFailed, "bad")
	hist := read(t, env, "inst-fail-prop")
	if hist[len(hist)-1].Kind.EventType() != "OrchestrationFailed" {
		t.Fatalf("history %v does not end with OrchestrationFailed", kindsOf(hist))
	}
	// Status reads the same details again.
	again, err := env.Client.Status(t.Context(), "inst-fail-prop")
	if err != nil {
		t.Fatal(err)
	}
	wantAppFailure(t, again, duroxide.AppErrorOrchestrationFailed, "bad")
}

// wantAppFailure checks st failed with an Application error of kind and message.
func wantAppFailure(t *testing.T, st durable.OrchestrationStatus, kind duroxide.AppErrorVariant, message string) {
	t.Helper()
	if st.Status != durable.StatusFailed || st.Failure == nil || st.Failure.Application == nil {
		t.Fatalf("status %v, failure %+v: want an Application failure", st.Status, st.Failure)
	}
	if a := st.Failure.Application; a.Kind.Variant != kind || a.Message != message {
		t.Fatalf("failure %+v, want kind %s message %q", *a, kind, message)
	}
}

// aOnly is the typed payload of the decode-error tests.
type aOnly struct {
	A int `json:"a"`
}

// TestTypedActivityDecodeError mirrors typed_activity_decode_error_fs: a
// typed activity given input it cannot decode fails, and the orchestration
// sees that as an error.
func TestTypedActivityDecodeError(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("FmtA", durable.Activity(func(_ *durable.ActivityContext, in aOnly) (string, error) {
			return "a=" + string(rune('0'+in.A)), nil
		})).
		MustAddOrchestration("BadInputToTypedActivity", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			if _, err := ctx.ScheduleActivity("FmtA", "not-json").Get(); err == nil {
				return "", errors.New("the typed activity accepted \"not-json\"")
			}
			return "ok", nil
		})
	env := durabletest.Start(t, reg)
	mustComplete(t, env.StartAndWait(t, "inst-typed-bad", "BadInputToTypedActivity", ""), "ok")
}

// TestTypedEventDecodeError mirrors typed_event_decode_error_fs: event data
// that does not decode into the typed wait's type is an error the
// orchestration sees (a *durable.DecodeError; Rust panics in the future).
func TestTypedEventDecodeError(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("TypedEvt", durable.Orchestration(func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		_, err := durable.WaitForEvent[aOnly](ctx, "Evt").Get()
		if errors.Is(err, durable.ErrDecode) {
			return "decode_err", nil
		}
		return "ok", err
	}))
	env := durabletest.Start(t, reg)
	if err := env.Client.StartOrchestrationJSON(t.Context(), "inst-typed-evt", "TypedEvt", ""); err != nil {
		t.Fatal(err)
	}
	env.WaitForEventSubscription(t, "inst-typed-evt", "Evt")
	if err := env.Client.RaiseEvent(t.Context(), "inst-typed-evt", "Evt", "not-json"); err != nil {
		t.Fatal(err)
	}
	st := env.Wait(t, "inst-typed-evt")
	var out string
	if err := st.DecodeOutput(&out); err != nil || out != "decode_err" {
		t.Fatalf("status %v output %q (%v): want \"decode_err\"", st.Status, st.Output, err)
	}
}

// TestInstanceIDIdempotence mirrors test_instance_id_idempotence: starting a
// completed instance again does not run it again; its result stays the
// first run's (which holds a runtime timestamp).
//
// Differs from duroxide on purpose: there the second start returns Ok and
// is silently dropped; here it fails with ErrAlreadyExists unless the
// caller says UseExisting, so a mistaken reuse of an id is visible.
func TestInstanceIDIdempotence(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("A", func(_ *durable.ActivityContext, in string) (string, error) {
			if in == "1" {
				return "2", nil
			}
			return "0", nil
		}).
		MustAddActivity("B", func(_ *durable.ActivityContext, in string) (string, error) { return "B(" + in + ")", nil }).
		MustAddOrchestration("IdempotenceTest", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			start, err := ctx.UTCNow().Get()
			if err != nil {
				return "", err
			}
			a, err := ctx.ScheduleActivity("A", "1").Get()
			if err != nil {
				return "", err
			}
			if _, err := ctx.Timer(50 * time.Millisecond).Get(); err != nil {
				return "", err
			}
			b, err := ctx.ScheduleActivity("B", a).Get()
			if err != nil {
				return "", err
			}
			return "start=" + start.Format(time.RFC3339Nano) + ", a=" + a + ", b=" + b, nil
		})
	env := durabletest.Start(t, reg)
	first := env.StartAndWait(t, "idempotent-instance", "IdempotenceTest", "")
	if first.Status != durable.StatusCompleted || !strings.HasPrefix(first.Output, "start=") || !strings.HasSuffix(first.Output, ", a=2, b=B(2)") {
		t.Fatalf("first run: %v %q %s", first.Status, first.Output, first.FailureMessage())
	}
	if err := env.Client.StartOrchestration(t.Context(), "idempotent-instance", "IdempotenceTest", ""); !errors.Is(err, durable.ErrAlreadyExists) {
		t.Fatalf("second start: %v, want ErrAlreadyExists", err)
	}
	if err := env.Client.StartOrchestration(t.Context(), "idempotent-instance", "IdempotenceTest", "", durable.UseExisting()); err != nil {
		t.Fatalf("second start with UseExisting: %v", err)
	}
	second := env.Wait(t, "idempotent-instance")
	if second.Status != durable.StatusCompleted || second.Output != first.Output {
		t.Fatalf("after the second start: %v %q, want the first result %q", second.Status, second.Output, first.Output)
	}
	if n := countEvents(read(t, env, "idempotent-instance"), "OrchestrationStarted"); n != 1 {
		t.Fatalf("%d OrchestrationStarted events, want 1", n)
	}
}

// TestOrchestrationPanicIsCaughtAndFailsWithMessage mirrors
// orchestration_panic_is_caught_and_fails_with_message.
func TestOrchestrationPanicIsCaughtAndFailsWithMessage(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("PanicOrch", func(*durable.OrchestrationContext, string) (string, error) {
		panic("something went terribly wrong")
	})
	env := durabletest.Start(t, reg)
	st := env.StartAndWait(t, "panic-inst", "PanicOrch", "{}")
	msg := st.FailureMessage()
	if !strings.HasPrefix(msg, "orchestration panicked:") || !strings.Contains(msg, "something went terribly wrong") {
		t.Fatalf("failure message %q", msg)
	}
	if a := st.Failure.Application; a == nil || a.Kind.Variant != duroxide.AppErrorPanicked || a.Retryable {
		t.Fatalf("failure %+v, want a non-retryable Application Panicked", st.Failure)
	}
}

// kindsOf lists the event types of hist, for failure messages.
func kindsOf(hist []duroxide.Event) []string {
	out := make([]string, len(hist))
	for i, e := range hist {
		out[i] = e.Kind.EventType()
	}
	return out
}
