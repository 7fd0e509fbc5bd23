package durable

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// bufferedPoll bounds the sleep while a schedule holds a buffered firing.
const bufferedPoll = 100 * time.Millisecond

// maxClaim is how many firings one claim takes; a full claim is followed
// by another at once.
const maxClaim = 16

// scheduleStage names the points of a firing a test hook sees.
type scheduleStage string

const (
	stageClaimed scheduleStage = "claimed" // claimed, nothing started
	stageStarted scheduleStage = "started" // started, not confirmed
)

// scheduleHook, when set (by tests), runs at each stage of a firing; false
// drops the firing there, as a runtime that stopped at that point would.
type scheduleHook func(stage scheduleStage, scheduleID string, nominal time.Time) bool

// WakeScheduler makes the scheduler read the due times again now instead of
// at its next refresh (tests that move the store's clock call it).
func (r *Runtime) WakeScheduler() {
	select {
	case r.schedWake <- struct{}{}:
	default:
	}
}

// schedulerLoop fires the namespace's schedules: it claims the due
// firings, starts their instances and confirms them, then sleeps until the
// next one is due (at most ScheduleRefresh). With no schedules it costs one
// read per refresh.
func (r *Runtime) schedulerLoop() {
	store, ok := r.p.(duroxide.ScheduleStore)
	if !ok || r.opts.DisableScheduler {
		return
	}
	consecutive := 0
	for r.ctx.Err() == nil {
		wait, err := r.scheduleOnce(r.ctx, store)
		if err != nil {
			if r.ctx.Err() != nil {
				return
			}
			d := 100 * time.Millisecond
			if duroxide.IsRetryable(err) {
				consecutive++
				d = min(100*time.Millisecond<<min(consecutive, 5), 3*time.Second)
				r.outage.failed(r.opts.Logger, err)
			} else {
				r.opts.Logger.Warn("durable: scheduler failed", "error", err, "backoff", d)
			}
			wait = d
		} else {
			consecutive = 0
		}
		if wait <= 0 {
			continue
		}
		t := time.NewTimer(wait)
		select {
		case <-r.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-r.schedWake:
			t.Stop()
		}
	}
}

// scheduleOnce reads when the next firing is due, claims and fires what
// is due now, and returns how long to sleep. An idle namespace costs one
// read-only script per refresh: the claim, which writes, runs only when
// something is due.
func (r *Runtime) scheduleOnce(ctx context.Context, store duroxide.ScheduleStore) (time.Duration, error) {
	due, err := store.NextScheduleDue(ctx)
	if err != nil {
		return 0, err
	}
	if due.Buffered > 0 {
		if err := r.releaseBuffered(ctx, store); err != nil {
			return 0, err
		}
	}
	wait := r.opts.ScheduleRefresh
	if due.Buffered > 0 {
		// a buffered firing waits for an instance to end, which nothing
		// announces: look more often while one is held
		wait = min(wait, bufferedPoll)
	}
	for _, at := range []struct {
		ms  uint64
		set bool
	}{{due.NextDueMs, due.HasDue}, {due.LeaseEndMs, due.HasLease}} {
		if at.set {
			wait = min(wait, time.Duration(int64(at.ms)-int64(due.NowMs))*time.Millisecond)
		}
	}
	if wait > 0 {
		return wait, nil
	}
	claims, err := store.ClaimScheduleFirings(ctx, r.opts.ScheduleLease, maxClaim)
	if err != nil {
		return 0, err
	}
	for _, c := range claims {
		if err := r.fire(ctx, store, c); err != nil {
			// the firing stays claimed: its lease ends and it is claimed again
			r.opts.Logger.Warn("durable: schedule firing failed; it is retried when its lease ends",
				"schedule", c.ID, "nominal", msTime(c.PendingMs), "error", err)
		}
	}
	if len(claims) == 0 {
		// another scheduler took what was due: sleep a little rather than
		// read again at once
		return min(r.opts.ScheduleRefresh, 10*time.Millisecond), nil
	}
	return 0, nil
}

// hook runs the test hook, if any: false drops the firing.
func (r *Runtime) hook(stage scheduleStage, id string, nominal time.Time) bool {
	h := r.schedHook.Load()
	return h == nil || (*h)(stage, id, nominal)
}

