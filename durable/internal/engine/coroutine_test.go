package engine

import (
	"bytes"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// hangBound is how long a test waits for something that must not hang: far
// beyond what it takes, so only a hang trips it.
const hangBound = 10 * time.Second

// turnWithin runs turn in the background and fails the test, instead of
// hanging the suite, when it does not return within hangBound.
func turnWithin(t *testing.T, h hist, fn Func, msgs ...duroxide.WorkItem) (*Engine, turnResult) {
	t.Helper()
	type out struct {
		e   *Engine
		res turnResult
	}
	done := make(chan out, 1)
	go func() {
		e, res := turn(h, fn, msgs...)
		e.Close() // the turn's end, as the runtime ends an engine it does not keep
		done <- out{e, res}
	}()
	select {
	case o := <-done:
		return o.e, o.res
	case <-time.After(hangBound):
		t.Fatalf("the turn did not end within %v", hangBound)
		return nil, turnResult{}
	}
}

// deadlockTurn runs a turn whose code blocks outside its context and
// returns the deadlock the engine gave it up with; it fails the test if the
// turn ends otherwise or hangs.
func deadlockTurn(t *testing.T, h hist, fn Func, msgs ...duroxide.WorkItem) *Deadlock {
	t.Helper()
	ended := make(chan any, 1)
	go func() {
		defer func() { ended <- recover() }()
		e := engineAt(h, len(h))
		e.deadlock = 50 * time.Millisecond
		e.prepCompletions(msgs)
		e.execute(fn, "in", "O", "1.0.0")
	}()
	select {
	case p := <-ended:
		d, ok := p.(*Deadlock)
		if !ok {
			t.Fatalf("the turn ended with %v, want a deadlock", p)
		}
		return d
	case <-time.After(hangBound):
		t.Fatalf("the turn did not end within %v", hangBound)
		return nil
	}
}

// waitClosed fails the test if ch does not close within hangBound.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(hangBound):
		t.Fatalf("%s did not happen within %v", what, hangBound)
	}
}

// Code blocked outside its context is given up after the deadlock timeout,
// with its stack; a Go block parked meanwhile ends at once, and the stuck
// goroutine ends as soon as it unblocks, waiting for no one.
func TestCoroutineBlockedOutsideContextIsGivenUp(t *testing.T) {
	t.Parallel()
	release, mainEnded, blockEnded := make(chan struct{}), make(chan struct{}), make(chan struct{})
	fn := func(ctx *Context, _ string) (string, error) {
		defer close(mainEnded)
		blk := ctx.Go(func(ctx *Context) (string, error) {
			defer close(blockEnded)
			return ctx.ScheduleActivity("A", "", nil, nil).Get()
		})
		blk.IsReady() // the block runs until it waits for A
		<-release
		return ctx.ScheduleActivity("B", "", nil, nil).Get()
	}
	d := deadlockTurn(t, hist{}.add(started("")), fn)
	if !strings.Contains(d.Stacks, "TestCoroutineBlockedOutsideContextIsGivenUp") || !strings.Contains(d.Stacks, "chan receive") {
		t.Fatalf("the deadlock does not show where the code is blocked:\n%s", d.Stacks)
	}
	waitClosed(t, blockEnded, "the parked block's end")
	close(release)
	waitClosed(t, mainEnded, "the stuck goroutine's end")
}

// A report shows only its own turn's goroutines, not those an earlier
// turn on the same engine goroutine left behind.
func TestDeadlockReportShowsOnlyItsTurn(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	fn := func(*Context, string) (string, error) {
		<-release
		return "", nil
	}
	reports := make(chan string, 2)
	go func() {
		for range 2 {
			func() {
				defer func() {
					d, _ := recover().(*Deadlock)
					if d == nil {
						reports <- "no deadlock"
						return
					}
					reports <- d.Stacks
				}()
				e := engineAt(hist{}.add(started("")), 1)
				e.deadlock = 50 * time.Millisecond
				e.execute(fn, "in", "O", "1.0.0")
			}()
		}
	}()
	for i := range 2 {
		select {
		case stacks := <-reports:
			if n := len(parseStacks(stacks)); n != 1 {
				t.Fatalf("report %d shows %d goroutines, want 1:\n%s", i+1, n, stacks)
			}
		case <-time.After(hangBound):
			t.Fatalf("turn %d did not end within %v", i+1, hangBound)
		}
	}
}

