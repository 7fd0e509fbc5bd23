package engine

import (
	"log/slog"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Env is what a turn needs from the runtime that runs it.
type Env struct {
	Clock  func() time.Time
	Logger *slog.Logger
	// ParentExecution is the execution a child's completion is addressed
	// to (duroxide's get_execution_id_for_instance).
	ParentExecution func(instance string) uint64
	// DeadlockTimeout is how long code may run without yielding before the
	// turn is given up with a *Deadlock panic (0: no bound).
	DeadlockTimeout time.Duration
	// MaxPayloadBytes bounds each input the code emits and its output; one
	// over it fails the instance (0: DefaultMaxPayloadBytes).
	MaxPayloadBytes int
}

// turnRunner runs turns for a runtime.
type turnRunner struct{ env Env }

// Turn runs the batch's turn on e and returns its commit (fn is nil when
// the batch names no orchestration: the commit then only consumes the
// messages). goesOn reports an execution still running after the turn,
// whose engine may be kept for its next turn.
func (e *Engine) Turn(item *duroxide.OrchestrationItem, b Batch, ver *semver.Version, fn Func, env Env) (commit duroxide.OrchestrationCommit, goesOn bool) {
	t := newTurnOutput(item.Instance, e.executionID, e.idx)
	kind := turnContinue
	if fn != nil {
		if e.live == nil {
			e.kvSnapshot = item.KVSnapshot
		}
		kind = turnRunner{env}.runExecution(t, e, b, ver, fn)
	}
	commit = buildCommit(item, t)
	return commit, fn != nil && kind == turnContinue && commit.Metadata.Status == "" && e.live != nil
}

// FailedCommit is the commit that fails the instance after commit could
// not be applied for good (duroxide fails it with an infrastructure error).
func FailedCommit(item *duroxide.OrchestrationItem, commit duroxide.OrchestrationCommit, d duroxide.ErrorDetails) duroxide.OrchestrationCommit {
	idx := newHistoryIndex()
	idx.lastID = storedLastID(item, commit)
	t := newTurnOutput(item.Instance, commit.ExecutionID, idx)
	t.fail(d)
	return duroxide.OrchestrationCommit{ExecutionID: t.executionID, HistoryDelta: t.delta, Metadata: executionMetadata(t.delta)}
}

// buildCommit adds metadata and, for a terminal turn, cancels the
// activities still in flight.
func buildCommit(item *duroxide.OrchestrationItem, t *turnOutput) duroxide.OrchestrationCommit {
	failure := t.enforceLimits(item.Instance, item.KVSnapshot)
	meta := executionMetadata(t.delta)
	if failure != nil {
		out := DisplayMessage(*failure)
		meta.Status, meta.Output = "Failed", &out
	}
	if reason := terminalCancelReason(meta.Status); reason != "" {
		for _, id := range t.idx.inflightActivities() {
			src := id
			t.append(&src, duroxide.ActivityCancelRequestedEvent{Reason: reason})
			t.cancelled = append(t.cancelled, duroxide.ScheduledActivityIdentifier{Instance: item.Instance, ExecutionID: t.executionID, ActivityID: id})
		}
	}
	return duroxide.OrchestrationCommit{
		ExecutionID: t.executionID, HistoryDelta: t.delta, WorkerItems: t.worker, OrchestratorItems: t.orch,
		Metadata: meta, CancelledActivities: dedupActivities(t.cancelled),
	}
}

func terminalCancelReason(status string) string {
	switch status {
	case "Completed":
		return "orchestration_terminal_completed"
	case "Failed":
		return "orchestration_terminal_failed"
	case "ContinuedAsNew":
		return "orchestration_terminal_continued_as_new"
	}
	return ""
}

func dedupActivities(in []duroxide.ScheduledActivityIdentifier) []duroxide.ScheduledActivityIdentifier {
	seen := map[duroxide.ScheduledActivityIdentifier]bool{}
	var out []duroxide.ScheduledActivityIdentifier
	for _, a := range in {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// executionMetadata derives the commit metadata from the turn's events
// (duroxide's compute_execution_metadata).
func executionMetadata(delta []duroxide.Event) duroxide.ExecutionMetadata {
	var m duroxide.ExecutionMetadata
	for _, ev := range delta {
		switch k := ev.Kind.(type) {
		case duroxide.OrchestrationStartedEvent:
			m.OrchestrationName, m.OrchestrationVersion = k.Name, k.Version
			m.ParentInstanceID = deref(k.ParentInstance)
			if v, err := semver.NewVersion(ev.DuroxideVersion); err == nil {
				m.PinnedDuroxideVersion = v
			}
		case duroxide.OrchestrationCompletedEvent:
			out := k.Output
			m.Status, m.Output = "Completed", &out
			return m
		case duroxide.OrchestrationFailedEvent:
			out := DisplayMessage(k.Details)
			m.Status, m.Output = "Failed", &out
			return m
		case duroxide.OrchestrationContinuedAsNewEvent:
			out := k.Input
			m.Status, m.Output = "ContinuedAsNew", &out
			return m
		}
	}
	return m
}

// storedLastID is the last event id stored for the execution commit
// addresses, before the commit: a new execution has none.
func storedLastID(item *duroxide.OrchestrationItem, commit duroxide.OrchestrationCommit) uint64 {
	if commit.ExecutionID != item.ExecutionID {
		return 0
	}
	if len(commit.HistoryDelta) > 0 {
		return commit.HistoryDelta[0].EventID - 1
	}
	if item.Cursor != nil {
		return item.Cursor.LastEventID
	}
	return LastEventID(item.History)
}

// PoisonCommit fails the execution whose batch was fetched too often
// (duroxide's fail_orchestration_as_poison): a new instance first gets the
// start its batch names, and a child's parent is told.
func (e *Engine) PoisonCommit(item *duroxide.OrchestrationItem, d duroxide.ErrorDetails, meta duroxide.ExecutionMetadata, env Env) duroxide.OrchestrationCommit {
	t := newTurnOutput(item.Instance, item.ExecutionID, e.idx)
	if e.idx.count == 0 {
		b := ReadBatch(item.Messages, e.idx.info(), item.Instance)
		if b.Name == "" {
			b.Name = item.OrchestrationName
		}
		started := duroxide.OrchestrationStartedEvent{Name: b.Name, Version: item.Version, Input: b.Input, ParentInstance: b.Parent, ParentID: b.ParentID}
		if can, ok := b.Start.(duroxide.ContinueAsNew); ok {
			cf := can.CarryForwardEvents
			started.CarryForwardEvents = &cf
		}
		t.add(duroxide.NewEvent(duroxide.InitialEventID, item.Instance, item.ExecutionID, nil, started))
	}
	hi := e.idx.info()
	t.fail(d)
	turnRunner{env}.notifyParentFailed(t, hi, d)
	meta.ParentInstanceID = deref(hi.Parent)
	return duroxide.OrchestrationCommit{ExecutionID: item.ExecutionID, HistoryDelta: t.delta, OrchestratorItems: t.orch, Metadata: meta}
}

// LastEventID is the highest event id of h (0 for none).
func LastEventID(h []duroxide.Event) uint64 {
	var last uint64
	for _, ev := range h {
		last = max(last, ev.EventID)
	}
	return last
}
