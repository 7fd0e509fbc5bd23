package engine

import (
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// turnKind is how a turn ended (duroxide's TurnResult).
type turnKind int

const (
	turnContinue turnKind = iota
	turnCompleted
	turnFailed
	turnContinueAsNew
	turnCancelled
)

type turnResult struct {
	kind    turnKind
	output  string                // Completed
	details duroxide.ErrorDetails // Failed
	input   string                // ContinueAsNew
	version *string               // ContinueAsNew
	reason  string                // Cancelled
}

func failedTurn(d duroxide.ErrorDetails) turnResult { return turnResult{kind: turnFailed, details: d} }

// Func is orchestration code as the engine runs it.
type Func func(ctx *Context, input string) (string, error)

// Engine runs the turns of one execution: it turns fetched messages
// into completion events, replays the history against the orchestration code
// and records what the code does next, allocating event ids exactly as
// duroxide's ReplayEngine does. After a turn that leaves the execution
// running, the engine (its index, its wait state and the code parked where
// it waits) can be kept by the instance cache: the next turn then feeds it
// only the new messages (resume) instead of replaying from event 1.
type Engine struct {
	instance    string
	executionID uint64
	idx         *historyIndex
	history     []duroxide.Event // the stored history a fresh engine replays; nil once it has
	kvSnapshot  map[string]duroxide.KVEntry
	clock       func() time.Time
	logger      *slog.Logger
	// deadlock is how long the engine waits for the code to yield before
	// it gives the turn up (Env.DeadlockTimeout; 0: for ever).
	deadlock time.Duration
	// maxPayload bounds inputs the code emits and its output
	// (Env.MaxPayloadBytes).
	maxPayload int

	// live is the replay state kept between turns: nil until the code has
	// started.
	live *replayRun

	// checkAll makes replay apply every stored event even after the code
	// returned (CheckAll); diverged is where the last replay failed as
	// nondeterministic.
	checkAll bool
	diverged *Divergence

	turn turnState
}

// turnState is what one turn collects and hands to the commit.
type turnState struct {
	delta                []duroxide.Event
	pending              []*action
	nextEventID          uint64
	abortErr             *duroxide.ErrorDetails
	cancelledActivityIDs []uint64
	cancelledSubOrchs    []string
}

// newReplayEngine indexes the stored history of an execution for its first
// turn on this runtime.
func New(instance string, executionID uint64, history []duroxide.Event) *Engine {
	return &Engine{
		instance: instance, executionID: executionID, idx: indexHistory(history), history: history,
		clock: time.Now, logger: slog.New(slog.DiscardHandler), maxPayload: DefaultMaxPayloadBytes,
	}
}

// beginTurn clears what the last turn collected.
func (e *Engine) beginTurn() {
	e.turn = turnState{nextEventID: e.idx.lastID + 1}
}

// appendEvent records a new event of this turn.
func (e *Engine) appendEvent(source *uint64, kind duroxide.EventKind) {
	ev := duroxide.NewEvent(e.turn.nextEventID, e.instance, e.executionID, source, kind)
	e.turn.nextEventID++
	e.record(ev)
}

func (e *Engine) record(ev duroxide.Event) {
	e.turn.delta = append(e.turn.delta, ev)
	e.idx.add(ev)
}

func (e *Engine) abort(d duroxide.ErrorDetails) {
	if e.turn.abortErr == nil {
		e.turn.abortErr = &d
	}
}

// close ends the code's coroutines: the execution will not run here again.
func (e *Engine) Close() {
	if e.live != nil {
		e.live.ctx.st.stopAll()
		e.live = nil
	}
}

// execute runs the orchestration over what is new to it (the whole history
// for a fresh engine, this turn's events for a resumed one) and reports how
// the turn ended.
func (e *Engine) execute(fn Func, input, name, version string) turnResult {
	if e.turn.abortErr != nil {
		return failedTurn(*e.turn.abortErr)
	}
	if e.idx.anyTerminal {
		return turnResult{kind: turnContinue}
	}
	if e.idx.count == 0 {
		return failedTurn(nondeterminism("corrupted history: empty"))
	}
	if !e.idx.startFirst {
		return failedTurn(nondeterminism("corrupted history: first event must be OrchestrationStarted"))
	}
	if e.live == nil {
		return e.replayFromStart(fn, input, name, version)
	}
	r := e.live
	r.resumed = true
	r.ctx.st.replaying = false
	if res, done := r.replay(e.turn.delta, 0); done {
		return res
	}
	return r.finish()
}

func (e *Engine) replayFromStart(fn Func, input, name, version string) turnResult {
	ctx := e.newContext(name, version)
	ctx.co.start(func() (string, error) { return fn(ctx, input) })
	r := &replayRun{e: e, ctx: ctx, open: map[uint64]scheduleKind{}, mustPoll: true}
	e.live = r
	if s := e.idx.start; s.InitialCustomStatus != nil {
		v := *s.InitialCustomStatus
		ctx.st.customStatus = &v
	}
	persisted := len(e.history)
	working := append(e.history[:persisted:persisted], e.turn.delta...)
	e.history = nil
	if res, done := r.replay(working, persisted); done {
		return res
	}
	return r.finish()
}

func (e *Engine) newContext(name, version string) *Context {
	st := newCtxState()
	st.replaying = true
	st.maxPayload = e.maxPayload
	for k, v := range e.kvSnapshot {
		st.kv[k] = v.Value
		st.kvUpdated[k] = v.LastUpdatedAtMs
	}
	co := newCoroutine(e.instance, e.deadlock, e.logger)
	st.coroutines = append(st.coroutines, co)
	return &Context{
		st: st, co: co, instance: e.instance, execution: e.executionID,
		name: name, version: version, clock: e.clock, logger: e.logger,
	}
}

// replayRun is the code's side of the engine: its context, the actions it
// emitted that history has not matched yet, and the schedules still open.
type replayRun struct {
	e        *Engine
	ctx      *Context
	queue    []*action               // emitted, not yet matched to history
	open     map[uint64]scheduleKind // schedule id -> kind, not yet completed
	mustPoll bool
	finished bool
	// resumed is set once a turn continues from the cache: every dropped
	// future of earlier turns was then recorded by this very run, so there
	// is no replayed segment to check against history.
	resumed   bool
	persisted int
	// compared is the action the event being applied was matched against,
	// for Divergence.
	compared *action
}

// replay feeds events to the code, the first persisted of them as replay.
// done means the turn's result is already known (a panic or a
// nondeterminism failure).
func (r *replayRun) replay(events []duroxide.Event, persisted int) (turnResult, bool) {
	e, ctx := r.e, r.ctx
	r.persisted = persisted
	if persisted == 0 {
		ctx.st.replaying = false
	}
	for i, ev := range events {
		if i >= persisted {
			ctx.st.replaying = false
		}
		if r.mustPoll {
			if res, failed := r.poll(); failed {
				return res, true
			}
			if r.finished && !e.checkAll {
				break
			}
			r.mustPoll = false
		}
		r.compared = nil
		if d := r.apply(ev); d != nil {
			e.diverged = newDivergence(ev, r.compared)
			return failedTurn(*d), true
		}
	}
	ctx.st.replaying = false
	if r.mustPoll && !r.finished {
		if res, failed := r.poll(); failed {
			return res, true
		}
		r.mustPoll = false
	}
	for _, id := range ctx.st.cancelledIDs(kindQueue) {
		ctx.st.queues.cancel(id)
	}
	e.convert(r, r.queue)
	r.queue = nil
	return r.quiesce()
}

// poll resumes the code if what it waits for is ready and collects what it
// emitted. A panic ends the turn with duroxide's Panicked details.
func (r *replayRun) poll() (turnResult, bool) {
	co := r.ctx.co
	if !r.finished {
		r.finished = co.poll()
		if r.finished {
			// Returning drops every future the code still held, as leaving
			// an async block drops its locals in duroxide.
			r.ctx.cancelPending()
		}
	}
	r.queue = append(r.queue, r.ctx.st.drainEmitted()...)
	if msg := firstPanic(co.panicMsg, r.ctx.st.panicMsg); msg != nil {
		return failedTurn(appFailure(duroxide.AppErrorPanicked, "", *msg)), true
	}
	if msg := r.ctx.st.limitMsg; msg != nil {
		return failedTurn(appFailure(duroxide.AppErrorOrchestrationFailed, "", *msg)), true
	}
	return turnResult{}, false
}

func firstPanic(msgs ...*string) *string {
	for _, m := range msgs {
		if m != nil {
			return m
		}
	}
	return nil
}

// maxQuiescenceIterations bounds re-polling after new subscriptions bind.
const maxQuiescenceIterations = 100

// quiesce re-polls while binding new schedules lets the code progress (a
// queue subscription may find a message that is already in history).
func (r *replayRun) quiesce() (turnResult, bool) {
	e := r.e
	iter := 0
	for !r.finished && len(e.turn.pending) > 0 && iter < maxQuiescenceIterations {
		iter++
		before := len(e.turn.pending)
		if res, failed := r.poll(); failed {
			return res, true
		}
		e.convert(r, r.queue)
		r.queue = nil
		if len(e.turn.pending) == before {
			break
		}
	}
	if iter >= maxQuiescenceIterations {
		return failedTurn(duroxide.ErrorDetails{Infrastructure: &duroxide.InfrastructureError{
			Operation: "quiescence_loop",
			Message:   fmt.Sprintf("quiescence loop exceeded %d iterations: the orchestration keeps adding persistent event subscriptions", maxQuiescenceIterations),
		}}), true
	}
	return turnResult{}, false
}

// finish decides the turn's result (duroxide's finalize_turn).
func (r *replayRun) finish() turnResult {
	e, ctx := r.e, r.ctx
	if reason := e.idx.cancelRequested; reason != nil {
		return turnResult{kind: turnCancelled, reason: *reason}
	}
	for _, a := range e.turn.pending {
		if a.kind == actContinueAsNew {
			return turnResult{kind: turnContinueAsNew, input: a.input, version: a.version}
		}
	}
	if d := r.collectCancelled(); d != nil {
		return failedTurn(*d)
	}
	if !r.finished {
		return turnResult{kind: turnContinue}
	}
	if ctx.co.err != nil {
		return failedTurn(appFailure(duroxide.AppErrorOrchestrationFailed, "", ctx.co.err.Error()))
	}
	if msg := outputViolation(ctx.co.output, e.maxPayload); msg != "" {
		return failedTurn(appFailure(duroxide.AppErrorOrchestrationFailed, "", msg))
	}
	return turnResult{kind: turnCompleted, output: ctx.co.output}
}

// convert gives each newly emitted action the next event id and records its
// event (duroxide's convert_emitted_actions).
func (e *Engine) convert(r *replayRun, actions []*action) {
	st := r.ctx.st
	for _, a := range actions {
		id := e.turn.nextEventID
		e.turn.nextEventID++
		st.bind(a.token, id)
		a.eventID = id
		switch a.kind {
		case actStartSubOrchestration:
			if a.autoID {
				a.instance = autoChildID(e.executionID, id)
			}
			st.subOrchInstances[a.token] = a.instance
		case actWaitExternal:
			st.externals.subscribe(id, a.name)
		case actDequeueEvent:
			st.queues.subscribe(id, a.name)
		}
		if k := a.toEvent(); k != nil {
			ev := duroxide.NewEvent(id, e.instance, e.executionID, nil, k)
			e.record(ev)
			if kind, ok := scheduleKindOf(k); ok {
				r.open[id] = kind
			}
		}
		e.turn.pending = append(e.turn.pending, a)
	}
}

func sortedKeys(m map[uint64]bool) []uint64 {
	out := make([]uint64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Info is what the history says about its execution.
func (e *Engine) Info() HistoryInfo { return e.idx.info() }

// Pinned is the duroxide version that wrote the execution's start ("" when
// none is recorded).
func (e *Engine) Pinned() string { return e.idx.pinned }

// Empty reports an execution with no events yet.
func (e *Engine) Empty() bool { return e.idx.count == 0 }

// ExecutionID is the execution the engine runs.
func (e *Engine) ExecutionID() uint64 { return e.executionID }

// LastEventID is the highest event id of the execution so far.
func (e *Engine) LastEventID() uint64 { return e.idx.lastID }

// Bytes estimates the memory the engine's history state holds.
func (e *Engine) Bytes() int { return e.idx.bytes }

// StartTimestamp is when the execution's start event was written.
func (e *Engine) StartTimestamp() (uint64, bool) { return e.idx.startTimestamp, e.idx.start != nil }

// Resumable reports an engine whose code is parked where it waits, so its
// next turn can resume instead of replaying.
func (e *Engine) Resumable() bool { return e.live != nil }
