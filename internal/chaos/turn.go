package chaos

import (
	"fmt"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// OrchestrationName is the name of the emulated orchestration.
const OrchestrationName = "fanout"

// orchestrationVersion is the version its first turn records.
const orchestrationVersion = "1.0.0"

// Output is what every emulated orchestration completes with.
const Output = "all done"

// KV keys of the emulated orchestration: the first turn sets progressKey, the
// completing turn clears it (a tombstone in the running execution's delta)
// and sets ResultKey to Output.
const (
	progressKey = "progress"
	ResultKey   = "result"
)

// StartMessage is the StartOrchestration of the emulated orchestration for
// instance id.
func StartMessage(id string) duroxide.StartOrchestration {
	return duroxide.StartOrchestration{Instance: id, Orchestration: OrchestrationName, Input: id,
		ExecutionID: duroxide.InitialExecutionID}
}

// activityResult is the result a worker reports: it names the lock token of
// the attempt, so history shows which of several attempts was recorded.
func activityResult(a duroxide.ActivityExecute, token string) string {
	return fmt.Sprintf("%s/%d by %s", a.Instance, a.ID, token)
}

// startOf returns the first StartOrchestration among msgs.
func startOf(msgs []duroxide.WorkItem) (duroxide.StartOrchestration, bool) {
	for _, m := range msgs {
		switch s := m.(type) {
		case duroxide.StartOrchestration:
			return s, true
		case *duroxide.StartOrchestration:
			return *s, true
		}
	}
	return duroxide.StartOrchestration{}, false
}

// completionsOf returns the ActivityCompleted messages of msgs.
func completionsOf(msgs []duroxide.WorkItem) []duroxide.ActivityCompleted {
	var out []duroxide.ActivityCompleted
	for _, m := range msgs {
		switch c := m.(type) {
		case duroxide.ActivityCompleted:
			out = append(out, c)
		case *duroxide.ActivityCompleted:
			out = append(out, *c)
		}
	}
	return out
}

// turn computes the commit of one orchestration turn from the fetched item
// alone. completes reports that the commit ends the instance.
func turn(item *duroxide.OrchestrationItem, fanOut int) (c duroxide.OrchestrationCommit, completes bool, problem string) {
	c.ExecutionID = item.ExecutionID
	if item.HistoryError != "" {
		return c, false, "undecodable history: " + item.HistoryError
	}
	if len(item.History) == 0 {
		start, ok := startOf(item.Messages)
		if !ok {
			return c, false, fmt.Sprintf("%d messages for an instance that never started", len(item.Messages))
		}
		return firstTurn(item, start, fanOut), false, ""
	}
	c, completes = laterTurn(item, fanOut)
	return c, completes, ""
}

// firstTurn starts the instance, schedules fanOut activities (event ids 2
// to fanOut+1) and sets progressKey.
func firstTurn(item *duroxide.OrchestrationItem, start duroxide.StartOrchestration, fanOut int) duroxide.OrchestrationCommit {
	inst, exec := item.Instance, item.ExecutionID
	c := duroxide.OrchestrationCommit{ExecutionID: exec}
	c.HistoryDelta = append(c.HistoryDelta, duroxide.NewEvent(duroxide.InitialEventID, inst, exec, nil,
		duroxide.OrchestrationStartedEvent{Name: start.Orchestration, Version: orchestrationVersion, Input: start.Input}))
	for k := 0; k < fanOut; k++ {
		id := uint64(k + 2)
		input := fmt.Sprintf("%s-%d", start.Input, k)
		c.HistoryDelta = append(c.HistoryDelta, duroxide.NewEvent(id, inst, exec, nil,
			duroxide.ActivityScheduledEvent{Name: "work", Input: input}))
		c.WorkerItems = append(c.WorkerItems, duroxide.ActivityExecute{
			Instance: inst, ExecutionID: exec, ID: id, Name: "work", Input: input})
	}
	c.HistoryDelta = append(c.HistoryDelta, duroxide.NewEvent(uint64(fanOut+2), inst, exec, nil,
		duroxide.KeyValueSetEvent{Key: progressKey, Value: "started"}))
	c.Metadata = duroxide.ExecutionMetadata{Status: "Running", OrchestrationName: start.Orchestration,
		OrchestrationVersion: orchestrationVersion}
	return c
}

// laterTurn records every completion message as an event, without
// deduplicating (a duplicate delivery must become visible), and completes the
// instance once every scheduled activity has a result, clearing progressKey
// and setting ResultKey.
func laterTurn(item *duroxide.OrchestrationItem, fanOut int) (duroxide.OrchestrationCommit, bool) {
	inst, exec := item.Instance, item.ExecutionID
	c := duroxide.OrchestrationCommit{ExecutionID: exec}
	next := item.History[len(item.History)-1].EventID + 1
	done := map[uint64]bool{}
	terminal := false
	for _, e := range item.History {
		switch e.Kind.(type) {
		case duroxide.ActivityCompletedEvent:
			if e.SourceEventID != nil {
				done[*e.SourceEventID] = true
			}
		case duroxide.OrchestrationCompletedEvent:
			terminal = true
		}
	}
	for _, m := range completionsOf(item.Messages) {
		id := m.ID
		c.HistoryDelta = append(c.HistoryDelta, duroxide.NewEvent(next, inst, exec, &id,
			duroxide.ActivityCompletedEvent{Result: m.Result}))
		next++
		done[id] = true
	}
	if terminal || len(done) < fanOut {
		return c, false
	}
	out := Output
	c.HistoryDelta = append(c.HistoryDelta,
		duroxide.NewEvent(next, inst, exec, nil, duroxide.KeyValueClearedEvent{Key: progressKey}),
		duroxide.NewEvent(next+1, inst, exec, nil, duroxide.KeyValueSetEvent{Key: ResultKey, Value: out}),
		duroxide.NewEvent(next+2, inst, exec, nil, duroxide.OrchestrationCompletedEvent{Output: out}))
	c.Metadata = duroxide.ExecutionMetadata{Status: "Completed", Output: &out}
	return c, true
}
