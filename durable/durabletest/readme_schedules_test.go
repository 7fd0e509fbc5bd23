package durabletest_test

import (
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// The "Schedules" test of docs/schedules.md, verbatim, and the README's
// "Schedules" excerpt of it (the repository root's docblocks_test.go checks
// both).

func TestNightlyReport(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Report", durable.Orchestration(func(ctx *durable.OrchestrationContext, dept string) (string, error) {
		return "report on " + dept, nil
	}))
	env := durabletest.Start(t, reg)
	ctx := t.Context()

	err := env.Client.CreateSchedule(ctx, durable.Schedule{
		ID:            "nightly-report",
		Orchestration: "Report",
		Input:         `"sales"`,
		Cron:          "30 2 * * *",        // 02:30 every day...
		TimeZone:      "Europe/Paris",      // ...in Paris
		Overlap:       durable.OverlapSkip, // last night's still runs: skip tonight's
		CatchupWindow: time.Hour,           // after downtime, start firings up to 1 h late
	})
	if err != nil {
		t.Fatal(err)
	}
	// Time skipping fires the schedule too: three nights, at once.
	for _, id := range env.WaitForFirings(t, "nightly-report", 3) { // "nightly-report@2026-11-29T01:30:00Z", ...
		if st := env.Wait(t, id); st.Output != `"report on sales"` { // JSON, as the input
			t.Fatalf("%s: %v %q", id, st.Status, st.Output)
		}
	}
	d, err := env.Client.DescribeSchedule(ctx, "nightly-report", 2) // with its next 2 times
	if err != nil || len(d.Next) != 2 || d.Recent[0].Outcome != "started" {
		t.Fatalf("describe: %+v, %v", d, err)
	}
}
