package durable

import (
	"context"
	"fmt"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable/internal/engine"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// workSlot is one activity worker goroutine's identity and handoff.
type workSlot struct {
	id    string // in logs and ActivityContext.WorkerID
	owner string // the session owner the slot claims sessions as
	next  handoff[duroxide.LockedWorkItem]
}

// workerLoop is one activity worker goroutine. Without a WorkerNodeID the
// slot claims sessions as its own owner, so a session is pinned to one slot
// and its activities run one at a time; a node id makes every slot one owner
// that survives restarts.
func (r *Runtime) workerLoop(n int) {
	s := &workSlot{id: r.workerSlotID(n), owner: r.slotSessionOwner(n)}
	dispatch(r, func() (*duroxide.LockedWorkItem, error) {
		room, freed := r.sessions.room(r.opts.MaxSessionsPerRuntime)
		if !room {
			return r.fetchSessionless(freed)
		}
		return r.p.FetchWorkItem(r.ctx, r.opts.WorkerLockTimeout, r.opts.LongPollTimeout, r.sessionFetch(s.owner), r.opts.WorkerTagFilter)
	}, func(locked *duroxide.LockedWorkItem, next *handoff[duroxide.LockedWorkItem]) {
		r.handleWorkItem(locked, s, next)
	})
}

// sessionFetch is the session part of a worker slot's fetch while the
// runtime has room for another session.
func (r *Runtime) sessionFetch(owner string) *duroxide.SessionFetchConfig {
	return &duroxide.SessionFetchConfig{OwnerID: owner, LockTimeout: r.opts.SessionLockTimeout}
}

// fetchSessionless fetches only session-less work, as a slot must while the
// runtime is at MaxSessionsPerRuntime. The long poll ends early (no item, no
// error) when freed closes, so the slot takes session work again as soon as
// a session ends instead of after the whole poll timeout; the contract lets
// a cancelled fetch leave no lock behind.
func (r *Runtime) fetchSessionless(freed <-chan struct{}) (*duroxide.LockedWorkItem, error) {
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	go func() {
		select {
		case <-freed:
			cancel()
		case <-ctx.Done():
		}
	}()
	item, err := r.p.FetchWorkItem(ctx, r.opts.WorkerLockTimeout, r.opts.LongPollTimeout, nil, r.opts.WorkerTagFilter)
	if err != nil && ctx.Err() != nil && r.ctx.Err() == nil {
		return nil, nil
	}
	return item, err
}

// workerSlotID names worker slot n in logs and ActivityContext.WorkerID.
func (r *Runtime) workerSlotID(n int) string {
	suffix := r.opts.WorkerNodeID
	if suffix == "" {
		suffix = r.id
	}
	return fmt.Sprintf("work-%d-%s", n, suffix)
}

// slotSessionOwner is the owner id worker slot n claims sessions with.
func (r *Runtime) slotSessionOwner(n int) string {
	if r.opts.WorkerNodeID != "" {
		return r.opts.WorkerNodeID
	}
	return r.workerSlotID(n)
}

// sessionOwners lists the distinct owners of this runtime's slots, the ones
// whose session leases the session manager renews.
func (r *Runtime) sessionOwners() []string {
	if r.opts.WorkerNodeID != "" {
		return []string{r.opts.WorkerNodeID}
	}
	owners := make([]string, r.opts.WorkerConcurrency)
	for i := range owners {
		owners[i] = r.slotSessionOwner(i)
	}
	return owners
}

// handleWorkItem runs one fetched item; its completion's ack may fetch the
// slot's next item into next.
func (r *Runtime) handleWorkItem(locked *duroxide.LockedWorkItem, s *workSlot, next *handoff[duroxide.LockedWorkItem]) {
	item, ok := locked.Item.(duroxide.ActivityExecute)
	if !ok {
		r.opts.Logger.Error("durable: worker queue returned a non-activity item", "type", fmt.Sprintf("%T", locked.Item))
		_ = r.p.AbandonWorkItem(r.work, locked.LockToken, time.Second, false)
		return
	}
	if item.SessionID != nil {
		if !r.sessions.admit(*item.SessionID, r.opts.MaxSessionsPerRuntime) {
			r.deferOverCap(locked.LockToken, *item.SessionID, s.id)
			return
		}
		release := r.sessions.releaser(*item.SessionID)
		defer release()
		next.held = release
	}
	if locked.AttemptCount > r.opts.MaxAttempts {
		r.poisonActivity(locked, item)
		return
	}
	fn, ok := r.activityFunc(item.Name)
	if !ok {
		d := r.unregisteredDelay(locked.AttemptCount)
		r.opts.Logger.Warn("durable: activity not registered, abandoning", "activity", item.Name, "attempt", locked.AttemptCount, "backoff", d)
		_ = r.p.AbandonWorkItem(r.work, locked.LockToken, d, false)
		return
	}
	r.executeActivity(locked, item, fn, s, next)
}

// deferOverCap hands back a session item fetched while the runtime was
// already at MaxSessionsPerRuntime: slots check the cap before fetching, but
// several idle slots can pass that check at once and each claim a different
// session. The attempt is not counted because the item did not fail.
func (r *Runtime) deferOverCap(token, session, workerID string) {
	r.opts.Logger.Debug("durable: session cap reached after fetch, abandoning", "session_id", session, "worker_id", workerID)
	if err := r.p.AbandonWorkItem(r.work, token, sessionCapRetryDelay, true); err != nil && r.work.Err() == nil {
		r.opts.Logger.Warn("durable: abandon over the session cap failed", "session_id", session, "error", err)
	}
}

// sessionCapRetryDelay keeps an item abandoned over the session cap out of
// the queue briefly, so the slot does not refetch it at once.
const sessionCapRetryDelay = 100 * time.Millisecond

// activityResult is what running an activity produced.
type activityResult struct {
	out string
	err error
}

// executeActivity runs fn while a goroutine renews the lock; a failed
// renewal means the orchestration no longer wants the result (cancelled, or
// the lock was stolen), so the activity's context is cancelled. The renewal
// goes on through the ack, whose result may be large enough for Redis to
// take longer than the lock has left to receive it; a renewal that fails
// once the ack released the lock changes nothing.
func (r *Runtime) executeActivity(locked *duroxide.LockedWorkItem, item duroxide.ActivityExecute, fn ActivityFunc,
	s *workSlot, next *handoff[duroxide.LockedWorkItem]) {
	octx, endObserved := r.opts.Observer.StartActivity(r.work, ActivityInfo{Instance: item.Instance, ExecutionID: item.ExecutionID,
		Name: item.Name, ActivityID: item.ID, Attempt: locked.AttemptCount, LockToken: locked.LockToken})
	defer endObserved()
	actx, cancel := context.WithCancel(octx)
	defer cancel()
	lost := make(chan struct{})
	stopRenew := startRenewal(actx, renewalInterval(r.opts.WorkerLockTimeout, r.opts.WorkerLockRenewalBuffer),
		r.opts.WorkerLockTimeout,
		func(ctx context.Context) error {
			return r.p.RenewWorkItemLock(ctx, locked.LockToken, r.opts.WorkerLockTimeout)
		},
		func(error) { close(lost); cancel() })
	defer stopRenew()
	unit, untrack := r.inflight.track(AbandonedWork{Kind: WorkActivity, Instance: item.Instance, ExecutionID: item.ExecutionID,
		Name: item.Name, ActivityID: item.ID}, func(ctx context.Context) error {
		return r.p.AbandonWorkItem(ctx, locked.LockToken, 0, true)
	})
	defer untrack()

	ac := r.activityContext(actx, item, s.id)
	done := make(chan activityResult, 1)
	go func() { done <- runActivity(fn, ac, item.Input) }()
	select {
	case res := <-done:
		if !unit.settle() {
			return // Shutdown handed it back while it ran
		}
		if r.work.Err() != nil {
			// The shutdown deadline cancelled the activity: its outcome says
			// nothing about the work, so hand it back for another run.
			r.releaseActivity(unit)
			return
		}
		r.completeActivity(locked, item, res, s.owner, next)
	case <-lost:
		r.opts.Logger.Debug("durable: activity cancelled", "activity", item.Name, "instance", item.Instance, "id", item.ID)
		r.awaitGrace(done)
		if unit.settle() {
			_ = r.p.AckWorkItem(r.work, locked.LockToken, nil)
		}
	}
}

// awaitGrace gives a cancelled activity the grace period to return.
func (r *Runtime) awaitGrace(done <-chan activityResult) {
	t := time.NewTimer(r.opts.ActivityCancellationGracePeriod)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		r.opts.Logger.Warn("durable: cancelled activity did not return within the grace period")
	}
}

