package durable

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"time"
)

// OrchestrationContext is what orchestration code uses to do anything that
// is not pure computation. Its methods only record intent (the replay engine
// turns intents into history events) and return futures; they must be called
// from the orchestration's own goroutine, never from goroutines it starts.
type OrchestrationContext struct {
	st        *ctxState
	co        *coroutine
	instance  string
	execution uint64
	name      string
	version   string
	clock     func() time.Time
	logger    *slog.Logger
	futures   []*future
}

// InstanceID is the instance this orchestration runs as.
func (c *OrchestrationContext) InstanceID() string { return c.instance }

// ExecutionID is the current execution (1, then +1 per ContinueAsNew).
func (c *OrchestrationContext) ExecutionID() uint64 { return c.execution }

// OrchestrationName is the registered name being run.
func (c *OrchestrationContext) OrchestrationName() string { return c.name }

// OrchestrationVersion is the semver version being run.
func (c *OrchestrationContext) OrchestrationVersion() string { return c.version }

// IsReplaying reports whether the code is re-running history already
// recorded by an earlier turn (true) or making new progress (false).
func (c *OrchestrationContext) IsReplaying() bool { return c.st.replaying }

// Logger returns a logger that drops records while the orchestration is
// replaying, so each message is logged once per instance, not once per turn.
func (c *OrchestrationContext) Logger() *slog.Logger {
	return slog.New(replaySafeHandler{ctx: c, next: c.logger.Handler()})
}

// block hands control to the engine until ready holds.
func (c *OrchestrationContext) block(ready func() bool) { c.co.block(ready) }

// newFuture records a future so the runtime can cancel it when the
// orchestration returns without awaiting it.
func (c *OrchestrationContext) newFuture(token uint64, kind scheduleKind, check func() (string, error, bool)) *future {
	f := &future{ctx: c, token: token, kind: kind, check: check}
	c.futures = append(c.futures, f)
	return f
}

func (c *OrchestrationContext) resultCheck(token uint64, kind scheduleKind) func() (string, error, bool) {
	return func() (string, error, bool) {
		r, ok := c.st.result(token, kind)
		return r.value, r.err, ok
	}
}

// boundCheck resolves a wait once its subscription is bound to an event id
// and lookup finds data for that subscription.
func (c *OrchestrationContext) boundCheck(token uint64, lookup func(uint64) (string, bool)) func() (string, error, bool) {
	return func() (string, error, bool) {
		id, ok := c.st.bindings[token]
		if !ok {
			return "", nil, false
		}
		v, ok := lookup(id)
		return v, nil, ok
	}
}

// ActivityOption adjusts one scheduled activity.
type ActivityOption func(*action)

// WithTag routes the activity to workers whose tag filter accepts tag.
func WithTag(tag string) ActivityOption { return func(a *action) { a.tag = &tag } }

// WithSession pins the activity to the worker that owns sessionID, so
// activities of one session run on one process in order.
func WithSession(sessionID string) ActivityOption {
	return func(a *action) { a.sessionID = &sessionID }
}

// OrchestrationOption adjusts a started sub-orchestration, detached
// orchestration, continue-as-new or client start.
type OrchestrationOption func(*orchOptions)

type orchOptions struct {
	instanceID string
	version    *string
}

// WithInstanceID gives a sub-orchestration an explicit instance id instead of
// the automatic "{parent}::sub::{event id}".
func WithInstanceID(id string) OrchestrationOption { return func(o *orchOptions) { o.instanceID = id } }

// WithVersion pins the version to run; without it the latest registered
// version runs.
func WithVersion(version string) OrchestrationOption {
	return func(o *orchOptions) { o.version = &version }
}