// fire carries out one claimed firing and confirms it.
func (r *Runtime) fire(ctx context.Context, store duroxide.ScheduleStore, c duroxide.ScheduleClaim) error {
	nominal, now := msTime(c.PendingMs), msTime(c.NowMs)
	conf := duroxide.ScheduleConfirm{ID: c.ID, NominalMs: c.PendingMs, Rev: c.Rev}
	t, err := decodeSchedule(c.ID, c.Spec)
	if err != nil {
		// a spec this build cannot read stops the schedule rather than
		// being claimed again forever; an update repairs it
		r.opts.Logger.Error("durable: schedule cannot be read; it stops", "schedule", c.ID, "error", err)
		conf.Outcome, conf.Advance, conf.End = "invalid", true, true
		_, err = store.ConfirmScheduleFiring(ctx, conf)
		return err
	}
	if !r.hook(stageClaimed, c.ID, nominal) {
		return nil
	}
	switch c.PendingKind {
	case "init":
		// from the write that asked for it (creation, update, resume), so
		// the times fired do not depend on when a scheduler got to it
		r.advance(t, &conf, msTime(c.UpdatedMs), now)
	case "due":
		r.advance(t, &conf, nominal, now)
		if nominal.Add(t.jitter(nominal)).Before(now.Add(-t.catch)) {
			conf.Outcome = "missed"
			break
		}
		conf.Outcome, conf.Instance, err = r.startFiring(ctx, t, c, nominal, true)
	case "trig":
		conf.Outcome, conf.Instance, err = r.startFiring(ctx, t, c, nominal, true)
	case "buf":
		conf.Outcome, conf.Instance, err = r.startFiring(ctx, t, c, nominal, false)
	default:
		return fmt.Errorf("schedule %s: unknown firing kind %q", c.ID, c.PendingKind)
	}
	var invalid *InvalidInputError
	if errors.As(err, &invalid) {
		// a start that can never succeed (the stored input or version is
		// refused) is recorded rather than claimed again forever
		r.opts.Logger.Error("durable: schedule firing refused; recorded as failed", "schedule", c.ID, "nominal", nominal, "error", err)
		conf.Outcome, conf.Instance, err = "failed", "", nil
	}
	if err != nil {
		return err
	}
	if !r.hook(stageStarted, c.ID, nominal) {
		return nil
	}
	_, err = store.ConfirmScheduleFiring(ctx, conf)
	return err
}

// advance sets the confirm's next time: the first after from, skipping to
// the catch-up window's start when from is older (the times before it
// would only be recorded as missed, one claim each).
func (r *Runtime) advance(t *timetable, conf *duroxide.ScheduleConfirm, from, now time.Time) {
	conf.Advance = true
	if oldest := now.Add(-t.catch); from.Before(oldest) {
		from = oldest
	}
	n := t.next(from)
	if n.IsZero() {
		conf.End = true
		return
	}
	conf.NextMs = uint64(n.UnixMilli())
	conf.FireAtMs = uint64(n.Add(t.jitter(n)).UnixMilli())
}

// startFiring starts the firing's instance under the overlap policy (when
// overlap is set) and returns the outcome to record.
func (r *Runtime) startFiring(ctx context.Context, t *timetable, c duroxide.ScheduleClaim, nominal time.Time, overlap bool) (outcome, instance string, err error) {
	inst := FiringInstanceID(c.ID, nominal)
	// A firing claimed again after its runtime stopped may have started
	// already: it is that start's, whatever the previous instance does now.
	if st, err := r.client.Status(ctx, inst); err != nil {
		return "", "", err
	} else if st.Status != StatusNotFound {
		return "started", inst, nil
	}
	if overlap && c.LastInstance != "" && t.s.Overlap != OverlapAllowAll {
		running, err := r.running(ctx, c.LastInstance)
		if err != nil {
			return "", "", err
		}
		if running {
			switch t.s.Overlap {
			case OverlapBufferOne:
				return "buffered", "", nil
			case OverlapCancelRunning:
				reason := fmt.Sprintf("schedule %s: the firing at %s replaces it", c.ID, nominal.Format(time.RFC3339))
				if err := r.client.CancelInstance(ctx, c.LastInstance, reason); err != nil && !errors.Is(err, ErrNotFound) {
					return "", "", err
				}
			default:
				return "skipped", "", nil
			}
		}
	}
	var opts []OrchestrationOption
	if t.s.Version != "" {
		opts = append(opts, WithVersion(t.s.Version))
	}
	opts = append(opts, UseExisting())
	if err := r.client.StartOrchestration(ctx, inst, t.s.Orchestration, t.s.Input, opts...); err != nil {
		return "", "", err
	}
	return "started", inst, nil
}

// running reports whether instance is not terminal. An instance with no
// history counts as running: its start is queued (a schedule's instance
// that was deleted meanwhile holds its schedule's skips and buffers until
// it is started again).
func (r *Runtime) running(ctx context.Context, instance string) (bool, error) {
	st, err := r.client.Status(ctx, instance)
	if err != nil {
		return false, err
	}
	return !st.IsTerminal(), nil
}

// releaseBuffered starts the buffered firings whose awaited instance ended.
func (r *Runtime) releaseBuffered(ctx context.Context, store duroxide.ScheduleStore) error {
	recs, err := store.ListSchedules(ctx)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if rec.BufferedMs == 0 || rec.PendingKind != "" {
			continue
		}
		if rec.LastInstance != "" {
			running, err := r.running(ctx, rec.LastInstance)
			if err != nil {
				return err
			}
			if running {
				continue
			}
		}
		ok, err := store.TakeBufferedFiring(ctx, rec.ID, rec.BufferedMs, r.opts.ScheduleLease)
		if err != nil || !ok {
			if err != nil {
				return err
			}
			continue
		}
		rec.PendingMs, rec.PendingKind = rec.BufferedMs, "buf"
		if err := r.fire(ctx, store, duroxide.ScheduleClaim{ScheduleRecord: rec}); err != nil {
			r.opts.Logger.Warn("durable: buffered schedule firing failed; it is retried when its lease ends",
				"schedule", rec.ID, "nominal", msTime(rec.BufferedMs), "error", err)
		}
	}
	return nil
}