// releaseActivity abandons an activity the runtime gives up on shutdown,
// without counting the attempt (the work did not fail).
func (r *Runtime) releaseActivity(unit *inflightUnit) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := unit.abandon(ctx); err != nil {
		r.opts.Logger.Warn("durable: abandon on shutdown failed", "error", err)
	}
}

func runActivity(fn ActivityFunc, ac *ActivityContext, input string) (res activityResult) {
	defer func() {
		if p := recover(); p != nil {
			res = activityResult{err: fmt.Errorf("activity panicked: %s", engine.PanicMessage(p))}
		}
	}()
	out, err := fn(ac, input)
	return activityResult{out: out, err: err}
}

func (r *Runtime) activityContext(ctx context.Context, item duroxide.ActivityExecute, workerID string) *ActivityContext {
	return &ActivityContext{
		Context: ctx, instance: item.Instance, execution: item.ExecutionID, activityName: item.Name,
		activityID: item.ID, workerID: workerID, sessionID: item.SessionID, tag: item.Tag, client: r.client,
		describe: func() (string, string) { return r.describeInstance(ctx, item.Instance) },
		logger: r.opts.Logger.With("instance_id", item.Instance, "execution_id", item.ExecutionID,
			"activity_name", item.Name, "activity_id", item.ID, "worker_id", workerID),
	}
}