func applyOrchOptions(opts []OrchestrationOption) orchOptions {
	var o orchOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// ScheduleActivity schedules activity name with a raw string input.
func (c *OrchestrationContext) ScheduleActivity(name, input string, opts ...ActivityOption) Future[string] {
	a := &action{kind: actCallActivity, name: name, input: input}
	for _, opt := range opts {
		opt(a)
	}
	token := c.st.emit(a)
	return Future[string]{f: c.newFuture(token, kindActivity, c.resultCheck(token, kindActivity)), decode: rawDecode}
}

// ScheduleActivityWithRetry runs activity name until it succeeds or the
// policy gives up, waiting durable timers between attempts, and returns the
// last error. It blocks like Future.Get. The records it leaves are exactly
// duroxide's: one ActivityScheduled per attempt, a TimerCreated per timeout
// race and per backoff delay.
func (c *OrchestrationContext) ScheduleActivityWithRetry(name, input string, policy RetryPolicy, opts ...ActivityOption) (string, error) {
	var lastErr error
	n := policy.attempts()
	for attempt := uint32(1); attempt <= n; attempt++ {
		out, err, timedOut := c.retryAttempt(name, input, policy, opts)
		if timedOut || err == nil {
			return out, err
		}
		lastErr = err
		if attempt < n {
			c.Logger().Warn("activity attempt failed, retrying", "activity", name,
				"attempt", attempt, "max_attempts", n, "error", err.Error())
			if d := policy.DelayForAttempt(attempt); d > 0 {
				_, _ = c.Timer(d).Get()
			}
		}
	}
	return "", lastErr
}

// retryAttempt runs one attempt, raced against the policy's timeout.
func (c *OrchestrationContext) retryAttempt(name, input string, policy RetryPolicy, opts []ActivityOption) (string, error, bool) {
	act := c.ScheduleActivity(name, input, opts...)
	if policy.Timeout <= 0 {
		out, err := act.Get()
		return out, err, false
	}
	timer := c.Timer(policy.Timeout)
	if c.Select(act, timer) == 1 {
		return "", &TaskError{Message: "timeout: activity timed out"}, true
	}
	out, err := act.Get()
	return out, err, false
}

// Timer schedules a durable timer that fires after d (measured from the
// runtime clock now; a replay keeps the recorded fire time).
func (c *OrchestrationContext) Timer(d time.Duration) Future[struct{}] {
	if d < 0 {
		d = 0
	}
	fireAt := uint64(c.clock().UnixMilli()) + uint64(d.Milliseconds())
	token := c.st.emit(&action{kind: actCreateTimer, fireAtMs: fireAt})
	return Future[struct{}]{f: c.newFuture(token, kindTimer, c.resultCheck(token, kindTimer)), decode: unitDecode}
}

// WaitForEvent waits for the next external event called name raised after
// this subscription (duroxide's schedule_wait): events raised while no
// subscription of that name is open are recorded but not delivered.
func (c *OrchestrationContext) WaitForEvent(name string) Future[string] {
	token := c.st.emit(&action{kind: actWaitExternal, name: name})
	return Future[string]{f: c.newFuture(token, kindExternal, c.boundCheck(token, c.st.externalEvent)), decode: rawDecode}
}

// Dequeue takes the next message of the persistent queue called queue
// (duroxide's dequeue_event): messages enqueued before anyone waits are kept,
// and carried into the next execution by ContinueAsNew.
func (c *OrchestrationContext) Dequeue(queue string) Future[string] {
	token := c.st.emit(&action{kind: actDequeueEvent, name: queue})
	return Future[string]{f: c.newFuture(token, kindQueue, c.boundCheck(token, c.st.queueMessage)), decode: rawDecode}
}

// ScheduleSubOrchestration starts orchestration name as a child and returns
// its output. Options: WithInstanceID, WithVersion.
func (c *OrchestrationContext) ScheduleSubOrchestration(name, input string, opts ...OrchestrationOption) Future[string] {
	o := applyOrchOptions(opts)
	a := &action{kind: actStartSubOrchestration, name: name, input: input, instance: o.instanceID, version: o.version}
	a.autoID = o.instanceID == ""
	token := c.st.emit(a)
	return Future[string]{f: c.newFuture(token, kindSubOrchestration, c.resultCheck(token, kindSubOrchestration)), decode: rawDecode}
}

// StartOrchestration starts an independent orchestration (fire and forget:
// no parent link, no result). Option: WithVersion.
func (c *OrchestrationContext) StartOrchestration(name, instance, input string, opts ...OrchestrationOption) {
	o := applyOrchOptions(opts)
	c.st.emit(&action{kind: actStartDetached, name: name, instance: instance, input: input, version: o.version})
}

// ContinueAsNew ends this execution and starts the next one of the same
// instance with input (option: WithVersion to move to another version).
// Unconsumed queue messages and the custom status carry over. It never
// returns: code after it does not run, as in duroxide.
func (c *OrchestrationContext) ContinueAsNew(input string, opts ...OrchestrationOption) {
	o := applyOrchOptions(opts)
	c.st.emit(&action{kind: actContinueAsNew, input: input, version: o.version})
	c.block(func() bool { return false })
}

// SetCustomStatus publishes a status string clients can read and wait on.
func (c *OrchestrationContext) SetCustomStatus(status string) {
	c.st.customStatus = &status
	c.st.emit(&action{kind: actUpdateCustomStatus, status: &status})
}

// ResetCustomStatus clears the custom status.
func (c *OrchestrationContext) ResetCustomStatus() {
	c.st.customStatus = nil
	c.st.emit(&action{kind: actUpdateCustomStatus})
}

// CustomStatus is the status as set so far (including one carried over by
// ContinueAsNew); ok is false when none is set.
func (c *OrchestrationContext) CustomStatus() (status string, ok bool) {
	if c.st.customStatus == nil {
		return "", false
	}
	return *c.st.customStatus, true
}

// SetValue stores key=value in the instance's key-value store.
func (c *OrchestrationContext) SetValue(key, value string) {
	now := uint64(c.clock().UnixMilli())
	c.st.kv[key] = value
	c.st.kvUpdated[key] = now
	c.st.emit(&action{kind: actSetKeyValue, key: key, value: value, updatedAtMs: now})
}

// Value reads key from the instance's key-value store (deterministic: the
// values of earlier executions plus this execution's writes).
func (c *OrchestrationContext) Value(key string) (string, bool) {
	v, ok := c.st.kv[key]
	return v, ok
}

// Values returns a copy of the whole key-value store.
func (c *OrchestrationContext) Values() map[string]string {
	out := make(map[string]string, len(c.st.kv))
	for k, v := range c.st.kv {
		out[k] = v
	}
	return out
}

// ClearValue removes key.
func (c *OrchestrationContext) ClearValue(key string) {
	delete(c.st.kv, key)
	delete(c.st.kvUpdated, key)
	c.st.emit(&action{kind: actClearKeyValue, key: key})
}

// ClearAllValues removes every key.
func (c *OrchestrationContext) ClearAllValues() {
	c.st.kv = map[string]string{}
	c.st.kvUpdated = map[string]uint64{}
	c.st.emit(&action{kind: actClearKeyValues})
}

// ValueFromInstance reads key from another instance's key-value store
// through duroxide's get_kv_value system activity; the value is nil when the
// key is not set.
func (c *OrchestrationContext) ValueFromInstance(instance, key string) Future[*string] {
	in, _ := json.Marshal(struct {
		InstanceID string `json:"instance_id"`
		Key        string `json:"key"`
	}{instance, key})
	raw := c.ScheduleActivity(sysActivityGetKVValue, string(in))
	return Future[*string]{f: raw.f, decode: typedDecode[*string]}
}

// NewGUID returns a fresh id, recorded in history (duroxide's new_guid
// system activity) so replays see the same value.
func (c *OrchestrationContext) NewGUID() Future[string] {
	return c.ScheduleActivity(sysActivityNewGUID, "")
}

// UtcNow returns the current time, recorded in history (duroxide's
// utc_now_ms system activity).
func (c *OrchestrationContext) UtcNow() Future[time.Time] {
	raw := c.ScheduleActivity(sysActivityUtcNowMs, "")
	return Future[time.Time]{f: raw.f, decode: func(s string) (time.Time, error) {
		ms, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return time.Time{}, err
		}
		return time.UnixMilli(int64(ms)).UTC(), nil
	}}
}

