package engine

import (
	"runtime"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// sequenceVsTimer races two sequential activities (a Go block) against a
// timer, like select2(async { a.await; b.await }, timer) in duroxide.
func sequenceVsTimer(ctx *Context, _ string) (string, error) {
	seq := ctx.Go(func(ctx *Context) (string, error) {
		a, err := ctx.ScheduleActivity("A", "", nil, nil).Get()
		if err != nil {
			return "", err
		}
		b, err := ctx.ScheduleActivity("B", "", nil, nil).Get()
		return a + b, err
	})
	if ctx.Select(seq, ctx.Timer(time.Second)) == 1 {
		return "timeout", nil
	}
	return seq.Get()
}

func TestGoBlockRunsOnlyWhenPolled(t *testing.T) {
	e, res := turn(hist{}.add(started("")), sequenceVsTimer)
	if res.kind != turnContinue {
		t.Fatalf("result %+v", res)
	}
	// The timer is an argument, so it is scheduled before Select polls the
	// block, which then schedules A and waits.
	expect(t, kinds(e.turn.delta), "2:TimerCreated 3:ActivityScheduled")
}

func TestGoBlockWinsAndLoses(t *testing.T) {
	h := hist{}.add(started("")).add(duroxide.TimerCreatedEvent{FireAtMs: 1}).add(duroxide.ActivityScheduledEvent{Name: "A"})
	// A completes: the block moves on to B within the same turn.
	e, res := turn(h, sequenceVsTimer, duroxide.ActivityCompleted{Instance: "inst", ExecutionID: 1, ID: 3, Result: "a"})
	if res.kind != turnContinue {
		t.Fatalf("result %+v", res)
	}
	expect(t, kinds(e.turn.delta), "4:ActivityCompleted<3 5:ActivityScheduled")
	h = append(h, e.turn.delta...)
	// The timer fires before B answers: the block loses, and B, which it
	// still waited for, is cancelled.
	e, res = turn(h, sequenceVsTimer, duroxide.TimerFired{Instance: "inst", ExecutionID: 1, ID: 2, FireAtMs: 1})
	if res.kind != turnCompleted || res.output != "timeout" {
		t.Fatalf("result %+v", res)
	}
	expect(t, kinds(e.turn.delta), "6:TimerFired<2 7:ActivityCancelRequested<5")
	// Or B answers first and the block wins.
	e, res = turn(h, sequenceVsTimer, duroxide.ActivityCompleted{Instance: "inst", ExecutionID: 1, ID: 5, Result: "b"})
	if res.kind != turnCompleted || res.output != "ab" {
		t.Fatalf("result %+v", res)
	}
	expect(t, kinds(e.turn.delta), "6:ActivityCompleted<5")
}

func TestGoBlockPanicFailsTheInstance(t *testing.T) {
	_, res := turn(hist{}.add(started("")), func(ctx *Context, _ string) (string, error) {
		f := ctx.Go(func(*Context) (string, error) { panic("inner") })
		_, _ = f.Get()
		return "unreachable?", nil
	})
	if res.kind != turnFailed || res.details.Application == nil || res.details.Application.Kind.Variant != duroxide.AppErrorPanicked ||
		res.details.Application.Message != "inner" {
		t.Fatalf("result %+v", res)
	}
}

func TestGoBlocksJoinAndLeakNothing(t *testing.T) {
	fn := func(ctx *Context, _ string) (string, error) {
		var fs []*Future
		for _, name := range []string{"X", "Y"} {
			fs = append(fs, ctx.Go(func(ctx *Context) (string, error) {
				return ctx.ScheduleActivity(name, "", nil, nil).Get()
			}))
		}
		ctx.Join(fs...)
		return "", nil
	}
	before := runtime.NumGoroutine()
	var e *Engine
	for range 20 {
		e, _ = turn(hist{}.add(started("")), fn)
		e.Close()
	}
	expect(t, kinds(e.turn.delta), "2:ActivityScheduled 3:ActivityScheduled")
	wantGoroutinesBack(t, before)
}
