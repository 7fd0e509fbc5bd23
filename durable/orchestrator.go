package durable

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/duroxide-go/duroxide-redis/durable/internal/engine"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// orchestrationLoop is one orchestration dispatcher goroutine. Its only wait
// is the provider's long poll.
func (r *Runtime) orchestrationLoop(int) {
	dispatch(r, func() (*duroxide.OrchestrationItem, error) {
		if lf := r.lazyFetcher(); lf != nil {
			return lf.FetchOrchestrationItemLazy(r.ctx, r.opts.OrchestratorLockTimeout, r.opts.LongPollTimeout, &r.filter)
		}
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
		r.outage.over(r.opts.Logger)
		if item != nil {
			handle(item, &next)
		}
	}
}

// processWithRenewal runs one turn while a goroutine renews the instance
// lock, so turns longer than the lock timeout keep it. The renewal goes on
// through the turn's ack, whose commit may be large enough for Redis to
// take longer than the lock has left to receive it; once the ack has begun,
// a renewal that fails is the ack's release of the lock (or a loss the ack
// reports itself), not news worth a warning.
func (r *Runtime) processWithRenewal(item *duroxide.OrchestrationItem, next *handoff[duroxide.OrchestrationItem]) {
	var acking atomic.Bool
	stop := startRenewal(r.work, renewalInterval(r.opts.OrchestratorLockTimeout, r.opts.OrchestratorLockRenewalBuffer),
		r.opts.OrchestratorLockTimeout,
		func(ctx context.Context) error {
			return r.p.RenewOrchestrationItemLock(ctx, item.LockToken, r.opts.OrchestratorLockTimeout)
		},
		func(err error) {
			if acking.Load() {
				return
			}
			r.opts.Logger.Warn("durable: orchestration lock renewal failed", "instance", item.Instance, "error", err)
		})
	defer stop()
	next.held = func() { acking.Store(true) }
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
			if d, ok := p.(*engine.Deadlock); ok {
				r.opts.Logger.Error("durable: orchestration code blocked outside its context, abandoning the turn",
					"instance", item.Instance, "execution_id", item.ExecutionID, "timeout", d.Timeout, "blocked_at", d.Stacks)
			} else {
				r.opts.Logger.Error("durable: panic while processing a turn, abandoning", "instance", item.Instance,
					"panic", engine.PanicMessage(p))
			}
			r.abandonOrchestration(item.LockToken, time.Second, false)
		}
	}()
	r.processOrchestrationItem(item, next)
}

// lazyFetcher is the provider's history-free fetch, used while the instance
// cache is on: a cached instance's turn then reads no history at all.
func (r *Runtime) lazyFetcher() duroxide.LazyHistoryFetcher {
	lf, ok := r.p.(duroxide.LazyHistoryFetcher)
	if !ok || !r.cache.enabled() {
		return nil
	}
	return lf
}

// loadExecution finds the engine for the fetched execution: the cached one
// when the stored history still ends where its copy does, otherwise a new
// one over the stored history, read here (one round trip) when the fetch
// left it unread. ok is false when the item was handed back instead.
func (r *Runtime) loadExecution(item *duroxide.OrchestrationItem) (eng *engine.Engine, version string, ok bool) {
	if e := r.cache.take(item.Instance, cursorOf(item)); e != nil {
		return e.eng, e.version, true
	}
	if item.Cursor != nil && item.Cursor.LastEventID > 0 && item.History == nil {
		h, err := r.p.ReadWithExecution(r.work, item.Instance, item.Cursor.ExecutionID)
		switch {
		case err != nil && duroxide.IsRetryable(err):
			r.opts.Logger.Warn("durable: reading history failed, abandoning", "instance", item.Instance, "error", err)
			r.abandonOrchestration(item.LockToken, time.Second, true)
			return nil, "", false
		case err != nil:
			item.HistoryError = err.Error()
		default:
			item.History = h
		}
	}
	return engine.New(item.Instance, item.ExecutionID, item.History), "", true
}

// pinnedSupported reports whether this runtime may replay an execution
// started by the duroxide version pinned.
func (r *Runtime) pinnedSupported(pinned string) bool {
	if pinned == "" {
		return true
	}
	v, err := semver.NewVersion(pinned)
	return err != nil || r.support.Contains(v)
}

