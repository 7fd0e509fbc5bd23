package duroxide

import "reflect"

// WorkItem is a message in one of the provider's two queues. It is a closed union: the
// concrete types are the structs below, one per variant of duroxide's WorkItem enum, and
// the unexported marker keeps other packages from adding variants the wire format cannot
// carry.
//
// Routing: ActivityExecute goes to the worker queue; every other variant goes to the
// orchestrator queue of InstanceID(). Completions whose ExecutionID no longer matches the
// current execution are still enqueued: the runtime, not the provider, discards them.
//
// Both the value and the pointer forms of a variant implement WorkItem; decoding always
// produces values.
type WorkItem interface {
	// InstanceID is the instance whose orchestrator queue (and instance lock) the item
	// belongs to. For SubOrchCompleted / SubOrchFailed it is the parent, because the
	// completion wakes the parent, not the finished child.
	InstanceID() string
	isWorkItem()
}

// StartOrchestration starts an execution. Enqueueing it does not create the instance:
// the instance record appears when the first turn is acked with metadata.
type StartOrchestration struct {
	Instance      string `dx:"instance"`
	Orchestration string `dx:"orchestration"`
	Input         string `dx:"input"`
	// Version nil means "let the runtime resolve the version from its registry".
	Version *string `dx:"version"`
	// ParentInstance / ParentID are set for sub-orchestrations: the parent instance and
	// the event id of its SubOrchestrationScheduled event. nil for top-level starts.
	ParentInstance *string `dx:"parent_instance"`
	ParentID       *uint64 `dx:"parent_id"`
	ExecutionID    uint64  `dx:"execution_id"` // usually InitialExecutionID
}

// ActivityExecute asks a worker to run an activity. It is the only worker-queue variant.
type ActivityExecute struct {
	Instance    string `dx:"instance"`
	ExecutionID uint64 `dx:"execution_id"`
	ID          uint64 `dx:"id"` // event id of ActivityScheduled; completions echo it
	Name        string `dx:"name"`
	Input       string `dx:"input"`
	// SessionID nil: any worker may run it. Non-nil: it is routed to the worker that
	// owns (or claims) that session; see SessionFetchConfig.
	SessionID *string `dx:"session_id,omitempty"`
	// Tag nil: the default (untagged) queue. Non-nil: only workers whose TagFilter
	// matches the tag may fetch it.
	Tag *string `dx:"tag,omitempty"`
	// LimitKey nil: the activity's name's limit (FlowController) applies to it
	// with every other activity of the name. Non-nil: the limit applies per
	// key value. A field of this port's work item only: no history event
	// records it (the key is omitted when nil, so the JSON stays duroxide's).
	LimitKey *string `dx:"limit_key,omitempty"`
}

// ActivityCompleted reports an activity's result to its orchestration.
type ActivityCompleted struct {
	Instance    string `dx:"instance"`
	ExecutionID uint64 `dx:"execution_id"`
	ID          uint64 `dx:"id"` // event id of the ActivityScheduled it completes
	Result      string `dx:"result"`
}

// ActivityFailed reports an activity's failure to its orchestration.
type ActivityFailed struct {
	Instance    string       `dx:"instance"`
	ExecutionID uint64       `dx:"execution_id"`
	ID          uint64       `dx:"id"` // event id of the ActivityScheduled it completes
	Details     ErrorDetails `dx:"details"`
}

// TimerFired wakes an orchestration when a durable timer expires. When it is part of an
// ack's OrchestratorItems it becomes visible at FireAtMs (server clock); enqueued through
// EnqueueForOrchestrator only the delay argument counts.
type TimerFired struct {
	Instance    string `dx:"instance"`
	ExecutionID uint64 `dx:"execution_id"`
	ID          uint64 `dx:"id"`         // event id of TimerCreated
	FireAtMs    uint64 `dx:"fire_at_ms"` // ms since the Unix epoch
}

// ExternalRaised delivers an external event, matched by Name to an ExternalSubscribed
// event. It may arrive before the instance exists; it is enqueued anyway.
type ExternalRaised struct {
	Instance string `dx:"instance"`
	Name     string `dx:"name"`
	Data     string `dx:"data"`
}

// SubOrchCompleted reports a child orchestration's result to its parent.
type SubOrchCompleted struct {
	ParentInstance    string `dx:"parent_instance"`
	ParentExecutionID uint64 `dx:"parent_execution_id"`
	ParentID          uint64 `dx:"parent_id"` // event id of the parent's SubOrchestrationScheduled
	Result            string `dx:"result"`
}

// SubOrchFailed reports a child orchestration's failure to its parent.
type SubOrchFailed struct {
	ParentInstance    string       `dx:"parent_instance"`
	ParentExecutionID uint64       `dx:"parent_execution_id"`
	ParentID          uint64       `dx:"parent_id"` // event id of the parent's SubOrchestrationScheduled
	Details           ErrorDetails `dx:"details"`
}

