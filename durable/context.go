package durable

import (
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable/internal/engine"
)

// OrchestrationContext is what orchestration code uses to do anything that
// is not pure computation. Its methods only record intent (the replay engine
// turns intents into history events) and return futures; they must be called
// from the orchestration's own goroutine, never from goroutines it starts.
type OrchestrationContext struct {
	c *engine.Context
}

// InstanceID is the instance this orchestration runs as.
func (c *OrchestrationContext) InstanceID() string { return c.c.InstanceID() }

// ExecutionID is the current execution (1, then +1 per ContinueAsNew).
func (c *OrchestrationContext) ExecutionID() uint64 { return c.c.ExecutionID() }

// OrchestrationName is the registered name being run.
func (c *OrchestrationContext) OrchestrationName() string { return c.c.OrchestrationName() }

// OrchestrationVersion is the semver version being run.
func (c *OrchestrationContext) OrchestrationVersion() string { return c.c.OrchestrationVersion() }

// IsReplaying reports whether the code is re-running history already
// recorded by an earlier turn (true) or making new progress (false).
func (c *OrchestrationContext) IsReplaying() bool { return c.c.IsReplaying() }

// Logger returns a logger that drops records while the orchestration is
// replaying, so each message is logged once per instance, not once per turn.
func (c *OrchestrationContext) Logger() *slog.Logger { return c.c.Logger() }

// ActivityOption adjusts one scheduled activity.
type ActivityOption func(*activityOptions)

type activityOptions struct {
	sessionID, tag, limitKey *string
}

// WithTag routes the activity to workers whose tag filter accepts tag.
func WithTag(tag string) ActivityOption { return func(a *activityOptions) { a.tag = &tag } }

// WithLimitKey makes the flow-control limit of the activity's name
// (Client.SetLimit) apply per key: activities with different keys (say one
// per customer) are limited apart. The key rides in the activity's work
// item only; the history is the same with or without it, so adding or
// changing a key is not a code change replay notices.
func WithLimitKey(key string) ActivityOption { return func(a *activityOptions) { a.limitKey = &key } }

// WithSession pins the activity to the worker that owns sessionID, so
// activities of one session run on one process in order.
func WithSession(sessionID string) ActivityOption {
	return func(a *activityOptions) { a.sessionID = &sessionID }
}

// OrchestrationOption adjusts a started sub-orchestration, detached
// orchestration, continue-as-new or client start.
type OrchestrationOption func(*orchOptions)

type orchOptions struct {
	instanceID  string
	version     *string
	useExisting bool
}

// UseExisting makes a client start of an instance that already exists, or
// whose start is already waiting, return nil instead of ErrAlreadyExists
// ("start if absent"; Temporal's USE_EXISTING conflict policy). The
// existing instance is left as it is, whatever its input. Orchestration
// code's starts ignore it.
func UseExisting() OrchestrationOption { return func(o *orchOptions) { o.useExisting = true } }

// WithInstanceID gives a sub-orchestration an explicit instance id instead of
// the automatic "{parent}::sub::{event id}" (from the parent's second
// execution on, "{parent}::sub::{event id}.exec{n}", so a continued parent
// never reuses its first execution's children). The id must name no
// existing instance: a start that does fails the parent's sub-orchestration
// with a message naming the collision.
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
	var a activityOptions
	for _, opt := range opts {
		opt(&a)
	}
	return rawFuture(c.c.ScheduleActivityKeyed(name, input, a.sessionID, a.tag, a.limitKey), origin{kind: "activity", name: name})
}

