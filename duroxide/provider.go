package duroxide

import (
	"context"
	"time"

	"github.com/Masterminds/semver/v3"
)

const (
	// InitialExecutionID is the execution id of an instance's first execution; each
	// ContinueAsNew adds one. Providers store execution ids, they never invent them.
	InitialExecutionID uint64 = 1
	// InitialEventID is the event id of the first event (OrchestrationStarted) of every
	// execution. Event ids are assigned by the runtime; 0 is never a valid event id.
	InitialEventID uint64 = 1
	// MaxWorkerTags is the largest tag set a TagFilter may carry, keeping fetch-time
	// filtering cheap for every provider.
	MaxWorkerTags = 5
)

// SessionFetchConfig enables session routing in FetchWorkItem. A session pins the
// activities of one SessionID to a single owner so they can share in-process state.
//
// With a config, eligible items are: items without a session, items of sessions owned by
// OwnerID, and items of sessions nobody owns (fetching one claims the session for OwnerID
// for LockTimeout). With a nil config only items without a session are eligible.
type SessionFetchConfig struct {
	// OwnerID identifies the owner; all worker slots sharing it count as one owner.
	OwnerID string
	// LockTimeout is how long a newly claimed session is held before it must be renewed
	// through RenewSessionLock.
	LockTimeout time.Duration
}

// ScheduledActivityIdentifier names an activity to cancel in an ack: the ActivityExecute
// with this instance, execution id and ID is removed from the worker queue, so its
// worker's next renew or ack fails with a permanent error (the cancellation signal).
// Identifiers that match nothing are ignored: the activity may have completed already.
type ScheduledActivityIdentifier struct {
	Instance    string
	ExecutionID uint64
	ActivityID  uint64 // event id of the ActivityScheduled event
}

// KVEntry is one key of an instance's KV store as seen at fetch time.
type KVEntry struct {
	Value           string
	LastUpdatedAtMs uint64 // from the KeyValueSetEvent that wrote it; 0 if unknown
}

// OrchestrationItem is a locked batch of work for one instance. While the lock is held no
// other fetch returns this instance and no other ack can change it; the lock ends with
// AckOrchestrationItem, AbandonOrchestrationItem or expiry of the lock timeout, after which
// the same messages are delivered again (at-least-once).
type OrchestrationItem struct {
	Instance string
	// OrchestrationName / Version come from the instance record; for a new instance (no
	// record yet) they are derived from the StartOrchestration in Messages, and Version
	// may be "" when the runtime is left to resolve it.
	OrchestrationName string
	// ExecutionID is the current execution; InitialExecutionID for a new instance.
	ExecutionID uint64
	Version     string
	// History holds every event of the current execution only, ordered by event id;
	// empty for a new instance. nil from the fetches of LazyHistoryFetcher, which set
	// Cursor instead.
	History []Event
	// Messages are all visible messages of the instance locked by this fetch, in enqueue
	// order. They are never empty: an instance is only fetched for its messages.
	Messages []WorkItem
	// HistoryError is "" when History decoded fine. Otherwise it describes why stored
	// history could not be decoded and History may be empty or partial. The item is still
	// returned (and locked, and AttemptCount incremented) rather than failing the fetch,
	// so the runtime can reach its poison check and fail the orchestration once
	// AttemptCount exceeds its limit instead of retrying a broken instance forever.
	HistoryError string
	// KVSnapshot is the instance's KV store as merged at the end of previous executions
	// (never the current execution's uncommitted delta), so a replay sees exactly the
	// state the original run saw. nil or empty when there is none.
	KVSnapshot map[string]KVEntry
	// LockToken identifies this lock for Ack / Abandon / Renew. It is unique per fetch.
	LockToken string
	// AttemptCount is how many times these messages have been fetched, this fetch
	// included (so at least 1). It grows on every fetch, including after lock expiry,
	// and shrinks only through an abandon with ignoreAttempt. The runtime poisons the
	// instance when it exceeds its maximum.
	AttemptCount uint32
	// Cursor says where the stored history of ExecutionID ends. It is set only by the
	// fetches of LazyHistoryFetcher, which leave History nil; nil otherwise.
	Cursor *HistoryCursor
}

// LockedWorkItem is a worker-queue item locked by FetchWorkItem. The item stays queued
// but invisible until AckWorkItem, AbandonWorkItem or lock expiry.
type LockedWorkItem struct {
	Item      WorkItem // always an ActivityExecute
	LockToken string
	// AttemptCount counts fetches of this item, this one included; see
	// OrchestrationItem.AttemptCount.
	AttemptCount uint32
}

