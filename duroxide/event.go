package duroxide

import (
	"fmt"
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
	EventID uint64
	// SourceEventID links a completion to the event that scheduled it (e.g. the
	// ActivityScheduled a result answers); nil when the event stands alone.
	SourceEventID *uint64
	InstanceID    string
	ExecutionID   uint64
	TimestampMs   uint64 // ms since the Unix epoch, informational only
	// DuroxideVersion is the version of the runtime that wrote the event.
	DuroxideVersion string
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
	kind, ok := eventKindOf(e.Kind)
	if !ok {
		return nil, fmt.Errorf("duroxide: encode Event: unsupported kind %T", e.Kind)
	}
	return marshalWithContext("Event(type="+kind.EventType()+")", func(w *jsonWriter) {
		w.open()
		w.u64("event_id", e.EventID)
		w.nullableU64("source_event_id", e.SourceEventID)
		w.str("instance_id", e.InstanceID)
		w.u64("execution_id", e.ExecutionID)
		w.u64("timestamp_ms", e.TimestampMs)
		w.str("duroxide_version", e.DuroxideVersion)
		w.str("type", kind.EventType())
		kind.writeFields(w)
		w.close()
	})
}

// UnmarshalJSON decodes duroxide's JSON strictly: an unknown "type" (including the Rust
// names QueueSubscribed / QueueEventDelivered / QueueSubscriptionCancelled, which never
// appear on the wire), a missing or mistyped field, or JSON null is an error, and e is
// left unchanged. Unknown extra keys are ignored, as serde does.
func (e *Event) UnmarshalJSON(data []byte) error {
	return unmarshalInto(data, "Event", decodeEvent, e)
}

func decodeEvent(path string, v jsonValue) (Event, error) {
	f, err := objectFields(path, v)
	if err != nil {
		return Event{}, err
	}
	ev := Event{
		EventID:         f.u64("event_id"),
		SourceEventID:   f.optU64("source_event_id"),
		InstanceID:      f.str("instance_id"),
		ExecutionID:     f.u64("execution_id"),
		TimestampMs:     f.u64("timestamp_ms"),
		DuroxideVersion: f.str("duroxide_version"),
	}
	typ := f.str("type")
	if f.err != nil {
		return Event{}, f.err
	}
	read, ok := eventKindReaders[typ]
	if !ok {
		return Event{}, decodeErrorf(path, "unknown event type %q", truncate(typ))
	}
	f.path = path + "(type=" + typ + ")"
	ev.Kind = read(f)
	if f.err != nil {
		return Event{}, f.err
	}
	return ev, nil
}

// eventKindCodec is implemented by every <Variant>Event type.
type eventKindCodec interface {
	EventKind
	writeFields(w *jsonWriter)
	readFields(f *fields) EventKind
}

func eventKindOf(k EventKind) (eventKindCodec, bool) {
	c, ok := k.(eventKindCodec)
	return c, ok && !isNilPointer(k)
}

var eventKindReaders = variantReaders(eventKindCodec.EventType, eventKindCodec.readFields,
	[]eventKindCodec{
		OrchestrationStartedEvent{}, OrchestrationCompletedEvent{}, OrchestrationFailedEvent{},
		ActivityScheduledEvent{}, ActivityCompletedEvent{}, ActivityFailedEvent{},
		ActivityCancelRequestedEvent{}, TimerCreatedEvent{}, TimerFiredEvent{},
		ExternalSubscribedEvent{}, ExternalEventEvent{}, OrchestrationChainedEvent{},
		SubOrchestrationScheduledEvent{}, SubOrchestrationCompletedEvent{},
		SubOrchestrationFailedEvent{}, SubOrchestrationCancelRequestedEvent{},
		OrchestrationContinuedAsNewEvent{}, OrchestrationCancelRequestedEvent{},
		ExternalSubscribedCancelledEvent{}, QueueSubscribedEvent{}, QueueEventDeliveredEvent{},
		QueueSubscriptionCancelledEvent{}, CustomStatusUpdatedEvent{}, KeyValueSetEvent{},
		KeyValueClearedEvent{}, KeyValuesClearedEvent{},
	})

