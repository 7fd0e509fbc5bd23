package durable

import (
	"context"
	"errors"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// orchestrationLoop is one orchestration dispatcher goroutine. Its only wait
// is the provider's long poll.
func (r *Runtime) orchestrationLoop(int) {
	dispatch(r, func() (*duroxide.OrchestrationItem, error) {
		return r.p.FetchOrchestrationItem(r.ctx, r.opts.OrchestratorLockTimeout, r.opts.LongPollTimeout, &r.filter)
	}, r.processWithRenewal)
}

// dispatch fetches and handles work until the runtime stops, backing off
// after fetch errors. A unit whose ack also fetched leaves the result in
// the slot's handoff, which stands in for the next plain fetch; an item it
// brought is handled even when the runtime has begun stopping meanwhile, as
// a plainly fetched one is, so no lock is left behind.
func dispatch[T any](r *Runtime, fetch func() (*T, error), handle func(*T, *handoff[T])) {
	errs := 0
	var next handoff[T]
	for {
		item, fetched, err := next.take()
		if !fetched {
			if r.ctx.Err() != nil {
				return
			}
			item, err = fetch()
		}
		if err != nil {
			if r.ctx.Err() != nil || !r.backoff(err, &errs) {
				return
			}
			continue
		}
		errs = 0
		if item != nil {
			handle(item, &next)
		}
	}
}

// processWithRenewal runs one turn while a goroutine renews the instance
// lock, so turns longer than the lock timeout keep it.
func (r *Runtime) processWithRenewal(item *duroxide.OrchestrationItem, next *handoff[duroxide.OrchestrationItem]) {
	stop := startRenewal(r.work, renewalInterval(r.opts.OrchestratorLockTimeout, r.opts.OrchestratorLockRenewalBuffer),
		func(ctx context.Context) error {
			return r.p.RenewOrchestrationItemLock(ctx, item.LockToken, r.opts.OrchestratorLockTimeout)
		},
		func(err error) {
			r.opts.Logger.Warn("durable: orchestration lock renewal failed", "instance", item.Instance, "error", err)
		})
	defer stop()
	next.held = stop
	_, untrack := r.inflight.track(AbandonedWork{Kind: WorkOrchestration, Instance: item.Instance, ExecutionID: item.ExecutionID,
		Name: item.OrchestrationName}, func(ctx context.Context) error {
		return r.p.AbandonOrchestrationItem(ctx, item.LockToken, 0, true)
	})
	defer untrack()
	r.processSafely(item, next)
}

// processSafely keeps a runtime bug (a panic outside orchestration code,
// which the coroutine already contains) from killing the process: the batch
// is abandoned and counts as an attempt, so a persistent bug ends in poison.
// Orchestration code blocked outside its context (see TurnDeadlockTimeout)
// ends the same way.
func (r *Runtime) processSafely(item *duroxide.OrchestrationItem, next *handoff[duroxide.OrchestrationItem]) {
	defer r.opts.Observer.StartTurn(TurnInfo{Instance: item.Instance, Orchestration: item.OrchestrationName,
		ExecutionID: item.ExecutionID, Attempt: item.AttemptCount, LockToken: item.LockToken})()
	defer func() {
		if p := recover(); p != nil {
			if d, ok := p.(*turnDeadlock); ok {
				r.opts.Logger.Error("durable: orchestration code blocked outside its context, abandoning the turn",
					"instance", item.Instance, "execution_id", item.ExecutionID, "timeout", d.timeout, "blocked_at", d.stacks)
			} else {
				r.opts.Logger.Error("durable: panic while processing a turn, abandoning", "instance", item.Instance,
					"panic", panicMessage(p))
			}
			r.abandonOrchestration(item.LockToken, time.Second, false)
		}
	}()
	r.processOrchestrationItem(item, next)
}

// pinnedVersion is the duroxide version that wrote the execution's start.
func pinnedVersion(h []duroxide.Event) *semver.Version {
	for _, ev := range h {
		if _, ok := ev.Kind.(duroxide.OrchestrationStartedEvent); ok {
			v, err := semver.NewVersion(ev.DuroxideVersion)
			if err != nil {
				return nil
			}
			return v
		}
	}
	return nil
}

// processOrchestrationItem handles one fetched batch (duroxide's
// process_orchestration_item). Its final ack may fetch the slot's next item
// into next (nil: it may not).
func (r *Runtime) processOrchestrationItem(item *duroxide.OrchestrationItem, next *handoff[duroxide.OrchestrationItem]) {
	if pinned := pinnedVersion(item.History); pinned != nil && !r.support.Contains(pinned) {
		// The provider's capability filter should not have handed this out;
		// a runtime-side check keeps a lenient provider from corrupting it.
		r.opts.Logger.Warn("durable: execution pinned to an unsupported duroxide version, abandoning",
			"instance", item.Instance, "pinned", pinned.String())
		r.abandonOrchestration(item.LockToken, time.Second, false)
		return
	}
	if item.AttemptCount > r.opts.MaxAttempts {
		r.poisonOrchestration(item)
		return
	}
	if item.HistoryError != "" {
		r.opts.Logger.Warn("durable: history does not decode, abandoning", "instance", item.Instance, "error", item.HistoryError)
		r.abandonOrchestration(item.LockToken, time.Second, false)
		return
	}
	hi := readHistory(item.History)
	b := readBatch(item.Messages, hi, item.Instance)
	if b.name == "" && len(item.History) > 0 {
		// The history exists but holds no OrchestrationStarted to name the
		// code: run it under the instance record's name so the replay
		// engine fails it as corrupted, instead of acking the batch away
		// and leaving the instance Running forever.
		b.name, b.version = item.OrchestrationName, item.Version
	}
	if hi.completed || hi.failed || (hi.continuedAsNew && !b.continueAsNew) {
		r.ackTurn(item, duroxide.OrchestrationCommit{ExecutionID: item.ExecutionID}, next)
		return
	}
	t := &turnOutput{executionID: item.ExecutionID, history: item.History}
	if b.continueAsNew {
		t.executionID, t.history = item.ExecutionID+1, nil
	}
	if b.name != "" {
		ver, fn, ok := r.reg.resolve(b.name, b.version)
		if !ok {
			r.abandonUnregistered(item, b)
			return
		}
		r.runExecution(item.Instance, t, b, ver, fn, item.KVSnapshot)
	}
	commit := r.buildCommit(item, t)
	r.ackTurn(item, commit, next)
}

// buildCommit adds metadata and, for a terminal turn, cancels the
// activities still in flight.
func (r *Runtime) buildCommit(item *duroxide.OrchestrationItem, t *turnOutput) duroxide.OrchestrationCommit {
	failure := t.enforceLimits(item.Instance, item.KVSnapshot)
	meta := executionMetadata(t.delta)
	if failure != nil {
		out := displayMessage(*failure)
		meta.Status, meta.Output = "Failed", &out
	}
	if reason := terminalCancelReason(meta.Status); reason != "" {
		for _, id := range inflightActivities(append(append([]duroxide.Event{}, t.history...), t.delta...)) {
			src := id
			t.append(item.Instance, &src, duroxide.ActivityCancelRequestedEvent{Reason: reason})
			t.cancelled = append(t.cancelled, duroxide.ScheduledActivityIdentifier{Instance: item.Instance, ExecutionID: t.executionID, ActivityID: id})
		}
	}
	return duroxide.OrchestrationCommit{
		ExecutionID: t.executionID, HistoryDelta: t.delta, WorkerItems: t.worker, OrchestratorItems: t.orch,
		Metadata: meta, CancelledActivities: dedupActivities(t.cancelled),
	}
}

func terminalCancelReason(status string) string {
	switch status {
	case "Completed":
		return "orchestration_terminal_completed"
	case "Failed":
		return "orchestration_terminal_failed"
	case "ContinuedAsNew":
		return "orchestration_terminal_continued_as_new"
	}
	return ""
}

func dedupActivities(in []duroxide.ScheduledActivityIdentifier) []duroxide.ScheduledActivityIdentifier {
	seen := map[duroxide.ScheduledActivityIdentifier]bool{}
	var out []duroxide.ScheduledActivityIdentifier
	for _, a := range in {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// executionMetadata derives the commit metadata from the turn's events
// (duroxide's compute_execution_metadata).
func executionMetadata(delta []duroxide.Event) duroxide.ExecutionMetadata {
	var m duroxide.ExecutionMetadata
	for _, ev := range delta {
		switch k := ev.Kind.(type) {
		case duroxide.OrchestrationStartedEvent:
			m.OrchestrationName, m.OrchestrationVersion = k.Name, k.Version
			m.ParentInstanceID = deref(k.ParentInstance)
			if v, err := semver.NewVersion(ev.DuroxideVersion); err == nil {
				m.PinnedDuroxideVersion = v
			}
		case duroxide.OrchestrationCompletedEvent:
			out := k.Output
			m.Status, m.Output = "Completed", &out
			return m
		case duroxide.OrchestrationFailedEvent:
			out := displayMessage(k.Details)
			m.Status, m.Output = "Failed", &out
			return m
		case duroxide.OrchestrationContinuedAsNewEvent:
			out := k.Input
			m.Status, m.Output = "ContinuedAsNew", &out
			return m
		}
	}
	return m
}

// ackTurn commits a finished turn. When the provider can, the options let
// it and the slot is running, the same call fetches the slot's next instance into next;
// otherwise, and whenever that call fails without its ack applied, the
// plain ack with its retries decides (see ackfetch.go for why).
func (r *Runtime) ackTurn(item *duroxide.OrchestrationItem, commit duroxide.OrchestrationCommit, next *handoff[duroxide.OrchestrationItem]) {
	af, ok := r.p.(duroxide.OrchestrationAckFetcher)
	if !ok || r.opts.DisableAckFetch || !next.open(r) {
		r.ack(item, commit)
		return
	}
	next.release()
	got, err := af.AckOrchestrationItemAndFetch(r.ctx, item.LockToken, commit,
		r.opts.OrchestratorLockTimeout, r.opts.LongPollTimeout, &r.filter)
	if next.keep(got, err) {
		return
	}
	if isLockLost(err) {
		r.opts.Logger.Warn("durable: turn dropped", "instance", item.Instance, "error", err)
		return
	}
	r.ack(item, commit)
}

// ack commits a turn, retrying transient errors (10ms doubling, 5 times),
// then abandoning with a delay. A permanent failure of a lock still held
// fails the instance with an infrastructure error, as duroxide does; a lost
// lock just drops the turn (another dispatcher redoes it).
func (r *Runtime) ack(item *duroxide.OrchestrationItem, commit duroxide.OrchestrationCommit) {
	err := r.ackWithRetry(item.LockToken, commit)
	if err == nil {
		return
	}
	if isLockLost(err) || r.work.Err() != nil {
		r.opts.Logger.Warn("durable: turn dropped", "instance", item.Instance, "error", err)
		return
	}
	if duroxide.IsRetryable(err) {
		// Storage trouble, not a bad commit: hand the batch back so the turn
		// is redone once the provider recovers.
		r.opts.Logger.Warn("durable: ack keeps failing, abandoning", "instance", item.Instance, "error", err)
		r.abandonOrchestration(item.LockToken, time.Second, false)
		return
	}
	r.opts.Logger.Warn("durable: ack failed, failing the instance", "instance", item.Instance, "error", err)
	t := &turnOutput{executionID: commit.ExecutionID, history: item.History}
	if commit.ExecutionID != item.ExecutionID {
		t.history = nil
	}
	t.append(item.Instance, nil, duroxide.OrchestrationFailedEvent{Details: infrastructureDetails("ack_orchestration_item", err)})
	fail := duroxide.OrchestrationCommit{ExecutionID: t.executionID, HistoryDelta: t.delta, Metadata: executionMetadata(t.delta)}
	if err := r.ackWithRetry(item.LockToken, fail); err != nil {
		r.abandonOrchestration(item.LockToken, 50*time.Millisecond, false)
	}
}

// isLockLost reports a lock-token failure: the lock expired or was taken
// over, so the work now belongs to another dispatcher (for an activity, it
// was cancelled).
func isLockLost(err error) bool { return errors.Is(err, duroxide.ErrLockLost) }

// infrastructureDetails records a provider failure the way duroxide's
// to_infrastructure_error does: the provider's operation and message.
func infrastructureDetails(op string, err error) duroxide.ErrorDetails {
	msg := err.Error()
	var pe *duroxide.ProviderError
	if errors.As(err, &pe) {
		op, msg = pe.Operation, pe.Message
	}
	return duroxide.ErrorDetails{Infrastructure: &duroxide.InfrastructureError{
		Operation: op, Message: msg, Retryable: duroxide.IsRetryable(err),
	}}
}

func (r *Runtime) ackWithRetry(token string, commit duroxide.OrchestrationCommit) error {
	delay := 10 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err := r.p.AckOrchestrationItem(r.work, token, commit)
		if err == nil || !duroxide.IsRetryable(err) || attempt >= 5 || r.work.Err() != nil {
			return err
		}
		time.Sleep(delay)
		delay *= 2
	}
}

func (r *Runtime) abandonOrchestration(token string, delay time.Duration, ignoreAttempt bool) {
	if err := r.p.AbandonOrchestrationItem(r.work, token, delay, ignoreAttempt); err != nil {
		r.opts.Logger.Warn("durable: abandon failed", "error", err)
	}
}

// unregisteredDelay is duroxide's backoff for work no handler here can run:
// base * 2^(attempt-1), exponent capped at 6, capped at the max.
func (r *Runtime) unregisteredDelay(attempt uint32) time.Duration {
	exp := min(max(int(attempt)-1, 0), 6)
	return min(r.opts.UnregisteredBackoffBase*time.Duration(1<<exp), r.opts.UnregisteredBackoffMax)
}

func (r *Runtime) abandonUnregistered(item *duroxide.OrchestrationItem, b batch) {
	d := r.unregisteredDelay(item.AttemptCount)
	r.opts.Logger.Warn("durable: orchestration not registered, abandoning", "instance", item.Instance,
		"orchestration", b.name, "version", b.version, "attempt", item.AttemptCount, "backoff", d)
	r.abandonOrchestration(item.LockToken, d, false)
}
