package durabletest_test

import (
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The "Limits on running instances of an orchestration" block of
// docs/flow-control.md, verbatim (the repository root's docblocks_test.go
// checks it); then three starts of Report, each waiting for an event: two
// run, one is held.

func TestLimitRunningReports(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Report", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.WaitForEvent("go").Get()
	})
	env := durabletest.Start(t, reg)
	ctx := t.Context()

	// at most 2 instances of "Report" run at once; later starts wait their turn
	err := env.Client.SetLimit(ctx, duroxide.Limit{Kind: duroxide.OrchestrationName, Name: "Report", Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	ls, err := env.Client.Limits(ctx) // each orchestration limit with its Running and Held

	if err != nil || len(ls) != 1 || ls[0].Kind != duroxide.OrchestrationName || ls[0].Concurrency != 2 {
		t.Fatalf("Limits = %+v, %v", ls, err)
	}
	for _, id := range []string{"r1", "r2", "r3"} {
		if err := env.Client.StartOrchestration(ctx, id, "Report", ""); err != nil {
			t.Fatal(err)
		}
	}
	durabletest.Eventually(t, "2 running, 1 held", func() (bool, error) {
		ls, err := env.Client.Limits(ctx)
		return err == nil && len(ls) == 1 && ls[0].Running == 2 && ls[0].Held == 1, err
	})
	// r1 ends: r3 runs in its slot
	if err := env.Client.RaiseEvent(ctx, "r1", "go", "done"); err != nil {
		t.Fatal(err)
	}
	if st := env.Wait(t, "r1"); st.Status != durable.StatusCompleted {
		t.Fatalf("r1: %v", st.Status)
	}
	durabletest.Eventually(t, "r3 runs", func() (bool, error) {
		st, err := env.Client.Status(ctx, "r3")
		return st.Status == durable.StatusRunning, err
	})
}
