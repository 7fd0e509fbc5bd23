package engine

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The executor tests drive the engine as durable's runtime does for one turn
// (orchestrator.go runTurn): an OrchestrationItem holding the stored history
// and the fetched messages, ReadBatch, Engine.Turn, and the commit it
// returns. No provider is involved: a session keeps the instance's current
// execution and its history in memory and appends each commit's events to
// it, as an ack would. Histories are built with replay_test.go's hist,
// started and kinds, whose instance and orchestration are execInstance and
// execName. The cases are in executor_test.go (one case: an orchestration,
// the stored history, and per turn the batch and the commit it must write,
// as go-workflows' workflow/executor tests are laid out) and
// executor_recorded_test.go (duroxide's recorded histories).

const (
	execInstance = "inst"
	execName     = "O"
)

// execVersion is the version the runtime resolves the orchestration to.
var execVersion = semver.MustParse("1.0.0")

// execNowMs is the turn clock: a timer of d fires at execNowMs + d.
const execNowMs = 1_000_000

func execEnv() Env {
	return Env{
		Clock:           func() time.Time { return time.UnixMilli(execNowMs) },
		Logger:          slog.New(slog.DiscardHandler),
		ParentExecution: func(string) uint64 { return duroxide.InitialExecutionID },
	}
}

// session is one instance's store and the runtime that turns it.
type session struct {
	code Func
	// resume keeps the engine of a turn that goes on for the next turn, as
	// the instance cache does; otherwise every turn replays from event 1.
	resume    bool
	instance  string
	execution uint64
	history   []duroxide.Event
	cached    *Engine
}

func newSession(t *testing.T, code Func, resume bool, history []duroxide.Event) *session {
	s := &session{code: code, resume: resume, instance: execInstance, execution: duroxide.InitialExecutionID, history: slices.Clone(history)}
	if len(history) > 0 {
		s.instance, s.execution = history[0].InstanceID, history[0].ExecutionID
	}
	t.Cleanup(func() {
		if s.cached != nil {
			s.cached.Close()
		}
	})
	return s
}

// turnOut is what one turn produced. ran is false when the runtime would
// ack the batch without a turn (the execution is already terminal).
type turnOut struct {
	ran    bool
	commit duroxide.OrchestrationCommit
	goesOn bool
	div    *Divergence
}

// turn runs the batch msgs on the instance, then stores the commit.
func (s *session) turn(msgs ...duroxide.WorkItem) turnOut {
	item := &duroxide.OrchestrationItem{
		Instance: s.instance, OrchestrationName: execName, ExecutionID: s.execution, Version: execVersion.String(),
		History: slices.Clone(s.history), Messages: msgs,
	}
	eng := s.cached
	s.cached = nil
	if eng == nil {
		eng = New(item.Instance, item.ExecutionID, item.History)
	}
	hi := eng.Info()
	b := ReadBatch(msgs, hi, item.Instance)
	if hi.Completed || hi.Failed || (hi.ContinuedAsNew && !b.ContinueAsNew) {
		eng.Close()
		return turnOut{}
	}
	if b.ContinueAsNew {
		eng.Close()
		eng = New(item.Instance, item.ExecutionID+1, nil)
	}
	fn := s.code
	if b.Name == "" && eng.Empty() {
		fn = nil // no start and no history: the runtime only consumes the batch
	}
	commit, goesOn := eng.Turn(item, b, execVersion, fn, execEnv())
	out := turnOut{ran: true, commit: commit, goesOn: goesOn, div: eng.Divergence()}
	if commit.ExecutionID != s.execution {
		s.execution, s.history = commit.ExecutionID, nil
	}
	s.history = append(s.history, commit.HistoryDelta...)
	if goesOn && s.resume {
		s.cached = eng
	} else {
		eng.Close()
	}
	return out
}

// start is the message that creates the instance with input.
func start(input string) duroxide.StartOrchestration {
	return duroxide.StartOrchestration{Instance: execInstance, Orchestration: execName, Input: input, ExecutionID: duroxide.InitialExecutionID}
}

// Completion messages of execution 1 of execInstance.
func actDone(id uint64, result string) duroxide.ActivityCompleted {
	return duroxide.ActivityCompleted{Instance: execInstance, ExecutionID: 1, ID: id, Result: result}
}

func actFailed(id uint64, msg string) duroxide.ActivityFailed {
	return duroxide.ActivityFailed{Instance: execInstance, ExecutionID: 1, ID: id, Details: duroxide.ApplicationFailure(msg)}
}

func timerFired(id, atMs uint64) duroxide.TimerFired {
	return duroxide.TimerFired{Instance: execInstance, ExecutionID: 1, ID: id, FireAtMs: atMs}
}

func raised(name, data string) duroxide.ExternalRaised {
	return duroxide.ExternalRaised{Instance: execInstance, Name: name, Data: data}
}

func childDone(id uint64, result string) duroxide.SubOrchCompleted {
	return duroxide.SubOrchCompleted{ParentInstance: execInstance, ParentExecutionID: 1, ParentID: id, Result: result}
}