// ---------------------------------------------------------------------------------------
// Event kinds, in duroxide's declaration order. Each type carries its wire tag, writer and
// reader side by side.

// OrchestrationStartedEvent is always event InitialEventID of an execution. Providers
// read it for two facts only: its presence in an ack's delta marks a new execution (the
// runtime then also sets ExecutionMetadata.PinnedDuroxideVersion), and the length of
// CarryForwardEvents is reported as InstanceStats.QueuePendingCount.
type OrchestrationStartedEvent struct {
	Name           string
	Version        string
	Input          string
	ParentInstance *string // nil for top-level orchestrations
	ParentID       *uint64 // the parent's SubOrchestrationScheduled event id
	// CarryForwardEvents is set on executions started by ContinueAsNew. nil = None (key
	// omitted); a non-nil pointer to an empty or nil slice = Some(empty), written as [].
	CarryForwardEvents  *[][2]string
	InitialCustomStatus *string // nil = none (key omitted)
}

// EventType implements EventKind.
func (OrchestrationStartedEvent) EventType() string { return "OrchestrationStarted" }

func (k OrchestrationStartedEvent) writeFields(w *jsonWriter) {
	w.str("name", k.Name)
	w.str("version", k.Version)
	w.str("input", k.Input)
	w.nullableStr("parent_instance", k.ParentInstance)
	w.nullableU64("parent_id", k.ParentID)
	if k.CarryForwardEvents != nil {
		w.pairs("carry_forward_events", *k.CarryForwardEvents)
	}
	w.omittableStr("initial_custom_status", k.InitialCustomStatus)
}

func (OrchestrationStartedEvent) readFields(f *fields) EventKind {
	return OrchestrationStartedEvent{
		Name:                f.str("name"),
		Version:             f.str("version"),
		Input:               f.str("input"),
		ParentInstance:      f.optStr("parent_instance"),
		ParentID:            f.optU64("parent_id"),
		CarryForwardEvents:  optional(f, "carry_forward_events", asPairs),
		InitialCustomStatus: f.optStr("initial_custom_status"),
	}
}

// OrchestrationCompletedEvent ends an execution successfully.
type OrchestrationCompletedEvent struct{ Output string }

// EventType implements EventKind.
func (OrchestrationCompletedEvent) EventType() string { return "OrchestrationCompleted" }

func (k OrchestrationCompletedEvent) writeFields(w *jsonWriter) { w.str("output", k.Output) }

func (OrchestrationCompletedEvent) readFields(f *fields) EventKind {
	return OrchestrationCompletedEvent{Output: f.str("output")}
}

// OrchestrationFailedEvent ends an execution with an error.
type OrchestrationFailedEvent struct{ Details ErrorDetails }

// EventType implements EventKind.
func (OrchestrationFailedEvent) EventType() string { return "OrchestrationFailed" }

func (k OrchestrationFailedEvent) writeFields(w *jsonWriter) {
	w.key("details")
	k.Details.write(w)
}

func (OrchestrationFailedEvent) readFields(f *fields) EventKind {
	return OrchestrationFailedEvent{Details: f.details("details")}
}

// ActivityScheduledEvent records that an activity was scheduled; its event id is the ID
// of the matching ActivityExecute work item.
type ActivityScheduledEvent struct {
	Name      string
	Input     string
	SessionID *string // nil = no session (key omitted)
	Tag       *string // nil = default queue (key omitted)
}

// EventType implements EventKind.
func (ActivityScheduledEvent) EventType() string { return "ActivityScheduled" }

func (k ActivityScheduledEvent) writeFields(w *jsonWriter) {
	w.str("name", k.Name)
	w.str("input", k.Input)
	w.omittableStr("session_id", k.SessionID)
	w.omittableStr("tag", k.Tag)
}

func (ActivityScheduledEvent) readFields(f *fields) EventKind {
	return ActivityScheduledEvent{
		Name:      f.str("name"),
		Input:     f.str("input"),
		SessionID: f.optStr("session_id"),
		Tag:       f.optStr("tag"),
	}
}

// ActivityCompletedEvent records an activity result.
type ActivityCompletedEvent struct{ Result string }

// EventType implements EventKind.
func (ActivityCompletedEvent) EventType() string { return "ActivityCompleted" }

