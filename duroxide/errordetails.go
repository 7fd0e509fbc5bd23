package duroxide

import "fmt"

// ErrorDetails is duroxide's structured failure, carried by ActivityFailed / SubOrchFailed
// work items and OrchestrationFailed / ActivityFailed / SubOrchestrationFailed events.
//
// It is a serde externally tagged enum, so exactly one field must be non-nil: encoding a
// value with none or several set is an error (there is no JSON for it), and decoding always
// yields exactly one. Providers store it as opaque data; the runtime interprets it.
type ErrorDetails struct {
	// Infrastructure: storage or runtime plumbing failed, not user code.
	Infrastructure *InfrastructureError
	// Configuration: the deployment is inconsistent with the history (nondeterminism).
	Configuration *ConfigurationError
	// Application: user code failed, panicked or was cancelled.
	Application *ApplicationError
	// Poison: a message exceeded the maximum number of delivery attempts.
	Poison *PoisonError
}

// InfrastructureError mirrors ErrorDetails::Infrastructure.
type InfrastructureError struct {
	Operation string
	Message   string
	Retryable bool
}

// ConfigurationError mirrors ErrorDetails::Configuration.
type ConfigurationError struct {
	Kind     ConfigErrorKind
	Resource string // may be empty: duroxide does not always know the resource
	Message  *string
}

// ConfigErrorKind mirrors duroxide's ConfigErrorKind (unit variants only, so a string).
type ConfigErrorKind string

// ConfigErrorNondeterminism is the only ConfigErrorKind duroxide defines.
const ConfigErrorNondeterminism ConfigErrorKind = "Nondeterminism"

// ApplicationError mirrors ErrorDetails::Application.
type ApplicationError struct {
	Kind      AppErrorKind
	Message   string
	Retryable bool
}

// AppErrorKind mirrors duroxide's AppErrorKind: the unit variants ActivityFailed,
// OrchestrationFailed and Panicked, and the struct variant Cancelled{reason}. Reason
// belongs to Cancelled only; setting it on another variant is an encoding error, because
// serde could not carry it and it would be lost silently.
type AppErrorKind struct {
	Variant AppErrorVariant
	Reason  string
}

// AppErrorVariant names an AppErrorKind variant; the value is the serde name.
type AppErrorVariant string

// The AppErrorKind variants.
const (
	AppErrorActivityFailed      AppErrorVariant = "ActivityFailed"
	AppErrorOrchestrationFailed AppErrorVariant = "OrchestrationFailed"
	AppErrorPanicked            AppErrorVariant = "Panicked"
	AppErrorCancelled           AppErrorVariant = "Cancelled"
)

// PoisonError mirrors ErrorDetails::Poison. Counts are u32 in duroxide; AttemptCount is
// the provider-reported attempt count that exceeded MaxAttempts.
type PoisonError struct {
	AttemptCount uint32
	MaxAttempts  uint32
	MessageType  PoisonMessageType
	Message      string // the poisoned message, serialized as duroxide JSON text
}

// PoisonMessageType mirrors duroxide's PoisonMessageType enum: exactly one field is set.
type PoisonMessageType struct {
	Orchestration         *PoisonOrchestration
	Activity              *PoisonActivity
	FailedDeserialization *PoisonFailedDeserialization
}

// PoisonOrchestration: an orchestration batch kept failing.
type PoisonOrchestration struct {
	Instance    string
	ExecutionID uint64
}

// PoisonActivity: an activity execution kept failing.
type PoisonActivity struct {
	Instance     string
	ExecutionID  uint64
	ActivityName string
	ActivityID   uint64
}

// PoisonFailedDeserialization: the provider could not decode the history
// (OrchestrationItem.HistoryError) for more than the allowed attempts.
type PoisonFailedDeserialization struct {
	Instance    string
	ExecutionID uint64
	Error       string
}

