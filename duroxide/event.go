package duroxide

import (
	"reflect"
	"time"
)

// CurrentDuroxideVersion is the duroxide release whose contract and wire format this
// package implements. NewEvent stamps it on events; providers store the pinned version
// they are given and never derive it from this constant.
const CurrentDuroxideVersion = "0.1.27"

// Event is one entry of an execution's append-only history. Providers store events
// exactly as given (same event ids, same order, no renumbering) and must not make
// decisions based on their contents; the runtime already summarized what matters in
// ExecutionMetadata. The documented exceptions are the KV and custom-status events of an
// ack's HistoryDelta, which the provider applies to its KV / custom-status state.
//
// The JSON form is one flat object: the common fields, a "type" tag and the fields of
// Kind at the same level (serde flatten of an internally tagged enum).
type Event struct {
	// EventID is assigned by the runtime, starting at InitialEventID; 0 is never valid and
	// providers reject it. It is unique within an execution.
	EventID uint64 `dx:"event_id"`
	// SourceEventID links a completion to the event that scheduled it (e.g. the
	// ActivityScheduled a result answers); nil when the event stands alone.
	SourceEventID *uint64 `dx:"source_event_id"`
	InstanceID    string  `dx:"instance_id"`
	ExecutionID   uint64  `dx:"execution_id"`
	TimestampMs   uint64  `dx:"timestamp_ms"` // ms since the Unix epoch, informational only
	// DuroxideVersion is the version of the runtime that wrote the event.
	DuroxideVersion string `dx:"duroxide_version"`
	// Kind is the variant payload; it must be one of this package's <Variant>Event types
	// (value or pointer). A nil or foreign Kind cannot be encoded.
	Kind EventKind
}

// EventKind is the variant part of an Event. EventType returns the serde "type" tag,
// which differs from the Go type name for the three persistent-queue events.
type EventKind interface {
	EventType() string
}

// NewEvent builds an event stamped with the current wall-clock time and
// CurrentDuroxideVersion, the way the runtime creates events.
func NewEvent(eventID uint64, instance string, executionID uint64, sourceEventID *uint64, kind EventKind) Event {
	return Event{
		EventID:         eventID,
		SourceEventID:   sourceEventID,
		InstanceID:      instance,
		ExecutionID:     executionID,
		TimestampMs:     uint64(time.Now().UnixMilli()),
		DuroxideVersion: CurrentDuroxideVersion,
		Kind:            kind,
	}
}

// MarshalJSON writes exactly what duroxide's serde_json writes (compact, serde key order).
// Note that json.Marshal post-processes the result and escapes '<', '>', '&', U+2028 and
// U+2029 unless the Encoder has SetEscapeHTML(false); call MarshalJSON directly when the
// bytes must be identical to duroxide's.
func (e Event) MarshalJSON() ([]byte, error) {
	kind, v, ok := eventKinds.of(e.Kind)
	if !ok {
		return nil, encodeErrorf("Event", "unsupported kind %T", e.Kind)
	}
	return marshalWithContext("Event(type="+kind+")", func(w *jsonWriter) {
		w.buf = append(w.buf, '{')
		writeFields(w, reflect.ValueOf(e))
		writeFields(w, reflect.ValueOf(eventTag{Type: kind}))
		writeFields(w, v)
		w.buf = append(w.buf, '}')
	})
}

// UnmarshalJSON decodes duroxide's JSON strictly: an unknown "type" (including the Rust
// names QueueSubscribed / QueueEventDelivered / QueueSubscriptionCancelled, which never
// appear on the wire), a missing or mistyped field, or JSON null is an error, and e is
// left unchanged. Unknown extra keys are ignored, as serde does.
func (e *Event) UnmarshalJSON(data []byte) error {
	return unmarshalInto(data, "Event", decodeEvent, e)
}

// eventTag is the key that selects the kind of an event; the kind's fields sit next to it
// in the same object (serde flatten of an internally tagged enum).
type eventTag struct {
	Type string `dx:"type"`
}

var eventKinds = variantsOf[EventKind](EventKind.EventType,
	OrchestrationStartedEvent{}, OrchestrationCompletedEvent{}, OrchestrationFailedEvent{},
	ActivityScheduledEvent{}, ActivityCompletedEvent{}, ActivityFailedEvent{},
	ActivityCancelRequestedEvent{}, TimerCreatedEvent{}, TimerFiredEvent{},
	ExternalSubscribedEvent{}, ExternalEventEvent{}, OrchestrationChainedEvent{},
	SubOrchestrationScheduledEvent{}, SubOrchestrationCompletedEvent{},
	SubOrchestrationFailedEvent{}, SubOrchestrationCancelRequestedEvent{},
	OrchestrationContinuedAsNewEvent{}, OrchestrationCancelRequestedEvent{},
	ExternalSubscribedCancelledEvent{}, QueueSubscribedEvent{}, QueueEventDeliveredEvent{},
	QueueSubscriptionCancelledEvent{}, CustomStatusUpdatedEvent{}, KeyValueSetEvent{},
	KeyValueClearedEvent{}, KeyValuesClearedEvent{})

