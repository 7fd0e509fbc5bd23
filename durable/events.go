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

// Subscription is a wait of an execution for an external event
// (WaitForEvent) or, with Queue set, a queue message (Dequeue) that
// nothing has answered yet.
type Subscription = engine.Subscription

// WaitingSubscriptions returns the subscriptions of one execution's history
// still waiting, in event id order, by the rules a turn applies (an
// external event is matched to the waits of its name in subscription
// order; a cancelled wait waits for nothing).
func WaitingSubscriptions(history []duroxide.Event) []Subscription {
	return engine.WaitingSubscriptions(history)
}
