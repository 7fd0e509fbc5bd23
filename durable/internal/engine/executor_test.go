package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// step is one fetched batch and what its turn must commit. fed prepends the
// previous commit's items addressed to the instance itself (a
// continue-as-new), as the provider would deliver them.
type step struct {
	msgs []duroxide.WorkItem
	fed  bool
	want outcome
	// errContains, when set, must be part of the turn's failure output
	// (want.output is then not compared).
	errContains string
}

// execCase is an orchestration, the history stored before its first step
// (none: the first step starts the instance) and its turns.
type execCase struct {
	name    string
	code    Func
	history hist
	steps   []step
}

func msgs(ms ...duroxide.WorkItem) []duroxide.WorkItem { return ms }

func echoActivity(ctx *Context, _ string) (string, error) {
	v, err := ctx.ScheduleActivity("A", "x", nil, nil).Get()
	return "got:" + v, err
}

// gateThenEvent runs activity Gate, then waits for event E: the code of the
// cases on events raised before their subscription.
func gateThenEvent(ctx *Context, _ string) (string, error) {
	g, err := ctx.ScheduleActivity("Gate", "e", nil, nil).Get()
	if err != nil {
		return "", err
	}
	ev, err := ctx.WaitForEvent("E").Get()
	return g + "|" + ev, err
}

