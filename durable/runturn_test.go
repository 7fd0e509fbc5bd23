package durable_test

import (
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

func TestRunTurnFirstTurnAndReplay(t *testing.T) {
	t.Parallel()
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

func TestRunTurnPinnedVersionOutsideRangeIsHandedBack(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("O", func(*durable.OrchestrationContext, string) (string, error) { return "", nil })
	ev := duroxide.NewEvent(1, "i", 1, nil, duroxide.OrchestrationStartedEvent{Name: "O", Version: "1.0.0"})
	ev.DuroxideVersion = "9.0.0"
	out := runTurn(t, reg, duroxide.OrchestrationItem{Instance: "i", ExecutionID: 1, History: []duroxide.Event{ev}}, durable.Options{})
	if !out.Abandoned {
		t.Fatalf("a history pinned to 9.0.0 was processed: %+v", out)
	}
}

func TestRunTurnContinueAsNewCarriesQueueAndStatus(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Loop", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		ctx.SetCustomStatus("gen-" + in)
		ctx.ContinueAsNew(in+"+", durable.WithVersion("1.0.0"))
		return "", nil
	})
	start := duroxide.StartOrchestration{Instance: "i", Orchestration: "Loop", Input: "0", ExecutionID: 1}
	msgs := []duroxide.WorkItem{start, duroxide.QueueMessage{Instance: "i", Name: "q", Data: "kept"}}
	out := runTurn(t, reg, duroxide.OrchestrationItem{Instance: "i", ExecutionID: 1, Messages: msgs}, durable.Options{})
	c := out.Commit
	if c.Metadata.Status != "ContinuedAsNew" || *c.Metadata.Output != "0+" {
		t.Fatalf("metadata %+v", c.Metadata)
	}
	can, ok := c.OrchestratorItems[0].(duroxide.ContinueAsNew)
	if !ok || can.Input != "0+" || *can.Version != "1.0.0" || *can.InitialCustomStatus != "gen-0" ||
		len(can.CarryForwardEvents) != 1 || can.CarryForwardEvents[0] != [2]string{"q", "kept"} {
		t.Fatalf("continue-as-new item %+v", c.OrchestratorItems)
	}
	// The next execution starts from the carried state.
	next := runTurn(t, reg, duroxide.OrchestrationItem{Instance: "i", ExecutionID: 1, History: c.HistoryDelta, Messages: []duroxide.WorkItem{can}}, durable.Options{})
	s := next.Commit.HistoryDelta[0].Kind.(duroxide.OrchestrationStartedEvent)
	if next.Commit.ExecutionID != 2 || s.Input != "0+" || s.CarryForwardEvents == nil || *s.InitialCustomStatus != "gen-0" {
		t.Fatalf("next execution %+v / %+v", next.Commit.ExecutionID, s)
	}
	if got := next.Commit.HistoryDelta[1].Kind.EventType(); got != "ExternalEventPersistent" {
		t.Fatalf("carried message recorded as %s", got)
	}
}