// ApplicationFailure is the ErrorDetails a failed activity usually carries: a
// non-retryable Application error of kind ActivityFailed.
func ApplicationFailure(message string) ErrorDetails {
	return ErrorDetails{Application: &ApplicationError{
		Kind:    AppErrorKind{Variant: AppErrorActivityFailed},
		Message: message,
	}}
}

// ---------------------------------------------------------------------------------------
// ErrorDetails codec

// MarshalJSON writes duroxide's serde_json form, e.g. {"Application":{...}}.
func (d ErrorDetails) MarshalJSON() ([]byte, error) {
	return marshalWithContext("ErrorDetails", d.write)
}

// UnmarshalJSON reads duroxide's serde_json form strictly; on error d is unchanged.
func (d *ErrorDetails) UnmarshalJSON(data []byte) error {
	return unmarshalInto(data, "ErrorDetails", decodeErrorDetails, d)
}

func (d ErrorDetails) write(w *jsonWriter) {
	var set []structVariant
	if d.Infrastructure != nil {
		set = append(set, *d.Infrastructure)
	}
	if d.Configuration != nil {
		set = append(set, *d.Configuration)
	}
	if d.Application != nil {
		set = append(set, *d.Application)
	}
	if d.Poison != nil {
		set = append(set, *d.Poison)
	}
	w.oneOf("ErrorDetails", set)
}

// errorDetailsVariant is implemented by the payload structs of ErrorDetails.
type errorDetailsVariant interface {
	structVariant
	readFields(f *fields) ErrorDetails
}

var errorDetailsReaders = variantReaders(errorDetailsVariant.variant, errorDetailsVariant.readFields,
	[]errorDetailsVariant{InfrastructureError{}, ConfigurationError{}, ApplicationError{}, PoisonError{}})

func decodeErrorDetails(path string, v jsonValue) (ErrorDetails, error) {
	return decodeTagged(path, v, errorDetailsReaders)
}

func (InfrastructureError) variant() string { return "Infrastructure" }

func (e InfrastructureError) writeFields(w *jsonWriter) {
	w.str("operation", e.Operation)
	w.str("message", e.Message)
	w.boolean("retryable", e.Retryable)
}

func (InfrastructureError) readFields(f *fields) ErrorDetails {
	return ErrorDetails{Infrastructure: &InfrastructureError{
		Operation: f.str("operation"),
		Message:   f.str("message"),
		Retryable: f.boolean("retryable"),
	}}
}

func (ConfigurationError) variant() string { return "Configuration" }

func (e ConfigurationError) writeFields(w *jsonWriter) {
	w.key("kind")
	e.Kind.write(w)
	w.str("resource", e.Resource)
	w.nullableStr("message", e.Message)
}

func (ConfigurationError) readFields(f *fields) ErrorDetails {
	return ErrorDetails{Configuration: &ConfigurationError{
		Kind:     required(f, "kind", decodeConfigErrorKind),
		Resource: f.str("resource"),
		Message:  f.optStr("message"),
	}}
}

func (ApplicationError) variant() string { return "Application" }

func (e ApplicationError) writeFields(w *jsonWriter) {
	w.key("kind")
	e.Kind.write(w)
	w.str("message", e.Message)
	w.boolean("retryable", e.Retryable)
}

func (ApplicationError) readFields(f *fields) ErrorDetails {
	return ErrorDetails{Application: &ApplicationError{
		Kind:      required(f, "kind", decodeAppErrorKind),
		Message:   f.str("message"),
		Retryable: f.boolean("retryable"),
	}}
}

func (PoisonError) variant() string { return "Poison" }

func (e PoisonError) writeFields(w *jsonWriter) {
	w.u64("attempt_count", uint64(e.AttemptCount))
	w.u64("max_attempts", uint64(e.MaxAttempts))
	w.key("message_type")
	e.MessageType.write(w)
	w.str("message", e.Message)
}