// ExecutionMetadata is what the runtime concluded from the turn; the provider stores it as
// given and does not inspect events to second-guess it. Zero values mean "no change" so a
// plain mid-execution turn can pass ExecutionMetadata{}.
type ExecutionMetadata struct {
	// Status is "" for unchanged (the execution keeps running), otherwise stored as given:
	// "Running", "Completed", "Failed" or "ContinuedAsNew". The terminal ones also end
	// the KV delta (see the package documentation) and set the completion time.
	Status string
	// Output accompanies a Status: the result (Completed), the error (Failed) or the new
	// input (ContinuedAsNew). nil stores no output.
	Output *string
	// OrchestrationName creates the instance record on the first ack if none exists;
	// "" = unchanged. Enqueueing never creates instances; only this does.
	OrchestrationName string
	// OrchestrationVersion is stored with the name; "" = unchanged.
	OrchestrationVersion string
	// ParentInstanceID links a sub-orchestration to its parent for tree queries and
	// cascading deletes; "" = no parent.
	ParentInstanceID string
	// PinnedDuroxideVersion is the version this execution is pinned to, set by the
	// runtime on the first turn of each execution. nil = unchanged; otherwise stored
	// unconditionally (the runtime, not the provider, guarantees write-once). Fetch
	// filters on it through DispatcherCapabilityFilter.
	PinnedDuroxideVersion *semver.Version
}

// OrchestrationCommit is the result of one orchestration turn, applied atomically by
// AckOrchestrationItem: either all of it becomes durable together with the release of the
// lock, or none of it does.
type OrchestrationCommit struct {
	// ExecutionID is the execution HistoryDelta belongs to. It may be newer than the
	// fetched one (ContinueAsNew): the provider creates that execution if missing and moves
	// the instance's current execution forward to it, never backwards.
	ExecutionID uint64
	// HistoryDelta is appended to the execution as given (ids assigned by the runtime).
	// It may be empty; the queues and lock are still processed.
	HistoryDelta []Event
	// WorkerItems are enqueued to the worker queue; each must be an ActivityExecute.
	WorkerItems []WorkItem
	// OrchestratorItems are enqueued to the orchestrator queues of their InstanceID()s;
	// none may be an ActivityExecute. A TimerFired becomes visible at its FireAtMs.
	OrchestratorItems []WorkItem
	Metadata          ExecutionMetadata
	// CancelledActivities are removed from the worker queue in the same atomic step.
	CancelledActivities []ScheduledActivityIdentifier
}

// CustomStatus is the instance's user-visible progress status.
type CustomStatus struct {
	Status  *string // nil = cleared (or never set)
	Version uint64  // grows by one with every applied CustomStatusUpdatedEvent
}

// InstanceStats is lightweight introspection of one instance (see the package
// documentation for the exact counting rules).
type InstanceStats struct {
	HistoryEventCount uint64 // events of the current execution
	HistorySizeBytes  uint64 // bytes of their stored JSON
	QueuePendingCount uint64 // carry-forward events of the current execution's start
	KVUserKeyCount    uint64 // live KV keys (store merged with delta, tombstones excluded)
	KVTotalValueBytes uint64 // bytes of KV values held in store plus delta
}