func (k ActivityCompletedEvent) writeFields(w *jsonWriter) { w.str("result", k.Result) }

func (ActivityCompletedEvent) readFields(f *fields) EventKind {
	return ActivityCompletedEvent{Result: f.str("result")}
}

// ActivityFailedEvent records an activity failure.
type ActivityFailedEvent struct{ Details ErrorDetails }

// EventType implements EventKind.
func (ActivityFailedEvent) EventType() string { return "ActivityFailed" }

func (k ActivityFailedEvent) writeFields(w *jsonWriter) {
	w.key("details")
	k.Details.write(w)
}

func (ActivityFailedEvent) readFields(f *fields) EventKind {
	return ActivityFailedEvent{Details: f.details("details")}
}

// ActivityCancelRequestedEvent records that the orchestration dropped an activity.
type ActivityCancelRequestedEvent struct{ Reason string }

// EventType implements EventKind.
func (ActivityCancelRequestedEvent) EventType() string { return "ActivityCancelRequested" }

func (k ActivityCancelRequestedEvent) writeFields(w *jsonWriter) { w.str("reason", k.Reason) }

func (ActivityCancelRequestedEvent) readFields(f *fields) EventKind {
	return ActivityCancelRequestedEvent{Reason: f.str("reason")}
}

// TimerCreatedEvent records a durable timer.
type TimerCreatedEvent struct{ FireAtMs uint64 }

// EventType implements EventKind.
func (TimerCreatedEvent) EventType() string { return "TimerCreated" }

func (k TimerCreatedEvent) writeFields(w *jsonWriter) { w.u64("fire_at_ms", k.FireAtMs) }

func (TimerCreatedEvent) readFields(f *fields) EventKind {
	return TimerCreatedEvent{FireAtMs: f.u64("fire_at_ms")}
}

// TimerFiredEvent records that a timer fired.
type TimerFiredEvent struct{ FireAtMs uint64 }

// EventType implements EventKind.
func (TimerFiredEvent) EventType() string { return "TimerFired" }

func (k TimerFiredEvent) writeFields(w *jsonWriter) { w.u64("fire_at_ms", k.FireAtMs) }

func (TimerFiredEvent) readFields(f *fields) EventKind {
	return TimerFiredEvent{FireAtMs: f.u64("fire_at_ms")}
}

// ExternalSubscribedEvent records a wait for an external event.
type ExternalSubscribedEvent struct{ Name string }

// EventType implements EventKind.
func (ExternalSubscribedEvent) EventType() string { return "ExternalSubscribed" }

func (k ExternalSubscribedEvent) writeFields(w *jsonWriter) { w.str("name", k.Name) }

func (ExternalSubscribedEvent) readFields(f *fields) EventKind {
	return ExternalSubscribedEvent{Name: f.str("name")}
}

// ExternalEventEvent records a delivered external event.
type ExternalEventEvent struct{ Name, Data string }

// EventType implements EventKind.
func (ExternalEventEvent) EventType() string { return "ExternalEvent" }

func (k ExternalEventEvent) writeFields(w *jsonWriter) {
	w.str("name", k.Name)
	w.str("data", k.Data)
}

func (ExternalEventEvent) readFields(f *fields) EventKind {
	return ExternalEventEvent{Name: f.str("name"), Data: f.str("data")}
}

// OrchestrationChainedEvent records a fire-and-forget orchestration start.
type OrchestrationChainedEvent struct{ Name, Instance, Input string }

// EventType implements EventKind.
func (OrchestrationChainedEvent) EventType() string { return "OrchestrationChained" }

func (k OrchestrationChainedEvent) writeFields(w *jsonWriter) {
	w.str("name", k.Name)
	w.str("instance", k.Instance)
	w.str("input", k.Input)
}

func (OrchestrationChainedEvent) readFields(f *fields) EventKind {
	return OrchestrationChainedEvent{Name: f.str("name"), Instance: f.str("instance"), Input: f.str("input")}
}

// SubOrchestrationScheduledEvent records a child orchestration start; its event id is the
// ParentID the child's completion reports.
type SubOrchestrationScheduledEvent struct{ Name, Instance, Input string }