func (PoisonError) readFields(f *fields) ErrorDetails {
	return ErrorDetails{Poison: &PoisonError{
		AttemptCount: f.u32("attempt_count"),
		MaxAttempts:  f.u32("max_attempts"),
		MessageType:  required(f, "message_type", decodePoisonMessageType),
		Message:      f.str("message"),
	}}
}

// ---------------------------------------------------------------------------------------
// ConfigErrorKind / AppErrorKind codec (enums with unit variants)

// MarshalJSON writes the bare variant name, as serde does for unit variants.
func (k ConfigErrorKind) MarshalJSON() ([]byte, error) {
	return marshalWithContext("ConfigErrorKind", k.write)
}

// UnmarshalJSON accepts "Nondeterminism" (and serde_json's {"Nondeterminism":null}).
func (k *ConfigErrorKind) UnmarshalJSON(data []byte) error {
	return unmarshalInto(data, "ConfigErrorKind", decodeConfigErrorKind, k)
}

func (k ConfigErrorKind) write(w *jsonWriter) {
	if k != ConfigErrorNondeterminism {
		w.fail("ConfigErrorKind: unknown variant %q", string(k))
		return
	}
	w.string(string(k))
}

func decodeConfigErrorKind(path string, v jsonValue) (ConfigErrorKind, error) {
	t, err := externalTag(path, v)
	if err != nil {
		return "", err
	}
	if ConfigErrorKind(t.name) != ConfigErrorNondeterminism {
		return "", decodeErrorf(path, "unknown variant %q", truncate(t.name))
	}
	if err := t.unit(path + "::" + t.name); err != nil {
		return "", err
	}
	return ConfigErrorNondeterminism, nil
}

// MarshalJSON writes "ActivityFailed" / "OrchestrationFailed" / "Panicked" or
// {"Cancelled":{"reason":...}}.
func (k AppErrorKind) MarshalJSON() ([]byte, error) {
	return marshalWithContext("AppErrorKind", k.write)
}

// UnmarshalJSON reads the serde form strictly; on error k is unchanged.
func (k *AppErrorKind) UnmarshalJSON(data []byte) error {
	return unmarshalInto(data, "AppErrorKind", decodeAppErrorKind, k)
}

func (k AppErrorKind) write(w *jsonWriter) {
	switch {
	case k.Variant == AppErrorCancelled:
		w.open()
		w.key(string(AppErrorCancelled))
		w.open()
		w.str("reason", k.Reason)
		w.close()
		w.close()
	case !k.Variant.isUnit():
		w.fail("AppErrorKind: unknown variant %q", string(k.Variant))
	case k.Reason != "":
		w.fail("AppErrorKind: reason is only valid for Cancelled, not %s", k.Variant)
	default:
		w.string(string(k.Variant))
	}
}

func (v AppErrorVariant) isUnit() bool {
	return v == AppErrorActivityFailed || v == AppErrorOrchestrationFailed || v == AppErrorPanicked
}

func decodeAppErrorKind(path string, v jsonValue) (AppErrorKind, error) {
	t, err := externalTag(path, v)
	if err != nil {
		return AppErrorKind{}, err
	}
	variant := AppErrorVariant(t.name)
	switch {
	case variant == AppErrorCancelled:
		f, err := t.fields(path + "::" + t.name)
		if err != nil {
			return AppErrorKind{}, err
		}
		kind := AppErrorKind{Variant: variant, Reason: f.str("reason")}
		return kind, f.err
	case variant.isUnit():
		return AppErrorKind{Variant: variant}, t.unit(path + "::" + t.name)
	default:
		return AppErrorKind{}, decodeErrorf(path, "unknown variant %q", truncate(t.name))
	}
}

// ---------------------------------------------------------------------------------------
// PoisonMessageType codec

