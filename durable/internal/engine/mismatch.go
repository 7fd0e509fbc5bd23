package engine

import (
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Nondeterminism messages are read by people deciding what broke after a
// deploy, so they say in words which history event the code parted from,
// what history holds there and what the code did instead. They keep
// duroxide's leading label ("schedule mismatch", "custom status mismatch",
// ...) because tools and tests match on it, but never print Go values with
// %v: events hold pointers, and a pointer prints as an address.

// mismatchMessage is the message for history event ev that the code's next
// action a does not record. The label is duroxide's for ev's kind when the
// code did the same sort of thing (a status or KV update against a status
// or KV event); when the code scheduled something else where history
// holds a status or KV update, the schedules differ, so it is "schedule".
func mismatchMessage(label string, ev duroxide.Event, a *action) string {
	if isOptionalKind(ev.Kind) && !a.isOptional() {
		label = "schedule"
	}
	msg := fmt.Sprintf("%s mismatch: event %d in history is %s, but the code %s", label, ev.EventID, EventWords(ev.Kind), a.words())
	if a.differsOnlyInLongInput(ev.Kind) {
		msg += "; the inputs differ"
	}
	return msg
}

// noActionMessage is the message for history event ev where the code
// emitted nothing more; prefix is duroxide's message for it.
func noActionMessage(prefix string, ev duroxide.Event) string {
	return fmt.Sprintf("%s: event %d in history is %s, but the code did nothing more there (it waits for something, or returned)",
		prefix, ev.EventID, EventWords(ev.Kind))
}

func isOptionalKind(k duroxide.EventKind) bool {
	switch k.(type) {
	case duroxide.CustomStatusUpdatedEvent, duroxide.KeyValueSetEvent,
		duroxide.KeyValueClearedEvent, duroxide.KeyValuesClearedEvent:
		return true
	}
	return false
}

func (a *action) isOptional() bool {
	switch a.kind {
	case actUpdateCustomStatus, actSetKeyValue, actClearKeyValue, actClearKeyValues:
		return true
	}
	return false
}

// EventWords renders a history event kind for people: its type and, in
// parentheses, what identifies it (names quoted, short inputs quoted, long
// ones by size, times in UTC). Kinds without a dedicated form fall back to
// Describe.
func EventWords(k duroxide.EventKind) string {
	t := k.EventType()
	switch e := k.(type) {
	case duroxide.ActivityScheduledEvent:
		return t + "(" + activityWords(e.Name, e.Input, e.SessionID, e.Tag) + ")"
	case duroxide.TimerCreatedEvent:
		return t + "(fires at " + msTime(e.FireAtMs) + ")"
	case duroxide.ExternalSubscribedEvent:
		return t + "(event " + strconv.Quote(e.Name) + ")"
	case duroxide.QueueSubscribedEvent:
		return t + "(queue " + strconv.Quote(e.Name) + ")"
	case duroxide.SubOrchestrationScheduledEvent:
		return t + "(orchestration " + strconv.Quote(e.Name) + ", instance " + strconv.Quote(e.Instance) + ", " + inputWords(e.Input) + ")"
	case duroxide.OrchestrationChainedEvent:
		return t + "(orchestration " + strconv.Quote(e.Name) + ", instance " + strconv.Quote(e.Instance) + ", " + inputWords(e.Input) + ")"
	case duroxide.CustomStatusUpdatedEvent:
		if e.Status == nil {
			return t + "(status cleared)"
		}
		return t + "(status " + valueWords(*e.Status) + ")"
	case duroxide.KeyValueSetEvent:
		return t + "(key " + strconv.Quote(e.Key) + ", value " + valueWords(e.Value) + ")"
	case duroxide.KeyValueClearedEvent:
		return t + "(key " + strconv.Quote(e.Key) + ")"
	case duroxide.KeyValuesClearedEvent:
		return t
	}
	return Describe(k)
}

// words says what the code did, as the end of "but the code ...".
func (a *action) words() string {
	switch a.kind {
	case actCallActivity:
		return "scheduled activity " + strconv.Quote(a.name) + " (" + activityArgs(a.input, a.sessionID, a.tag) + ")"
	case actCreateTimer:
		return "created a timer"
	case actWaitExternal:
		return "waited for event " + strconv.Quote(a.name)
	case actDequeueEvent:
		return "dequeued from queue " + strconv.Quote(a.name)
	case actStartSubOrchestration:
		if a.autoID {
			return "scheduled sub-orchestration " + strconv.Quote(a.name) + " (" + inputWords(a.input) + ")"
		}
		return "scheduled sub-orchestration " + strconv.Quote(a.name) + " (instance " + strconv.Quote(a.instance) + ", " + inputWords(a.input) + ")"
	case actStartDetached:
		return "started orchestration " + strconv.Quote(a.name) + " (instance " + strconv.Quote(a.instance) + ", " + inputWords(a.input) + ")"
	case actContinueAsNew:
		return "continued as new (" + inputWords(a.input) + ")"
	case actUpdateCustomStatus:
		if a.status == nil {
			return "cleared the custom status"
		}
		return "set custom status " + valueWords(*a.status)
	case actSetKeyValue:
		return "set key " + strconv.Quote(a.key) + " to value " + valueWords(a.value)
	case actClearKeyValue:
		return "cleared key " + strconv.Quote(a.key)
	case actClearKeyValues:
		return "cleared all keys"
	}
	return "did something this runtime does not know"
}

// differsOnlyInLongInput reports an action of k's kind and name whose input
// differs from k's while both are shown by size only, where the words of
// both sides alone might not show the difference.
func (a *action) differsOnlyInLongInput(k duroxide.EventKind) bool {
	var name, input string
	switch e := k.(type) {
	case duroxide.ActivityScheduledEvent:
		if a.kind != actCallActivity || !eqOpt(a.sessionID, e.SessionID) || !eqOpt(a.tag, e.Tag) {
			return false
		}
		name, input = e.Name, e.Input
	case duroxide.SubOrchestrationScheduledEvent:
		if a.kind != actStartSubOrchestration {
			return false
		}
		name, input = e.Name, e.Input
	case duroxide.OrchestrationChainedEvent:
		if a.kind != actStartDetached || a.instance != e.Instance {
			return false
		}
		name, input = e.Name, e.Input
	default:
		return false
	}
	return a.name == name && a.input != input && !shortText(a.input) && !shortText(input)
}

func activityWords(name, input string, session, tag *string) string {
	return "activity " + strconv.Quote(name) + ", " + activityArgs(input, session, tag)
}

func activityArgs(input string, session, tag *string) string {
	s := inputWords(input)
	if session != nil {
		s += ", session " + strconv.Quote(*session)
	}
	if tag != nil {
		s += ", tag " + strconv.Quote(*tag)
	}
	return s
}

// shortTextMax is the longest payload a message quotes; longer ones (and
// binary ones) are given by size, so a message stays one readable line and
// does not copy a large or sensitive payload into the failure.
const shortTextMax = 40

func shortText(s string) bool { return len(s) <= shortTextMax && utf8.ValidString(s) }

func inputWords(s string) string { return "input " + valueWords(s) }

func valueWords(s string) string {
	if shortText(s) {
		return strconv.Quote(s)
	}
	if len(s) == 1 {
		return "1 byte"
	}
	return strconv.Itoa(len(s)) + " bytes"
}

func msTime(ms uint64) string {
	return time.UnixMilli(int64(ms)).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}
