package durabletest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable/internal/engine"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// WaitForEventSubscription waits until instance's orchestration waits for
// the external event name: its current execution's stored history holds a
// subscription to name that no event has answered yet (a committed turn
// ended with the code blocked on it). An event raised before that is kept
// in history for audit only and never delivered, as in duroxide, so a test
// raises an event after this returns:
//
//	env.WaitForEventSubscription(t, "order-1", "Approved")
//	_ = env.Client.RaiseEvent(ctx, "order-1", "Approved", `true`)
//
// It fails the test if the instance does not subscribe within
// DefaultWaitTimeout. It skips time as Wait does, up to the subscription:
// once the subscription is stored the clock holds still, so a deadline
// timer raced against the event does not fire before the test raises it.
func (e *Env) WaitForEventSubscription(t testing.TB, instance, name string) {
	t.Helper()
	e.waitHistory(t, instance, "a subscription to event "+name, func(h []duroxide.Event) bool {
		return slices.Contains(engine.WaitingExternalEvents(h), name)
	})
}

// WaitForTimer waits until instance's current execution has a durable timer
// that has not fired (its TimerCreated is in the stored history: the turn
// that created it committed) and returns the earliest such timer's fire
// time, so a test can Advance past it. It fails the test if no timer is
// created within DefaultWaitTimeout. It skips time as Wait does (other
// timers, a child's sleep), but never past a pending timer of instance: the
// clock holds still once the timer it returns is stored.
func (e *Env) WaitForTimer(t testing.TB, instance string) time.Time {
	t.Helper()
	h := e.waitHistory(t, instance, "a pending timer", func(h []duroxide.Event) bool {
		_, ok := pendingTimer(h)
		return ok
	})
	at, _ := pendingTimer(h)
	return at
}

// pendingTimer returns the earliest fire time of a timer created and not
// fired in h.
func pendingTimer(h []duroxide.Event) (time.Time, bool) {
	created := map[uint64]uint64{} // TimerCreated id -> fire time (ms)
	for _, ev := range h {
		switch k := ev.Kind.(type) {
		case duroxide.TimerCreatedEvent:
			created[ev.EventID] = k.FireAtMs
		case duroxide.TimerFiredEvent:
			if ev.SourceEventID != nil {
				delete(created, *ev.SourceEventID)
			}
		}
	}
	var earliest uint64
	for _, at := range created {
		if earliest == 0 || at < earliest {
			earliest = at
		}
	}
	return time.UnixMilli(int64(earliest)), len(created) > 0
}

// waitHistory reads instance's stored history, with backoff, until done
// accepts it, and returns that history; it fails the test after
// DefaultWaitTimeout, naming what. It skips time as Wait does, except that
// no jump is made while done accepts the stored history: a jump could fire
// the very timer awaited, or a deadline the test means to beat.
func (e *Env) waitHistory(t testing.TB, instance, what string, done func([]duroxide.Event) bool) []duroxide.Event {
	t.Helper()
	var (
		h   []duroxide.Event
		err error
	)
	reached := func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), DefaultWaitTimeout)
		defer cancel()
		got, rerr := e.Provider.Read(ctx, instance)
		// A failed read holds the clock too: skipping blind could jump past
		// the state awaited.
		return rerr != nil || done(got)
	}
	ok := false
	e.waitSkippingUnless(reached, func() {
		ctx, cancel := context.WithTimeout(context.Background(), DefaultWaitTimeout)
		defer cancel()
		ok = poll(ctx, func() (bool, error) {
			h, err = e.Provider.Read(ctx, instance)
			return err == nil && done(h), err
		}) == nil
	})
	if !ok {
		t.Fatalf("durabletest: %s never had %s within %v (last read: %d events, error %v)", instance, what, DefaultWaitTimeout, len(h), err)
	}
	return h
}
