package duroxide

import "fmt"

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
	Instance      string
	Orchestration string
	Input         string
	// Version nil means "let the runtime resolve the version from its registry".
	Version *string
	// ParentInstance / ParentID are set for sub-orchestrations: the parent instance and
	// the event id of its SubOrchestrationScheduled event. nil for top-level starts.
	ParentInstance *string
	ParentID       *uint64
	ExecutionID    uint64 // usually InitialExecutionID
}

// ActivityExecute asks a worker to run an activity. It is the only worker-queue variant.
type ActivityExecute struct {
	Instance    string
	ExecutionID uint64
	ID          uint64 // event id of ActivityScheduled; completions echo it
	Name        string
	Input       string
	// SessionID nil: any worker may run it. Non-nil: it is routed to the worker that
	// owns (or claims) that session; see SessionFetchConfig.
	SessionID *string
	// Tag nil: the default (untagged) queue. Non-nil: only workers whose TagFilter
	// matches the tag may fetch it.
	Tag *string
}

// ActivityCompleted reports an activity's result to its orchestration.
type ActivityCompleted struct {
	Instance    string
	ExecutionID uint64
	ID          uint64 // event id of the ActivityScheduled it completes
	Result      string
}

// ActivityFailed reports an activity's failure to its orchestration.
type ActivityFailed struct {
	Instance    string
	ExecutionID uint64
	ID          uint64 // event id of the ActivityScheduled it completes
	Details     ErrorDetails
}

// TimerFired wakes an orchestration when a durable timer expires. When it is part of an
// ack's OrchestratorItems it becomes visible at FireAtMs (server clock); enqueued through
// EnqueueForOrchestrator only the delay argument counts.
type TimerFired struct {
	Instance    string
	ExecutionID uint64
	ID          uint64 // event id of TimerCreated
	FireAtMs    uint64 // ms since the Unix epoch
}

// ExternalRaised delivers an external event, matched by Name to an ExternalSubscribed
// event. It may arrive before the instance exists; it is enqueued anyway.
type ExternalRaised struct {
	Instance string
	Name     string
	Data     string
}

// SubOrchCompleted reports a child orchestration's result to its parent.
type SubOrchCompleted struct {
	ParentInstance    string
	ParentExecutionID uint64
	ParentID          uint64 // event id of the parent's SubOrchestrationScheduled
	Result            string
}

// SubOrchFailed reports a child orchestration's failure to its parent.
type SubOrchFailed struct {
	ParentInstance    string
	ParentExecutionID uint64
	ParentID          uint64 // event id of the parent's SubOrchestrationScheduled
	Details           ErrorDetails
}

// CancelInstance asks the runtime to cancel an orchestration.
type CancelInstance struct {
	Instance string
	Reason   string
}

// ContinueAsNew ends the current execution and starts the next one. The provider never
// synthesizes executions itself: the runtime acks the new execution's first turn with an
// explicit execution id.
type ContinueAsNew struct {
	Instance      string
	Orchestration string
	Input         string
	Version       *string
	// CarryForwardEvents are unconsumed persistent queue events (name, data) carried into
	// the new execution in FIFO order. nil and empty are equivalent; both encode as [].
	CarryForwardEvents [][2]string
	// InitialCustomStatus carries the custom status over; nil = none (key omitted).
	InitialCustomStatus *string
}

