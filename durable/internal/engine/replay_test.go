package engine

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// hist builds a history from kinds, numbering events 1.. and linking the
// ones given in sources (event index -> source event id).
type hist []duroxide.Event

func started(input string) duroxide.EventKind {
	return duroxide.OrchestrationStartedEvent{Name: "O", Version: "1.0.0", Input: input}
}

func (h hist) add(kind duroxide.EventKind, source ...uint64) hist {
	var src *uint64
	if len(source) > 0 {
		s := source[0]
		src = &s
	}
	return append(h, duroxide.NewEvent(uint64(len(h)+1), "inst", 1, src, kind))
}

// turn runs one turn of fn over h (all persisted) with msgs.
func turn(h hist, fn Func, msgs ...duroxide.WorkItem) (*Engine, turnResult) {
	e := engineAt(h, len(h))
	e.clock = func() time.Time { return time.UnixMilli(1_000_000) }
	e.prepCompletions(msgs)
	return e, e.execute(fn, "in", "O", "1.0.0")
}

// engineAt is an engine for its first turn over h, whose events past
// persisted are this turn's new ones.
func engineAt(h hist, persisted int) *Engine {
	e := New("inst", 1, h[:persisted])
	e.beginTurn()
	for _, ev := range h[persisted:] {
		e.record(ev)
	}
	e.turn.nextEventID = e.idx.lastID + 1
	return e
}

