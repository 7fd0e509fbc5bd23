package durable

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// ErrTimeout classifies the *WaitTimeoutError the Client's wait calls
// return when the timeout passes first (errors.Is(err, ErrTimeout)), and a
// *RetryError whose attempt timed out.
var ErrTimeout = errors.New("durable: timed out")

// ErrNoManagement is returned by management calls when the provider has no
// ProviderAdmin.
var ErrNoManagement = errors.New("durable: provider has no management capability")

// Client starts, signals, cancels and inspects orchestrations. It needs only
// the provider, not a running Runtime: any process can be a client.
//
// Its calls ride over transient storage failures (Redis restarting, failing
// over, a dropped connection) until their context ends, or for
// DefaultCallBudget when the context has no deadline. Start, raise, enqueue
// and cancel are then repeated under one request id, which the provider
// applies once (duroxide.CheckedEnqueuer): nil means applied exactly once,
// and an error after the deadline means the outcome is unknown only if the
// storage never answered. With a provider without CheckedEnqueuer they are
// sent once, unchecked.
type Client struct {
	p          duroxide.Provider
	maxPayload int // MaxPayloadBytes unless a test lowers it
	// wake, set on a runtime's own client, wakes its scheduler after a
	// schedule write, so the write is acted on without waiting for a
	// refresh.
	wake func()
}

// NewClient returns a client on p.
func NewClient(p duroxide.Provider) *Client { return &Client{p: p, maxPayload: MaxPayloadBytes} }

// Provider returns the provider the client talks to.
func (c *Client) Provider() duroxide.Provider { return c.p }

// StartOrchestration enqueues the start of instance running orchestration
// name with a raw input (options: WithVersion, UseExisting). An instance
// that already exists, or whose start is already waiting, is not started
// again: the call fails with ErrAlreadyExists (with UseExisting it returns
// nil instead). Bad arguments, including an input over MaxPayloadBytes,
// return an *InvalidInputError before anything reaches the provider.
//
// A call whose reply was lost is repeated under the same request id until
// it gets an answer or ctx ends (see Client), so nil means the start was
// enqueued exactly once.
func (c *Client) StartOrchestration(ctx context.Context, instance, name, input string, opts ...OrchestrationOption) error {
	const op = "start_orchestration"
	o := applyOrchOptions(opts)
	if instance == "" || name == "" {
		return invalidInput(op, "instance %q, orchestration %q: both are required", instance, name)
	}
	if o.instanceID != "" {
		return invalidInput(op, "instance %q: WithInstanceID does not apply to a client start", instance)
	}
	if err := checkPayload(op, fmt.Sprintf("instance %q: input", instance), input, c.maxPayload); err != nil {
		return err
	}
	item := duroxide.StartOrchestration{
		Instance: instance, Orchestration: name, Input: input, Version: o.version,
		ExecutionID: duroxide.InitialExecutionID,
	}
	err := c.enqueue(ctx, op, item, duroxide.RequireAbsent, nil)
	if o.useExisting && errors.Is(err, ErrAlreadyExists) {
		return nil
	}
	return err
}

// StartOrchestrationJSON is StartOrchestration with input encoded as JSON.
func (c *Client) StartOrchestrationJSON(ctx context.Context, instance, name string, input any, opts ...OrchestrationOption) error {
	s, err := encodeJSON(input)
	if err != nil {
		return invalidInput("start_orchestration", "instance %q: encode input: %v", instance, err)
	}
	return c.StartOrchestration(ctx, instance, name, s, opts...)
}

// RaiseEvent delivers external event name to instance (WaitForEvent). An
// instance that does not exist and has no start waiting fails with
// ErrNotFound. Data over MaxPayloadBytes returns an *InvalidInputError and
// sends nothing. duroxide's rule: an event raised before the orchestration
// waits for it is not delivered to that wait; EnqueueEvent keeps it.
func (c *Client) RaiseEvent(ctx context.Context, instance, name, data string, opts ...CallOption) error {
	const op = "raise_event"
	if instance == "" || name == "" {
		return invalidInput(op, "instance %q, event %q: both are required", instance, name)
	}
	if err := checkPayload(op, fmt.Sprintf("instance %q, event %q: data", instance, name), data, c.maxPayload); err != nil {
		return err
	}
	return c.enqueue(ctx, op, duroxide.ExternalRaised{Instance: instance, Name: name, Data: data}, duroxide.RequirePresent, opts)
}

