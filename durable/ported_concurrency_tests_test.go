package durable_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/concurrency_tests.rs: orchestrations each
// joining an activity, an external event and a timer, run side by side.

// joinActivityEventTimer is an orchestration joining activity name(input),
// the event "Go" and a 1ms timer, answering "<prefix>:<label>=<result>;evt=<data>".
func joinActivityEventTimer(prefix, label, name, input string) durable.OrchestrationFunc {
	return func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		a := ctx.ScheduleActivity(name, input)
		e := ctx.WaitForEvent("Go")
		tm := ctx.Timer(time.Millisecond)
		ctx.Join(a, e, tm)
		r, err := a.Get()
		if err != nil {
			return "", err
		}
		d, err := e.Get()
		return prefix + ":" + label + "=" + r + ";evt=" + d, err
	}
}

// TestConcurrentOrchestrations mirrors concurrent_orchestrations_different_activities_fs,
// concurrent_orchestrations_same_activities_fs and single_orchestration_with_join_test.
func TestConcurrentOrchestrations(t *testing.T) {
	t.Parallel()
	type run struct{ instance, orch, event, want, activityResult string }
	cases := []struct {
		name string
		runs []run
	}{
		{"concurrent_orchestrations_different_activities_fs", []run{
			{"inst-multi-1", "AddOrchestration", "E1", "o1:sum=5;evt=E1", "5"},
			{"inst-multi-2", "UpperOrchestration", "E2", "o2:up=HI;evt=E2", "HI"}}},
		{"concurrent_orchestrations_same_activities_fs", []run{
			{"inst-same-1", "ProcOrchestration1", "P1", "o1:a=11;evt=P1", "11"},
			{"inst-same-2", "ProcOrchestration2", "P2", "o2:a=21;evt=P2", "21"}}},
		{"single_orchestration_with_join_test", []run{
			{"inst-single", "ProcOrchestration1", "P1", "o1:a=11;evt=P1", "11"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			reg := durable.NewRegistry().
				MustAddActivity("Add", func(_ *durable.ActivityContext, in string) (string, error) {
					a, b, _ := strings.Cut(in, ",")
					x, _ := strconv.Atoi(a)
					y, _ := strconv.Atoi(b)
					return strconv.Itoa(x + y), nil
				}).
				MustAddActivity("Upper", func(_ *durable.ActivityContext, in string) (string, error) { return strings.ToUpper(in), nil }).
				MustAddActivity("Proc", func(_ *durable.ActivityContext, in string) (string, error) {
					n, _ := strconv.Atoi(in)
					return strconv.Itoa(n + 1), nil
				}).
				MustAddOrchestration("AddOrchestration", joinActivityEventTimer("o1", "sum", "Add", "2,3")).
				MustAddOrchestration("UpperOrchestration", joinActivityEventTimer("o2", "up", "Upper", "hi")).
				MustAddOrchestration("ProcOrchestration1", joinActivityEventTimer("o1", "a", "Proc", "10")).
				MustAddOrchestration("ProcOrchestration2", joinActivityEventTimer("o2", "a", "Proc", "20"))
			env := durabletest.Start(t, reg)
			for _, r := range c.runs {
				if err := env.Client.StartOrchestration(t.Context(), r.instance, r.orch, ""); err != nil {
					t.Fatal(err)
				}
			}
			for _, r := range c.runs {
				env.WaitForEventSubscription(t, r.instance, "Go")
				if err := env.Client.RaiseEvent(t.Context(), r.instance, "Go", r.event); err != nil {
					t.Fatal(err)
				}
			}
			for _, r := range c.runs {
				mustComplete(t, env.Wait(t, r.instance), r.want)
				hist := read(t, env, r.instance)
				if !hasEventWithSource(hist, 2, func(k duroxide.EventKind) bool {
					d, ok := k.(duroxide.ActivityCompletedEvent)
					return ok && d.Result == r.activityResult
				}) || countEvents(hist, "TimerFired") != 1 {
					t.Errorf("%s: history %v lacks the activity's completion of event 2 or the timer", r.instance, kindsOf(hist))
				}
			}
		})
	}
}