// processOrchestrationItem handles one fetched batch (duroxide's
// process_orchestration_item). Its final ack may fetch the slot's next item
// into next (nil: it may not). An execution still running after a turn
// that committed stays cached; every other path closes its engine.
func (r *Runtime) processOrchestrationItem(item *duroxide.OrchestrationItem, next *handoff[duroxide.OrchestrationItem]) {
	eng, cachedVersion, ok := r.loadExecution(item)
	if !ok {
		return
	}
	keep := false
	defer func() {
		if !keep {
			eng.Close()
		}
	}()
	if pinned := eng.Pinned(); !r.pinnedSupported(pinned) {
		// The provider's capability filter should not have handed this out;
		// a runtime-side check keeps a lenient provider from corrupting it.
		r.opts.Logger.Warn("durable: execution pinned to an unsupported duroxide version, abandoning",
			"instance", item.Instance, "pinned", pinned)
		r.abandonOrchestration(item.LockToken, time.Second, false)
		return
	}
	if item.AttemptCount > r.opts.MaxAttempts {
		r.poisonOrchestration(item, eng)
		return
	}
	if item.HistoryError != "" {
		r.opts.Logger.Warn("durable: history does not decode, abandoning", "instance", item.Instance, "error", item.HistoryError)
		r.abandonOrchestration(item.LockToken, time.Second, false)
		return
	}
	eng, keep = r.runTurn(item, eng, cachedVersion, next)
}

// runTurn runs the batch's turn on eng (or, for a continue-as-new, on a new
// engine it returns) and commits it; it caches the engine and reports true
// when the execution goes on and the commit applied.
func (r *Runtime) runTurn(item *duroxide.OrchestrationItem, eng *engine.Engine, cachedVersion string, next *handoff[duroxide.OrchestrationItem]) (*engine.Engine, bool) {
	hi := eng.Info()
	b := engine.ReadBatch(item.Messages, hi, item.Instance)
	if b.Name == "" && !eng.Empty() {
		// The history exists but holds no OrchestrationStarted to name the
		// code: run it under the instance record's name so the replay
		// engine fails it as corrupted, instead of acking the batch away
		// and leaving the instance Running forever.
		b.Name, b.Version = item.OrchestrationName, item.Version
	}
	refused := r.refuseCollidingStarts(item, hi)
	if hi.Completed || hi.Failed || (hi.ContinuedAsNew && !b.ContinueAsNew) {
		if len(refused) == 0 {
			r.opts.Logger.Debug("durable: instance is terminal, acking its batch without processing", "instance", item.Instance, "messages", len(item.Messages))
		}
		r.ackTurn(item, duroxide.OrchestrationCommit{ExecutionID: item.ExecutionID, OrchestratorItems: refused}, next, nil)
		return eng, false
	}
	if b.ContinueAsNew {
		eng.Close()
		eng = engine.New(item.Instance, item.ExecutionID+1, nil)
	}
	var (
		ver *semver.Version
		fn  engine.Func
	)
	if b.Name != "" {
		v, code, ok := r.reg.resolve(b.Name, b.Version)
		if !ok {
			r.abandonUnregistered(item, b)
			return eng, false
		}
		if eng.Resumable() && v.String() != cachedVersion {
			r.opts.Logger.Warn("durable: cached instance resolves to another version, replaying", "instance", item.Instance)
			r.abandonOrchestration(item.LockToken, 0, true)
			return eng, false
		}
		ver, fn = v, engineFunc(code)
	}
	commit, goesOn := eng.Turn(item, b, ver, fn, r.turnEnv())
	commit.OrchestratorItems = append(commit.OrchestratorItems, refused...)
	r.logNondeterminism(item.Instance, eng, commit, b.Name, ver)
	r.rememberExecution(item.Instance, eng.ExecutionID(), commit.Metadata.Status == "Completed" || commit.Metadata.Status == "Failed")
	cache := goesOn && r.cache.enabled()
	if !cache {
		r.ackTurn(item, commit, next, nil)
		return eng, false
	}
	// From here until the engine is cached (or the commit known not to
	// have applied), a take of the instance here waits: the dispatcher that
	// fetches its next message resumes this engine instead of replaying.
	// The engine is cached as soon as the commit applied, which an
	// ack-and-fetch may report before it returns (cacheNow, run by the
	// provider before its fetch half long-polls): else that dispatcher
	// would wait for this one's poll, on every turn of a sequence.
	release := r.cache.commit(item.Instance)
	var (
		once   sync.Once
		cached atomic.Bool
	)
	settle := func(put bool) {
		once.Do(func() {
			if put {
				r.cache.put(&cacheEntry{instance: item.Instance, version: ver.String(), eng: eng, cursor: duroxide.HistoryCursor{
					ExecutionID: eng.ExecutionID(), LastEventID: eng.LastEventID(), Incarnation: nextIncarnation(item, eng),
				}})
				cached.Store(true)
			}
			release()
		})
	}
	defer settle(false)
	cacheNow := func() { settle(true) }
	applied := r.ackTurn(item, commit, next, cacheNow)
	if cached.Load() {
		// the cache owns the engine now, whatever the call returned after
		// (a provider reports an applied ack only; should the store hold
		// something else, the cursor check of the next take evicts it)
		return eng, true
	}
	if !applied {
		return eng, false
	}
	cacheNow()
	return eng, true
}

