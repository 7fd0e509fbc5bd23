package durable

import (
	"context"
	"fmt"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// workerLoop is one activity worker goroutine.
func (r *Runtime) workerLoop(n int) {
	workerID := fmt.Sprintf("work-%d-%s", n, r.sessionOwner())
	dispatch(r, func() (*duroxide.LockedWorkItem, error) {
		var session *duroxide.SessionFetchConfig
		if r.sessions.count() < r.opts.MaxSessionsPerRuntime {
			session = &duroxide.SessionFetchConfig{OwnerID: r.sessionOwner(), LockTimeout: r.opts.SessionLockTimeout}
		}
		return r.p.FetchWorkItem(r.ctx, r.opts.WorkerLockTimeout, r.opts.LongPollTimeout, session, r.opts.WorkerTagFilter)
	}, func(locked *duroxide.LockedWorkItem) { r.handleWorkItem(locked, workerID) })
}

// sessionOwner is the owner id this runtime claims sessions with.
func (r *Runtime) sessionOwner() string {
	if r.opts.WorkerNodeID != "" {
		return r.opts.WorkerNodeID
	}
	return "rt-" + r.id
}

func (r *Runtime) handleWorkItem(locked *duroxide.LockedWorkItem, workerID string) {
	item, ok := locked.Item.(duroxide.ActivityExecute)
	if !ok {
		r.opts.Logger.Error("durable: worker queue returned a non-activity item", "type", fmt.Sprintf("%T", locked.Item))
		_ = r.p.AbandonWorkItem(r.work, locked.LockToken, time.Second, false)
		return
	}
	if item.SessionID != nil {
		r.sessions.add(*item.SessionID)
		defer r.sessions.remove(*item.SessionID)
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
	r.executeActivity(locked, item, fn, workerID)
}

// activityResult is what running an activity produced.
type activityResult struct {
	out string
	err error
}

// executeActivity runs fn while a goroutine renews the lock; a failed
// renewal means the orchestration no longer wants the result (cancelled, or
// the lock was stolen), so the activity's context is cancelled.
func (r *Runtime) executeActivity(locked *duroxide.LockedWorkItem, item duroxide.ActivityExecute, fn ActivityFunc, workerID string) {
	actx, cancel := context.WithCancel(r.work)
	defer cancel()
	lost := make(chan struct{})
	stopRenew := startRenewal(actx, renewalInterval(r.opts.WorkerLockTimeout, r.opts.WorkerLockRenewalBuffer),
		func(ctx context.Context) error {
			return r.p.RenewWorkItemLock(ctx, locked.LockToken, r.opts.WorkerLockTimeout)
		},
		func(error) { close(lost); cancel() })
	defer stopRenew()

	ac := r.activityContext(actx, item, workerID)
	done := make(chan activityResult, 1)
	go func() { done <- runActivity(fn, ac, item.Input) }()
	select {
	case res := <-done:
		stopRenew()
		if r.work.Err() != nil {
			// The shutdown deadline cancelled the activity: its outcome says
			// nothing about the work, so hand it back for another run.
			r.releaseActivity(locked.LockToken)
			return
		}
		r.completeActivity(locked, item, res)
	case <-lost:
		r.opts.Logger.Info("durable: activity cancelled", "activity", item.Name, "instance", item.Instance, "id", item.ID)
		r.awaitGrace(done)
		_ = r.p.AckWorkItem(r.work, locked.LockToken, nil)
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
func (r *Runtime) releaseActivity(token string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := r.p.AbandonWorkItem(ctx, token, 0, true); err != nil {
		r.opts.Logger.Warn("durable: abandon on shutdown failed", "error", err)
	}
}

func runActivity(fn ActivityFunc, ac *ActivityContext, input string) (res activityResult) {
	defer func() {
		if p := recover(); p != nil {
			res = activityResult{err: fmt.Errorf("activity panicked: %s", panicMessage(p))}
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
func (r *Runtime) completeActivity(locked *duroxide.LockedWorkItem, item duroxide.ActivityExecute, res activityResult) {
	var completion duroxide.WorkItem = duroxide.ActivityCompleted{Instance: item.Instance, ExecutionID: item.ExecutionID, ID: item.ID, Result: res.out}
	if res.err != nil {
		completion = duroxide.ActivityFailed{Instance: item.Instance, ExecutionID: item.ExecutionID, ID: item.ID,
			Details: duroxide.ApplicationFailure(res.err.Error())}
	}
	err := r.p.AckWorkItem(r.work, locked.LockToken, completion)
	if err == nil || isLockLost(err) {
		return
	}
	r.opts.Logger.Warn("durable: activity ack failed, abandoning", "activity", item.Name, "error", err)
	_ = r.p.AbandonWorkItem(r.work, locked.LockToken, 100*time.Millisecond, false)
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
