package engine

import (
	"fmt"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// apply feeds one history event to the replay (duroxide's
// apply_history_event): schedule events are matched against the actions the
// code emitted, in order; completions resolve the bound futures.
func (r *replayRun) apply(ev duroxide.Event) *duroxide.ErrorDetails {
	st := r.ctx.st
	switch k := ev.Kind.(type) {
	case duroxide.OrchestrationStartedEvent:
		if k.InitialCustomStatus != nil {
			v := *k.InitialCustomStatus
			st.customStatus = &v
		}
	case duroxide.CustomStatusUpdatedEvent, duroxide.KeyValueSetEvent,
		duroxide.KeyValueClearedEvent, duroxide.KeyValuesClearedEvent:
		return r.matchOptional(ev)
	case duroxide.ActivityScheduledEvent:
		_, d := r.matchSchedule(ev, kindActivity)
		return d
	case duroxide.TimerCreatedEvent:
		_, d := r.matchSchedule(ev, kindTimer)
		return d
	case duroxide.ExternalSubscribedEvent:
		_, d := r.matchSchedule(ev, kindExternal)
		if d == nil {
			st.observe(ev)
		}
		return d
	case duroxide.QueueSubscribedEvent:
		_, d := r.matchSchedule(ev, kindQueue)
		if d == nil {
			st.observe(ev)
			r.mustPoll = true
		}
		return d
	case duroxide.SubOrchestrationScheduledEvent:
		a, d := r.matchSchedule(ev, kindSubOrchestration)
		if d == nil {
			a.instance = k.Instance
			st.subOrchInstances[a.token] = k.Instance
		}
		return d
	case duroxide.OrchestrationChainedEvent:
		a, d := r.popMatching(ev, "history OrchestrationChained but no emitted action")
		if d == nil {
			st.bind(a.token, ev.EventID)
		}
		return d
	case duroxide.ActivityCompletedEvent:
		return r.complete(ev, kindActivity, completion{kind: kindActivity, value: k.Result}, true)
	case duroxide.ActivityFailedEvent:
		return r.complete(ev, kindActivity, completion{kind: kindActivity, err: failure(k.Details)}, false)
	case duroxide.TimerFiredEvent:
		return r.complete(ev, kindTimer, completion{kind: kindTimer}, false)
	case duroxide.SubOrchestrationCompletedEvent:
		return r.complete(ev, kindSubOrchestration, completion{kind: kindSubOrchestration, value: k.Result}, false)
	case duroxide.SubOrchestrationFailedEvent:
		return r.complete(ev, kindSubOrchestration, completion{kind: kindSubOrchestration, err: failure(k.Details)}, false)
	case duroxide.ExternalSubscribedCancelledEvent, duroxide.QueueSubscriptionCancelledEvent:
		st.observe(ev)
	case duroxide.ExternalEventEvent, duroxide.QueueEventDeliveredEvent:
		if st.observe(ev) {
			r.mustPoll = true
		}
	}
	return nil
}

// popMatching takes the oldest unmatched action and checks it records ev.
func (r *replayRun) popMatching(ev duroxide.Event, none string) (*action, *duroxide.ErrorDetails) {
	if len(r.queue) == 0 {
		d := nondeterminism(noActionMessage(none, ev))
		return nil, &d
	}
	a := r.queue[0]
	r.queue = r.queue[1:]
	r.compared = a
	if !a.matches(ev.Kind) {
		d := nondeterminism(mismatchMessage("schedule", ev, a))
		return nil, &d
	}
	return a, nil
}

// matchSchedule binds a schedule event to the action that produced it.
func (r *replayRun) matchSchedule(ev duroxide.Event, kind scheduleKind) (*action, *duroxide.ErrorDetails) {
	a, d := r.popMatching(ev, "history schedule but no emitted action")
	if d != nil {
		return nil, d
	}
	r.ctx.st.bind(a.token, ev.EventID)
	a.eventID = ev.EventID
	r.open[ev.EventID] = kind
	return a, nil
}

// matchOptional checks a custom-status or KV event against the next action,
// if the code emitted one (duroxide tolerates a missing one here).
func (r *replayRun) matchOptional(ev duroxide.Event) *duroxide.ErrorDetails {
	if len(r.queue) == 0 {
		return nil
	}
	a := r.queue[0]
	r.queue = r.queue[1:]
	r.compared = a
	if a.matches(ev.Kind) {
		r.keepRecordedKVTime(ev, a)
		return nil
	}
	d := nondeterminism(mismatchMessage(optionalLabel(ev.Kind), ev, a))
	return &d
}

// keepRecordedKVTime gives a key the time its KeyValueSet event recorded
// when the code's SetValue a, replayed, is still the key's last write: the
// replay stamped it with the clock of now, and PruneValuesUpdatedBefore
// must choose by the first run's times to choose the same keys again.
func (r *replayRun) keepRecordedKVTime(ev duroxide.Event, a *action) {
	k, ok := ev.Kind.(duroxide.KeyValueSetEvent)
	if !ok {
		return
	}
	st := r.ctx.st
	if _, live := st.kv[k.Key]; live && st.kvUpdated[k.Key] == a.updatedAtMs {
		st.kvUpdated[k.Key] = k.LastUpdatedAtMs
	}
}

func optionalLabel(k duroxide.EventKind) string {
	switch k.(type) {
	case duroxide.CustomStatusUpdatedEvent:
		return "custom status"
	case duroxide.KeyValueSetEvent:
		return "kv set"
	case duroxide.KeyValueClearedEvent:
		return "kv clear"
	}
	return "kv clear_all"
}

// complete resolves the future bound to ev's source event. checkKind is set
// for activity completions only, as in duroxide.
func (r *replayRun) complete(ev duroxide.Event, kind scheduleKind, c completion, checkKind bool) *duroxide.ErrorDetails {
	if ev.SourceEventID == nil {
		return nil
	}
	id := *ev.SourceEventID
	openKind, open := r.open[id]
	if !open {
		d := nondeterminism(fmt.Sprintf("completion without open schedule: event %d in history is %s for event %d, which has no open schedule (never scheduled, or already completed)",
			ev.EventID, ev.Kind.EventType(), id))
		return &d
	}
	if checkKind && openKind != kind {
		d := nondeterminism(fmt.Sprintf("completion kind mismatch: expected activity: event %d in history is %s for event %d, which is a %s",
			ev.EventID, ev.Kind.EventType(), id, kindLabel(openKind)))
		return &d
	}
	r.ctx.st.deliver(id, c)
	delete(r.open, id)
	r.mustPoll = true
	return nil
}