// refuseCollidingStarts answers each start in the batch that cannot start
// the instance, because the instance exists already (its history has
// begun) or another start in the batch creates it. A sub-orchestration
// start gets a SubOrchFailed naming the collision, so its parent fails the
// child's future instead of waiting forever for a completion the existing
// instance sends to its own starter, if to anyone (duroxide drops such a
// start with a warning, and the parent hangs). A root start has nobody
// waiting and is only logged.
//
// The one start not refused is a redelivery of the running instance's own
// start (same parent and parent event): its completion will answer it. The
// same start reaching a finished instance is refused too: the Redis
// provider delivers a start once, so it is a later execution of the parent
// reusing an explicit id at the same event id, whose own child this is
// not; were it a redelivery after all, the parent has the child's
// completion first and drops the failure as a duplicate.
func (r *Runtime) refuseCollidingStarts(item *duroxide.OrchestrationItem, hi engine.HistoryInfo) []duroxide.WorkItem {
	parent, parentID, exists := hi.Parent, hi.ParentID, hi.Started
	state := "Running"
	switch {
	case hi.Completed:
		state = "Completed"
	case hi.Failed:
		state = "Failed"
	}
	finished := hi.Completed || hi.Failed
	var refused []duroxide.WorkItem
	for _, m := range item.Messages {
		s, ok := m.(duroxide.StartOrchestration)
		if !ok {
			continue
		}
		if !exists {
			// this start creates the instance; later ones find it
			exists, parent, parentID = true, s.ParentInstance, s.ParentID
			continue
		}
		if s.ParentInstance == nil || s.ParentID == nil {
			r.opts.Logger.Warn("durable: start of an existing instance dropped", "instance", item.Instance,
				"orchestration", s.Orchestration, "state", state)
			continue
		}
		sameStarter := eqPtr(parent, s.ParentInstance) && eqPtr(parentID, s.ParentID)
		if sameStarter && !finished {
			continue
		}
		origin := "started as a root instance"
		if parent != nil && parentID != nil {
			origin = fmt.Sprintf("started by %q at event %d", *parent, *parentID)
		}
		msg := fmt.Sprintf("sub-orchestration instance %q already exists and is %s (%s), so %s was not started: a sub-orchestration's instance id must name no existing instance",
			item.Instance, state, origin, s.Orchestration)
		r.opts.Logger.Warn("durable: sub-orchestration start names an existing instance, failing it in the parent",
			"instance", item.Instance, "parent", *s.ParentInstance, "parent_event_id", *s.ParentID, "state", state)
		refused = append(refused, duroxide.SubOrchFailed{
			ParentInstance: *s.ParentInstance, ParentExecutionID: r.parentExecution(*s.ParentInstance), ParentID: *s.ParentID,
			Details: duroxide.ErrorDetails{Application: &duroxide.ApplicationError{
				Kind: duroxide.AppErrorKind{Variant: duroxide.AppErrorOrchestrationFailed}, Message: msg}},
		})
	}
	return refused
}

func eqPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// logNondeterminism logs, at ERROR, a turn that fails its instance because
// the code no longer replays its history: the failure is permanent and
// usually follows a deploy, so whoever watches the logs must see it
// (duroxide logs it at ERROR too), not only whoever reads the instance.
func (r *Runtime) logNondeterminism(instance string, eng *engine.Engine, commit duroxide.OrchestrationCommit, name string, ver *semver.Version) {
	for _, ev := range commit.HistoryDelta {
		f, ok := ev.Kind.(duroxide.OrchestrationFailedEvent)
		if !ok || f.Details.Configuration == nil || f.Details.Configuration.Kind != duroxide.ConfigErrorNondeterminism {
			continue
		}
		msg := engine.DisplayMessage(f.Details)
		eventID := nondeterminismError(strings.TrimPrefix(msg, "nondeterministic: ")).EventID
		if d := eng.Divergence(); d != nil {
			eventID = d.Event.EventID
		}
		version := ""
		if ver != nil {
			version = ver.String()
		}
		r.opts.Logger.Error("durable: orchestration code does not replay its history, failing the instance",
			"instance", instance, "execution_id", eng.ExecutionID(), "event_id", eventID,
			"orchestration", name, "version", version, "error", msg)
		return
	}
}

// turnEnv is what the engine needs of this runtime during a turn.
func (r *Runtime) turnEnv() engine.Env {
	return engine.Env{Clock: r.opts.Clock, Logger: r.opts.Logger, ParentExecution: r.parentExecution,
		DeadlockTimeout: r.opts.TurnDeadlockTimeout, MaxPayloadBytes: r.opts.maxPayloadBytes}
}

// engineFunc runs registered orchestration code on the engine's context.
func engineFunc(fn OrchestrationFunc) engine.Func {
	return func(c *engine.Context, input string) (string, error) {
		return fn(&OrchestrationContext{c: c}, input)
	}
}

// nextIncarnation is the incarnation the cached entry expects at the next
// fetch: the fetched one, or for a provider without cursors the history's
// own, which this turn may just have started.
func nextIncarnation(item *duroxide.OrchestrationItem, eng *engine.Engine) string {
	if item.Cursor != nil {
		return item.Cursor.Incarnation
	}
	if ts, ok := eng.StartTimestamp(); ok {
		return startedIncarnation(ts)
	}
	return ""
}

// ackTurn commits a finished turn and reports whether the commit applied.
// When the provider can, the options let it and the slot is running, the
// same call fetches the slot's next instance into next; otherwise, and
// whenever that call fails without its ack applied, the plain ack with its
// retries decides (see ackfetch.go for why). cacheNow, when not nil,
// caches the turn's engine: the ack-and-fetch runs it as soon as its ack
// applied, with a provider that reports that (duroxide.OrchestrationAckReporter),
// since the dispatcher that fetches the instance's next message waits for
// the engine (see instanceCache.committing). The fetch of such a turn still
// polls only briefly (cachedTurnPoll), for providers that do not report it:
// their engine is cached once the call returns.
func (r *Runtime) ackTurn(item *duroxide.OrchestrationItem, commit duroxide.OrchestrationCommit, next *handoff[duroxide.OrchestrationItem], cacheNow func()) bool {
	af, ok := r.p.(duroxide.OrchestrationAckFetcher)
	if !ok || r.opts.DisableAckFetch || !next.open(r) {
		return r.ack(item, commit)
	}
	next.release()
	poll := r.opts.LongPollTimeout
	if cacheNow != nil {
		poll = min(poll, cachedTurnPoll)
	}
	got, err := r.ackAndFetch(af, item.LockToken, commit, poll, cacheNow)
	if next.keep(got, err) {
		return true
	}
	if isLockLost(err) {
		r.opts.Logger.Warn("durable: turn dropped", "instance", item.Instance, "error", err)
		return false
	}
	return r.ack(item, commit)
}

// cachedTurnPoll is the poll of the ack-and-fetch of a turn whose engine is
// then cached. Not zero: a fetch that may not wait runs once and keeps
// nothing of what it learnt, and the Redis provider then forgets when the
// next delayed message (a timer this very turn set) becomes due, so no
// fetcher wakes for it until its periodic refresh.
const cachedTurnPoll = time.Millisecond

