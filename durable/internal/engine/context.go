package engine

import (
	"context"
	"log/slog"
	"slices"
	"time"
)

// Context is the engine's side of an orchestration's context: every method
// records an intent (an action the replay turns into history) or reads the
// turn's state, and waiting hands control back to the engine. It must be
// used from the orchestration's own goroutine only. durable's
// OrchestrationContext is the public face of it.
type Context struct {
	st        *ctxState
	co        *coroutine
	instance  string
	execution uint64
	name      string
	version   string
	clock     func() time.Time
	logger    *slog.Logger
	futures   []*Future
}

// InstanceID is the instance this orchestration runs as.
func (c *Context) InstanceID() string { return c.instance }

// ExecutionID is the current execution.
func (c *Context) ExecutionID() uint64 { return c.execution }

// OrchestrationName is the registered name being run.
func (c *Context) OrchestrationName() string { return c.name }

// OrchestrationVersion is the semver version being run.
func (c *Context) OrchestrationVersion() string { return c.version }

// IsReplaying reports whether the code is re-running recorded history.
func (c *Context) IsReplaying() bool { return c.st.replaying }

// Now is the runtime clock, for fire times and KV timestamps.
func (c *Context) Now() time.Time { return c.clock() }

// Logger drops records while the orchestration replays.
func (c *Context) Logger() *slog.Logger {
	return slog.New(replaySafeHandler{ctx: c, next: c.logger.Handler()})
}

// block hands control to the engine until ready holds.
func (c *Context) block(ready func() bool) { c.co.block(ready) }

// newFuture records a future so the engine can cancel it when the
// orchestration returns without awaiting it.
func (c *Context) newFuture(token uint64, kind scheduleKind, check func() (string, error, bool)) *Future {
	f := &Future{ctx: c, token: token, kind: kind, check: check}
	c.futures = append(c.futures, f)
	return f
}

func (c *Context) resultCheck(token uint64, kind scheduleKind) func() (string, error, bool) {
	return func() (string, error, bool) {
		r, ok := c.st.result(token, kind)
		return r.value, r.err, ok
	}
}

// boundCheck resolves a wait once its subscription is bound to an event id
// and lookup finds data for that subscription.
func (c *Context) boundCheck(token uint64, lookup func(uint64) (string, bool)) func() (string, error, bool) {
	return func() (string, error, bool) {
		id, ok := c.st.bindings[token]
		if !ok {
			return "", nil, false
		}
		v, ok := lookup(id)
		return v, nil, ok
	}
}

// ScheduleActivity schedules activity name; sessionID and tag route it
// (nil: none).
func (c *Context) ScheduleActivity(name, input string, sessionID, tag *string) *Future {
	return c.ScheduleActivityKeyed(name, input, sessionID, tag, nil)
}

// ScheduleActivityKeyed is ScheduleActivity with a limit key (nil: none),
// which goes into the activity's work item only: the history, and so
// replay, does not see it.
func (c *Context) ScheduleActivityKeyed(name, input string, sessionID, tag, limitKey *string) *Future {
	token := c.st.emit(&action{kind: actCallActivity, name: name, input: input, sessionID: sessionID, tag: tag, limitKey: limitKey})
	return c.newFuture(token, kindActivity, c.resultCheck(token, kindActivity))
}

// Timer schedules a durable timer that fires after d from now.
func (c *Context) Timer(d time.Duration) *Future {
	d = max(d, 0)
	fireAt := uint64(c.clock().UnixMilli()) + uint64(d.Milliseconds())
	token := c.st.emit(&action{kind: actCreateTimer, fireAtMs: fireAt})
	return c.newFuture(token, kindTimer, c.resultCheck(token, kindTimer))
}

// WaitForEvent subscribes to the next external event called name.
func (c *Context) WaitForEvent(name string) *Future {
	token := c.st.emit(&action{kind: actWaitExternal, name: name})
	return c.newFuture(token, kindExternal, c.boundCheck(token, c.st.externalEvent))
}

// Dequeue takes the next message of the persistent queue called queue.
func (c *Context) Dequeue(queue string) *Future {
	token := c.st.emit(&action{kind: actDequeueEvent, name: queue})
	return c.newFuture(token, kindQueue, c.boundCheck(token, c.st.queueMessage))
}