// CancelInstance asks the runtime to cancel an orchestration.
type CancelInstance struct {
	Instance string `dx:"instance"`
	Reason   string `dx:"reason"`
}

// ContinueAsNew ends the current execution and starts the next one. The provider never
// synthesizes executions itself: the runtime acks the new execution's first turn with an
// explicit execution id.
type ContinueAsNew struct {
	Instance      string  `dx:"instance"`
	Orchestration string  `dx:"orchestration"`
	Input         string  `dx:"input"`
	Version       *string `dx:"version"`
	// CarryForwardEvents are unconsumed persistent queue events (name, data) carried into
	// the new execution in FIFO order. nil and empty are equivalent; both encode as [].
	CarryForwardEvents [][2]string `dx:"carry_forward_events,default"`
	// InitialCustomStatus carries the custom status over; nil = none (key omitted).
	InitialCustomStatus *string `dx:"initial_custom_status,omitempty"`
}

// QueueMessage is a persistent queue event (FIFO mailbox semantics): it waits until a
// QueueSubscribed consumes it.
type QueueMessage struct {
	Instance string `dx:"instance"`
	Name     string `dx:"name"`
	Data     string `dx:"data"`
}

// InstanceID implements WorkItem.
func (w StartOrchestration) InstanceID() string { return w.Instance }

// InstanceID implements WorkItem.
func (w ActivityExecute) InstanceID() string { return w.Instance }

// InstanceID implements WorkItem.
func (w ActivityCompleted) InstanceID() string { return w.Instance }

// InstanceID implements WorkItem.
func (w ActivityFailed) InstanceID() string { return w.Instance }

// InstanceID implements WorkItem.
func (w TimerFired) InstanceID() string { return w.Instance }

// InstanceID implements WorkItem.
func (w ExternalRaised) InstanceID() string { return w.Instance }

// InstanceID implements WorkItem; a child's completion routes to its parent.
func (w SubOrchCompleted) InstanceID() string { return w.ParentInstance }

// InstanceID implements WorkItem; a child's failure routes to its parent.
func (w SubOrchFailed) InstanceID() string { return w.ParentInstance }

// InstanceID implements WorkItem.
func (w CancelInstance) InstanceID() string { return w.Instance }

// InstanceID implements WorkItem.
func (w ContinueAsNew) InstanceID() string { return w.Instance }

// InstanceID implements WorkItem.
func (w QueueMessage) InstanceID() string { return w.Instance }

func (StartOrchestration) isWorkItem() {}
func (ActivityExecute) isWorkItem()    {}
func (ActivityCompleted) isWorkItem()  {}
func (ActivityFailed) isWorkItem()     {}
func (TimerFired) isWorkItem()         {}
func (ExternalRaised) isWorkItem()     {}
func (SubOrchCompleted) isWorkItem()   {}
func (SubOrchFailed) isWorkItem()      {}
func (CancelInstance) isWorkItem()     {}
func (ContinueAsNew) isWorkItem()      {}
func (QueueMessage) isWorkItem()       {}

// ---------------------------------------------------------------------------------------
// Codec: a variant's wire name is its Go type name, its fields are the dx tags above.

var workItems = variantsOf[WorkItem](func(w WorkItem) string { return reflect.TypeOf(w).Name() },
	StartOrchestration{}, ActivityExecute{}, ActivityCompleted{}, ActivityFailed{},
	TimerFired{}, ExternalRaised{}, SubOrchCompleted{}, SubOrchFailed{},
	CancelInstance{}, ContinueAsNew{}, QueueMessage{})

// MarshalWorkItem encodes item exactly as duroxide's serde_json does
// ({"Variant":{fields}}, compact, serde key order), so stored queue entries are readable by
// any duroxide tool. A nil item, a nil pointer or invalid UTF-8 in a string is an error.
func MarshalWorkItem(item WorkItem) ([]byte, error) {
	name, v, ok := workItems.of(item)
	if !ok {
		return nil, encodeErrorf("WorkItem", "unsupported value %T", item)
	}
	return marshalWithContext("WorkItem::"+name, func(w *jsonWriter) { writeTagged(w, name, v) })
}

// UnmarshalWorkItem decodes duroxide's serde_json form strictly: unknown variants, missing
// or mistyped fields, several variant keys and trailing data are errors (never a silently
// empty item); unknown extra fields are ignored, as serde does.
func UnmarshalWorkItem(data []byte) (WorkItem, error) {
	var item WorkItem
	err := unmarshalInto(data, "WorkItem", func(path string, j jsonValue) (WorkItem, error) {
		_, p, err := readTagged(path, j, workItems.pointerType)
		if err != nil {
			return nil, err
		}
		return p.Elem().Interface().(WorkItem), nil
	}, &item)
	return item, err
}