// Provider is duroxide's storage contract: history, the two peek-lock queues and the
// instance locks. A provider is a storage abstraction, not an orchestration engine: it
// stores events and work items as opaque data, never creates events or ids, and makes no
// orchestration decisions beyond what ExecutionMetadata tells it.
//
// Rules shared by every method:
//   - Errors are nil or wrap a *ProviderError (see there for retryable vs permanent).
//   - Lock lifecycle: a fetch that returns an item holds a lock until ack, abandon or
//     expiry; a fetch that returns an error or no item holds no lock.
//   - A zero delay or zero poll timeout means "none" (visible now / return immediately).
//     Other durations are used as given; an idleTimeout of 0 makes every session idle.
//   - Invalid input (empty instance id, wrong queue for a work item, EventID 0, invalid
//     TagFilter, unknown lock token, expired token on ack / renew) is a permanent error
//     and changes nothing.
//   - Implementations must be safe for concurrent use by many dispatchers and processes.
type Provider interface {
	// Name identifies the implementation in logs.
	Name() string
	// Version is the implementation's version, for diagnostics.
	Version() string

	// FetchOrchestrationItem locks the next instance that has visible messages and whose
	// current execution passes filter (nil = no filtering; filtering happens before the
	// lock is taken and before history is read), locks all its visible messages and
	// returns them with the current execution's history. (nil, nil) means no work. With
	// pollTimeout > 0 it waits up to pollTimeout for work instead of returning at once.
	// Undecodable history is reported through OrchestrationItem.HistoryError, not as an
	// error, so the lock lifecycle stays clean.
	FetchOrchestrationItem(ctx context.Context, lockTimeout, pollTimeout time.Duration, filter *DispatcherCapabilityFilter) (*OrchestrationItem, error)
	// AckOrchestrationItem atomically validates the lock, appends commit.HistoryDelta,
	// applies commit.Metadata, KV and custom-status changes, enqueues the new items,
	// removes cancelled activities, deletes the batch's messages and releases the lock.
	// An unknown or expired token is a permanent error and nothing is applied; messages
	// that arrived after the fetch stay queued for the next turn.
	AckOrchestrationItem(ctx context.Context, lockToken string, commit OrchestrationCommit) error
	// AbandonOrchestrationItem releases the lock without committing so the batch is
	// retried after delay. ignoreAttempt undoes this fetch's attempt increment (never
	// below 0), for failures that were not the messages' fault. Both apply only to the
	// messages of the fetched batch. An unknown token is a permanent error: unlike ack,
	// abandon is not idempotent, because a bad token signals a bug.
	AbandonOrchestrationItem(ctx context.Context, lockToken string, delay time.Duration, ignoreAttempt bool) error
	// RenewOrchestrationItemLock extends a held lock to now+extendFor for long turns.
	// An unknown or already expired token is a permanent error: the lock may be owned by
	// someone else by now.
	RenewOrchestrationItemLock(ctx context.Context, lockToken string, extendFor time.Duration) error

	// Read returns the current (latest) execution's history in event-id order; an
	// unknown instance has an empty history. Not used on the runtime's hot path.
	Read(ctx context.Context, instance string) ([]Event, error)
	// ReadWithExecution returns one execution's history in event-id order.
	ReadWithExecution(ctx context.Context, instance string, executionID uint64) ([]Event, error)
	// AppendWithExecution appends events to an execution outside a turn (tests, tooling).
	// An event id already present is a permanent error; existing events are never
	// overwritten.
	AppendWithExecution(ctx context.Context, instance string, executionID uint64, events []Event) error

	// EnqueueForWorker adds an ActivityExecute to the worker queue, visible now.
	EnqueueForWorker(ctx context.Context, item WorkItem) error
	// FetchWorkItem locks one visible worker item allowed by session (see
	// SessionFetchConfig) and tags (validated first), increments its attempt count and
	// returns it. (nil, nil) means no work; pollTimeout works as for orchestrations.
	FetchWorkItem(ctx context.Context, lockTimeout, pollTimeout time.Duration, session *SessionFetchConfig, tags TagFilter) (*LockedWorkItem, error)
	// AckWorkItem atomically deletes the locked item and enqueues completion (nil when the
	// activity was cancelled and nothing is reported). If the item is gone (cancelled,
	// lock expired, stolen, already acked) it is a permanent error and nothing is
	// enqueued: the worker uses that error to detect cancellation races.
	AckWorkItem(ctx context.Context, lockToken string, completion WorkItem) error
	// AbandonWorkItem unlocks the item, visible again after delay; ignoreAttempt undoes
	// this fetch's attempt increment. An unknown token is a permanent error.
	AbandonWorkItem(ctx context.Context, lockToken string, delay time.Duration, ignoreAttempt bool) error
	// RenewWorkItemLock extends the lock to now+extendFor. A permanent error means the
	// item was cancelled, acked or lost its lock; the worker then cancels the activity.
	RenewWorkItemLock(ctx context.Context, lockToken string, extendFor time.Duration) error

	// RenewSessionLock extends, to now+extendFor, the still-held sessions of ownerIDs that
	// saw activity within idleTimeout, and returns how many it renewed. Idle sessions are
	// left to expire so another worker can claim them.
	RenewSessionLock(ctx context.Context, ownerIDs []string, extendFor, idleTimeout time.Duration) (int, error)
	// CleanupOrphanedSessions removes sessions whose lock expired and that have no pending
	// items, returning how many. idleTimeout is kept for duroxide's signature.
	CleanupOrphanedSessions(ctx context.Context, idleTimeout time.Duration) (int, error)

	// EnqueueForOrchestrator adds a message to the instance's orchestrator queue, visible
	// after delay (whatever the item, TimerFired included). It never creates the instance.
	EnqueueForOrchestrator(ctx context.Context, item WorkItem, delay time.Duration) error

	// GetCustomStatus returns the custom status when its version is greater than
	// lastSeenVersion, and nil when unchanged or the instance is unknown, so clients can
	// poll cheaply.
	GetCustomStatus(ctx context.Context, instance string, lastSeenVersion uint64) (*CustomStatus, error)
	// GetKVValue reads one key of the live view (current delta over the merged store);
	// found is false for a missing key or unknown instance, which is not an error.
	GetKVValue(ctx context.Context, instance, key string) (value string, found bool, err error)
	// GetKVAllValues returns the live view of all keys; empty for an unknown instance.
	GetKVAllValues(ctx context.Context, instance string) (map[string]string, error)
	// GetInstanceStats returns introspection counters; nil for an unknown instance.
	GetInstanceStats(ctx context.Context, instance string) (*InstanceStats, error)

	// Admin exposes management operations; nil when the provider has none, in which
	// case clients disable their management features.
	Admin() ProviderAdmin
}
