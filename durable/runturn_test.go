package durable_test

import (
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

func TestRunTurnFirstTurnAndReplay(t *testing.T) {
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Wait", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if _, err := ctx.Timer(time.Second).Get(); err != nil {
			return "", err
		}
		return ctx.ScheduleSubOrchestration("Child", "c").Get()
	})
	clock := func() time.Time { return time.UnixMilli(5_000) }
	start := duroxide.StartOrchestration{Instance: "i", Orchestration: "Wait", Input: "in", ExecutionID: 1}
	out := runTurn(t, reg, duroxide.OrchestrationItem{Instance: "i", ExecutionID: 1, Messages: []duroxide.WorkItem{start}}, durable.Options{Clock: clock})
	c := out.Commit
	if out.Abandoned || len(c.HistoryDelta) != 2 || c.Metadata.OrchestrationName != "Wait" || c.Metadata.PinnedDuroxideVersion == nil {
		t.Fatalf("first turn %+v", out)
	}
	timer, ok := c.OrchestratorItems[0].(duroxide.TimerFired)
	if !ok || timer.FireAtMs != 6_000 || timer.ID != 2 {
		t.Fatalf("timer item %+v", c.OrchestratorItems)
	}
	// Second turn: the timer fired; the child is scheduled with its auto id.
	fired := duroxide.TimerFired{Instance: "i", ExecutionID: 1, ID: 2, FireAtMs: 6_000}
	out = runTurn(t, reg, duroxide.OrchestrationItem{Instance: "i", ExecutionID: 1, History: c.HistoryDelta, Messages: []duroxide.WorkItem{fired}}, durable.Options{Clock: clock})
	child, ok := out.Commit.OrchestratorItems[0].(duroxide.StartOrchestration)
	if !ok || child.Instance != "i::sub::4" || *child.ParentID != 4 || *child.ParentInstance != "i" {
		t.Fatalf("child start %+v", out.Commit.OrchestratorItems)
	}
	// Unregistered: handed back, nothing committed.
	out = runTurn(t, durable.NewRegistry(), duroxide.OrchestrationItem{Instance: "i", ExecutionID: 1, Messages: []duroxide.WorkItem{start}, AttemptCount: 1}, durable.Options{})
	if !out.Abandoned || out.AbandonDelay != time.Second {
		t.Fatalf("unregistered %+v", out)
	}
}

func runTurn(t *testing.T, reg *durable.Registry, item duroxide.OrchestrationItem, opts durable.Options) durable.TurnOutcome {
	t.Helper()
	out, err := durable.RunTurn(reg, item, opts)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