// MarshalJSON writes duroxide's serde_json form, e.g. {"Activity":{...}}.
func (t PoisonMessageType) MarshalJSON() ([]byte, error) {
	return marshalWithContext("PoisonMessageType", t.write)
}

// UnmarshalJSON reads duroxide's serde_json form strictly; on error t is unchanged.
func (t *PoisonMessageType) UnmarshalJSON(data []byte) error {
	return unmarshalInto(data, "PoisonMessageType", decodePoisonMessageType, t)
}

func (t PoisonMessageType) write(w *jsonWriter) {
	var set []structVariant
	if t.Orchestration != nil {
		set = append(set, *t.Orchestration)
	}
	if t.Activity != nil {
		set = append(set, *t.Activity)
	}
	if t.FailedDeserialization != nil {
		set = append(set, *t.FailedDeserialization)
	}
	w.oneOf("PoisonMessageType", set)
}

type poisonVariant interface {
	structVariant
	readFields(f *fields) PoisonMessageType
}

var poisonReaders = variantReaders(poisonVariant.variant, poisonVariant.readFields,
	[]poisonVariant{PoisonOrchestration{}, PoisonActivity{}, PoisonFailedDeserialization{}})

func decodePoisonMessageType(path string, v jsonValue) (PoisonMessageType, error) {
	return decodeTagged(path, v, poisonReaders)
}

func (PoisonOrchestration) variant() string { return "Orchestration" }

func (p PoisonOrchestration) writeFields(w *jsonWriter) {
	w.str("instance", p.Instance)
	w.u64("execution_id", p.ExecutionID)
}

func (PoisonOrchestration) readFields(f *fields) PoisonMessageType {
	return PoisonMessageType{Orchestration: &PoisonOrchestration{
		Instance:    f.str("instance"),
		ExecutionID: f.u64("execution_id"),
	}}
}

func (PoisonActivity) variant() string { return "Activity" }

func (p PoisonActivity) writeFields(w *jsonWriter) {
	w.str("instance", p.Instance)
	w.u64("execution_id", p.ExecutionID)
	w.str("activity_name", p.ActivityName)
	w.u64("activity_id", p.ActivityID)
}

func (PoisonActivity) readFields(f *fields) PoisonMessageType {
	return PoisonMessageType{Activity: &PoisonActivity{
		Instance:     f.str("instance"),
		ExecutionID:  f.u64("execution_id"),
		ActivityName: f.str("activity_name"),
		ActivityID:   f.u64("activity_id"),
	}}
}

func (PoisonFailedDeserialization) variant() string { return "FailedDeserialization" }

func (p PoisonFailedDeserialization) writeFields(w *jsonWriter) {
	w.str("instance", p.Instance)
	w.u64("execution_id", p.ExecutionID)
	w.str("error", p.Error)
}

func (PoisonFailedDeserialization) readFields(f *fields) PoisonMessageType {
	return PoisonMessageType{FailedDeserialization: &PoisonFailedDeserialization{
		Instance:    f.str("instance"),
		ExecutionID: f.u64("execution_id"),
		Error:       f.str("error"),
	}}
}

// ---------------------------------------------------------------------------------------
// Shared entry points for the exported MarshalJSON / UnmarshalJSON methods

// marshalWithContext runs write and prefixes any error with the type being encoded.
func marshalWithContext(what string, write func(*jsonWriter)) ([]byte, error) {
	out, err := marshal(write)
	if err != nil {
		return nil, fmt.Errorf("duroxide: encode %s: %w", what, err)
	}
	return out, nil
}

// unmarshalInto parses data, decodes it with decode and stores the result in dst only on
// success, so a failed UnmarshalJSON never leaves a half-filled value behind.
func unmarshalInto[T any](data []byte, what string, decode converter[T], dst *T) error {
	root, err := parseJSON(what, data)
	if err != nil {
		return err
	}
	v, err := decode(what, root)
	if err != nil {
		return err
	}
	*dst = v
	return nil
}