var executorCases = []execCase{
	{
		name: "activity scheduled, completed on the next turn",
		code: echoActivity,
		steps: []step{
			{msgs: msgs(start("in")), want: outcome{events: "1:OrchestrationStarted 2:ActivityScheduled", work: "activity#2 A(x)"}},
			{msgs: msgs(actDone(2, "r")), want: outcome{
				events: "3:ActivityCompleted<2 4:OrchestrationCompleted", status: "Completed", output: "got:r",
			}},
		},
	},
	{
		name: "activity failure reaches the code as a TaskError",
		code: func(ctx *Context, _ string) (string, error) {
			_, err := ctx.ScheduleActivity("Charge", "12", nil, nil).Get()
			var te *TaskError
			if !errors.As(err, &te) || te.Details.Application == nil {
				return "no TaskError", nil
			}
			return "", fmt.Errorf("charge: %w", err)
		},
		steps: []step{
			{msgs: msgs(start("in")), want: outcome{events: "1:OrchestrationStarted 2:ActivityScheduled", work: "activity#2 Charge(12)"}},
			{msgs: msgs(actFailed(2, "card declined")), want: outcome{
				events: "3:ActivityFailed<2 4:OrchestrationFailed", status: "Failed", output: "charge: card declined",
			}},
		},
	},
	{
		name: "timer created at clock+d, fired on the next turn",
		code: func(ctx *Context, _ string) (string, error) {
			_, err := ctx.Timer(90 * time.Second).Get()
			return "woke", err
		},
		steps: []step{
			{msgs: msgs(start("in")), want: outcome{events: "1:OrchestrationStarted 2:TimerCreated", work: "timer#2@1090000"}},
			{msgs: msgs(timerFired(2, 1_090_000)), want: outcome{
				events: "3:TimerFired<2 4:OrchestrationCompleted", status: "Completed", output: "woke",
			}},
		},
	},
	{
		name: "external event raised after the subscription is delivered",
		code: func(ctx *Context, _ string) (string, error) { return ctx.WaitForEvent("Approve").Get() },
		steps: []step{
			{msgs: msgs(start("in")), want: outcome{events: "1:OrchestrationStarted 2:ExternalSubscribed"}},
			// An event of another name is recorded but wakes nothing.
			{msgs: msgs(raised("Other", "no")), want: outcome{events: "3:ExternalEvent"}},
			{msgs: msgs(raised("Approve", "yes")), want: outcome{
				events: "4:ExternalEvent 5:OrchestrationCompleted", status: "Completed", output: "yes",
			}},
		},
	},
	{
		// Recorded by duroxide as 18_event_before_subscription.
		name: "external event raised before the subscription is lost to it",
		code: gateThenEvent,
		steps: []step{
			{msgs: msgs(start("")), want: outcome{events: "1:OrchestrationStarted 2:ActivityScheduled", work: "activity#2 Gate(e)"}},
			{msgs: msgs(raised("E", "early")), want: outcome{events: "3:ExternalEvent"}},
			// Subscribing now does not find the early event.
			{msgs: msgs(actDone(2, "gate:e")), want: outcome{events: "4:ActivityCompleted<2 5:ExternalSubscribed"}},
			{msgs: msgs(raised("E", "late")), want: outcome{
				events: "6:ExternalEvent 7:OrchestrationCompleted", status: "Completed", output: "gate:e|late",
			}},
		},
	},
	{
		// History orders the batch's completions before the subscription the
		// code records on waking, so the event precedes its wait.
		name: "external event in the batch whose completion leads to the wait is lost too",
		code: gateThenEvent,
		steps: []step{
			{msgs: msgs(start("")), want: outcome{events: "1:OrchestrationStarted 2:ActivityScheduled", work: "activity#2 Gate(e)"}},
			{msgs: msgs(actDone(2, "gate:e"), raised("E", "same batch")), want: outcome{
				events: "3:ActivityCompleted<2 4:ExternalEvent 5:ExternalSubscribed",
			}},
			{msgs: msgs(raised("E", "later")), want: outcome{
				events: "6:ExternalEvent 7:OrchestrationCompleted", status: "Completed", output: "gate:e|later",
			}},
		},
	},
	{
		name: "sub-orchestration scheduled with an automatic id and completed",
		code: func(ctx *Context, _ string) (string, error) {
			return ctx.ScheduleSubOrchestration("Child", "c-in", "", nil).Get()
		},
		steps: []step{
			{msgs: msgs(start("in")), want: outcome{
				events: "1:OrchestrationStarted 2:SubOrchestrationScheduled", work: "start inst::sub::2 Child(c-in) for inst#2",
			}},
			{msgs: msgs(childDone(2, "child-out")), want: outcome{
				events: "3:SubOrchestrationCompleted<2 4:OrchestrationCompleted", status: "Completed", output: "child-out",
			}},
		},
	},
	{
		name: "sub-orchestration with an explicit id fails: the code gets the error",
		code: func(ctx *Context, _ string) (string, error) {
			_, err := ctx.ScheduleSubOrchestration("Child", "c", "explicit", nil).Get()
			return "caught:" + fmt.Sprint(err), nil
		},
		steps: []step{
			{msgs: msgs(start("in")), want: outcome{
				events: "1:OrchestrationStarted 2:SubOrchestrationScheduled", work: "start explicit Child(c) for inst#2",
			}},
			{msgs: msgs(childFailed(2, "bad child")), want: outcome{
				events: "3:SubOrchestrationFailed<2 4:OrchestrationCompleted", status: "Completed", output: "caught:bad child",
			}},
		},
	},
	{
		name: "a child's end is sent to its parent",
		code: func(ctx *Context, in string) (string, error) {
			if in == "fail" {
				return "", errors.New("child gave up")
			}
			return "child:" + in, nil
		},
		history: hist{}.add(duroxide.OrchestrationStartedEvent{Name: execName, Version: "1.0.0", Input: "ok", ParentInstance: ptr("p"), ParentID: ptrU(7)}),
		steps: []step{
			{msgs: msgs(raised("nudge", "")), want: outcome{
				events: "2:ExternalEvent 3:OrchestrationCompleted", work: "child done to p#7: child:ok", status: "Completed", output: "child:ok",
			}},
		},
	},
	{
		name: "continue-as-new ends the execution and the next one starts from its input",
		code: func(ctx *Context, in string) (string, error) {
			if in == "0" {
				if _, err := ctx.ScheduleActivity("A", "gen0", nil, nil).Get(); err != nil {
					return "", err
				}
				ctx.ContinueAsNew("1", nil)
			}
			return "done:" + in, nil
		},
		steps: []step{
			{msgs: msgs(start("0")), want: outcome{events: "1:OrchestrationStarted 2:ActivityScheduled", work: "activity#2 A(gen0)", execution: 1}},
			{msgs: msgs(actDone(2, "echo:gen0")), want: outcome{
				events: "3:ActivityCompleted<2 4:OrchestrationContinuedAsNew", work: "continue O(1)",
				status: "ContinuedAsNew", output: "1", execution: 1,
			}},
			// A late message of the finished execution rides along and is dropped.
			{fed: true, msgs: msgs(actDone(2, "late")), want: outcome{
				events: "1:OrchestrationStarted 2:OrchestrationCompleted", status: "Completed", output: "done:1", execution: 2,
			}},
		},
	},
	{
		// Recorded by duroxide as 12_cancel.
		name: "cancelling an instance fails it and cancels its activity and waits",
		code: func(ctx *Context, _ string) (string, error) {
			a, w := ctx.ScheduleActivity("Slow", "x", nil, nil), ctx.WaitForEvent("Never")
			ctx.Join(a, w)
			return "joined", nil
		},
		steps: []step{
			{msgs: msgs(start("")), want: outcome{events: "1:OrchestrationStarted 2:ActivityScheduled 3:ExternalSubscribed", work: "activity#2 Slow(x)"}},
			{msgs: msgs(duroxide.CancelInstance{Instance: execInstance, Reason: "user-cancel"}), want: outcome{
				events: "4:OrchestrationCancelRequested 5:ExternalSubscribedCancelled<3 6:OrchestrationFailed 7:ActivityCancelRequested<2",
				status: "Failed", output: "canceled: user-cancel", cancelled: "2",
			}},
		},
	},
	{
		name: "cancelling a parent cancels its open child",
		code: func(ctx *Context, _ string) (string, error) {
			return ctx.ScheduleSubOrchestration("Child", "c", "", nil).Get()
		},
		steps: []step{
			{msgs: msgs(start("")), want: outcome{events: "1:OrchestrationStarted 2:SubOrchestrationScheduled", work: "start inst::sub::2 Child(c) for inst#2"}},
			{msgs: msgs(duroxide.CancelInstance{Instance: execInstance, Reason: "stop"}), want: outcome{
				events: "3:OrchestrationCancelRequested 4:OrchestrationFailed", work: "cancel inst::sub::2: parent canceled",
				status: "Failed", output: "canceled: stop",
			}},
		},
	},
	{
		name:    "nondeterminism: the activity was renamed",
		code:    func(ctx *Context, _ string) (string, error) { return ctx.ScheduleActivity("B", "x", nil, nil).Get() },
		history: hist{}.add(started("in")).add(duroxide.ActivityScheduledEvent{Name: "A", Input: "x"}),
		steps: []step{
			{msgs: msgs(actDone(2, "r")), errContains: `nondeterministic: schedule mismatch: event 2 in history is ActivityScheduled(activity "A", input "x"), but the code scheduled activity "B"`,
				want: outcome{events: "3:ActivityCompleted<2 4:OrchestrationFailed", status: "Failed", divergence: 2}},
		},
	},
	{
		name: "nondeterminism: a timer where history has an activity",
		code: func(ctx *Context, _ string) (string, error) {
			_, err := ctx.Timer(time.Second).Get()
			return "", err
		},
		history: hist{}.add(started("in")).add(duroxide.ActivityScheduledEvent{Name: "A", Input: "x"}),
		steps: []step{
			{msgs: msgs(raised("unrelated", "")), errContains: "nondeterministic: schedule mismatch: event 2 in history is ActivityScheduled",
				// The failed execution cancels the activity history still has in flight.
				want: outcome{events: "3:ExternalEvent 4:OrchestrationFailed 5:ActivityCancelRequested<2", status: "Failed", cancelled: "2", divergence: 2}},
		},
	},
	{
		name:    "nondeterminism: a completion of the wrong kind for its schedule",
		code:    echoActivity,
		history: hist{}.add(started("in")).add(duroxide.ActivityScheduledEvent{Name: "A", Input: "x"}),
		steps: []step{
			{msgs: msgs(timerFired(2, 5)), errContains: "completion kind mismatch for id=2, expected 'activity', got 'timer'",
				want: outcome{events: "3:OrchestrationFailed 4:ActivityCancelRequested<2", status: "Failed", cancelled: "2"}},
		},
	},
	{
		// Recorded by duroxide as 05a_race_event_wins.
		name: "select of event and timer: the event wins",
		code: raceEventTimer,
		steps: []step{
			{msgs: msgs(start("")), want: outcome{events: "1:OrchestrationStarted 2:ExternalSubscribed 3:TimerCreated", work: "timer#3@1060000"}},
			{msgs: msgs(raised("Go", "payload")), want: outcome{
				events: "4:ExternalEvent 5:OrchestrationCompleted", status: "Completed", output: "event:payload",
			}},
		},
	},
	{
		// Recorded by duroxide as 05b_race_timer_wins.
		name: "select of event and timer: the timer wins and the wait is cancelled",
		code: raceEventTimer,
		steps: []step{
			{msgs: msgs(start("")), want: outcome{events: "1:OrchestrationStarted 2:ExternalSubscribed 3:TimerCreated", work: "timer#3@1060000"}},
			{msgs: msgs(timerFired(3, 1_060_000)), want: outcome{
				events: "4:TimerFired<3 5:ExternalSubscribedCancelled<2 6:OrchestrationCompleted", status: "Completed", output: "timeout",
			}},
			// The event raised after the race ended finds a terminal instance.
		},
	},
	{
		// durable's NewGUID and UTCNow are these system activities: their
		// values are recorded, so a replay sees what the first run saw.
		name: "system calls: recorded GUID and time are replayed, not recomputed",
		code: func(ctx *Context, _ string) (string, error) {
			g, err := ctx.ScheduleActivity("__duroxide_syscall:new_guid", "", nil, nil).Get()
			if err != nil {
				return "", err
			}
			now, err := ctx.ScheduleActivity("__duroxide_syscall:utc_now_ms", "", nil, nil).Get()
			return g + "@" + now, err
		},
		steps: []step{
			{msgs: msgs(start("")), want: outcome{events: "1:OrchestrationStarted 2:ActivityScheduled", work: "activity#2 __duroxide_syscall:new_guid()"}},
			{msgs: msgs(actDone(2, "00000000-0000-0000-0000-5b3df3643e75")), want: outcome{
				events: "3:ActivityCompleted<2 4:ActivityScheduled", work: "activity#4 __duroxide_syscall:utc_now_ms()",
			}},
			{msgs: msgs(actDone(4, "1795629198093")), want: outcome{
				events: "5:ActivityCompleted<4 6:OrchestrationCompleted", status: "Completed",
				output: "00000000-0000-0000-0000-5b3df3643e75@1795629198093",
			}},
		},
	},
	{
		// Timers match history by position only (as in duroxide): a replay
		// on a later clock computes another fire time and still matches.
		name: "a replayed timer keeps its recorded fire time",
		code: func(ctx *Context, _ string) (string, error) {
			_, err := ctx.Timer(time.Hour).Get()
			return "fired", err
		},
		history: hist{}.add(started("in")).add(duroxide.TimerCreatedEvent{FireAtMs: 42}),
		steps: []step{
			{msgs: msgs(timerFired(2, 42)), want: outcome{events: "3:TimerFired<2 4:OrchestrationCompleted", status: "Completed", output: "fired"}},
		},
	},
	{
		// duroxide stops applying history where the code returns, too: only
		// the replayer (CheckAll) calls the unreached schedule nondeterministic.
		name:    "code that no longer reaches a recorded schedule completes and cancels it",
		code:    func(*Context, string) (string, error) { return "early", nil },
		history: hist{}.add(started("in")).add(duroxide.ActivityScheduledEvent{Name: "A", Input: "x"}),
		steps: []step{
			{msgs: msgs(raised("nudge", "")), want: outcome{
				events: "3:ExternalEvent 4:OrchestrationCompleted 5:ActivityCancelRequested<2",
				status: "Completed", output: "early", cancelled: "2",
			}},
		},
	},
	{
		// A key replayed from history keeps the time its KeyValueSet
		// recorded (not the replay's clock), so pruning decides as the first
		// run would; a key set in this turn carries this turn's clock.
		name: "KV prune uses the recorded time of replayed keys",
		code: func(ctx *Context, _ string) (string, error) {
			ctx.SetValue("old", "1")
			if _, err := ctx.ScheduleActivity("A", "x", nil, nil).Get(); err != nil {
				return "", err
			}
			ctx.SetValue("new", "2")
			n := ctx.PruneValuesUpdatedBefore(500)
			_, oldLeft := ctx.Value("old")
			v, _ := ctx.Value("new")
			return fmt.Sprintf("pruned %d, old left %v, new=%s", n, oldLeft, v), nil
		},
		history: hist{}.add(started("in")).add(duroxide.KeyValueSetEvent{Key: "old", Value: "1", LastUpdatedAtMs: 100}).
			add(duroxide.ActivityScheduledEvent{Name: "A", Input: "x"}),
		steps: []step{
			{msgs: msgs(actDone(3, "r")), want: outcome{
				events: "4:ActivityCompleted<3 5:KeyValueSet 6:KeyValueCleared 7:OrchestrationCompleted",
				status: "Completed", output: "pruned 1, old left false, new=2",
			}},
		},
	},
	{
		name: "a batch for a completed execution is not run",
		code: echoActivity,
		history: hist{}.add(started("in")).add(duroxide.ActivityScheduledEvent{Name: "A", Input: "x"}).
			add(duroxide.ActivityCompletedEvent{Result: "r"}, 2).add(duroxide.OrchestrationCompletedEvent{Output: "got:r"}),
		steps: []step{{msgs: msgs(actDone(2, "dup"))}}, // want.ran false: see TestExecutor
	},
}