// EnqueueEvent appends data to the persistent queue of instance (Dequeue).
// An instance that does not exist and has no start waiting fails with
// ErrNotFound. Data over MaxPayloadBytes returns an *InvalidInputError and
// sends nothing.
func (c *Client) EnqueueEvent(ctx context.Context, instance, queue, data string, opts ...CallOption) error {
	const op = "enqueue_event"
	if instance == "" || queue == "" {
		return invalidInput(op, "instance %q, queue %q: both are required", instance, queue)
	}
	if err := checkPayload(op, fmt.Sprintf("instance %q, queue %q: data", instance, queue), data, c.maxPayload); err != nil {
		return err
	}
	return c.enqueue(ctx, op, duroxide.QueueMessage{Instance: instance, Name: queue, Data: data}, duroxide.RequirePresent, opts)
}

// RaiseEventJSON is RaiseEvent with data encoded as JSON.
func (c *Client) RaiseEventJSON(ctx context.Context, instance, name string, data any, opts ...CallOption) error {
	s, err := encodeJSON(data)
	if err != nil {
		return duroxide.Errorf("raise_event", duroxide.ErrInvalidInput, "instance %q, event %q: encode data: %v", instance, name, err)
	}
	return c.RaiseEvent(ctx, instance, name, s, opts...)
}

// EnqueueEventJSON is EnqueueEvent with data encoded as JSON.
func (c *Client) EnqueueEventJSON(ctx context.Context, instance, queue string, data any, opts ...CallOption) error {
	s, err := encodeJSON(data)
	if err != nil {
		return duroxide.Errorf("enqueue_event", duroxide.ErrInvalidInput, "instance %q, queue %q: encode data: %v", instance, queue, err)
	}
	return c.EnqueueEvent(ctx, instance, queue, s, opts...)
}

// CancelInstance asks instance to stop: it fails with a Cancelled error, its
// outstanding activities are cancelled and its sub-orchestrations are
// cancelled in turn.
func (c *Client) CancelInstance(ctx context.Context, instance, reason string, opts ...CallOption) error {
	const op = "cancel_instance"
	if instance == "" {
		return invalidInput(op, "instance id is required")
	}
	return c.enqueue(ctx, op, duroxide.CancelInstance{Instance: instance, Reason: reason}, duroxide.RequirePresent, opts)
}

// Status reads the instance's status. On a provider with management calls
// it reads the instance record first (GetInstanceInfo), which on a provider
// that reports it (InstanceInfo.Pause) carries the pause flag too: a running
// instance costs that read and the custom status's, a completed one the
// same, its output being the record's; a failed one also reads its latest
// execution's history, for the failure details. Without management calls,
// or for an instance without record, the status is read from the latest
// execution's history. An instance without history whose start a runtime
// handed back is StatusPending with the reason in Pending (on a provider
// that keeps such notes, duroxide.PendingStartNoter); a poison failure the
// runtime could name the cause of has it in FailureCause; a running
// instance that is paused has Paused set.
func (c *Client) Status(ctx context.Context, instance string) (OrchestrationStatus, error) {
	a := c.p.Admin()
	if a == nil {
		return c.statusFromHistory(ctx, instance, nil)
	}
	info, err := a.GetInstanceInfo(ctx, instance)
	if errors.Is(err, duroxide.ErrNotFound) {
		// no record: a start not run yet (maybe pending), or a history
		// stored without one
		return c.statusFromHistory(ctx, instance, nil)
	}
	if err != nil {
		return OrchestrationStatus{}, err
	}
	var st OrchestrationStatus
	switch info.Status {
	case "Running", "ContinuedAsNew": // the next execution not started yet: running
		st.Status = StatusRunning
		c.readCustomStatus(ctx, instance, &st)
		if info.Pause != nil {
			st.Paused = info.Pause.Paused
			return st, nil
		}
		st.Paused, err = c.pausedFlag(ctx, instance)
		return st, err
	case "Completed":
		if info.Output != nil { // the output of its OrchestrationCompleted event
			st.Status, st.Output = StatusCompleted, *info.Output
			c.readCustomStatus(ctx, instance, &st)
			return st, nil
		}
	}
	return c.statusFromHistory(ctx, instance, &info)
}

