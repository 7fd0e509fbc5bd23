package engine

import (
	"fmt"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// DisplayMessage renders ErrorDetails the way duroxide's display_message
// does; it is the string stored as a failed execution's output and handed to
// orchestration code as a failed task's error.
func DisplayMessage(d duroxide.ErrorDetails) string {
	switch {
	case d.Infrastructure != nil:
		return fmt.Sprintf("infrastructure:%s: %s", d.Infrastructure.Operation, d.Infrastructure.Message)
	case d.Configuration != nil:
		c := d.Configuration
		if c.Message != nil {
			return "nondeterministic: " + *c.Message
		}
		return "nondeterministic in " + c.Resource
	case d.Application != nil:
		a := d.Application
		switch a.Kind.Variant {
		case duroxide.AppErrorCancelled:
			return "canceled: " + a.Kind.Reason
		case duroxide.AppErrorPanicked:
			return "orchestration panicked: " + a.Message
		}
		return a.Message
	case d.Poison != nil:
		return poisonMessage(d.Poison)
	}
	return ""
}

func poisonMessage(p *duroxide.PoisonError) string {
	t := p.MessageType
	switch {
	case t.Orchestration != nil:
		return fmt.Sprintf("poison: orchestration %s exceeded %d attempts (max %d)",
			t.Orchestration.Instance, p.AttemptCount, p.MaxAttempts)
	case t.Activity != nil:
		return fmt.Sprintf("poison: activity %s#%d exceeded %d attempts (max %d)",
			t.Activity.ActivityName, t.Activity.ActivityID, p.AttemptCount, p.MaxAttempts)
	case t.FailedDeserialization != nil:
		return fmt.Sprintf("poison: orchestration %s history deserialization failed after %d attempts (max %d): %s",
			t.FailedDeserialization.Instance, p.AttemptCount, p.MaxAttempts, t.FailedDeserialization.Error)
	}
	return "poison"
}

// isSystemError reports failures that abort a turn instead of flowing into
// orchestration code (everything but application errors).
func isSystemError(d duroxide.ErrorDetails) bool { return d.Application == nil }

func nondeterminism(msg string) duroxide.ErrorDetails {
	return duroxide.ErrorDetails{Configuration: &duroxide.ConfigurationError{
		Kind: duroxide.ConfigErrorNondeterminism, Message: &msg,
	}}
}

func appFailure(variant duroxide.AppErrorVariant, reason, message string) duroxide.ErrorDetails {
	return duroxide.ErrorDetails{Application: &duroxide.ApplicationError{
		Kind: duroxide.AppErrorKind{Variant: variant, Reason: reason}, Message: message,
	}}
}