// Select waits until one of fs resolves and returns its index; when several
// are ready the first in argument order wins (duroxide's select is biased the
// same way). The others are cancelled as duroxide drops a select's losers: an
// activity gets ActivityCancelRequested (its worker sees its context
// cancelled), a wait is unsubscribed, a timer is ignored.
func (c *OrchestrationContext) Select(fs ...Awaitable) int {
	winner := -1
	c.block(func() bool {
		for i, f := range fs {
			if f.base().poll() {
				winner = i
				return true
			}
		}
		return false
	})
	for i, f := range fs {
		if i != winner {
			f.base().cancel()
		}
	}
	return winner
}

// Join waits until every one of fs has resolved; their values are then read
// with Get without waiting.
func (c *OrchestrationContext) Join(fs ...Awaitable) {
	c.block(joinReady(fs))
}

// joinReady reports, each time the code is woken, whether every future has
// resolved. Go blocks run when polled, so every unresolved block is polled
// on every wake, in argument order, as duroxide's join polls its futures;
// any other future only reads state, so a cursor passes each once it has
// resolved and a wake costs O(1) for them, not O(len(fs)): a join of
// 10,000 activities would otherwise cost 10,000 checks per completion.
func joinReady(fs []Awaitable) func() bool {
	var blocks, plain []*future
	for _, f := range fs {
		if b := f.base(); b.kind == kindGo {
			blocks = append(blocks, b)
		} else {
			plain = append(plain, b)
		}
	}
	next := 0 // plain[:next] have resolved
	return func() bool {
		all := true
		for _, b := range blocks {
			if !b.poll() {
				all = false
			}
		}
		for next < len(plain) && plain[next].poll() {
			next++
		}
		return all && next == len(plain)
	}
}

// replaySafeHandler drops log records while the orchestration replays.
type replaySafeHandler struct {
	ctx  *OrchestrationContext
	next slog.Handler
}

func (h replaySafeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return !h.ctx.st.replaying && h.next.Enabled(ctx, l)
}

func (h replaySafeHandler) Handle(ctx context.Context, r slog.Record) error {
	if h.ctx.st.replaying {
		return nil
	}
	r.AddAttrs(slog.String("instance_id", h.ctx.instance), slog.Uint64("execution_id", h.ctx.execution),
		slog.String("orchestration_name", h.ctx.name), slog.String("orchestration_version", h.ctx.version))
	return h.next.Handle(ctx, r)
}

func (h replaySafeHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return replaySafeHandler{ctx: h.ctx, next: h.next.WithAttrs(attrs)}
}

func (h replaySafeHandler) WithGroup(name string) slog.Handler {
	return replaySafeHandler{ctx: h.ctx, next: h.next.WithGroup(name)}
}