// ScheduleSubOrchestration starts a child; instanceID "" names it
// automatically (autoChildID); version nil runs the latest.
func (c *Context) ScheduleSubOrchestration(name, input, instanceID string, version *string) *Future {
	a := &action{kind: actStartSubOrchestration, name: name, input: input, instance: instanceID, version: version}
	a.autoID = instanceID == ""
	token := c.st.emit(a)
	return c.newFuture(token, kindSubOrchestration, c.resultCheck(token, kindSubOrchestration))
}

// StartOrchestration starts an independent orchestration.
func (c *Context) StartOrchestration(name, instance, input string, version *string) {
	c.st.emit(&action{kind: actStartDetached, name: name, instance: instance, input: input, version: version})
}

// ContinueAsNew ends this execution and starts the next; it never returns.
func (c *Context) ContinueAsNew(input string, version *string) {
	c.st.emit(&action{kind: actContinueAsNew, input: input, version: version})
	c.block(func() bool { return false })
}

// SetCustomStatus publishes a status (nil clears it).
func (c *Context) SetCustomStatus(status *string) {
	c.st.customStatus = status
	c.st.emit(&action{kind: actUpdateCustomStatus, status: status})
}

// CustomStatus is the status as set so far; nil when none is.
func (c *Context) CustomStatus() *string { return c.st.customStatus }

// SetValue stores key=value in the instance's key-value store.
func (c *Context) SetValue(key, value string) {
	now := uint64(c.clock().UnixMilli())
	c.st.kv[key] = value
	c.st.kvUpdated[key] = now
	c.st.emit(&action{kind: actSetKeyValue, key: key, value: value, updatedAtMs: now})
}

// Value reads key from the key-value store.
func (c *Context) Value(key string) (string, bool) {
	v, ok := c.st.kv[key]
	return v, ok
}

// Values returns a copy of the whole key-value store.
func (c *Context) Values() map[string]string {
	out := make(map[string]string, len(c.st.kv))
	for k, v := range c.st.kv {
		out[k] = v
	}
	return out
}

// ClearValue removes key.
func (c *Context) ClearValue(key string) {
	delete(c.st.kv, key)
	delete(c.st.kvUpdated, key)
	c.st.emit(&action{kind: actClearKeyValue, key: key})
}

// ClearAllValues removes every key.
func (c *Context) ClearAllValues() {
	c.st.kv = map[string]string{}
	c.st.kvUpdated = map[string]uint64{}
	c.st.emit(&action{kind: actClearKeyValues})
}

// PruneValuesUpdatedBefore clears every key last set before updatedBeforeMs
// (Unix ms) and returns how many it cleared. A key set in this turn carries
// the clock time of its SetValue, as in duroxide, so it is prunable too:
// the cutoff alone decides. A key set in an earlier turn carries the time
// its KeyValueSet event recorded (keepRecordedKVTime), where duroxide
// re-stamps it on replay. Keys are cleared in sorted order, so a replay
// emits the same KeyValueCleared events in the same order (duroxide walks a
// HashMap, whose order is not stable).
func (c *Context) PruneValuesUpdatedBefore(updatedBeforeMs uint64) int {
	var keys []string
	for k, ts := range c.st.kvUpdated {
		if _, live := c.st.kv[k]; live && ts < updatedBeforeMs {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		c.ClearValue(k)
	}
	return len(keys)
}

// Select waits until one of fs resolves and returns its index; the first
// ready in argument order wins, and the others are cancelled, as duroxide
// drops a select's losers.
func (c *Context) Select(fs ...*Future) int {
	winner := -1
	c.block(func() bool {
		for i, f := range fs {
			if f.poll() {
				winner = i
				return true
			}
		}
		return false
	})
	for i, f := range fs {
		if i != winner {
			f.cancel()
		}
	}
	return winner
}

// Join waits until every one of fs has resolved.
func (c *Context) Join(fs ...*Future) {
	c.block(joinReady(fs))
}

// joinReady reports, each time the code is woken, whether every future has
// resolved. Go blocks run when polled, so every unresolved block is polled
// on every wake, in argument order, as duroxide's join polls its futures;
// any other future only reads state, so a cursor passes each once it has
// resolved and a wake costs O(1) for them, not O(len(fs)): a join of
// 10,000 activities would otherwise cost 10,000 checks per completion.
func joinReady(fs []*Future) func() bool {
	var blocks, plain []*Future
	for _, f := range fs {
		if f.kind == kindGo {
			blocks = append(blocks, f)
		} else {
			plain = append(plain, f)
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
	ctx  *Context
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