// statusFromHistory is Status read from the latest execution's history;
// info is the instance record when the caller read it (failureCause's
// source), nil otherwise.
func (c *Client) statusFromHistory(ctx context.Context, instance string, info *duroxide.InstanceInfo) (OrchestrationStatus, error) {
	hist, err := c.p.Read(ctx, instance)
	if err != nil {
		return OrchestrationStatus{}, err
	}
	var st OrchestrationStatus
	if len(hist) == 0 {
		// No history: a start a runtime handed back is pending, with its
		// reason, rather than not found. No custom status to read: only a
		// turn's commit sets one.
		if st.Pending, err = c.pendingStart(ctx, instance); st.Pending != nil {
			st.Status = StatusPending
		}
		return st, err
	}
	c.readCustomStatus(ctx, instance, &st)
	for i := len(hist) - 1; i >= 0; i-- {
		switch k := hist[i].Kind.(type) {
		case duroxide.OrchestrationCompletedEvent:
			st.Status, st.Output = StatusCompleted, k.Output
			return st, nil
		case duroxide.OrchestrationFailedEvent:
			d := k.Details
			st.Status, st.Failure = StatusFailed, &d
			st.FailureCause, err = c.failureCause(ctx, instance, d, info)
			return st, err
		}
	}
	st.Status = StatusRunning
	st.Paused, err = c.pausedFlag(ctx, instance)
	return st, err
}

// readCustomStatus sets the custom status of st, left unset when it cannot
// be read: the status is what the caller asked for.
func (c *Client) readCustomStatus(ctx context.Context, instance string, st *OrchestrationStatus) {
	if cs, err := c.p.GetCustomStatus(ctx, instance, 0); err == nil && cs != nil {
		st.CustomStatus, st.CustomStatusVersion = cs.Status, cs.Version
	}
}

// Poll backoff of the wait calls: status reads, not a busy loop.
const (
	waitInitialDelay = 5 * time.Millisecond
	waitMaxDelay     = 100 * time.Millisecond
)

// WaitForOrchestration waits until instance is Completed or Failed, reading
// its status with a growing delay (5ms doubling to 100ms), and returns a
// *WaitTimeoutError naming the instance and its last status
// (errors.Is(err, ErrTimeout)) when timeout passes first.
func (c *Client) WaitForOrchestration(ctx context.Context, instance string, timeout time.Duration) (OrchestrationStatus, error) {
	return c.waitUntil(ctx, "wait_for_orchestration", instance, timeout, func() (OrchestrationStatus, bool, error) {
		st, err := c.Status(ctx, instance)
		return st, err == nil && st.IsTerminal(), err
	})
}

// WaitForStatusChange waits until the custom status version passes
// lastSeenVersion or the instance becomes terminal, and returns its status;
// a *WaitTimeoutError when timeout passes first.
func (c *Client) WaitForStatusChange(ctx context.Context, instance string, lastSeenVersion uint64, timeout time.Duration) (OrchestrationStatus, error) {
	return c.waitUntil(ctx, "wait_for_status_change", instance, timeout, func() (OrchestrationStatus, bool, error) {
		cs, err := c.p.GetCustomStatus(ctx, instance, lastSeenVersion)
		if err != nil {
			return OrchestrationStatus{}, false, err
		}
		st, err := c.Status(ctx, instance)
		return st, err == nil && (cs != nil || st.IsTerminal()), err
	})
}

// DefaultCallBudget is how long a Client call whose context has no deadline
// rides over transient storage failures before it returns the last one.
const DefaultCallBudget = 30 * time.Second

// Backoff of a call riding over transient failures.
const (
	rideInitialDelay = 10 * time.Millisecond
	rideMaxDelay     = time.Second
)

// CallOption adjusts a client's raise, enqueue or cancel.
type CallOption func(*callOptions)

type callOptions struct {
	requestID string
}

// WithRequestID names the call, so that a call made again with the same id
// (within duroxide.RequestIDLifetime, 10 minutes) is applied once: the
// repeat returns nil and changes nothing. Without it each call has an id of
// its own, which covers the client's own repeats of a call whose reply was
// lost, not a caller that makes the call again: an activity that raises an
// event, run a second time after its worker lost it, raises it twice unless
// it names the call, e.g. by its instance and activity id. At most 150
// bytes; the provider needs duroxide.CheckedEnqueuer.
func WithRequestID(id string) CallOption { return func(o *callOptions) { o.requestID = id } }