// ScheduleActivityWithRetry runs activity name until it succeeds or the
// policy gives up, waiting durable timers between attempts; the future
// resolves to the result or, when the policy gives up, a *RetryError whose
// Last is the last attempt's *ActivityError (Attempt set). It gives up after
// MaxAttempts failures, at once when an attempt fails with NonRetryable,
// and at once when an attempt times out (errors.Is(err, ErrTimeout)). Like
// duroxide's schedule_activity_with_retry it is a block (see Go): the
// attempts run while something waits on the future, so it can be raced or
// joined like any other. The records it leaves are exactly duroxide's: one
// ActivityScheduled per attempt, a TimerCreated per timeout race and per
// backoff delay.
func (c *OrchestrationContext) ScheduleActivityWithRetry(name, input string, policy RetryPolicy, opts ...ActivityOption) Future[string] {
	f := c.Go(func(ctx *OrchestrationContext) (string, error) {
		return ctx.retry(name, input, policy, opts)
	})
	f.origin = origin{kind: "activity", name: name, block: true}
	return f
}

// retry is ScheduleActivityWithRetry's block.
func (c *OrchestrationContext) retry(name, input string, policy RetryPolicy, opts []ActivityOption) (string, error) {
	giveUp := &RetryError{Activity: name}
	n := policy.attempts()
	for attempt := uint32(1); attempt <= n; attempt++ {
		giveUp.Attempts = attempt
		out, err, timedOut := c.retryAttempt(name, input, policy, opts)
		if timedOut {
			giveUp.TimedOut = true
			return "", giveUp
		}
		if err == nil {
			return out, nil
		}
		var ae *ActivityError
		if !errors.As(err, &ae) {
			return "", err // a cancelled future: nothing to retry
		}
		ae.Attempt = attempt
		giveUp.Last = ae
		if !ae.Retryable {
			c.Logger().Warn("activity attempt failed with a non-retryable error", "activity", name,
				"attempt", attempt, "error", err.Error())
			return "", giveUp
		}
		if attempt < n {
			c.Logger().Warn("activity attempt failed, retrying", "activity", name,
				"attempt", attempt, "max_attempts", n, "error", err.Error())
			if d := policy.DelayForAttempt(attempt); d > 0 {
				_, _ = c.Timer(d).Get()
			}
		}
	}
	return "", giveUp
}

// retryAttempt runs one attempt, raced against the policy's timeout; the
// flag reports a timeout.
func (c *OrchestrationContext) retryAttempt(name, input string, policy RetryPolicy, opts []ActivityOption) (string, error, bool) {
	act := c.ScheduleActivity(name, input, opts...)
	if policy.Timeout <= 0 {
		out, err := act.Get()
		return out, err, false
	}
	timer := c.Timer(policy.Timeout)
	if c.Select(act, timer) == 1 {
		return "", nil, true
	}
	out, err := act.Get()
	return out, err, false
}

// Timer schedules a durable timer that fires after d (measured from the
// runtime clock now; a replay keeps the recorded fire time).
func (c *OrchestrationContext) Timer(d time.Duration) Future[struct{}] {
	return Future[struct{}]{f: c.c.Timer(d), decode: unitDecode, origin: origin{kind: "timer"}}
}

// WaitForEvent waits for the next external event called name raised after
// this subscription (duroxide's schedule_wait): events raised while no
// subscription of that name is open are recorded but not delivered.
func (c *OrchestrationContext) WaitForEvent(name string) Future[string] {
	return rawFuture(c.c.WaitForEvent(name), origin{kind: "event", name: name})
}

// Dequeue takes the next message of the persistent queue called queue
// (duroxide's dequeue_event): messages enqueued before anyone waits are kept,
// and carried into the next execution by ContinueAsNew.
func (c *OrchestrationContext) Dequeue(queue string) Future[string] {
	return rawFuture(c.c.Dequeue(queue), origin{kind: "queue", name: queue})
}

// ScheduleSubOrchestration starts orchestration name as a child and returns
// its output. Options: WithInstanceID, WithVersion.
func (c *OrchestrationContext) ScheduleSubOrchestration(name, input string, opts ...OrchestrationOption) Future[string] {
	o := applyOrchOptions(opts)
	return rawFuture(c.c.ScheduleSubOrchestration(name, input, o.instanceID, o.version), origin{kind: "sub-orchestration", name: name})
}