// describeInstance names the orchestration an instance runs, from the
// provider's instance record ("unknown" when there is none).
func (r *Runtime) describeInstance(ctx context.Context, instance string) (string, string) {
	if a := r.p.Admin(); a != nil {
		if info, err := a.GetInstanceInfo(ctx, instance); err == nil {
			return info.OrchestrationName, info.OrchestrationVersion
		}
	}
	return "unknown", "unknown"
}

// completeActivity acks with the completion. A lost lock means the result
// is no longer wanted; other failures abandon so the activity runs again.
func (r *Runtime) completeActivity(locked *duroxide.LockedWorkItem, item duroxide.ActivityExecute, res activityResult,
	owner string, next *handoff[duroxide.LockedWorkItem]) {
	if res.err == nil {
		if err := checkPayload("activity", "result of activity \""+item.Name+"\"", res.out, r.opts.maxPayloadBytes); err != nil {
			res.err = NonRetryable(err)
		}
	}
	var completion duroxide.WorkItem = duroxide.ActivityCompleted{Instance: item.Instance, ExecutionID: item.ExecutionID, ID: item.ID, Result: res.out}
	if res.err != nil {
		completion = duroxide.ActivityFailed{Instance: item.Instance, ExecutionID: item.ExecutionID, ID: item.ID,
			Details: activityFailure(res.err)}
	}
	err := r.ackActivity(locked.LockToken, completion, owner, next)
	// a transient failure may have lost the ack before it reached the
	// storage: acking again keeps the result (an ack that did apply answers
	// with a lost lock), where abandoning would run the activity again
	for retry, d := 0, ackRetryDelay; retry < ackRetries && err != nil && !isLockLost(err) && duroxide.IsRetryable(err); retry, d = retry+1, 2*d {
		if !sleepCtx(r.work, d) {
			break
		}
		err = r.p.AckWorkItem(r.work, locked.LockToken, completion)
	}
	if err == nil || isLockLost(err) {
		return
	}
	r.opts.Logger.Warn("durable: activity ack failed, abandoning", "activity", item.Name, "error", err)
	_ = r.p.AbandonWorkItem(r.work, locked.LockToken, 100*time.Millisecond, false)
}

// ackActivity acks a finished activity and, when the provider can and the
// slot is running, fetches the slot's next item into next in the same call.
// The activity's session stops counting first, so the fetch half sees the
// cap exactly as the slot's plain fetch after the ack would; at the cap the
// ack is plain, so the slot's next fetch is the session-less one that wakes
// when a session ends. The error is the ack's, for the caller's plain-ack
// handling; see ackfetch.go for the fallbacks.
func (r *Runtime) ackActivity(token string, completion duroxide.WorkItem, owner string,
	next *handoff[duroxide.LockedWorkItem]) error {
	af, ok := r.p.(duroxide.WorkAckFetcher)
	if !ok || r.opts.DisableAckFetch || !next.open(r) {
		return r.p.AckWorkItem(r.work, token, completion)
	}
	next.release()
	if room, _ := r.sessions.room(r.opts.MaxSessionsPerRuntime); !room {
		return r.p.AckWorkItem(r.work, token, completion)
	}
	got, err := af.AckWorkItemAndFetch(r.ctx, token, completion, r.opts.WorkerLockTimeout, r.opts.LongPollTimeout,
		r.sessionFetch(owner), r.opts.WorkerTagFilter)
	if next.keep(got, err) {
		return nil
	}
	if !isLockLost(err) && duroxide.IsRetryable(err) && r.ctx.Err() != nil {
		// Shutdown began while the call was in flight, which cancels it
		// before or after the ack: the plain ack, on the context that
		// outlives the stop, settles which (a lost lock if it applied).
		return r.p.AckWorkItem(r.work, token, completion)
	}
	return err
}

func (r *Runtime) poisonActivity(locked *duroxide.LockedWorkItem, item duroxide.ActivityExecute) {
	msg, _ := duroxide.MarshalWorkItem(item)
	d := duroxide.ErrorDetails{Poison: &duroxide.PoisonError{
		AttemptCount: locked.AttemptCount, MaxAttempts: r.opts.MaxAttempts,
		MessageType: duroxide.PoisonMessageType{Activity: &duroxide.PoisonActivity{
			Instance: item.Instance, ExecutionID: item.ExecutionID, ActivityName: item.Name, ActivityID: item.ID,
		}},
		Message: string(msg),
	}}
	_ = r.p.AckWorkItem(r.work, locked.LockToken, duroxide.ActivityFailed{Instance: item.Instance, ExecutionID: item.ExecutionID, ID: item.ID, Details: d})
}

// An activity ack that failed transiently is tried again ackRetries times,
// ackRetryDelay doubling (50 ms to 800 ms, 1.55 s in all), before the item
// is abandoned to run again elsewhere.
const (
	ackRetries    = 5
	ackRetryDelay = 50 * time.Millisecond
)

// sleepCtx waits d; false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
