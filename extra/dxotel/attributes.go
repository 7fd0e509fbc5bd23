package dxotel

import (
	"context"
	"errors"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"go.opentelemetry.io/otel/attribute"
)

// Attribute keys. OpenTelemetry has no workflow conventions, so they live in
// a duroxide namespace; error.type is the semantic-convention key.
const (
	KeyOperation     = attribute.Key("duroxide.operation")
	KeyOutcome       = attribute.Key("duroxide.outcome")
	KeyInstance      = attribute.Key("duroxide.instance")
	KeyExecution     = attribute.Key("duroxide.execution")
	KeyOrchestration = attribute.Key("duroxide.orchestration.name")
	KeyActivityName  = attribute.Key("duroxide.activity.name")
	KeyActivityID    = attribute.Key("duroxide.activity.id")
	KeyAttempt       = attribute.Key("duroxide.attempt")
	KeyQueue         = attribute.Key("duroxide.queue")
	KeyStatus        = attribute.Key("duroxide.instance.status")
	KeyLockKind      = attribute.Key("duroxide.lock.kind")
	KeyPoisonKind    = attribute.Key("duroxide.poison.kind")
	KeyBatchSize     = attribute.Key("duroxide.batch.size")
	KeyErrorType     = attribute.Key("error.type")
	// KeyPartition is the partition of a namespace spread over several
	// (redisprovider.Provider) that a gauge's series counts.
	KeyPartition = attribute.Key("duroxide.partition")
)

// Outcomes of a provider call.
const (
	OutcomeOK    = "ok"
	OutcomeEmpty = "empty" // a fetch that found no work
	OutcomeError = "error"
)

// errorKinds maps the provider contract's error kinds to error.type values.
var errorKinds = []struct {
	kind error
	name string
}{
	{duroxide.ErrLockLost, "lock_lost"},
	{duroxide.ErrNotFound, "not_found"},
	{duroxide.ErrInvalidInput, "invalid_input"},
	{duroxide.ErrDuplicateEvent, "duplicate_event"},
	{duroxide.ErrUndecodable, "undecodable"},
	{duroxide.ErrConflict, "conflict"},
	{duroxide.ErrUnavailable, "unavailable"},
	{context.Canceled, "canceled"},
	{context.DeadlineExceeded, "timeout"},
}

// ErrorType classifies err for the error.type attribute: the duroxide error
// kind, "unavailable" for a retryable error without one, and "_OTHER" (the
// semantic conventions' fallback) for anything else.
func ErrorType(err error) string {
	for _, k := range errorKinds {
		if errors.Is(err, k.kind) {
			return k.name
		}
	}
	if duroxide.IsRetryable(err) {
		return "unavailable"
	}
	return "_OTHER"
}