// StartOrchestration starts instance of orchestration name, independent of
// this one (fire and forget: no parent link, no result). Option:
// WithVersion. Its arguments are in Client.StartOrchestration's order.
func (c *OrchestrationContext) StartOrchestration(instance, name, input string, opts ...OrchestrationOption) {
	o := applyOrchOptions(opts)
	c.c.StartOrchestration(name, instance, input, o.version)
}

// ContinueAsNew ends this execution and starts the next one of the same
// instance with input (option: WithVersion to move to another version).
// Unconsumed queue messages and the custom status carry over. It never
// returns: code after it does not run, as in duroxide.
func (c *OrchestrationContext) ContinueAsNew(input string, opts ...OrchestrationOption) {
	o := applyOrchOptions(opts)
	c.c.ContinueAsNew(input, o.version)
}

// SetCustomStatus publishes a status string clients can read and wait on.
func (c *OrchestrationContext) SetCustomStatus(status string) {
	c.c.SetCustomStatus(&status)
}

// ResetCustomStatus clears the custom status.
func (c *OrchestrationContext) ResetCustomStatus() {
	c.c.SetCustomStatus(nil)
}

// CustomStatus is the status as set so far (including one carried over by
// ContinueAsNew); ok is false when none is set.
func (c *OrchestrationContext) CustomStatus() (status string, ok bool) {
	s := c.c.CustomStatus()
	if s == nil {
		return "", false
	}
	return *s, true
}

// SetValue stores key=value in the instance's key-value store.
func (c *OrchestrationContext) SetValue(key, value string) {
	c.c.SetValue(key, value)
}

// Value reads key from the instance's key-value store (deterministic: the
// values of earlier executions plus this execution's writes).
func (c *OrchestrationContext) Value(key string) (string, bool) {
	return c.c.Value(key)
}

// Values returns a copy of the whole key-value store.
func (c *OrchestrationContext) Values() map[string]string {
	return c.c.Values()
}

// ClearValue removes key.
func (c *OrchestrationContext) ClearValue(key string) {
	c.c.ClearValue(key)
}

// ClearAllValues removes every key.
func (c *OrchestrationContext) ClearAllValues() {
	c.c.ClearAllValues()
}

// PruneValuesUpdatedBefore clears every key whose last SetValue was before
// cutoff (compared in Unix milliseconds) and returns how many it cleared,
// each as a ClearValue would (duroxide's prune_kv_values_updated_before).
// A key's time is the runtime clock at its SetValue, kept with the value
// across turns and ContinueAsNew (a replay uses the time history recorded);
// keys set earlier in this very turn count too, so a cutoff from UTCNow
// taken before a SetValue keeps that key. A
// cutoff at or before the Unix epoch (the zero Time among them) clears
// nothing. Take the cutoff from UTCNow or the input, never from time.Now:
// the choice of keys must replay the same.
func (c *OrchestrationContext) PruneValuesUpdatedBefore(cutoff time.Time) int {
	return c.c.PruneValuesUpdatedBefore(uint64(max(cutoff.UnixMilli(), 0)))
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
	return typed[*string](raw)
}

// NewGUID returns a fresh id, recorded in history (duroxide's new_guid
// system activity) so replays see the same value.
func (c *OrchestrationContext) NewGUID() Future[string] {
	return c.ScheduleActivity(sysActivityNewGUID, "")
}

// UTCNow returns the current time, recorded in history (duroxide's
// utc_now_ms system activity).
func (c *OrchestrationContext) UTCNow() Future[time.Time] {
	raw := c.ScheduleActivity(sysActivityUtcNowMs, "")
	return Future[time.Time]{f: raw.f, origin: raw.origin, decode: func(s string) (time.Time, error) {
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
	return c.c.Select(cores(fs)...)
}

// Join waits until every one of fs has resolved; their values are then read
// with Get without waiting.
func (c *OrchestrationContext) Join(fs ...Awaitable) {
	c.c.Join(cores(fs)...)
}

func cores(fs []Awaitable) []*engine.Future {
	out := make([]*engine.Future, len(fs))
	for i, f := range fs {
		out[i] = f.core()
	}
	return out
}
