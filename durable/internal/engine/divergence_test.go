package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// TestDescribeFollowsPointers: the replayer shows events to people, so
// pointer fields show their values (not addresses) and unset ones nothing.
func TestDescribeFollowsPointers(t *testing.T) {
	t.Parallel()
	status, session := "step2", "s1"
	for _, c := range []struct {
		kind duroxide.EventKind
		want string
	}{
		{duroxide.CustomStatusUpdatedEvent{Status: &status}, `CustomStatusUpdated{Status:"step2"}`},
		{duroxide.CustomStatusUpdatedEvent{}, `CustomStatusUpdated{}`},
		{duroxide.ActivityScheduledEvent{Name: "Echo", Input: "x", SessionID: &session}, `ActivityScheduled{Name:"Echo" Input:"x" SessionID:"s1"}`},
		{duroxide.OrchestrationFailedEvent{Details: nondeterminism("m")}, `OrchestrationFailed{Details:{Configuration:{Kind:"Nondeterminism" Resource:"" Message:"m"}}}`},
	} {
		if got := Describe(c.kind); got != c.want {
			t.Errorf("Describe = %s, want %s", got, c.want)
		}
	}
}

// TestNondeterminismMessagesSayWhatDiffers: each divergence's message names
// the history event by id, says in words what history holds there and what
// the code did instead, with no Go pointers or struct dumps (the old
// messages printed %+v of events, so a status read 0x2283c049ae70, and an
// inserted activity was labelled a custom status mismatch).
func TestNondeterminismMessagesSayWhatDiffers(t *testing.T) {
	t.Parallel()
	shipped, sess := "shipped", "s1"
	long := strings.Repeat("x", 100)
	act := func(name, input string) Func {
		return func(ctx *Context, _ string) (string, error) { return ctx.ScheduleActivity(name, input, nil, nil).Get() }
	}
	cases := []struct {
		name string
		h    hist
		code Func
		want string
	}{
		{
			name: "activity inserted before a custom status",
			h: hist{}.add(started("in")).
				add(duroxide.ActivityScheduledEvent{Name: "Reserve", Input: "1"}).
				add(duroxide.ActivityCompletedEvent{Result: "ok"}, 2).
				add(duroxide.CustomStatusUpdatedEvent{Status: &shipped}),
			code: func(ctx *Context, _ string) (string, error) {
				if _, err := ctx.ScheduleActivity("Reserve", "1", nil, nil).Get(); err != nil {
					return "", err
				}
				charge := ctx.ScheduleActivity("Charge", `{"amount":12}`, nil, nil)
				ctx.SetCustomStatus(&shipped)
				return charge.Get()
			},
			want: `schedule mismatch: event 4 in history is CustomStatusUpdated(status "shipped"), but the code scheduled activity "Charge" (input "{\"amount\":12}")`,
		},
		{
			name: "activity renamed",
			h:    hist{}.add(started("in")).add(duroxide.ActivityScheduledEvent{Name: "Charge", Input: "12", SessionID: &sess}),
			code: func(ctx *Context, _ string) (string, error) {
				return ctx.ScheduleActivity("ChargeCard", "12", &sess, nil).Get()
			},
			want: `schedule mismatch: event 2 in history is ActivityScheduled(activity "Charge", input "12", session "s1"), but the code scheduled activity "ChargeCard" (input "12", session "s1")`,
		},
		{
			name: "timer in history, activity in code",
			h:    hist{}.add(started("in")).add(duroxide.TimerCreatedEvent{FireAtMs: 4_600_000}),
			code: act("A", "1"),
			want: `schedule mismatch: event 2 in history is TimerCreated(fires at 1970-01-01T01:16:40.000Z), but the code scheduled activity "A" (input "1")`,
		},
		{
			name: "activity in history, timer in code",
			h:    hist{}.add(started("in")).add(duroxide.ActivityScheduledEvent{Name: "A", Input: "1"}),
			code: func(ctx *Context, _ string) (string, error) { return ctx.Timer(time.Hour).Get() },
			want: `schedule mismatch: event 2 in history is ActivityScheduled(activity "A", input "1"), but the code created a timer`,
		},
		{
			name: "long input changed",
			h:    hist{}.add(started("in")).add(duroxide.ActivityScheduledEvent{Name: "A", Input: long}),
			code: act("A", long+"y"),
			want: `schedule mismatch: event 2 in history is ActivityScheduled(activity "A", input 100 bytes), but the code scheduled activity "A" (input 101 bytes); the inputs differ`,
		},
		{
			name: "custom status changed to a value set",
			h:    hist{}.add(started("in")).add(duroxide.CustomStatusUpdatedEvent{Status: &shipped}).add(duroxide.ExternalSubscribedEvent{Name: "go"}),
			code: func(ctx *Context, _ string) (string, error) {
				ctx.SetValue("stage", "shipped")
				return ctx.WaitForEvent("go").Get()
			},
			want: `custom status mismatch: event 2 in history is CustomStatusUpdated(status "shipped"), but the code set key "stage" to value "shipped"`,
		},
		{
			name: "history schedules, the code waits",
			h:    hist{}.add(started("in")).add(duroxide.ExternalSubscribedEvent{Name: "go"}).add(duroxide.ActivityScheduledEvent{Name: "A", Input: "1"}),
			code: func(ctx *Context, _ string) (string, error) { return ctx.WaitForEvent("go").Get() },
			want: `history schedule but no emitted action: event 3 in history is ActivityScheduled(activity "A", input "1"), but the code did nothing more there (it waits for something, or returned)`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, res := turn(c.h, c.code)
			cfg := res.details.Configuration
			if res.kind != turnFailed || cfg == nil || cfg.Kind != duroxide.ConfigErrorNondeterminism || cfg.Message == nil {
				t.Fatalf("want a nondeterminism failure, got %+v", res)
			}
			if *cfg.Message != c.want {
				t.Errorf("message\n got %s\nwant %s", *cfg.Message, c.want)
			}
		})
	}
}