// decodeEvent reads the common fields, then the "type" tag, then that kind's fields, all
// from the one object.
func decodeEvent(path string, j jsonValue) (Event, error) {
	if j.kind != jsonObject {
		return Event{}, typeError(path, j, "an object")
	}
	var ev Event
	var tag eventTag
	if err := readFields(path, j.members, reflect.ValueOf(&ev).Elem()); err != nil {
		return Event{}, err
	}
	if err := readFields(path, j.members, reflect.ValueOf(&tag).Elem()); err != nil {
		return Event{}, err
	}
	kind, ok := eventKinds.pointers[tag.Type]
	if !ok {
		return Event{}, decodeErrorf(path, "unknown event type %q", truncate(tag.Type))
	}
	v := reflect.New(kind.Elem()).Elem()
	if err := readFields(path+"(type="+tag.Type+")", j.members, v); err != nil {
		return Event{}, err
	}
	ev.Kind = v.Interface().(EventKind)
	return ev, nil
}

// ---------------------------------------------------------------------------------------
// Event kinds, in duroxide's declaration order; the dx tags are their wire fields.

// OrchestrationStartedEvent is always event InitialEventID of an execution. Providers
// read it for two facts only: its presence in an ack's delta marks a new execution (the
// runtime then also sets ExecutionMetadata.PinnedDuroxideVersion), and the length of
// CarryForwardEvents is reported as InstanceStats.QueuePendingCount.
type OrchestrationStartedEvent struct {
	Name           string  `dx:"name"`
	Version        string  `dx:"version"`
	Input          string  `dx:"input"`
	ParentInstance *string `dx:"parent_instance"` // nil for top-level orchestrations
	ParentID       *uint64 `dx:"parent_id"`       // the parent's SubOrchestrationScheduled event id
	// CarryForwardEvents is set on executions started by ContinueAsNew. nil = None (key
	// omitted); a non-nil pointer to an empty or nil slice = Some(empty), written as [].
	CarryForwardEvents  *[][2]string `dx:"carry_forward_events,omitempty"`
	InitialCustomStatus *string      `dx:"initial_custom_status,omitempty"` // nil = none (key omitted)
}

// EventType implements EventKind.
func (OrchestrationStartedEvent) EventType() string { return "OrchestrationStarted" }

// OrchestrationCompletedEvent ends an execution successfully.
type OrchestrationCompletedEvent struct {
	Output string `dx:"output"`
}

// EventType implements EventKind.
func (OrchestrationCompletedEvent) EventType() string { return "OrchestrationCompleted" }

// OrchestrationFailedEvent ends an execution with an error.
type OrchestrationFailedEvent struct {
	Details ErrorDetails `dx:"details"`
}

// EventType implements EventKind.
func (OrchestrationFailedEvent) EventType() string { return "OrchestrationFailed" }

// ActivityScheduledEvent records that an activity was scheduled; its event id is the ID
// of the matching ActivityExecute work item.
type ActivityScheduledEvent struct {
	Name      string  `dx:"name"`
	Input     string  `dx:"input"`
	SessionID *string `dx:"session_id,omitempty"` // nil = no session (key omitted)
	Tag       *string `dx:"tag,omitempty"`        // nil = default queue (key omitted)
}

// EventType implements EventKind.
func (ActivityScheduledEvent) EventType() string { return "ActivityScheduled" }

// ActivityCompletedEvent records an activity result.
type ActivityCompletedEvent struct {
	Result string `dx:"result"`
}

// EventType implements EventKind.
func (ActivityCompletedEvent) EventType() string { return "ActivityCompleted" }

// ActivityFailedEvent records an activity failure.
type ActivityFailedEvent struct {
	Details ErrorDetails `dx:"details"`
}

// EventType implements EventKind.
func (ActivityFailedEvent) EventType() string { return "ActivityFailed" }

// ActivityCancelRequestedEvent records that the orchestration dropped an activity.
type ActivityCancelRequestedEvent struct {
	Reason string `dx:"reason"`
}

// EventType implements EventKind.
func (ActivityCancelRequestedEvent) EventType() string { return "ActivityCancelRequested" }

// TimerCreatedEvent records a durable timer.
type TimerCreatedEvent struct {
	FireAtMs uint64 `dx:"fire_at_ms"`
}

// EventType implements EventKind.
func (TimerCreatedEvent) EventType() string { return "TimerCreated" }

// TimerFiredEvent records that a timer fired.
type TimerFiredEvent struct {
	FireAtMs uint64 `dx:"fire_at_ms"`
}

// EventType implements EventKind.
func (TimerFiredEvent) EventType() string { return "TimerFired" }

// ExternalSubscribedEvent records a wait for an external event.
type ExternalSubscribedEvent struct {
	Name string `dx:"name"`
}

// EventType implements EventKind.
func (ExternalSubscribedEvent) EventType() string { return "ExternalSubscribed" }

// ExternalEventEvent records a delivered external event.
type ExternalEventEvent struct {
	Name string `dx:"name"`
	Data string `dx:"data"`
}

// EventType implements EventKind.
func (ExternalEventEvent) EventType() string { return "ExternalEvent" }

