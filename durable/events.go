package durable

import (
	"github.com/duroxide-go/duroxide-redis/durable/internal/engine"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// UndeliveredExternalEvents returns the event ids of the ExternalEvent
// events in one execution's history that arrived while no WaitForEvent
// subscription of their name was waiting. duroxide records such an event
// for audit and delivers it to no wait, not even a later one (use
// Client.EnqueueEvent and Dequeue for messages that must wait for the code).
// Tools that show histories use it to mark them; it applies the same
// positional matching rule the runtime applies when it replays.
func UndeliveredExternalEvents(history []duroxide.Event) []uint64 {
	return engine.UndeliveredExternalEvents(history)
}

// WaitingExternalEvents returns, in subscription order, the event names that
// one execution's history is waiting for: subscriptions with no event yet
// and not cancelled. A name waited for twice is listed twice. An event
// raised now for a name not listed is delivered only if the code subscribes
// before the runtime records the event.
func WaitingExternalEvents(history []duroxide.Event) []string {
	return engine.WaitingExternalEvents(history)
}