func childFailed(id uint64, msg string) duroxide.SubOrchFailed {
	return duroxide.SubOrchFailed{ParentInstance: execInstance, ParentExecutionID: 1, ParentID: id,
		Details: appFailure(duroxide.AppErrorOrchestrationFailed, "", msg)}
}

// outcome is what a turn's commit must hold. events is kinds() of the
// history delta; work lists the worker's then the orchestrator's items
// (workItems); status is the execution's status after the turn ("" while it
// runs) and output its output or error when it ended; cancelled lists the
// activities the commit cancels.
type outcome struct {
	events, work, status, output, cancelled string
	// execution, when set, is the execution the commit writes.
	execution uint64
	// divergence, when set, is the history event id the replay parted at.
	divergence uint64
}

func checkOutcome(t *testing.T, out turnOut, want outcome) {
	t.Helper()
	if !out.ran {
		t.Fatalf("the runtime would not run this turn: the execution is terminal")
	}
	c := out.commit
	if got := kinds(c.HistoryDelta); got != want.events {
		t.Errorf("events\n got %s\nwant %s", got, want.events)
	}
	if got := workItems(append(slices.Clone(c.WorkerItems), c.OrchestratorItems...)); got != want.work {
		t.Errorf("work\n got %s\nwant %s", got, want.work)
	}
	if c.Metadata.Status != want.status {
		t.Errorf("status %q, want %q", c.Metadata.Status, want.status)
	}
	if got := deref(c.Metadata.Output); got != want.output {
		t.Errorf("output %q, want %q", got, want.output)
	}
	if got := activityIDs(c.CancelledActivities); got != want.cancelled {
		t.Errorf("cancelled activities %q, want %q", got, want.cancelled)
	}
	// A turn that leaves the execution running is the only one the runtime
	// may cache.
	if running := want.status == ""; out.goesOn != running {
		t.Errorf("goesOn %v with status %q", out.goesOn, want.status)
	}
	if want.execution != 0 && c.ExecutionID != want.execution {
		t.Errorf("execution %d, want %d", c.ExecutionID, want.execution)
	}
	switch {
	case want.divergence == 0 && out.div != nil:
		t.Errorf("unexpected divergence at event %d (%s)", out.div.Event.EventID, out.div.Action)
	case want.divergence != 0 && (out.div == nil || out.div.Event.EventID != want.divergence):
		t.Errorf("divergence %+v, want one at event %d", out.div, want.divergence)
	}
}

// workItems shows work items compactly, in order.
func workItems(ws []duroxide.WorkItem) string {
	parts := make([]string, 0, len(ws))
	for _, w := range ws {
		var s string
		switch w := w.(type) {
		case duroxide.ActivityExecute:
			s = fmt.Sprintf("activity#%d %s(%s)", w.ID, w.Name, w.Input)
		case duroxide.TimerFired:
			s = fmt.Sprintf("timer#%d@%d", w.ID, w.FireAtMs)
		case duroxide.StartOrchestration:
			s = fmt.Sprintf("start %s %s(%s)", w.Instance, w.Orchestration, w.Input)
			if w.ParentInstance != nil && w.ParentID != nil {
				s += fmt.Sprintf(" for %s#%d", *w.ParentInstance, *w.ParentID)
			}
		case duroxide.CancelInstance:
			s = fmt.Sprintf("cancel %s: %s", w.Instance, w.Reason)
		case duroxide.ContinueAsNew:
			s = fmt.Sprintf("continue %s(%s)", w.Orchestration, w.Input)
		case duroxide.SubOrchCompleted:
			s = fmt.Sprintf("child done to %s#%d: %s", w.ParentInstance, w.ParentID, w.Result)
		case duroxide.SubOrchFailed:
			s = fmt.Sprintf("child failed to %s#%d: %s", w.ParentInstance, w.ParentID, DisplayMessage(w.Details))
		default:
			s = fmt.Sprintf("%T", w)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func activityIDs(as []duroxide.ScheduledActivityIdentifier) string {
	parts := make([]string, 0, len(as))
	for _, a := range as {
		parts = append(parts, fmt.Sprint(a.ActivityID))
	}
	return strings.Join(parts, " ")
}

// workToMessages turns a commit's orchestrator items addressed to the
// instance itself (a timer, a continue-as-new) into the messages its next
// fetch would hold, as the provider's queue would deliver them.
func workToMessages(c duroxide.OrchestrationCommit, instance string) []duroxide.WorkItem {
	var msgs []duroxide.WorkItem
	for _, w := range c.OrchestratorItems {
		if w.InstanceID() == instance {
			msgs = append(msgs, w)
		}
	}
	return msgs
}

// bothModes runs f once replaying every turn and once resuming a kept
// engine: the runtime takes either path for the same history, and both
// must commit the same.
func bothModes(t *testing.T, f func(t *testing.T, resume bool)) {
	t.Helper()
	for _, resume := range []bool{false, true} {
		name := "replay"
		if resume {
			name = "resume"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, resume)
		})
	}
}