// EventType implements EventKind.
func (SubOrchestrationScheduledEvent) EventType() string { return "SubOrchestrationScheduled" }

func (k SubOrchestrationScheduledEvent) writeFields(w *jsonWriter) {
	w.str("name", k.Name)
	w.str("instance", k.Instance)
	w.str("input", k.Input)
}

func (SubOrchestrationScheduledEvent) readFields(f *fields) EventKind {
	return SubOrchestrationScheduledEvent{Name: f.str("name"), Instance: f.str("instance"), Input: f.str("input")}
}

// SubOrchestrationCompletedEvent records a child's result.
type SubOrchestrationCompletedEvent struct{ Result string }

// EventType implements EventKind.
func (SubOrchestrationCompletedEvent) EventType() string { return "SubOrchestrationCompleted" }

func (k SubOrchestrationCompletedEvent) writeFields(w *jsonWriter) { w.str("result", k.Result) }

func (SubOrchestrationCompletedEvent) readFields(f *fields) EventKind {
	return SubOrchestrationCompletedEvent{Result: f.str("result")}
}

// SubOrchestrationFailedEvent records a child's failure.
type SubOrchestrationFailedEvent struct{ Details ErrorDetails }

// EventType implements EventKind.
func (SubOrchestrationFailedEvent) EventType() string { return "SubOrchestrationFailed" }

func (k SubOrchestrationFailedEvent) writeFields(w *jsonWriter) {
	w.key("details")
	k.Details.write(w)
}

func (SubOrchestrationFailedEvent) readFields(f *fields) EventKind {
	return SubOrchestrationFailedEvent{Details: f.details("details")}
}

// SubOrchestrationCancelRequestedEvent records that the parent dropped a child.
type SubOrchestrationCancelRequestedEvent struct{ Reason string }

// EventType implements EventKind.
func (SubOrchestrationCancelRequestedEvent) EventType() string {
	return "SubOrchestrationCancelRequested"
}

func (k SubOrchestrationCancelRequestedEvent) writeFields(w *jsonWriter) { w.str("reason", k.Reason) }

func (SubOrchestrationCancelRequestedEvent) readFields(f *fields) EventKind {
	return SubOrchestrationCancelRequestedEvent{Reason: f.str("reason")}
}

// OrchestrationContinuedAsNewEvent ends an execution that continues as a new one.
type OrchestrationContinuedAsNewEvent struct{ Input string }

// EventType implements EventKind.
func (OrchestrationContinuedAsNewEvent) EventType() string { return "OrchestrationContinuedAsNew" }

func (k OrchestrationContinuedAsNewEvent) writeFields(w *jsonWriter) { w.str("input", k.Input) }

func (OrchestrationContinuedAsNewEvent) readFields(f *fields) EventKind {
	return OrchestrationContinuedAsNewEvent{Input: f.str("input")}
}

// OrchestrationCancelRequestedEvent records a CancelInstance request.
type OrchestrationCancelRequestedEvent struct{ Reason string }

// EventType implements EventKind.
func (OrchestrationCancelRequestedEvent) EventType() string { return "OrchestrationCancelRequested" }

func (k OrchestrationCancelRequestedEvent) writeFields(w *jsonWriter) { w.str("reason", k.Reason) }

func (OrchestrationCancelRequestedEvent) readFields(f *fields) EventKind {
	return OrchestrationCancelRequestedEvent{Reason: f.str("reason")}
}

// ExternalSubscribedCancelledEvent records that a wait for an external event was dropped.
type ExternalSubscribedCancelledEvent struct{ Reason string }

// EventType implements EventKind.
func (ExternalSubscribedCancelledEvent) EventType() string { return "ExternalSubscribedCancelled" }

func (k ExternalSubscribedCancelledEvent) writeFields(w *jsonWriter) { w.str("reason", k.Reason) }

func (ExternalSubscribedCancelledEvent) readFields(f *fields) EventKind {
	return ExternalSubscribedCancelledEvent{Reason: f.str("reason")}
}

// QueueSubscribedEvent (Rust QueueSubscribed) records a wait on a persistent queue. Its
// wire tag is "ExternalSubscribedPersistent", kept by duroxide for compatibility.
type QueueSubscribedEvent struct{ Name string }

