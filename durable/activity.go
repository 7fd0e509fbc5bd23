package durable

import (
	"context"
	"log/slog"
	"sync"
)

// ActivityContext is the context.Context an activity runs with, plus what it
// may want to know about itself. The context is cancelled when the runtime
// learns the activity's result is no longer wanted: its orchestration
// cancelled it (a lost Select, a terminal orchestration) and the lock renewal
// or ack failed with duroxide.ErrLockLost, or the runtime shuts down.
type ActivityContext struct {
	context.Context
	instance     string
	execution    uint64
	describe     func() (name, version string)
	describeOnce sync.Once
	orchestName  string
	orchestVer   string
	activityName string
	activityID   uint64
	workerID     string
	sessionID    *string
	tag          *string
	logger       *slog.Logger
	client       *Client
}

// InstanceID is the orchestration instance that scheduled the activity.
func (a *ActivityContext) InstanceID() string { return a.instance }

// ExecutionID is that instance's execution.
func (a *ActivityContext) ExecutionID() uint64 { return a.execution }

// OrchestrationName is the scheduling orchestration's name ("unknown" when
// the provider cannot tell). It is looked up on first use, so activities
// that never ask cost nothing.
func (a *ActivityContext) OrchestrationName() string {
	a.lookup()
	return a.orchestName
}

// OrchestrationVersion is the scheduling orchestration's version ("unknown"
// when the provider cannot tell); looked up on first use.
func (a *ActivityContext) OrchestrationVersion() string {
	a.lookup()
	return a.orchestVer
}

func (a *ActivityContext) lookup() {
	a.describeOnce.Do(func() {
		a.orchestName, a.orchestVer = "unknown", "unknown"
		if a.describe != nil {
			a.orchestName, a.orchestVer = a.describe()
		}
	})
}

// ActivityName is the registered name being run.
func (a *ActivityContext) ActivityName() string { return a.activityName }

// ActivityID is the event id of the ActivityScheduled event.
func (a *ActivityContext) ActivityID() uint64 { return a.activityID }

// WorkerID names the worker goroutine running the activity.
func (a *ActivityContext) WorkerID() string { return a.workerID }

// SessionID is the activity's session, if it was scheduled WithSession.
func (a *ActivityContext) SessionID() (string, bool) { return optString(a.sessionID) }

// Tag is the activity's routing tag, if it was scheduled WithTag.
func (a *ActivityContext) Tag() (string, bool) { return optString(a.tag) }

// Logger returns a logger carrying the activity's identity.
func (a *ActivityContext) Logger() *slog.Logger { return a.logger }

// Client returns a client on the runtime's provider, for activities that
// start or signal other orchestrations.
func (a *ActivityContext) Client() *Client { return a.client }

func optString(p *string) (string, bool) {
	if p == nil {
		return "", false
	}
	return *p, true
}