// QueueMessage is a persistent queue event (FIFO mailbox semantics): it waits until a
// QueueSubscribed consumes it.
type QueueMessage struct {
	Instance string
	Name     string
	Data     string
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
// Codec

// workItemVariant is implemented by every WorkItem struct: its serde name, how it writes
// its fields and how it reads them, kept together so the two directions cannot drift.
type workItemVariant interface {
	WorkItem
	structVariant
	readFields(f *fields) WorkItem
}

var workItemReaders = variantReaders(workItemVariant.variant, workItemVariant.readFields,
	[]workItemVariant{
		StartOrchestration{}, ActivityExecute{}, ActivityCompleted{}, ActivityFailed{},
		TimerFired{}, ExternalRaised{}, SubOrchCompleted{}, SubOrchFailed{},
		CancelInstance{}, ContinueAsNew{}, QueueMessage{},
	})

// MarshalWorkItem encodes item exactly as duroxide's serde_json does
// ({"Variant":{fields}}, compact, serde key order), so stored queue entries are readable by
// any duroxide tool. A nil item, a nil pointer or invalid UTF-8 in a string is an error.
func MarshalWorkItem(item WorkItem) ([]byte, error) {
	v, ok := item.(workItemVariant)
	if !ok || isNilPointer(item) {
		return nil, fmt.Errorf("duroxide: encode WorkItem: unsupported value %T", item)
	}
	return marshalWithContext("WorkItem::"+v.variant(), func(w *jsonWriter) { w.tagged(v) })
}

// UnmarshalWorkItem decodes duroxide's serde_json form strictly: unknown variants, missing
// or mistyped fields, several variant keys and trailing data are errors (never a silently
// empty item); unknown extra fields are ignored, as serde does.
func UnmarshalWorkItem(data []byte) (WorkItem, error) {
	root, err := parseJSON("WorkItem", data)
	if err != nil {
		return nil, err
	}
	return decodeTagged("WorkItem", root, workItemReaders)
}

func (StartOrchestration) variant() string { return "StartOrchestration" }

func (w StartOrchestration) writeFields(j *jsonWriter) {
	j.str("instance", w.Instance)
	j.str("orchestration", w.Orchestration)
	j.str("input", w.Input)
	j.nullableStr("version", w.Version)
	j.nullableStr("parent_instance", w.ParentInstance)
	j.nullableU64("parent_id", w.ParentID)
	j.u64("execution_id", w.ExecutionID)
}

func (StartOrchestration) readFields(f *fields) WorkItem {
	return StartOrchestration{
		Instance:       f.str("instance"),
		Orchestration:  f.str("orchestration"),
		Input:          f.str("input"),
		Version:        f.optStr("version"),
		ParentInstance: f.optStr("parent_instance"),
		ParentID:       f.optU64("parent_id"),
		ExecutionID:    f.u64("execution_id"),
	}
}

func (ActivityExecute) variant() string { return "ActivityExecute" }

func (w ActivityExecute) writeFields(j *jsonWriter) {
	j.str("instance", w.Instance)
	j.u64("execution_id", w.ExecutionID)
	j.u64("id", w.ID)
	j.str("name", w.Name)
	j.str("input", w.Input)
	j.omittableStr("session_id", w.SessionID)
	j.omittableStr("tag", w.Tag)
}

func (ActivityExecute) readFields(f *fields) WorkItem {
	return ActivityExecute{
		Instance:    f.str("instance"),
		ExecutionID: f.u64("execution_id"),
		ID:          f.u64("id"),
		Name:        f.str("name"),
		Input:       f.str("input"),
		SessionID:   f.optStr("session_id"),
		Tag:         f.optStr("tag"),
	}
}

func (ActivityCompleted) variant() string { return "ActivityCompleted" }

func (w ActivityCompleted) writeFields(j *jsonWriter) {
	j.str("instance", w.Instance)
	j.u64("execution_id", w.ExecutionID)
	j.u64("id", w.ID)
	j.str("result", w.Result)
}

func (ActivityCompleted) readFields(f *fields) WorkItem {
	return ActivityCompleted{
		Instance:    f.str("instance"),
		ExecutionID: f.u64("execution_id"),
		ID:          f.u64("id"),
		Result:      f.str("result"),
	}
}

func (ActivityFailed) variant() string { return "ActivityFailed" }

func (w ActivityFailed) writeFields(j *jsonWriter) {
	j.str("instance", w.Instance)
	j.u64("execution_id", w.ExecutionID)
	j.u64("id", w.ID)
	j.key("details")
	w.Details.write(j)
}

func (ActivityFailed) readFields(f *fields) WorkItem {
	return ActivityFailed{
		Instance:    f.str("instance"),
		ExecutionID: f.u64("execution_id"),
		ID:          f.u64("id"),
		Details:     f.details("details"),
	}
}

func (TimerFired) variant() string { return "TimerFired" }

func (w TimerFired) writeFields(j *jsonWriter) {
	j.str("instance", w.Instance)
	j.u64("execution_id", w.ExecutionID)
	j.u64("id", w.ID)
	j.u64("fire_at_ms", w.FireAtMs)
}

func (TimerFired) readFields(f *fields) WorkItem {
	return TimerFired{
		Instance:    f.str("instance"),
		ExecutionID: f.u64("execution_id"),
		ID:          f.u64("id"),
		FireAtMs:    f.u64("fire_at_ms"),
	}
}

func (ExternalRaised) variant() string { return "ExternalRaised" }

func (w ExternalRaised) writeFields(j *jsonWriter) {
	j.str("instance", w.Instance)
	j.str("name", w.Name)
	j.str("data", w.Data)
}

func (ExternalRaised) readFields(f *fields) WorkItem {
	return ExternalRaised{Instance: f.str("instance"), Name: f.str("name"), Data: f.str("data")}
}

func (SubOrchCompleted) variant() string { return "SubOrchCompleted" }

func (w SubOrchCompleted) writeFields(j *jsonWriter) {
	j.str("parent_instance", w.ParentInstance)
	j.u64("parent_execution_id", w.ParentExecutionID)
	j.u64("parent_id", w.ParentID)
	j.str("result", w.Result)
}

func (SubOrchCompleted) readFields(f *fields) WorkItem {
	return SubOrchCompleted{
		ParentInstance:    f.str("parent_instance"),
		ParentExecutionID: f.u64("parent_execution_id"),
		ParentID:          f.u64("parent_id"),
		Result:            f.str("result"),
	}
}

func (SubOrchFailed) variant() string { return "SubOrchFailed" }

func (w SubOrchFailed) writeFields(j *jsonWriter) {
	j.str("parent_instance", w.ParentInstance)
	j.u64("parent_execution_id", w.ParentExecutionID)
	j.u64("parent_id", w.ParentID)
	j.key("details")
	w.Details.write(j)
}

func (SubOrchFailed) readFields(f *fields) WorkItem {
	return SubOrchFailed{
		ParentInstance:    f.str("parent_instance"),
		ParentExecutionID: f.u64("parent_execution_id"),
		ParentID:          f.u64("parent_id"),
		Details:           f.details("details"),
	}
}

func (CancelInstance) variant() string { return "CancelInstance" }

func (w CancelInstance) writeFields(j *jsonWriter) {
	j.str("instance", w.Instance)
	j.str("reason", w.Reason)
}

func (CancelInstance) readFields(f *fields) WorkItem {
	return CancelInstance{Instance: f.str("instance"), Reason: f.str("reason")}
}

func (ContinueAsNew) variant() string { return "ContinueAsNew" }

func (w ContinueAsNew) writeFields(j *jsonWriter) {
	j.str("instance", w.Instance)
	j.str("orchestration", w.Orchestration)
	j.str("input", w.Input)
	j.nullableStr("version", w.Version)
	j.pairs("carry_forward_events", w.CarryForwardEvents)
	j.omittableStr("initial_custom_status", w.InitialCustomStatus)
}

func (ContinueAsNew) readFields(f *fields) WorkItem {
	return ContinueAsNew{
		Instance:            f.str("instance"),
		Orchestration:       f.str("orchestration"),
		Input:               f.str("input"),
		Version:             f.optStr("version"),
		CarryForwardEvents:  defaulted(f, "carry_forward_events", asPairs),
		InitialCustomStatus: f.optStr("initial_custom_status"),
	}
}

func (QueueMessage) variant() string { return "QueueMessage" }

func (w QueueMessage) writeFields(j *jsonWriter) {
	j.str("instance", w.Instance)
	j.str("name", w.Name)
	j.str("data", w.Data)
}

func (QueueMessage) readFields(f *fields) WorkItem {
	return QueueMessage{Instance: f.str("instance"), Name: f.str("name"), Data: f.str("data")}
}
