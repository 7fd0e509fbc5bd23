package duroxide

import "context"

// ProviderAdmin is the optional management capability of a provider (duroxide's
// ProviderAdmin), obtained through Provider.Admin. It serves dashboards, clients and
// tests, never the runtime's hot path, so it favours completeness over speed. Errors
// follow the same retryable / permanent rules as Provider. Operations on an unknown
// instance that need one (LatestExecutionID, GetInstanceInfo, GetExecutionInfo,
// GetParentID) return a permanent "not found" error rather than zero values, so callers
// cannot mistake a missing instance for a fresh one.
type ProviderAdmin interface {
	// ListInstances returns every known instance id.
	ListInstances(ctx context.Context) ([]string, error)
	// ListInstancesByStatus returns the instances whose current execution has status
	// ("Running", "Completed", "Failed", "ContinuedAsNew").
	ListInstancesByStatus(ctx context.Context, status string) ([]string, error)
	// ListExecutions returns the instance's execution ids in ascending order.
	ListExecutions(ctx context.Context, instance string) ([]uint64, error)
	// ReadHistoryWithExecutionID returns one execution's events, oldest first.
	ReadHistoryWithExecutionID(ctx context.Context, instance string, executionID uint64) ([]Event, error)
	// ReadHistory returns the latest execution's events, oldest first.
	ReadHistory(ctx context.Context, instance string) ([]Event, error)
	// LatestExecutionID returns the current execution id.
	LatestExecutionID(ctx context.Context, instance string) (uint64, error)
	// GetInstanceInfo returns the instance record joined with its current execution.
	GetInstanceInfo(ctx context.Context, instance string) (InstanceInfo, error)
	// GetExecutionInfo returns one execution's record and event count.
	GetExecutionInfo(ctx context.Context, instance string, executionID uint64) (ExecutionInfo, error)
	// GetSystemMetrics returns namespace-wide counters.
	GetSystemMetrics(ctx context.Context) (SystemMetrics, error)
	// GetQueueDepths returns the number of waiting (unlocked) queue entries.
	GetQueueDepths(ctx context.Context) (QueueDepths, error)
	// ListChildren returns the direct sub-orchestrations of instance; empty when it has
	// none or does not exist.
	ListChildren(ctx context.Context, instance string) ([]string, error)
	// GetParentID returns the parent instance id, "" for a root; an unknown instance is
	// an error so that "" always means a real root.
	GetParentID(ctx context.Context, instance string) (string, error)
	// GetInstanceTree returns instance and all its descendants.
	GetInstanceTree(ctx context.Context, instance string) (InstanceTree, error)
	// DeleteInstancesAtomic deletes all of ids (history, executions, queue entries,
	// locks, KV, metadata) in one all-or-nothing step. Without force, any Running
	// instance fails the whole batch. A child of a deleted instance that is not itself in
	// ids fails the batch too, because deleting would orphan it (it may have been spawned
	// after the caller read the tree). Removing the lock stops an in-flight ack of a
	// force-deleted instance from recreating it.
	DeleteInstancesAtomic(ctx context.Context, ids []string, force bool) (DeleteInstanceResult, error)
	// DeleteInstance deletes a root instance with its whole tree. Deleting a
	// sub-orchestration directly is a permanent error (delete its root instead), as are
	// an unknown instance and, without force, a running one.
	DeleteInstance(ctx context.Context, instance string, force bool) (DeleteInstanceResult, error)
	// DeleteInstanceBulk deletes terminal root instances matching filter, with their
	// trees; running instances and sub-orchestrations are skipped, not errors.
	DeleteInstanceBulk(ctx context.Context, filter InstanceFilter) (DeleteInstanceResult, error)
	// PruneExecutions deletes old executions of one instance. The current execution and
	// running executions are never pruned; the deletion is atomic. KV data is
	// instance-scoped and survives pruning.
	PruneExecutions(ctx context.Context, instance string, opts PruneOptions) (PruneResult, error)
	// PruneExecutionsBulk applies PruneExecutions to every instance matching filter.
	PruneExecutionsBulk(ctx context.Context, filter InstanceFilter, opts PruneOptions) (PruneResult, error)
}

// InstanceInfo describes an instance through its current execution.
type InstanceInfo struct {
	InstanceID           string
	OrchestrationName    string
	OrchestrationVersion string
	CurrentExecutionID   uint64
	Status               string  // Running | Completed | Failed | ContinuedAsNew
	Output               *string // nil while running or when none was stored
	CreatedAt            uint64  // ms since epoch (server clock)
	UpdatedAt            uint64  // ms since epoch (server clock)
	ParentInstanceID     string  // "" = root
	// Pause is the instance's pause state (see InstancePauser) read in the
	// same atomic step as the rest of the record, so a caller that needs
	// both pays one round trip, and a list of records (InstanceLister)
	// shows it with no read per row. nil when the provider does not report
	// it there: ask InstancePauseState, on a provider that pauses. It is an
	// optional extension of the contract's InstanceInfo; a pointer, so
	// compare records field by field (or with Pause cleared) rather than
	// with ==.
	Pause *PauseState
}

// ExecutionInfo describes one execution.
type ExecutionInfo struct {
	ExecutionID uint64
	Status      string
	Output      *string
	StartedAt   uint64 // ms since epoch
	// CompletedAt is set when the status becomes Completed, Failed or ContinuedAsNew;
	// 0 = still running.
	CompletedAt uint64
	EventCount  int
}

// SystemMetrics are namespace-wide counters; the status counts use each instance's
// current execution.
type SystemMetrics struct {
	TotalInstances     uint64
	TotalExecutions    uint64
	RunningInstances   uint64
	CompletedInstances uint64
	FailedInstances    uint64
	TotalEvents        uint64
}

// QueueDepths counts unlocked queue entries. There is no separate timer queue in
// duroxide: TimerQueue counts orchestrator messages that become visible later (timers and
// delayed messages), while OrchestratorQueue and WorkerQueue count entries visible now.
type QueueDepths struct {
	OrchestratorQueue int
	WorkerQueue       int
	TimerQueue        int
}

// InstanceFilter selects instances for bulk operations; all criteria are ANDed.
type InstanceFilter struct {
	InstanceIDs     []string // nil = any instance
	CompletedBefore uint64   // ms since epoch; 0 = no bound
	// Limit caps how many instances one call processes, to bound the work of a single
	// atomic step; 0 = the provider's default batch (1000).
	Limit int
}

// PruneOptions selects executions to prune; all criteria are ANDed, 0 = unset. The
// current execution is always kept, so KeepLast 0 and 1 both keep only the current one.
type PruneOptions struct {
	KeepLast        int    // keep the current execution plus the KeepLast-1 newest others
	CompletedBefore uint64 // ms since epoch: prune only executions completed before it
}

// DeleteInstanceResult counts what a delete removed.
type DeleteInstanceResult struct {
	InstancesDeleted     uint64 // instances that existed and were removed
	ExecutionsDeleted    uint64
	EventsDeleted        uint64
	QueueMessagesDeleted uint64
}

// PruneResult counts what a prune removed.
type PruneResult struct {
	InstancesProcessed uint64
	ExecutionsDeleted  uint64
	EventsDeleted      uint64
}

// InstanceTree is an instance with all its descendants.
type InstanceTree struct {
	RootID string
	AllIDs []string // includes RootID
}