// ackAndFetch is the combined call, history-free when the cache is on;
// applied, when not nil, runs as soon as the ack applied where the provider
// reports it (duroxide.OrchestrationAckReporter), else the caller runs it
// once the call returns.
func (r *Runtime) ackAndFetch(af duroxide.OrchestrationAckFetcher, token string, commit duroxide.OrchestrationCommit, poll time.Duration, applied func()) (*duroxide.OrchestrationItem, error) {
	lf := r.lazyFetcher()
	if rep, ok := r.p.(duroxide.OrchestrationAckReporter); ok && applied != nil {
		return rep.AckOrchestrationItemAndFetchReporting(r.ctx, token, commit, r.opts.OrchestratorLockTimeout, poll, &r.filter, lf != nil, applied)
	}
	if lf != nil {
		return lf.AckOrchestrationItemAndFetchLazy(r.ctx, token, commit, r.opts.OrchestratorLockTimeout, poll, &r.filter)
	}
	return af.AckOrchestrationItemAndFetch(r.ctx, token, commit, r.opts.OrchestratorLockTimeout, poll, &r.filter)
}

// ack commits a turn, retrying transient errors (10ms doubling, 5 times),
// then abandoning with a delay. A permanent failure of a lock still held
// fails the instance with an infrastructure error, as duroxide does; a lost
// lock just drops the turn (another dispatcher redoes it). It reports
// whether the commit applied.
func (r *Runtime) ack(item *duroxide.OrchestrationItem, commit duroxide.OrchestrationCommit) bool {
	err := r.ackWithRetry(item.LockToken, commit)
	if err == nil {
		return true
	}
	if isLockLost(err) || r.work.Err() != nil {
		r.opts.Logger.Warn("durable: turn dropped", "instance", item.Instance, "error", err)
		return false
	}
	if duroxide.IsRetryable(err) {
		// Storage trouble, not a bad commit: hand the batch back so the turn
		// is redone once the provider recovers.
		r.opts.Logger.Warn("durable: ack keeps failing, abandoning", "instance", item.Instance, "error", err)
		r.abandonOrchestration(item.LockToken, time.Second, false)
		return false
	}
	r.opts.Logger.Warn("durable: ack failed, failing the instance", "instance", item.Instance, "error", err)
	fail := engine.FailedCommit(item, commit, infrastructureDetails("ack_orchestration_item", err))
	if err := r.ackWithRetry(item.LockToken, fail); err != nil {
		r.abandonOrchestration(item.LockToken, 50*time.Millisecond, false)
	}
	return false
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

// abandonUnregistered hands back a batch whose orchestration (or version)
// this runtime does not have, to be retried with backoff until a runtime
// that has it runs it, or it is poisoned. On a provider that can note why
// (duroxide.PendingStartNoter), the reason goes with the abandon, so a
// start nobody can run shows as pending with its cause instead of as not
// found; a provider keeps the note only for an instance without record.
func (r *Runtime) abandonUnregistered(item *duroxide.OrchestrationItem, b engine.Batch) {
	d := r.unregisteredDelay(item.AttemptCount)
	r.opts.Logger.Warn("durable: orchestration not registered, abandoning", "instance", item.Instance,
		"orchestration", b.Name, "version", b.Version, "attempt", item.AttemptCount, "backoff", d)
	noter, ok := r.p.(duroxide.PendingStartNoter)
	if !ok {
		r.abandonOrchestration(item.LockToken, d, false)
		return
	}
	note := duroxide.PendingStart{Instance: item.Instance, Orchestration: b.Name, Version: b.Version,
		Attempt: item.AttemptCount, MaxAttempts: r.opts.MaxAttempts, Reason: notRegisteredReason}
	if err := noter.AbandonOrchestrationItemWithNote(r.work, item.LockToken, d, false, note); err != nil {
		r.opts.Logger.Warn("durable: abandon failed", "error", err)
	}
}

// notRegisteredReason completes "orchestration X (version V) ..." in the
// note of a start no runtime that fetched it could run, and in the cause of
// the poison failure that ends it.
const notRegisteredReason = "is not registered in the runtimes that fetched it"