func raceEventTimer(ctx *Context, _ string) (string, error) {
	ev, timer := ctx.WaitForEvent("Go"), ctx.Timer(time.Minute)
	if ctx.Select(ev, timer) == 1 {
		return "timeout", nil
	}
	v, err := ev.Get()
	return "event:" + v, err
}

func ptrU(v uint64) *uint64 { return &v }

// TestExecutor runs each case's turns in order, as the runtime would fetch
// them, once replaying every turn and once resuming a kept engine.
func TestExecutor(t *testing.T) {
	t.Parallel()
	for _, c := range executorCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bothModes(t, func(t *testing.T, resume bool) {
				s := newSession(t, c.code, resume, c.history)
				var last turnOut
				for i, st := range c.steps {
					batch := st.msgs
					if st.fed {
						batch = append(workToMessages(last.commit, s.instance), batch...)
					}
					last = s.turn(batch...)
					if st.want == (outcome{}) {
						if last.ran {
							t.Fatalf("turn %d ran on a terminal execution: %s", i+1, kinds(last.commit.HistoryDelta))
						}
						continue
					}
					want := st.want
					if st.errContains != "" {
						got := deref(last.commit.Metadata.Output)
						if !strings.Contains(got, st.errContains) {
							t.Fatalf("turn %d: failure %q does not contain %q", i+1, got, st.errContains)
						}
						want.output = got
					}
					t.Logf("turn %d", i+1)
					checkOutcome(t, last, want)
					if t.Failed() {
						t.FailNow()
					}
				}
			})
		})
	}
}
