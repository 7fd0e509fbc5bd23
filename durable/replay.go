package durable

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

// replayEngine runs one turn of one execution: it turns fetched messages
// into completion events, replays the history against the orchestration code
// and records what the code does next, allocating event ids exactly as
// duroxide's ReplayEngine does.
type replayEngine struct {
	instance    string
	executionID uint64
	baseline    []duroxide.Event
	delta       []duroxide.Event
	pending     []*action
	nextEventID uint64
	abortErr    *duroxide.ErrorDetails
	persisted   int
	kvSnapshot  map[string]duroxide.KVEntry
	clock       func() time.Time
	logger      *slog.Logger
	// deadlock is how long the engine waits for the code to yield before
	// it gives the turn up (Options.TurnDeadlockTimeout; 0: for ever).
	deadlock time.Duration

	cancelledActivityIDs []uint64
	cancelledSubOrchs    []string
}

func newReplayEngine(instance string, executionID uint64, baseline []duroxide.Event, persisted int) *replayEngine {
	next := uint64(1)
	if n := len(baseline); n > 0 {
		next = baseline[n-1].EventID + 1
	}
	return &replayEngine{
		instance: instance, executionID: executionID, baseline: baseline,
		nextEventID: next, persisted: persisted, clock: time.Now, logger: slog.New(slog.DiscardHandler),
	}
}

func (e *replayEngine) all() []duroxide.Event {
	out := make([]duroxide.Event, 0, len(e.baseline)+len(e.delta))
	return append(append(out, e.baseline...), e.delta...)
}

func (e *replayEngine) appendEvent(source *uint64, kind duroxide.EventKind) {
	ev := duroxide.NewEvent(e.nextEventID, e.instance, e.executionID, source, kind)
	e.nextEventID++
	e.delta = append(e.delta, ev)
}

func (e *replayEngine) abort(d duroxide.ErrorDetails) {
	if e.abortErr == nil {
		e.abortErr = &d
	}
}

// execute runs the orchestration over the history and reports how the turn
// ended. The coroutine is always stopped before it returns.
func (e *replayEngine) execute(fn OrchestrationFunc, input, name, version string) turnResult {
	if e.abortErr != nil {
		return failedTurn(*e.abortErr)
	}
	working := e.all()
	for _, ev := range working {
		if isTerminalKind(ev.Kind) {
			return turnResult{kind: turnContinue}
		}
	}
	if len(working) == 0 {
		return failedTurn(nondeterminism("corrupted history: empty"))
	}
	if _, ok := working[0].Kind.(duroxide.OrchestrationStartedEvent); !ok {
		return failedTurn(nondeterminism("corrupted history: first event must be OrchestrationStarted"))
	}
	ctx := e.newContext(name, version)
	defer ctx.st.stopAll()
	ctx.co.start(func() (string, error) { return fn(ctx, input) })
	r := &replayRun{e: e, ctx: ctx, open: map[uint64]scheduleKind{}}
	if res, done := r.replay(working); done {
		return res
	}
	return r.finish()
}

func (e *replayEngine) newContext(name, version string) *OrchestrationContext {
	st := newCtxState()
	st.replaying = true
	for k, v := range e.kvSnapshot {
		st.kv[k] = v.Value
		st.kvUpdated[k] = v.LastUpdatedAtMs
	}
	co := newCoroutine(e.instance, e.deadlock, e.logger)
	st.coroutines = append(st.coroutines, co)
	return &OrchestrationContext{
		st: st, co: co, instance: e.instance, execution: e.executionID,
		name: name, version: version, clock: e.clock, logger: e.logger,
	}
}

// replayRun is the state of one execute call.
type replayRun struct {
	e        *replayEngine
	ctx      *OrchestrationContext
	queue    []*action               // emitted, not yet matched to history
	open     map[uint64]scheduleKind // schedule id -> kind, not yet completed
	mustPoll bool
	finished bool
}

// replay walks the history. done means the turn's result is already known
// (a panic or a nondeterminism failure).
func (r *replayRun) replay(working []duroxide.Event) (turnResult, bool) {
	e, ctx := r.e, r.ctx
	if e.persisted == 0 {
		ctx.st.replaying = false
	}
	if s, ok := working[0].Kind.(duroxide.OrchestrationStartedEvent); ok && s.InitialCustomStatus != nil {
		v := *s.InitialCustomStatus
		ctx.st.customStatus = &v
	}
	r.mustPoll = true
	for i, ev := range working {
		if i >= e.persisted {
			ctx.st.replaying = false
		}
		if r.mustPoll {
			if res, failed := r.poll(); failed {
				return res, true
			}
			if r.finished {
				break
			}
			r.mustPoll = false
		}
		if d := r.apply(ev); d != nil {
			return failedTurn(*d), true
		}
	}
	ctx.st.replaying = false
	if r.mustPoll && !r.finished {
		if res, failed := r.poll(); failed {
			return res, true
		}
	}
	for _, id := range ctx.st.cancelledIDs(kindQueue) {
		ctx.st.queueCancelled[id] = true
	}
	e.convert(ctx, r.queue)
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
	for !r.finished && len(e.pending) > 0 && iter < maxQuiescenceIterations {
		iter++
		before := len(e.pending)
		if res, failed := r.poll(); failed {
			return res, true
		}
		e.convert(r.ctx, r.queue)
		r.queue = nil
		if len(e.pending) == before {
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
	for _, ev := range e.all() {
		if c, ok := ev.Kind.(duroxide.OrchestrationCancelRequestedEvent); ok {
			return turnResult{kind: turnCancelled, reason: c.Reason}
		}
	}
	for _, a := range e.pending {
		if a.kind == actContinueAsNew {
			return turnResult{kind: turnContinueAsNew, input: a.input, version: a.version}
		}
	}
	if d := e.collectCancelled(ctx); d != nil {
		return failedTurn(*d)
	}
	if !r.finished {
		return turnResult{kind: turnContinue}
	}
	if ctx.co.err != nil {
		return failedTurn(appFailure(duroxide.AppErrorOrchestrationFailed, "", ctx.co.err.Error()))
	}
	return turnResult{kind: turnCompleted, output: ctx.co.output}
}

// convert gives each newly emitted action the next event id and records its
// event (duroxide's convert_emitted_actions).
func (e *replayEngine) convert(ctx *OrchestrationContext, actions []*action) {
	for _, a := range actions {
		id := e.nextEventID
		e.nextEventID++
		ctx.st.bind(a.token, id)
		a.eventID = id
		switch a.kind {
		case actStartSubOrchestration:
			if a.autoID {
				a.instance = fmt.Sprintf("%s%d", subOrchAutoPrefix, id)
			}
			ctx.st.subOrchInstances[a.token] = a.instance
		case actWaitExternal:
			ctx.st.bindExternal(id, a.name)
		case actDequeueEvent:
			ctx.st.bindQueue(id, a.name)
		}
		if k := a.toEvent(); k != nil {
			e.delta = append(e.delta, duroxide.NewEvent(id, e.instance, e.executionID, nil, k))
		}
		e.pending = append(e.pending, a)
	}
}

func isTerminalKind(k duroxide.EventKind) bool {
	switch k.(type) {
	case duroxide.OrchestrationCompletedEvent, duroxide.OrchestrationFailedEvent, duroxide.OrchestrationContinuedAsNewEvent:
		return true
	}
	return false
}

func sortedKeys(m map[uint64]bool) []uint64 {
	out := make([]uint64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