// OrchestrationChainedEvent records a fire-and-forget orchestration start.
type OrchestrationChainedEvent struct {
	Name     string `dx:"name"`
	Instance string `dx:"instance"`
	Input    string `dx:"input"`
}

// EventType implements EventKind.
func (OrchestrationChainedEvent) EventType() string { return "OrchestrationChained" }

// SubOrchestrationScheduledEvent records a child orchestration start; its event id is the
// ParentID the child's completion reports.
type SubOrchestrationScheduledEvent struct {
	Name     string `dx:"name"`
	Instance string `dx:"instance"`
	Input    string `dx:"input"`
}

// EventType implements EventKind.
func (SubOrchestrationScheduledEvent) EventType() string { return "SubOrchestrationScheduled" }

// SubOrchestrationCompletedEvent records a child's result.
type SubOrchestrationCompletedEvent struct {
	Result string `dx:"result"`
}

// EventType implements EventKind.
func (SubOrchestrationCompletedEvent) EventType() string { return "SubOrchestrationCompleted" }

// SubOrchestrationFailedEvent records a child's failure.
type SubOrchestrationFailedEvent struct {
	Details ErrorDetails `dx:"details"`
}

// EventType implements EventKind.
func (SubOrchestrationFailedEvent) EventType() string { return "SubOrchestrationFailed" }

// SubOrchestrationCancelRequestedEvent records that the parent dropped a child.
type SubOrchestrationCancelRequestedEvent struct {
	Reason string `dx:"reason"`
}

// EventType implements EventKind.
func (SubOrchestrationCancelRequestedEvent) EventType() string {
	return "SubOrchestrationCancelRequested"
}

// OrchestrationContinuedAsNewEvent ends an execution that continues as a new one.
type OrchestrationContinuedAsNewEvent struct {
	Input string `dx:"input"`
}

// EventType implements EventKind.
func (OrchestrationContinuedAsNewEvent) EventType() string { return "OrchestrationContinuedAsNew" }

// OrchestrationCancelRequestedEvent records a CancelInstance request.
type OrchestrationCancelRequestedEvent struct {
	Reason string `dx:"reason"`
}

// EventType implements EventKind.
func (OrchestrationCancelRequestedEvent) EventType() string { return "OrchestrationCancelRequested" }

// ExternalSubscribedCancelledEvent records that a wait for an external event was dropped.
type ExternalSubscribedCancelledEvent struct {
	Reason string `dx:"reason"`
}

// EventType implements EventKind.
func (ExternalSubscribedCancelledEvent) EventType() string { return "ExternalSubscribedCancelled" }

// QueueSubscribedEvent (Rust QueueSubscribed) records a wait on a persistent queue. Its
// wire tag is "ExternalSubscribedPersistent", kept by duroxide for compatibility.
type QueueSubscribedEvent struct {
	Name string `dx:"name"`
}

// EventType implements EventKind.
func (QueueSubscribedEvent) EventType() string { return "ExternalSubscribedPersistent" }

// QueueEventDeliveredEvent (Rust QueueEventDelivered) records a consumed QueueMessage.
// Its wire tag is "ExternalEventPersistent".
type QueueEventDeliveredEvent struct {
	Name string `dx:"name"`
	Data string `dx:"data"`
}

// EventType implements EventKind.
func (QueueEventDeliveredEvent) EventType() string { return "ExternalEventPersistent" }

// QueueSubscriptionCancelledEvent (Rust QueueSubscriptionCancelled) records a dropped
// queue wait. Its wire tag is "ExternalSubscribedPersistentCancelled".
type QueueSubscriptionCancelledEvent struct {
	Reason string `dx:"reason"`
}

// EventType implements EventKind.
func (QueueSubscriptionCancelledEvent) EventType() string {
	return "ExternalSubscribedPersistentCancelled"
}

// CustomStatusUpdatedEvent sets (Status non-nil) or clears (nil) the custom status. The
// last one in an ack's HistoryDelta is what the provider stores, bumping the version.
type CustomStatusUpdatedEvent struct {
	Status *string `dx:"status"`
}

// EventType implements EventKind.
func (CustomStatusUpdatedEvent) EventType() string { return "CustomStatusUpdated" }

// KeyValueSetEvent sets an instance-scoped KV entry (applied by the provider on ack).
type KeyValueSetEvent struct {
	Key             string `dx:"key"`
	Value           string `dx:"value"`
	LastUpdatedAtMs uint64 `dx:"last_updated_at_ms,default"` // missing on the wire reads as 0 (older writers)
}

// EventType implements EventKind.
func (KeyValueSetEvent) EventType() string { return "KeyValueSet" }

// KeyValueClearedEvent removes one KV entry.
type KeyValueClearedEvent struct {
	Key string `dx:"key"`
}

// EventType implements EventKind.
func (KeyValueClearedEvent) EventType() string { return "KeyValueCleared" }

// KeyValuesClearedEvent removes every KV entry of the instance.
type KeyValuesClearedEvent struct{}

// EventType implements EventKind.
func (KeyValuesClearedEvent) EventType() string { return "KeyValuesCleared" }