// EventType implements EventKind.
func (QueueSubscribedEvent) EventType() string { return "ExternalSubscribedPersistent" }

func (k QueueSubscribedEvent) writeFields(w *jsonWriter) { w.str("name", k.Name) }

func (QueueSubscribedEvent) readFields(f *fields) EventKind {
	return QueueSubscribedEvent{Name: f.str("name")}
}

// QueueEventDeliveredEvent (Rust QueueEventDelivered) records a consumed QueueMessage.
// Its wire tag is "ExternalEventPersistent".
type QueueEventDeliveredEvent struct{ Name, Data string }

// EventType implements EventKind.
func (QueueEventDeliveredEvent) EventType() string { return "ExternalEventPersistent" }

func (k QueueEventDeliveredEvent) writeFields(w *jsonWriter) {
	w.str("name", k.Name)
	w.str("data", k.Data)
}

func (QueueEventDeliveredEvent) readFields(f *fields) EventKind {
	return QueueEventDeliveredEvent{Name: f.str("name"), Data: f.str("data")}
}

// QueueSubscriptionCancelledEvent (Rust QueueSubscriptionCancelled) records a dropped
// queue wait. Its wire tag is "ExternalSubscribedPersistentCancelled".
type QueueSubscriptionCancelledEvent struct{ Reason string }

// EventType implements EventKind.
func (QueueSubscriptionCancelledEvent) EventType() string {
	return "ExternalSubscribedPersistentCancelled"
}

func (k QueueSubscriptionCancelledEvent) writeFields(w *jsonWriter) { w.str("reason", k.Reason) }

func (QueueSubscriptionCancelledEvent) readFields(f *fields) EventKind {
	return QueueSubscriptionCancelledEvent{Reason: f.str("reason")}
}

// CustomStatusUpdatedEvent sets (Status non-nil) or clears (nil) the custom status. The
// last one in an ack's HistoryDelta is what the provider stores, bumping the version.
type CustomStatusUpdatedEvent struct{ Status *string }

// EventType implements EventKind.
func (CustomStatusUpdatedEvent) EventType() string { return "CustomStatusUpdated" }

func (k CustomStatusUpdatedEvent) writeFields(w *jsonWriter) { w.nullableStr("status", k.Status) }

func (CustomStatusUpdatedEvent) readFields(f *fields) EventKind {
	return CustomStatusUpdatedEvent{Status: f.optStr("status")}
}

// KeyValueSetEvent sets an instance-scoped KV entry (applied by the provider on ack).
type KeyValueSetEvent struct {
	Key, Value      string
	LastUpdatedAtMs uint64 // missing on the wire reads as 0 (older writers)
}

// EventType implements EventKind.
func (KeyValueSetEvent) EventType() string { return "KeyValueSet" }

func (k KeyValueSetEvent) writeFields(w *jsonWriter) {
	w.str("key", k.Key)
	w.str("value", k.Value)
	w.u64("last_updated_at_ms", k.LastUpdatedAtMs)
}

func (KeyValueSetEvent) readFields(f *fields) EventKind {
	return KeyValueSetEvent{
		Key:             f.str("key"),
		Value:           f.str("value"),
		LastUpdatedAtMs: defaulted(f, "last_updated_at_ms", asU64),
	}
}

// KeyValueClearedEvent removes one KV entry.
type KeyValueClearedEvent struct{ Key string }

// EventType implements EventKind.
func (KeyValueClearedEvent) EventType() string { return "KeyValueCleared" }

func (k KeyValueClearedEvent) writeFields(w *jsonWriter) { w.str("key", k.Key) }

func (KeyValueClearedEvent) readFields(f *fields) EventKind {
	return KeyValueClearedEvent{Key: f.str("key")}
}

// KeyValuesClearedEvent removes every KV entry of the instance.
type KeyValuesClearedEvent struct{}

// EventType implements EventKind.
func (KeyValuesClearedEvent) EventType() string { return "KeyValuesCleared" }

func (KeyValuesClearedEvent) writeFields(*jsonWriter) {}

func (KeyValuesClearedEvent) readFields(*fields) EventKind { return KeyValuesClearedEvent{} }