// maxRequestID leaves room for the client's prefix within the provider's
// 200 bytes.
const maxRequestID = 150

// enqueue sends a client call's message, checked against require and under
// one request id, repeating it over transient failures (see Client).
func (c *Client) enqueue(ctx context.Context, op string, item duroxide.WorkItem, require duroxide.Requirement, options []CallOption) error {
	var o callOptions
	for _, opt := range options {
		opt(&o)
	}
	if len(o.requestID) > maxRequestID {
		return invalidInput(op, "instance %q: request id of %d bytes (at most %d)", item.InstanceID(), len(o.requestID), maxRequestID)
	}
	ce, ok := c.p.(duroxide.CheckedEnqueuer)
	if !ok {
		if o.requestID != "" {
			return invalidInput(op, "instance %q: WithRequestID needs a provider with duroxide.CheckedEnqueuer", item.InstanceID())
		}
		return c.p.EnqueueForOrchestrator(ctx, item, 0)
	}
	id := uuid.NewString()
	if o.requestID != "" {
		// the caller's ids live beside the client's own, one namespace
		// per operation: a raise and a cancel may share a name
		id = op + ":" + o.requestID
	}
	opts := duroxide.CheckedEnqueue{Require: require, RequestID: id}
	err := rideOver(ctx, func() error { return ce.EnqueueForOrchestratorChecked(ctx, item, opts) })
	if err != nil {
		return fmt.Errorf("durable: %s: %w", op, err)
	}
	return nil
}

// rideOver calls fn until it returns nil or a permanent error, or until ctx
// ends (DefaultCallBudget without a deadline), waiting 10 ms doubling to 1 s
// between attempts; then it returns fn's last error.
func rideOver(ctx context.Context, fn func() error) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultCallBudget)
		defer cancel()
	}
	delay := rideInitialDelay
	for {
		err := fn()
		if err == nil || !duroxide.IsRetryable(err) || ctx.Err() != nil {
			return err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		delay = min(delay*2, rideMaxDelay)
	}
}

// waitUntil repeats check with backoff until it reports done, fails for
// good, the context ends or timeout passes. A transient failure (Redis
// restarting, a dropped connection) is not the end of a wait: the check is
// repeated, and a timeout names the failure if the last check failed.
func (c *Client) waitUntil(ctx context.Context, op, instance string, timeout time.Duration, check func() (OrchestrationStatus, bool, error)) (OrchestrationStatus, error) {
	deadline := time.Now().Add(timeout)
	delay := waitInitialDelay
	var last OrchestrationStatus
	for {
		st, done, err := check()
		switch {
		case err != nil && !duroxide.IsRetryable(err), done:
			return st, err
		case err != nil:
			st = last // a failed read says nothing of the instance
		}
		last = st
		left := time.Until(deadline)
		if left <= 0 {
			return st, &WaitTimeoutError{Op: op, Instance: instance, Last: st, Err: err}
		}
		t := time.NewTimer(min(delay, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return st, ctx.Err()
		case <-t.C:
		}
		delay = min(delay*2, waitMaxDelay)
	}
}

// KVValue reads key of instance's key-value store (live view).
func (c *Client) KVValue(ctx context.Context, instance, key string) (string, bool, error) {
	return c.p.GetKVValue(ctx, instance, key)
}

// KVAllValues reads instance's whole key-value store (live view).
func (c *Client) KVAllValues(ctx context.Context, instance string) (map[string]string, error) {
	return c.p.GetKVAllValues(ctx, instance)
}

// Admin returns the provider's management interface: listings, instance
// and execution records, histories, metrics, queue depths, trees, deletes
// and pruning. The Client itself keeps only the calls a workflow's users
// make (start, signal, cancel, wait, read status and KV), so its method set
// stays small. With a provider that has no management capability every call
// of the returned value fails with ErrNoManagement.
func (c *Client) Admin() duroxide.ProviderAdmin {
	if a := c.p.Admin(); a != nil {
		return a
	}
	return noAdmin{}
}