// A Go block blocked outside its context is given up too, whether the
// orchestration's goroutine polled it or the engine did (checking what the
// orchestration waits for).
func TestGoBlockBlockedOutsideContextIsGivenUp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		h      hist
		msgs   []duroxide.WorkItem
		before string // what the block awaits before it blocks outside
	}{
		{name: "polled by the code", h: hist{}.add(started(""))},
		{name: "polled by the engine", before: "A",
			h:    hist{}.add(started("")).add(duroxide.ActivityScheduledEvent{Name: "A"}),
			msgs: []duroxide.WorkItem{duroxide.ActivityCompleted{Instance: "inst", ExecutionID: 1, ID: 2, Result: "a"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			release, blockEnded := make(chan struct{}), make(chan struct{})
			fn := func(ctx *Context, _ string) (string, error) {
				return ctx.Go(func(ctx *Context) (string, error) {
					defer close(blockEnded)
					if tc.before != "" {
						if _, err := ctx.ScheduleActivity(tc.before, "", nil, nil).Get(); err != nil {
							return "", err
						}
					}
					<-release
					return "", nil
				}).Get()
			}
			d := deadlockTurn(t, tc.h, fn, tc.msgs...)
			// Only the block is blocked outside the context: the
			// orchestration's goroutine, if it polled it, waits in the
			// runtime's handoff and is not reported.
			if n := len(parseStacks(d.Stacks)); n != 1 || !strings.Contains(d.Stacks, "chan receive") ||
				!strings.Contains(d.Stacks, "TestGoBlockBlockedOutsideContextIsGivenUp") {
				t.Fatalf("the deadlock report shows %d goroutines, want the blocked block's:\n%s", n, d.Stacks)
			}
			close(release)
			waitClosed(t, blockEnded, "the stuck block's end")
		})
	}
}

// A defer that blocks outside the context while the turn ends is logged
// and left behind: the turn's result stands and stop does not wait for it.
func TestCoroutineTeardownBlockedOutsideContextIsLeftBehind(t *testing.T) {
	t.Parallel()
	release, ended := make(chan struct{}), make(chan struct{})
	fn := func(ctx *Context, _ string) (string, error) {
		defer close(ended)
		defer func() { <-release }()
		return ctx.ScheduleActivity("A", "", nil, nil).Get()
	}
	var logs bytes.Buffer
	type out struct {
		e   *Engine
		res turnResult
	}
	done := make(chan out, 1)
	go func() {
		e := engineAt(hist{}.add(started("")), 1)
		e.deadlock, e.logger = 50*time.Millisecond, slog.New(slog.NewTextHandler(&logs, nil))
		res := e.execute(fn, "in", "O", "1.0.0")
		e.Close() // the turn's end
		done <- out{e, res}
	}()
	var o out
	select {
	case o = <-done:
	case <-time.After(hangBound):
		t.Fatalf("the turn did not end within %v", hangBound)
	}
	if o.res.kind != turnContinue {
		t.Fatalf("result %+v", o.res)
	}
	expect(t, kinds(o.e.turn.delta), "2:ActivityScheduled")
	if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "instance=inst") ||
		!strings.Contains(logs.String(), "TestCoroutineTeardownBlockedOutsideContextIsLeftBehind") {
		t.Fatalf("no Error log shows the blocked teardown:\n%s", logs.String())
	}
	close(release)
	waitClosed(t, ended, "the stuck goroutine's end")
}

// A wait in a defer runs while the turn's goroutine is being ended: it
// must not wait (which would hang the dispatcher and Shutdown), and the
// code's other defers still run.
func TestCoroutineDeferredGetDuringTeardownDoesNotHang(t *testing.T) {
	t.Parallel()
	var afterGet, outer atomic.Bool
	fn := func(ctx *Context, _ string) (string, error) {
		defer outer.Store(true)
		a := ctx.ScheduleActivity("A", "", nil, nil)
		defer func() {
			_, _ = a.Get()
			afterGet.Store(true)
		}()
		return ctx.ScheduleActivity("B", "", nil, nil).Get()
	}
	e, res := turnWithin(t, hist{}.add(started("")), fn)
	if res.kind != turnContinue {
		t.Fatalf("result %+v", res)
	}
	expect(t, kinds(e.turn.delta), "2:ActivityScheduled 3:ActivityScheduled")
	if !outer.Load() {
		t.Fatal("the code's outer defer did not run: its goroutine did not end normally")
	}
	if afterGet.Load() {
		t.Fatal("a Get during teardown returned into the code as if the future had resolved")
	}
}

// The same for a Go block's defers, and for a Select or a new Go block in
// a defer (which never runs: nothing would end it).
func TestGoBlockDeferredWaitDuringTeardownDoesNotHang(t *testing.T) {
	t.Parallel()
	var blockOuter atomic.Bool
	fn := func(ctx *Context, _ string) (string, error) {
		defer func() { ctx.Select(ctx.Timer(time.Hour), ctx.WaitForEvent("never")) }()
		defer func() { _, _ = ctx.Go(func(*Context) (string, error) { return "", nil }).Get() }()
		blk := ctx.Go(func(ctx *Context) (string, error) {
			defer blockOuter.Store(true)
			a := ctx.ScheduleActivity("A", "", nil, nil)
			defer func() { _, _ = a.Get() }()
			return ctx.ScheduleActivity("B", "", nil, nil).Get()
		})
		return blk.Get()
	}
	e, res := turnWithin(t, hist{}.add(started("")), fn)
	if res.kind != turnContinue {
		t.Fatalf("result %+v", res)
	}
	expect(t, kinds(e.turn.delta), "2:ActivityScheduled 3:ActivityScheduled")
	if !blockOuter.Load() {
		t.Fatal("the block's outer defer did not run")
	}
}
