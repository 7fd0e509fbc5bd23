package engine

import (
	"strconv"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// actionKind mirrors duroxide's Action variants: what orchestration code
// asked for, before the engine gives it an event id.
type actionKind int

const (
	actCallActivity actionKind = iota
	actCreateTimer
	actWaitExternal
	actDequeueEvent
	actStartSubOrchestration
	actStartDetached
	actContinueAsNew
	actUpdateCustomStatus
	actSetKeyValue
	actClearKeyValue
	actClearKeyValues
)

// action is one recorded intent. Only the fields of its kind are set.
type action struct {
	kind        actionKind
	token       uint64
	eventID     uint64 // set when bound to a history event
	name        string
	input       string
	sessionID   *string
	tag         *string
	limitKey    *string // the activity's limit key (FlowController): in its work item, never in history
	fireAtMs    uint64
	instance    string // sub-orchestration / detached instance
	autoID      bool   // sub-orchestration instance is automatic (autoChildID)
	version     *string
	status      *string
	key, value  string
	updatedAtMs uint64
}

// subOrchAutoPrefix starts an automatically named sub-orchestration; the
// child's full id is "{parent}::sub::{event id}" (duroxide's naming), with
// ".exec{n}" after it from the parent's second execution on (autoChildID).
const subOrchAutoPrefix = "sub::"

// autoChildID names the child an execution schedules at event id without an
// explicit id. The first execution keeps duroxide's "sub::{event id}", so
// its histories stay equal to duroxide's. A later execution adds its own
// number ("sub::{event id}.exec{n}"): it usually runs the same code path as
// the first, schedules at the same event ids, and under duroxide's name its
// child would be the first execution's, long finished, whose start is
// dropped, so the parent would wait forever (duroxide 0.1.26 does). Replay
// takes a child's id from history, so executions scheduled under the old
// naming replay unchanged.
func autoChildID(execution, eventID uint64) string {
	if execution <= duroxide.InitialExecutionID {
		return subOrchAutoPrefix + strconv.FormatUint(eventID, 10)
	}
	return subOrchAutoPrefix + strconv.FormatUint(eventID, 10) + ".exec" + strconv.FormatUint(execution, 10)
}

// childInstanceID is the instance a sub-orchestration runs as: auto ids get
// the parent as prefix, explicit ids are used as given.
func childInstanceID(parent, child string) string {
	if len(child) >= len(subOrchAutoPrefix) && child[:len(subOrchAutoPrefix)] == subOrchAutoPrefix {
		return parent + "::" + child
	}
	return child
}

// toEvent is the history event an action records (nil for ContinueAsNew,
// which records OrchestrationContinuedAsNew only when the turn ends).
func (a *action) toEvent() duroxide.EventKind {
	switch a.kind {
	case actCallActivity:
		return duroxide.ActivityScheduledEvent{Name: a.name, Input: a.input, SessionID: a.sessionID, Tag: a.tag}
	case actCreateTimer:
		return duroxide.TimerCreatedEvent{FireAtMs: a.fireAtMs}
	case actWaitExternal:
		return duroxide.ExternalSubscribedEvent{Name: a.name}
	case actDequeueEvent:
		return duroxide.QueueSubscribedEvent{Name: a.name}
	case actStartSubOrchestration:
		return duroxide.SubOrchestrationScheduledEvent{Name: a.name, Instance: a.instance, Input: a.input}
	case actStartDetached:
		return duroxide.OrchestrationChainedEvent{Name: a.name, Instance: a.instance, Input: a.input}
	case actUpdateCustomStatus:
		return duroxide.CustomStatusUpdatedEvent{Status: a.status}
	case actSetKeyValue:
		return duroxide.KeyValueSetEvent{Key: a.key, Value: a.value, LastUpdatedAtMs: a.updatedAtMs}
	case actClearKeyValue:
		return duroxide.KeyValueClearedEvent{Key: a.key}
	case actClearKeyValues:
		return duroxide.KeyValuesClearedEvent{}
	}
	return nil
}

// matches reports whether a replayed history event is the one this action
// would record; it compares what duroxide compares (timers by position only,
// sub-orchestrations without their instance id, custom status by kind only).
func (a *action) matches(k duroxide.EventKind) bool {
	switch e := k.(type) {
	case duroxide.ActivityScheduledEvent:
		return a.kind == actCallActivity && a.name == e.Name && a.input == e.Input &&
			eqOpt(a.sessionID, e.SessionID) && eqOpt(a.tag, e.Tag)
	case duroxide.TimerCreatedEvent:
		return a.kind == actCreateTimer
	case duroxide.ExternalSubscribedEvent:
		return a.kind == actWaitExternal && a.name == e.Name
	case duroxide.QueueSubscribedEvent:
		return a.kind == actDequeueEvent && a.name == e.Name
	case duroxide.SubOrchestrationScheduledEvent:
		return a.kind == actStartSubOrchestration && a.name == e.Name && a.input == e.Input
	case duroxide.OrchestrationChainedEvent:
		return a.kind == actStartDetached && a.name == e.Name && a.instance == e.Instance && a.input == e.Input
	case duroxide.CustomStatusUpdatedEvent:
		return a.kind == actUpdateCustomStatus
	case duroxide.KeyValueSetEvent:
		return a.kind == actSetKeyValue && a.key == e.Key && a.value == e.Value
	case duroxide.KeyValueClearedEvent:
		return a.kind == actClearKeyValue && a.key == e.Key
	case duroxide.KeyValuesClearedEvent:
		return a.kind == actClearKeyValues
	}
	return false
}

func eqOpt(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// describe renders an action as the event it records, for the replayer's
// Divergence.
func (a *action) describe() string {
	if k := a.toEvent(); k != nil {
		return Describe(k)
	}
	return "ContinueAsNew"
}
