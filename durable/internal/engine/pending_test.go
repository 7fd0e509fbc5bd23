package engine

import (
	"slices"
	"testing"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

func TestWaitingExternalEventsFollowsThePositionalRule(t *testing.T) {
	t.Parallel()
	src := func(id uint64) *uint64 { return &id }
	h := []duroxide.Event{
		duroxide.NewEvent(1, "i", 1, nil, duroxide.OrchestrationStartedEvent{Name: "O", Version: "1.0.0"}),
		// Raised before any subscription: kept for audit, answers nobody.
		duroxide.NewEvent(2, "i", 1, nil, duroxide.ExternalEventEvent{Name: "A", Data: "early"}),
		duroxide.NewEvent(3, "i", 1, nil, duroxide.ExternalSubscribedEvent{Name: "A"}),
		duroxide.NewEvent(4, "i", 1, nil, duroxide.ExternalSubscribedEvent{Name: "A"}),
		duroxide.NewEvent(5, "i", 1, nil, duroxide.ExternalSubscribedEvent{Name: "B"}),
		duroxide.NewEvent(6, "i", 1, nil, duroxide.ExternalSubscribedEvent{Name: "C"}),
		duroxide.NewEvent(7, "i", 1, nil, duroxide.ExternalEventEvent{Name: "A", Data: "1"}),
		duroxide.NewEvent(8, "i", 1, src(6), duroxide.ExternalSubscribedCancelledEvent{Reason: "dropped"}),
	}
	// A is subscribed twice and answered once (the early event does not
	// count), B never answered, C cancelled.
	if got, want := WaitingExternalEvents(h), []string{"A", "B"}; !slices.Equal(got, want) {
		t.Fatalf("waiting %q, want %q", got, want)
	}
	if got := WaitingExternalEvents(h[:3]); !slices.Equal(got, []string{"A"}) {
		t.Fatalf("after the first subscription: waiting %q, want [A]", got)
	}
}

func TestUndeliveredExternalEventsAreThoseNoSubscriptionWaitedFor(t *testing.T) {
	t.Parallel()
	src := func(id uint64) *uint64 { return &id }
	h := []duroxide.Event{
		duroxide.NewEvent(1, "i", 1, nil, duroxide.OrchestrationStartedEvent{Name: "O", Version: "1.0.0"}),
		duroxide.NewEvent(2, "i", 1, nil, duroxide.ExternalEventEvent{Name: "A", Data: "early"}),
		duroxide.NewEvent(3, "i", 1, nil, duroxide.ExternalSubscribedEvent{Name: "A"}),
		duroxide.NewEvent(4, "i", 1, nil, duroxide.ExternalEventEvent{Name: "A", Data: "1"}),
		// A second A with the only subscription answered: dropped too.
		duroxide.NewEvent(5, "i", 1, nil, duroxide.ExternalEventEvent{Name: "A", Data: "2"}),
		duroxide.NewEvent(6, "i", 1, nil, duroxide.ExternalSubscribedEvent{Name: "B"}),
		duroxide.NewEvent(7, "i", 1, src(6), duroxide.ExternalSubscribedCancelledEvent{Reason: "dropped"}),
		// B's only subscription was cancelled before it came.
		duroxide.NewEvent(8, "i", 1, nil, duroxide.ExternalEventEvent{Name: "B", Data: "late"}),
		duroxide.NewEvent(9, "i", 1, nil, duroxide.ExternalSubscribedEvent{Name: "C"}),
		duroxide.NewEvent(10, "i", 1, nil, duroxide.ExternalEventEvent{Name: "C", Data: "ok"}),
	}
	if got, want := UndeliveredExternalEvents(h), []uint64{2, 5, 8}; !slices.Equal(got, want) {
		t.Fatalf("undelivered %v, want %v", got, want)
	}
	if got := UndeliveredExternalEvents(nil); got != nil {
		t.Fatalf("an empty history: %v", got)
	}
}

func TestWaitingSubscriptionsNameTheWaitsByEventID(t *testing.T) {
	t.Parallel()
	h := []duroxide.Event{
		duroxide.NewEvent(1, "i", 1, nil, duroxide.OrchestrationStartedEvent{Name: "O", Version: "1.0.0"}),
		duroxide.NewEvent(2, "i", 1, nil, duroxide.ExternalSubscribedEvent{Name: "A"}),
		duroxide.NewEvent(3, "i", 1, nil, duroxide.QueueSubscribedEvent{Name: "jobs"}),
		duroxide.NewEvent(4, "i", 1, nil, duroxide.ExternalSubscribedEvent{Name: "A"}),
		duroxide.NewEvent(5, "i", 1, nil, duroxide.ExternalEventEvent{Name: "A", Data: "1"}),
		duroxide.NewEvent(6, "i", 1, nil, duroxide.QueueSubscribedEvent{Name: "jobs"}),
		duroxide.NewEvent(7, "i", 1, nil, duroxide.QueueEventDeliveredEvent{Name: "jobs", Data: "j"}),
	}
	// the first A and the first jobs wait are answered: the second of each waits
	want := []Subscription{{EventID: 4, Name: "A"}, {EventID: 6, Name: "jobs", Queue: true}}
	if got := WaitingSubscriptions(h); !slices.Equal(got, want) {
		t.Fatalf("waiting %+v, want %+v", got, want)
	}
	if got := WaitingSubscriptions(h[:1]); got != nil {
		t.Fatalf("no subscription: %+v", got)
	}
}
