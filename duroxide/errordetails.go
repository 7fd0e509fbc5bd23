package duroxide

import (
	"reflect"
	"slices"
)

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
	Operation string `dx:"operation"`
	Message   string `dx:"message"`
	Retryable bool   `dx:"retryable"`
}

// ConfigurationError mirrors ErrorDetails::Configuration.
type ConfigurationError struct {
	Kind     ConfigErrorKind `dx:"kind"`
	Resource string          `dx:"resource"` // may be empty: duroxide does not always know the resource
	Message  *string         `dx:"message"`
}

// ConfigErrorKind mirrors duroxide's ConfigErrorKind (unit variants only, so a string).
type ConfigErrorKind string

// ConfigErrorNondeterminism is the only ConfigErrorKind duroxide defines.
const ConfigErrorNondeterminism ConfigErrorKind = "Nondeterminism"

// ApplicationError mirrors ErrorDetails::Application.
type ApplicationError struct {
	Kind      AppErrorKind `dx:"kind"`
	Message   string       `dx:"message"`
	Retryable bool         `dx:"retryable"`
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
	AttemptCount uint32            `dx:"attempt_count"`
	MaxAttempts  uint32            `dx:"max_attempts"`
	MessageType  PoisonMessageType `dx:"message_type"`
	Message      string            `dx:"message"` // the poisoned message, serialized as duroxide JSON text
}

// PoisonMessageType mirrors duroxide's PoisonMessageType enum: exactly one field is set.
type PoisonMessageType struct {
	Orchestration         *PoisonOrchestration
	Activity              *PoisonActivity
	FailedDeserialization *PoisonFailedDeserialization
}

// PoisonOrchestration: an orchestration batch kept failing.
type PoisonOrchestration struct {
	Instance    string `dx:"instance"`
	ExecutionID uint64 `dx:"execution_id"`
}

// PoisonActivity: an activity execution kept failing.
type PoisonActivity struct {
	Instance     string `dx:"instance"`
	ExecutionID  uint64 `dx:"execution_id"`
	ActivityName string `dx:"activity_name"`
	ActivityID   uint64 `dx:"activity_id"`
}

// PoisonFailedDeserialization: the provider could not decode the history
// (OrchestrationItem.HistoryError) for more than the allowed attempts.
type PoisonFailedDeserialization struct {
	Instance    string `dx:"instance"`
	ExecutionID uint64 `dx:"execution_id"`
	Error       string `dx:"error"`
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
// Codec: the unions are generic (see codec.go); the two kind enums mix unit and struct
// variants or are unit-only, so they write and read themselves.

// MarshalJSON writes duroxide's serde_json form, e.g. {"Application":{...}}.
func (d ErrorDetails) MarshalJSON() ([]byte, error) { return marshalValue(d) }

// UnmarshalJSON reads duroxide's serde_json form strictly; on error d is unchanged.
func (d *ErrorDetails) UnmarshalJSON(data []byte) error { return unmarshalValue(data, d) }

// MarshalJSON writes duroxide's serde_json form, e.g. {"Activity":{...}}.
func (t PoisonMessageType) MarshalJSON() ([]byte, error) { return marshalValue(t) }

// UnmarshalJSON reads duroxide's serde_json form strictly; on error t is unchanged.
func (t *PoisonMessageType) UnmarshalJSON(data []byte) error { return unmarshalValue(data, t) }

// MarshalJSON writes the bare variant name, as serde does for unit variants.
func (k ConfigErrorKind) MarshalJSON() ([]byte, error) { return marshalValue(k) }

// UnmarshalJSON accepts "Nondeterminism" (and serde_json's {"Nondeterminism":null}).
func (k *ConfigErrorKind) UnmarshalJSON(data []byte) error { return unmarshalValue(data, k) }

func (k ConfigErrorKind) writeJSON(w *jsonWriter) {
	writeUnit(w, "ConfigErrorKind", string(k), configErrorUnits)
}

func (k *ConfigErrorKind) readJSON(path string, j jsonValue) error {
	t, err := externalTag(path, j)
	if err == nil {
		err = t.unitOf(path, configErrorUnits)
		*k = ConfigErrorKind(t.name)
	}
	return err
}

var (
	configErrorUnits = []string{string(ConfigErrorNondeterminism)}
	appErrorUnits    = []string{string(AppErrorActivityFailed), string(AppErrorOrchestrationFailed), string(AppErrorPanicked)}
)

// MarshalJSON writes "ActivityFailed" / "OrchestrationFailed" / "Panicked" or
// {"Cancelled":{"reason":...}}.
func (k AppErrorKind) MarshalJSON() ([]byte, error) { return marshalValue(k) }

// UnmarshalJSON reads the serde form strictly; on error k is unchanged.
func (k *AppErrorKind) UnmarshalJSON(data []byte) error { return unmarshalValue(data, k) }

// cancelled is the payload of AppErrorKind::Cancelled.
type cancelled struct {
	Reason string `dx:"reason"`
}

func (k AppErrorKind) writeJSON(w *jsonWriter) {
	switch {
	case k.Variant == AppErrorCancelled:
		writeTagged(w, string(AppErrorCancelled), reflect.ValueOf(cancelled{Reason: k.Reason}))
	case k.Reason != "" && slices.Contains(appErrorUnits, string(k.Variant)):
		w.fail("AppErrorKind: reason is only valid for Cancelled, not %s", k.Variant)
	default:
		writeUnit(w, "AppErrorKind", string(k.Variant), appErrorUnits)
	}
}

func (k *AppErrorKind) readJSON(path string, j jsonValue) error {
	t, err := externalTag(path, j)
	switch {
	case err != nil:
	case t.name == string(AppErrorCancelled):
		var c cancelled
		err = t.readPayload(path+"::"+t.name, reflect.ValueOf(&c).Elem())
		*k = AppErrorKind{Variant: AppErrorCancelled, Reason: c.Reason}
	default:
		err = t.unitOf(path, appErrorUnits)
		*k = AppErrorKind{Variant: AppErrorVariant(t.name)}
	}
	return err
}
