package durable

import (
	"log/slog"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Options configures a Runtime. The zero value of every field means "use the
// default", which is duroxide's RuntimeOptions default, so a Runtime built with
// Options{} behaves like a duroxide runtime built with RuntimeOptions::default().
type Options struct {
	// OrchestrationConcurrency is the number of orchestration dispatcher
	// goroutines (default 2).
	OrchestrationConcurrency int
	// WorkerConcurrency is the number of activity worker goroutines (default 2).
	WorkerConcurrency int
	// LongPollTimeout is how long one fetch waits in the provider for work
	// (default 30s, as duroxide; Shutdown does not wait for it to pass). The dispatchers never sleep between empty fetches: the
	// provider's long poll is their only wait.
	LongPollTimeout time.Duration

	// OrchestratorLockTimeout is the instance lock taken per turn (default 5s).
	OrchestratorLockTimeout time.Duration
	// OrchestratorLockRenewalBuffer is how long before expiry a long turn's
	// lock is renewed (default 2s).
	OrchestratorLockRenewalBuffer time.Duration
	// WorkerLockTimeout is the lock taken per activity (default 30s).
	WorkerLockTimeout time.Duration
	// WorkerLockRenewalBuffer is how long before expiry a running activity's
	// lock is renewed (default 5s).
	WorkerLockRenewalBuffer time.Duration

	// TurnDeadlockTimeout bounds how long orchestration code may run
	// without handing control back to the runtime (by waiting on a future,
	// Select, Join, or returning) before its turn is abandoned (default 5s;
	// Temporal's deadlock detector allows 1s; it is noticed within a quarter
	// more). Orchestration code must wait only through its context: code
	// blocked on a channel, a mutex or a network call, or computing for
	// longer than this, is logged at Error with the blocked goroutine's
	// stack, its lock is no longer renewed, and the batch is abandoned as a
	// failed attempt, so a turn that blocks every time ends in poison after
	// MaxAttempts. Go cannot stop the blocked goroutine: it is left behind,
	// and nothing waits for it. A deferred call that blocks the same way
	// while a turn ends is logged and left behind after this long too.
	TurnDeadlockTimeout time.Duration

	// MaxAttempts is the fetch count after which a message is poison: the
	// instance (or the activity) fails with duroxide's Poison error details
	// (default 10).
	MaxAttempts uint32
	// UnregisteredBackoffBase and UnregisteredBackoffMax bound the abandon delay
	// for work whose orchestration or activity is not registered here
	// (base * 2^(attempt-1), default 1s and 60s), so a rolling deployment can
	// pick it up on another node before it becomes poison.
	UnregisteredBackoffBase time.Duration
	UnregisteredBackoffMax  time.Duration

	// ActivityCancellationGracePeriod is how long a cancelled activity may
	// keep running after its context is cancelled before its result is
	// dropped and the worker moves on (default 10s).
	ActivityCancellationGracePeriod time.Duration

	// SupportedReplayVersions is the range of duroxide versions whose
	// histories this runtime replays; nil means duroxide's default, every
	// version up to this build's (>=0.0.0, <= duroxide.CurrentDuroxideVersion).
	SupportedReplayVersions *duroxide.SemverRange

	// WorkerTagFilter selects which tagged activities this runtime's workers
	// fetch (default: untagged only).
	WorkerTagFilter duroxide.TagFilter

	// SessionLockTimeout is the lease of a session owned by this runtime
	// (default 30s); SessionLockRenewalBuffer is how long before expiry it is
	// renewed (default 5s); SessionIdleTimeout is how long a session stays
	// pinned after its last activity (default 5m; it must exceed the worker
	// lock renewal interval, or NewRuntime refuses the options, as a running
	// activity's renewals are what keep its session busy); SessionCleanupInterval is
	// how often orphaned sessions are swept (default 5m).
	SessionLockTimeout       time.Duration
	SessionLockRenewalBuffer time.Duration
	SessionIdleTimeout       time.Duration
	SessionCleanupInterval   time.Duration
	// MaxSessionsPerRuntime caps how many distinct sessions this runtime runs
	// activities for at once (default 10); at the cap, idle slots fetch only
	// session-less work.
	MaxSessionsPerRuntime int
	// WorkerNodeID is the stable session owner id shared by all worker slots of
	// this runtime; empty means each slot owns its sessions under its own id
	// (so a session's activities run one at a time, and sessions move when the
	// process restarts).
	WorkerNodeID string

	// DisableAckFetch makes both dispatchers ack and fetch in separate calls
	// even when the provider implements duroxide.OrchestrationAckFetcher and
	// duroxide.WorkAckFetcher. By default a finished turn or activity is
	// acked and the slot's next unit fetched in one call: one round trip
	// fewer per unit.
	DisableAckFetch bool

	// InstanceCacheEntries and InstanceCacheBytes bound the instance cache
	// (default 1,000 instances and 256 MiB, estimated from the events'
	// sizes; a negative value turns the cache off). After a turn that leaves
	// an execution running, the runtime keeps its replayed state, the code
	// parked where it waits, so the instance's next turn here applies only
	// the new messages: no history read, no replay from event 1. A turn that
	// finds the stored history moved on (another runtime ran it) replays as
	// without the cache; correctness never depends on it. CacheStats reports
	// its hits, misses and evictions.
	InstanceCacheEntries int
	InstanceCacheBytes   int64
	// StickyWait is how long an instance whose last turn ran here is
	// offered to this runtime alone when its next turn is due, before any
	// runtime may take it (default 50ms; a negative value turns sticky
	// routing off). With several runtimes, this is what makes the cache hit:
	// an instance's turns come back to the runtime that holds it, instead of
	// going to whichever runtime fetches first. It needs a provider that
	// implements duroxide.StickyRouter and the cache on; a runtime that is
	// gone delays each of its instances once by StickyWait.
	StickyWait time.Duration

	// Logger receives the runtime's own logs and, through
	// OrchestrationContext.Logger and ActivityContext.Logger, user logs
	// (default: a logger that discards everything, never the global
	// slog.Default(); the runtime logs nothing at Info per turn or activity).
	Logger *slog.Logger
	// Observer is told when each turn and activity starts and ends, for
	// tracing (extra/dxotel implements it); nil observes nothing.
	Observer Observer
	// Clock is the runtime's notion of now, used for timer fire times, KV
	// timestamps and UTCNow; nil means time.Now. Tests set it to the clock of
	// the storage server (durabletest does) so timers can be run forward.
	Clock func() time.Time

	// DisableScheduler turns off the runtime's scheduler, the loop that
	// fires schedules (Client.CreateSchedule) on a provider that stores them
	// (duroxide.ScheduleStore). Any number of runtimes may run it: each
	// firing is claimed by one of them, atomically in the store.
	DisableScheduler bool
	// ScheduleRefresh bounds how long the scheduler sleeps before it reads
	// the next due time again (default 1s): it sleeps until the earliest
	// firing is due, and this is how soon it sees a schedule created, changed
	// or triggered through another runtime's client (its own client's writes
	// wake it); while a firing is buffered it looks every 100ms at most.
	ScheduleRefresh time.Duration
	// ScheduleLease is how long a claimed firing is this runtime's to start
	// (default 30s): a firing not confirmed by then (its runtime stopped
	// between claim and start) is claimed again by any scheduler, and its
	// start, under the same instance id, is not doubled.
	ScheduleLease time.Duration

	// maxPayloadBytes is MaxPayloadBytes unless a test lowers it, so tests
	// of the limit need not build payloads of that size.
	maxPayloadBytes int
}

// withDefaults returns o with every zero field replaced by its default.
func (o Options) withDefaults() Options {
	setDur := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	setInt := func(n *int, def int) {
		if *n <= 0 {
			*n = def
		}
	}
	setInt(&o.OrchestrationConcurrency, 2)
	setInt(&o.WorkerConcurrency, 2)
	setInt(&o.maxPayloadBytes, MaxPayloadBytes)
	setInt(&o.MaxSessionsPerRuntime, 10)
	setDur(&o.LongPollTimeout, 30*time.Second)
	setDur(&o.OrchestratorLockTimeout, 5*time.Second)
	setDur(&o.OrchestratorLockRenewalBuffer, 2*time.Second)
	setDur(&o.TurnDeadlockTimeout, 5*time.Second)
	setDur(&o.WorkerLockTimeout, 30*time.Second)
	setDur(&o.WorkerLockRenewalBuffer, 5*time.Second)
	setDur(&o.UnregisteredBackoffBase, time.Second)
	setDur(&o.UnregisteredBackoffMax, time.Minute)
	setDur(&o.ActivityCancellationGracePeriod, 10*time.Second)
	setDur(&o.SessionLockTimeout, 30*time.Second)
	setDur(&o.SessionLockRenewalBuffer, 5*time.Second)
	setDur(&o.SessionIdleTimeout, 5*time.Minute)
	setDur(&o.SessionCleanupInterval, 5*time.Minute)
	setDur(&o.ScheduleRefresh, time.Second)
	setDur(&o.ScheduleLease, 30*time.Second)
	if o.InstanceCacheEntries == 0 {
		o.InstanceCacheEntries = 1000
	}
	if o.InstanceCacheBytes == 0 {
		o.InstanceCacheBytes = 256 << 20
	}
	if o.StickyWait == 0 {
		o.StickyWait = 50 * time.Millisecond
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = 10
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Observer == nil {
		o.Observer = noopObserver{}
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return o
}
