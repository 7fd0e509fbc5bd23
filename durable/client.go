package durable

import (
	"context"
	"errors"
	"fmt"
	"time"

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
type Client struct {
	p          duroxide.Provider
	maxPayload int // MaxPayloadBytes unless a test lowers it
}

// NewClient returns a client on p.
func NewClient(p duroxide.Provider) *Client { return &Client{p: p, maxPayload: MaxPayloadBytes} }

// Provider returns the provider the client talks to.
func (c *Client) Provider() duroxide.Provider { return c.p }

// StartOrchestration enqueues the start of instance running orchestration
// name with a raw input (option: WithVersion). Starting an instance that
// already exists is not an error and changes nothing: the start message is
// dropped by the dispatcher, as duroxide does. Bad arguments, including an
// input over MaxPayloadBytes, return an *InvalidInputError before anything
// reaches the provider.
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
	return c.p.EnqueueForOrchestrator(ctx, item, 0)
}

// StartOrchestrationJSON is StartOrchestration with input encoded as JSON.
func (c *Client) StartOrchestrationJSON(ctx context.Context, instance, name string, input any, opts ...OrchestrationOption) error {
	s, err := encodeJSON(input)
	if err != nil {
		return invalidInput("start_orchestration", "instance %q: encode input: %v", instance, err)
	}
	return c.StartOrchestration(ctx, instance, name, s, opts...)
}

// RaiseEvent delivers external event name to instance (WaitForEvent).
// Data over MaxPayloadBytes returns an *InvalidInputError and sends nothing.
func (c *Client) RaiseEvent(ctx context.Context, instance, name, data string) error {
	const op = "raise_event"
	if instance == "" || name == "" {
		return invalidInput(op, "instance %q, event %q: both are required", instance, name)
	}
	if err := checkPayload(op, fmt.Sprintf("instance %q, event %q: data", instance, name), data, c.maxPayload); err != nil {
		return err
	}
	return c.p.EnqueueForOrchestrator(ctx, duroxide.ExternalRaised{Instance: instance, Name: name, Data: data}, 0)
}

// EnqueueEvent appends data to the persistent queue of instance (Dequeue).
// Data over MaxPayloadBytes returns an *InvalidInputError and sends nothing.
func (c *Client) EnqueueEvent(ctx context.Context, instance, queue, data string) error {
	const op = "enqueue_event"
	if instance == "" || queue == "" {
		return invalidInput(op, "instance %q, queue %q: both are required", instance, queue)
	}
	if err := checkPayload(op, fmt.Sprintf("instance %q, queue %q: data", instance, queue), data, c.maxPayload); err != nil {
		return err
	}
	return c.p.EnqueueForOrchestrator(ctx, duroxide.QueueMessage{Instance: instance, Name: queue, Data: data}, 0)
}

// RaiseEventJSON is RaiseEvent with data encoded as JSON.
func (c *Client) RaiseEventJSON(ctx context.Context, instance, name string, data any) error {
	s, err := encodeJSON(data)
	if err != nil {
		return duroxide.Errorf("raise_event", duroxide.ErrInvalidInput, "instance %q, event %q: encode data: %v", instance, name, err)
	}
	return c.RaiseEvent(ctx, instance, name, s)
}

// EnqueueEventJSON is EnqueueEvent with data encoded as JSON.
func (c *Client) EnqueueEventJSON(ctx context.Context, instance, queue string, data any) error {
	s, err := encodeJSON(data)
	if err != nil {
		return duroxide.Errorf("enqueue_event", duroxide.ErrInvalidInput, "instance %q, queue %q: encode data: %v", instance, queue, err)
	}
	return c.EnqueueEvent(ctx, instance, queue, s)
}

// CancelInstance asks instance to stop: it fails with a Cancelled error, its
// outstanding activities are cancelled and its sub-orchestrations are
// cancelled in turn.
func (c *Client) CancelInstance(ctx context.Context, instance, reason string) error {
	if instance == "" {
		return invalidInput("cancel_instance", "instance id is required")
	}
	return c.p.EnqueueForOrchestrator(ctx, duroxide.CancelInstance{Instance: instance, Reason: reason}, 0)
}

// Status reads the instance's status from its latest execution's history.
// An instance without history whose start a runtime handed back is
// StatusPending with the reason in Pending (on a provider that keeps such
// notes, duroxide.PendingStartNoter); a poison failure the runtime could
// name the cause of has it in FailureCause.
func (c *Client) Status(ctx context.Context, instance string) (OrchestrationStatus, error) {
	hist, err := c.p.Read(ctx, instance)
	if err != nil {
		return OrchestrationStatus{}, err
	}
	var st OrchestrationStatus
	if cs, err := c.p.GetCustomStatus(ctx, instance, 0); err == nil && cs != nil {
		st.CustomStatus, st.CustomStatusVersion = cs.Status, cs.Version
	}
	for i := len(hist) - 1; i >= 0; i-- {
		switch k := hist[i].Kind.(type) {
		case duroxide.OrchestrationCompletedEvent:
			st.Status, st.Output = StatusCompleted, k.Output
			return st, nil
		case duroxide.OrchestrationFailedEvent:
			d := k.Details
			st.Status, st.Failure = StatusFailed, &d
			st.FailureCause, err = c.failureCause(ctx, instance, d)
			return st, err
		}
	}
	if len(hist) > 0 {
		st.Status = StatusRunning
		return st, nil
	}
	// No history: a start a runtime handed back is pending, with its
	// reason, rather than not found.
	if st.Pending, err = c.pendingStart(ctx, instance); st.Pending != nil {
		st.Status = StatusPending
	}
	return st, err
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

// waitUntil repeats check with backoff until it reports done, fails, the
// context ends or timeout passes.
func (c *Client) waitUntil(ctx context.Context, op, instance string, timeout time.Duration, check func() (OrchestrationStatus, bool, error)) (OrchestrationStatus, error) {
	deadline := time.Now().Add(timeout)
	delay := waitInitialDelay
	for {
		st, done, err := check()
		if err != nil || done {
			return st, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return st, &WaitTimeoutError{Op: op, Instance: instance, Last: st}
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