func kinds(evs []duroxide.Event) string {
	var parts []string
	for _, ev := range evs {
		s := fmt.Sprintf("%d:%s", ev.EventID, ev.Kind.EventType())
		if ev.SourceEventID != nil {
			s += fmt.Sprintf("<%d", *ev.SourceEventID)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

func expect(t *testing.T, got, want string) {
	t.Helper()
	if got != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
}

func twoActivities(ctx *Context, _ string) (string, error) {
	a := ctx.ScheduleActivity("A", "1", nil, nil)
	b := ctx.ScheduleActivity("B", "2", nil, nil)
	ctx.Join(a, b)
	x, _ := a.Get()
	y, _ := b.Get()
	return x + y, nil
}

func TestReplayFirstTurnAllocatesIDsInCodeOrder(t *testing.T) {
	e, res := turn(hist{}.add(started("in")), twoActivities)
	if res.kind != turnContinue {
		t.Fatalf("result %+v", res)
	}
	expect(t, kinds(e.turn.delta), "2:ActivityScheduled 3:ActivityScheduled")
	if len(e.turn.pending) != 2 || e.turn.pending[0].eventID != 2 || e.turn.pending[1].eventID != 3 {
		t.Fatalf("pending %+v", e.turn.pending)
	}
}

func TestReplayCompletionsGetNextIDsAndResolve(t *testing.T) {
	h := hist{}.add(started("in")).
		add(duroxide.ActivityScheduledEvent{Name: "A", Input: "1"}).
		add(duroxide.ActivityScheduledEvent{Name: "B", Input: "2"})
	// B answers first: the completion order in history is the arrival order.
	e, res := turn(h, twoActivities,
		duroxide.ActivityCompleted{Instance: "inst", ExecutionID: 1, ID: 3, Result: "y"},
		duroxide.ActivityCompleted{Instance: "inst", ExecutionID: 1, ID: 2, Result: "x"})
	if res.kind != turnCompleted || res.output != "xy" {
		t.Fatalf("result %+v", res)
	}
	expect(t, kinds(e.turn.delta), "4:ActivityCompleted<3 5:ActivityCompleted<2")
}

func TestReplayDropsDuplicateAndForeignCompletions(t *testing.T) {
	h := hist{}.add(started("in")).
		add(duroxide.ActivityScheduledEvent{Name: "A", Input: "1"}).
		add(duroxide.ActivityScheduledEvent{Name: "B", Input: "2"}).
		add(duroxide.ActivityCompletedEvent{Result: "x"}, 2)
	e, res := turn(h, twoActivities,
		duroxide.ActivityCompleted{Instance: "inst", ExecutionID: 1, ID: 2, Result: "dup"},   // already in history
		duroxide.ActivityCompleted{Instance: "inst", ExecutionID: 7, ID: 3, Result: "other"}, // another execution
		duroxide.ActivityCompleted{Instance: "inst", ExecutionID: 1, ID: 3, Result: "y"},
		duroxide.ActivityCompleted{Instance: "inst", ExecutionID: 1, ID: 3, Result: "again"}) // duplicate in batch
	if res.kind != turnCompleted || res.output != "xy" {
		t.Fatalf("result %+v", res)
	}
	expect(t, kinds(e.turn.delta), "5:ActivityCompleted<3")
}

func TestReplayCompletionWithoutScheduleIsNondeterminism(t *testing.T) {
	h := hist{}.add(started("in")).add(duroxide.ActivityScheduledEvent{Name: "A", Input: "1"})
	_, res := turn(h, twoActivities, duroxide.TimerFired{Instance: "inst", ExecutionID: 1, ID: 2, FireAtMs: 5})
	assertNondeterminism(t, res, "completion kind mismatch for id=2, expected 'activity', got 'timer'")
	_, res = turn(h, twoActivities, duroxide.ActivityCompleted{Instance: "inst", ExecutionID: 1, ID: 9})
	assertNondeterminism(t, res, "no matching schedule for completion id=9")
}

func assertNondeterminism(t *testing.T, res turnResult, msg string) {
	t.Helper()
	c := res.details.Configuration
	if res.kind != turnFailed || c == nil || c.Kind != duroxide.ConfigErrorNondeterminism || c.Message == nil {
		t.Fatalf("want nondeterminism %q, got %+v", msg, res)
	}
	if !strings.Contains(*c.Message, msg) {
		t.Fatalf("message %q does not contain %q", *c.Message, msg)
	}
}

func TestReplayScheduleMismatchIsNondeterminism(t *testing.T) {
	h := hist{}.add(started("in")).add(duroxide.ActivityScheduledEvent{Name: "Other", Input: "1"})
	_, res := turn(h, twoActivities)
	assertNondeterminism(t, res, "schedule mismatch")
	h = hist{}.add(started("in")).add(duroxide.TimerCreatedEvent{FireAtMs: 1})
	_, res = turn(h, func(*Context, string) (string, error) { return "", nil })
	// The code completes before reaching the timer: the orchestration returns
	// without replaying it, so this is not a mismatch but a completion.
	if res.kind != turnCompleted {
		t.Fatalf("result %+v", res)
	}
	h = hist{}.add(started("in")).add(duroxide.TimerCreatedEvent{FireAtMs: 1})
	_, res = turn(h, func(ctx *Context, _ string) (string, error) {
		_, err := ctx.WaitForEvent("x").Get()
		return "", err
	})
	assertNondeterminism(t, res, "schedule mismatch")
}

func TestReplaySelectCancelsLosingActivity(t *testing.T) {
	race := func(ctx *Context, _ string) (string, error) {
		act := ctx.ScheduleActivity("Slow", "", nil, nil)
		timer := ctx.Timer(time.Second)
		if ctx.Select(act, timer) == 1 {
			_, err := ctx.ScheduleActivity("After", "", nil, nil).Get()
			return "timeout", err
		}
		return act.Get()
	}
	h := hist{}.add(started("in")).
		add(duroxide.ActivityScheduledEvent{Name: "Slow"}).
		add(duroxide.TimerCreatedEvent{FireAtMs: 1_001_000})
	e, res := turn(h, race, duroxide.TimerFired{Instance: "inst", ExecutionID: 1, ID: 3, FireAtMs: 1_001_000})
	if res.kind != turnContinue {
		t.Fatalf("result %+v", res)
	}
	expect(t, kinds(e.turn.delta), "4:TimerFired<3 5:ActivityScheduled 6:ActivityCancelRequested<2")
	if fmt.Sprint(e.turn.cancelledActivityIDs) != "[2]" {
		t.Fatalf("cancelled %v", e.turn.cancelledActivityIDs)
	}
	// Replaying that history re-cancels the loser: no new cancel, no error.
	h2 := append(h, e.turn.delta...)
	e2, res2 := turn(h2, race, duroxide.ActivityCompleted{Instance: "inst", ExecutionID: 1, ID: 5, Result: "z"})
	if res2.kind != turnCompleted || res2.output != "timeout" {
		t.Fatalf("result %+v", res2)
	}
	expect(t, kinds(e2.turn.delta), "7:ActivityCompleted<5")
}

func TestReplayBothReadyFirstInHistoryWins(t *testing.T) {
	race := func(ctx *Context, _ string) (string, error) {
		a := ctx.ScheduleActivity("A", "", nil, nil)
		b := ctx.ScheduleActivity("B", "", nil, nil)
		if ctx.Select(a, b) == 0 {
			return "A", nil
		}
		return "B", nil
	}
	h := hist{}.add(started("in")).add(duroxide.ActivityScheduledEvent{Name: "A"}).add(duroxide.ActivityScheduledEvent{Name: "B"})
	e, res := turn(h, race,
		duroxide.ActivityCompleted{Instance: "inst", ExecutionID: 1, ID: 3, Result: ""},
		duroxide.ActivityCompleted{Instance: "inst", ExecutionID: 1, ID: 2, Result: ""})
	if res.output != "B" {
		t.Fatalf("winner %q, want B (its completion is first in history)", res.output)
	}
	// A lost the select, so it is cancelled even though its completion is in
	// the same batch: duroxide records the same cancel for a dropped loser.
	expect(t, kinds(e.turn.delta), "4:ActivityCompleted<3 5:ActivityCompleted<2 6:ActivityCancelRequested<2")
}

func TestReplayExternalEventNeedsSubscription(t *testing.T) {
	wait := func(ctx *Context, _ string) (string, error) { return ctx.WaitForEvent("go").Get() }
	e, res := turn(hist{}.add(started("in")), wait, duroxide.ExternalRaised{Instance: "inst", Name: "go", Data: "early"})
	// The event arrives in the first turn's batch, before the subscription is
	// recorded: duroxide keeps it in history but does not deliver it.
	if res.kind != turnContinue {
		t.Fatalf("result %+v", res)
	}
	expect(t, kinds(e.turn.delta), "2:ExternalEvent 3:ExternalSubscribed")
	h := append(hist{}.add(started("in")), e.turn.delta...)
	e2, res2 := turn(h, wait, duroxide.ExternalRaised{Instance: "inst", Name: "go", Data: "late"})
	if res2.kind != turnCompleted || res2.output != "late" {
		t.Fatalf("result %+v", res2)
	}
	expect(t, kinds(e2.turn.delta), "4:ExternalEvent")
}

func TestReplayQueueMessageBeforeDequeue(t *testing.T) {
	deq := func(ctx *Context, _ string) (string, error) { return ctx.Dequeue("q").Get() }
	e, res := turn(hist{}.add(started("in")), deq, duroxide.QueueMessage{Instance: "inst", Name: "q", Data: "m1"})
	if res.kind != turnCompleted || res.output != "m1" {
		t.Fatalf("result %+v", res)
	}
	expect(t, kinds(e.turn.delta), "2:ExternalEventPersistent 3:ExternalSubscribedPersistent")
}

func TestReplaySubOrchestrationAutoID(t *testing.T) {
	fn := func(ctx *Context, _ string) (string, error) {
		ctx.SetCustomStatus(ptr("s"))
		return ctx.ScheduleSubOrchestration("Child", "x", "", nil).Get()
	}
	e, _ := turn(hist{}.add(started("in")), fn)
	expect(t, kinds(e.turn.delta), "2:CustomStatusUpdated 3:SubOrchestrationScheduled")
	if got := e.turn.delta[1].Kind.(duroxide.SubOrchestrationScheduledEvent).Instance; got != "sub::3" {
		t.Fatalf("instance %q", got)
	}
}

func TestReplayPanicAndErrorFailTheInstance(t *testing.T) {
	_, res := turn(hist{}.add(started("in")), func(*Context, string) (string, error) { panic("bad") })
	if res.kind != turnFailed || res.details.Application == nil || res.details.Application.Kind.Variant != duroxide.AppErrorPanicked || res.details.Application.Message != "bad" {
		t.Fatalf("result %+v", res)
	}
	_, res = turn(hist{}.add(started("in")), func(*Context, string) (string, error) { return "", errors.New("nope") })
	if res.kind != turnFailed || DisplayMessage(res.details) != "nope" {
		t.Fatalf("result %+v", res)
	}
}

func TestReplayBlockedTurnLeaksNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	for range 50 {
		e, _ := turn(hist{}.add(started("in")), twoActivities)
		e.Close()
	}
	wantGoroutinesBack(t, before)
}

// wantGoroutinesBack waits until at most before goroutines (and 2 of
// slack, for the test framework's) run: those of closed engines exit soon
// after Close returns. It fails the test after 5 s.
func wantGoroutinesBack(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for after := runtime.NumGoroutine(); after > before+2; after = runtime.NumGoroutine() {
		if time.Now().After(deadline) {
			t.Fatalf("goroutines grew from %d to %d", before, after)
		}
		time.Sleep(time.Millisecond) // sleep: the poll interval of a wait on runtime.NumGoroutine, which has no signal
	}
}

func TestReplayCancelRequestFailsWithCancelled(t *testing.T) {
	_, res := turn(hist{}.add(started("in")), twoActivities, duroxide.CancelInstance{Instance: "inst", Reason: "stop"})
	if res.kind != turnCancelled || res.reason != "stop" {
		t.Fatalf("result %+v", res)
	}
}

func TestReplayContinueAsNewSkipsAnEventID(t *testing.T) {
	fn := func(ctx *Context, _ string) (string, error) {
		ctx.SetValue("k", "v")
		ctx.ContinueAsNew("next", nil)
		return "unreachable", nil
	}
	e, res := turn(hist{}.add(started("in")), fn)
	if res.kind != turnContinueAsNew || res.input != "next" {
		t.Fatalf("result %+v", res)
	}
	expect(t, kinds(e.turn.delta), "2:KeyValueSet")
}

func TestReplayReturnDropsPendingWaits(t *testing.T) {
	fn := func(ctx *Context, _ string) (string, error) {
		ctx.WaitForEvent("never")
		ctx.Dequeue("q")
		ctx.Timer(time.Hour)
		return "early", nil
	}
	e, res := turn(hist{}.add(started("in")), fn)
	if res.kind != turnCompleted {
		t.Fatalf("result %+v", res)
	}
	// Timers are dropped silently; waits record their cancellation.
	expect(t, kinds(e.turn.delta), "2:ExternalSubscribed 3:ExternalSubscribedPersistent 4:TimerCreated "+
		"5:ExternalSubscribedCancelled<2 6:ExternalSubscribedPersistentCancelled<3")
}

func ptr(s string) *string { return &s }
