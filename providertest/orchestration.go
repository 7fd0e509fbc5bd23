package providertest

import (
	"fmt"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The orchestrator queue, history and instance lifecycle: duroxide's provider
// docs's named validation tests (Atomicity, Error Handling, Instance Locking,
// Lock Expiration, Multi-Execution, Queue Semantics' timer visibility, Instance
// Creation), duroxide docs/provider-implementation-guide.md's checklist
// sections Core Operations, Orchestrator Queue, Custom Status, Error Handling
// and Concurrency, and the orchestrator semantics of duroxide.Provider docs
// (batch order, message tagging, timers, delays, executions, orphan
// QueueMessages, abandon, renew, invalid input).

// init registers the section.
func init() { register("Orchestrator", runOrchestrator) }

// Timing of the section (see helpers.go for shortLock and longLock).
const (
	// orcHold is a lock the test lets expire but must hold while the test
	// checks that it is held: long enough for those checks to finish on a
	// loaded machine.
	orcHold = 1200 * time.Millisecond
	// orcAfterHold is a wait after which an orcHold lock has surely expired.
	orcAfterHold = orcHold + 400*time.Millisecond
	// orcClockSlack absorbs the difference between the test's clock and the
	// provider's (millisecond rounding, a server clock a little behind) when
	// a test checks that something did not happen too early.
	orcClockSlack = 50 * time.Millisecond
	// orcTimerIn is how far in the future delayed work becomes visible: far
	// enough to check it is not visible right after being sent.
	orcTimerIn = 1500 * time.Millisecond
	// orcDelayedWithin bounds the wait for delayed work to become visible.
	orcDelayedWithin = orcTimerIn + 3*time.Second
)

// runOrchestrator runs every sub-group in parallel, each case on its own
// provider.
func runOrchestrator(t *testing.T, h Harness) {
	runGroups(t, h, []caseGroup{
		{"Atomicity", orcAtomicityCases()},
		{"ErrorHandling", orcErrorCases()},
		{"InstanceLocking", orcLockingCases()},
		{"LockExpiration", orcExpirationCases()},
		{"MultiExecution", orcExecutionCases()},
		{"QueueSemantics", orcQueueCases()},
		{"Abandon", orcAbandonCases()},
		{"InstanceCreation", orcCreationCases()},
		{"History", orcHistoryCases()},
		{"Commit", orcCommitCases()},
		{"CustomStatus", orcCustomStatusCases()},
		{"InvalidInput", orcInvalidCases()},
	})
}

// ---- builders -------------------------------------------------------------------

// orcRaise is an external event for instance, told apart by n.
func orcRaise(instance, n string) duroxide.ExternalRaised {
	return duroxide.ExternalRaised{Instance: instance, Name: "ev", Data: `"` + n + `"`}
}

// orcEvent is a plain history event (an external event delivery) with the
// given id.
func orcEvent(instance string, execution, id uint64) duroxide.Event {
	return event(id, instance, execution, duroxide.ExternalEventEvent{Name: "ev", Data: fmt.Sprint(id)})
}

// orcEvents builds plain events with the given ids; id 1 is the execution's
// OrchestrationStarted.
func orcEvents(instance string, execution uint64, ids ...uint64) []duroxide.Event {
	out := make([]duroxide.Event, len(ids))
	for i, id := range ids {
		out[i] = orcEvent(instance, execution, id)
		if id == 1 {
			out[i] = started(instance, execution, "Orch", "1.0.0")
		}
	}
	return out
}

// orcCommit is a commit of execution appending events with the given ids and
// nothing else.
func orcCommit(instance string, execution uint64, ids ...uint64) duroxide.OrchestrationCommit {
	return duroxide.OrchestrationCommit{ExecutionID: execution, HistoryDelta: orcEvents(instance, execution, ids...)}
}

// orcStatusEvent is a CustomStatusUpdated event (status nil: cleared).
func orcStatusEvent(instance string, id uint64, status *string) duroxide.Event {
	return event(id, instance, 1, duroxide.CustomStatusUpdatedEvent{Status: status})
}

// ---- actions ----------------------------------------------------------------------

// orcLock enqueues msgs for instance and fetches them with a long lock; the
// batch must be exactly msgs.
func (e *env) orcLock(instance string, msgs ...duroxide.WorkItem) *duroxide.OrchestrationItem {
	e.t.Helper()
	for _, m := range msgs {
		e.enqueue(m, 0)
	}
	item := e.fetchInstance(instance)
	e.wantMessages(item, msgs...)
	return item
}

// orcTurn runs one turn of instance: it sends an external event, fetches it
// and acks c.
func (e *env) orcTurn(instance string, c duroxide.OrchestrationCommit) {
	e.t.Helper()
	item := e.orcLock(instance, orcRaise(instance, "turn"))
	e.ack(item.LockToken, c)
}

// orcAppend appends events to an execution or fails the test.
func (e *env) orcAppend(instance string, execution uint64, ids ...uint64) {
	e.t.Helper()
	if err := e.p.AppendWithExecution(e.ctx, instance, execution, orcEvents(instance, execution, ids...)); err != nil {
		e.t.Fatalf("AppendWithExecution(%s, %d, %v): %v", instance, execution, ids, err)
	}
}

// orcDrainWork fetches every worker item visible now (any tag) and returns
// them; the items stay locked.
func (e *env) orcDrainWork() []duroxide.WorkItem {
	e.t.Helper()
	var out []duroxide.WorkItem
	for {
		w := e.fetchWork(longLock, nil, duroxide.AnyTag())
		if w == nil {
			return out
		}
		out = append(out, w.Item)
	}
}

// ---- assertions -------------------------------------------------------------------

// orcWantHistory asserts the event ids of an execution (0: current) are ids.
func (e *env) orcWantHistory(instance string, execution uint64, ids ...uint64) {
	e.t.Helper()
	got := eventIDs(e.read(instance, execution))
	if fmt.Sprint(got) != fmt.Sprint(append([]uint64{}, ids...)) {
		e.t.Fatalf("history of %s execution %d has ids %v, want %v", instance, execution, got, ids)
	}
}

// orcWantRecord asserts whether instance has a record: GetInstanceStats is
// nil exactly for unknown instances, and the management API (when there is
// one) agrees. It returns the instance info when a record exists and the
// provider has the management capability.
func (e *env) orcWantRecord(instance string, want bool) *duroxide.InstanceInfo {
	e.t.Helper()
	st, err := e.p.GetInstanceStats(e.ctx, instance)
	if err != nil {
		e.t.Fatalf("GetInstanceStats(%s): %v", instance, err)
	}
	if (st != nil) != want {
		e.t.Fatalf("GetInstanceStats(%s) = %+v, want a record: %v", instance, st, want)
	}
	a := e.p.Admin()
	if a == nil {
		return nil
	}
	info, err := a.GetInstanceInfo(e.ctx, instance)
	if want != (err == nil) {
		e.t.Fatalf("GetInstanceInfo(%s) = %+v, %v; want a record: %v", instance, info, err, want)
	}
	if !want {
		wantPermanent(e.t, err, duroxide.ErrNotFound, "get_instance_info")
		return nil
	}
	return &info
}

// orcWantStatus asserts GetCustomStatus(instance, lastSeen): nil when want
// is nil, else the same status and version.
func (e *env) orcWantStatus(instance string, lastSeen uint64, want *duroxide.CustomStatus) {
	e.t.Helper()
	got, err := e.p.GetCustomStatus(e.ctx, instance, lastSeen)
	if err != nil {
		e.t.Fatalf("GetCustomStatus(%s, %d): %v", instance, lastSeen, err)
	}
	if orcFmtStatus(got) != orcFmtStatus(want) {
		e.t.Fatalf("GetCustomStatus(%s, %d) = %s, want %s", instance, lastSeen, orcFmtStatus(got), orcFmtStatus(want))
	}
}

// orcFmtStatus prints a custom status for comparison.
func orcFmtStatus(s *duroxide.CustomStatus) string {
	switch {
	case s == nil:
		return "nil"
	case s.Status == nil:
		return fmt.Sprintf("{<none> v%d}", s.Version)
	}
	return fmt.Sprintf("{%q v%d}", *s.Status, s.Version)
}

// ---- concurrency --------------------------------------------------------------------

// orcTryFetch fetches from any goroutine: errors are reported with t.Errorf
// and read as "nothing".
func (e *env) orcTryFetch(lock time.Duration) *duroxide.OrchestrationItem {
	item, err := e.p.FetchOrchestrationItem(e.ctx, lock, 0, nil)
	if err != nil {
		e.t.Errorf("FetchOrchestrationItem: %v", err)
		return nil
	}
	return item
}
