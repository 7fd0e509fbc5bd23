package redisprovider

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Management reads index structures kept by the scripts that change the data
// (never KEYS or SCAN). Listings are read in pages of listPage so one call
// never holds Redis for long; bulk deletion and pruning work in batches of
// DefaultBulkLimit instances, each instance (tree) atomic.

const (
	// listPage is how many index entries one round trip of a listing reads.
	listPage = 5000
	// DefaultBulkLimit is the number of instances a bulk call handles when
	// InstanceFilter.Limit is 0.
	DefaultBulkLimit = 1000
)

// listIndex reads a sorted-set index in pages, newest (highest score) first
// when rev.
func (p *partition) listIndex(ctx context.Context, op, key string, rev bool) ([]string, error) {
	return readPages(op, func(start, stop int64) ([]string, error) {
		if rev {
			return p.rdb.ZRevRange(ctx, key, start, stop).Result()
		}
		return p.rdb.ZRange(ctx, key, start, stop).Result()
	})
}

// listScored reads an instance index (scored by creation time) in pages,
// newest first, with the scores: what a listing over several partitions
// merges by.
func (p *partition) listScored(ctx context.Context, op, key string) ([]redis.Z, error) {
	return readPages(op, func(start, stop int64) ([]redis.Z, error) {
		return p.rdb.ZRevRangeWithScores(ctx, key, start, stop).Result()
	})
}

// readPages reads ranks [0, listPage), [listPage, 2 listPage), ... with read
// until a page comes back short.
func readPages[T any](op string, read func(start, stop int64) ([]T, error)) ([]T, error) {
	var out []T
	for start := int64(0); ; start += listPage {
		page, err := read(start, start+listPage-1)
		if err != nil {
			return nil, fail(op, err)
		}
		out = append(out, page...)
		if len(page) < listPage {
			return out, nil
		}
	}
}

// ListInstances returns every instance id, newest first.
func (p *partition) ListInstances(ctx context.Context) ([]string, error) {
	return p.listIndex(ctx, "list_instances", p.keys.Instances(), true)
}

// ListInstancesByStatus returns the instances whose current execution has
// status, newest first.
func (p *partition) ListInstancesByStatus(ctx context.Context, status string) ([]string, error) {
	return p.listIndex(ctx, "list_instances_by_status", p.keys.InstancesByStatus(status), true)
}

// ListExecutions returns the execution ids of an instance, ascending (empty
// for an unknown instance).
func (p *partition) ListExecutions(ctx context.Context, instance string) ([]uint64, error) {
	const op = "list_executions"
	if instance == "" {
		return nil, invalid(op, "empty instance id")
	}
	ids, err := p.listIndex(ctx, op, p.keys.Executions(instance), false)
	if err != nil {
		return nil, err
	}
	out := make([]uint64, 0, len(ids))
	for _, s := range ids {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, undecodable(op, "instance %s: corrupt execution id %q", instance, s)
		}
		out = append(out, n)
	}
	return out, nil
}

// ReadHistoryWithExecutionID returns one execution's events, ordered by
// event id.
func (p *partition) ReadHistoryWithExecutionID(ctx context.Context, instance string, executionID uint64) ([]duroxide.Event, error) {
	return p.readHistory(ctx, "read_history_with_execution_id", instance, strconv.FormatUint(executionID, 10), false)
}

// ReadHistory returns the latest execution's events, as Read does; an
// instance with neither a record nor an execution is a not-found error.
func (p *partition) ReadHistory(ctx context.Context, instance string) ([]duroxide.Event, error) {
	return p.readHistory(ctx, "read_history", instance, "", true)
}

// LatestExecutionID returns the latest execution of an instance: the highest
// execution id that has a record, whether or not the instance has one (as
// Read resolves it). An instance without execution is a not-found error.
func (p *partition) LatestExecutionID(ctx context.Context, instance string) (uint64, error) {
	const op = "latest_execution_id"
	if instance == "" {
		return 0, invalid(op, "empty instance id")
	}
	var a args
	a.str(instance)
	res, err := p.run(ctx, op, scriptLatestExecutionID, a)
	if err != nil {
		return 0, err
	}
	if res == nil {
		return 0, notFound(op, "instance "+instance)
	}
	s, _ := res.(string)
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, undecodable(op, "instance %s: corrupt execution id %q", instance, s)
	}
	return n, nil
}

// Reply of lua/get_instance_info.lua (nil for an unknown instance).
const (
	infoName = iota
	infoVersion
	infoExecution
	infoCreated
	infoUpdated
	infoParent
	infoStatus
	infoOutput
	infoPausedSince // nil when not paused
	infoHeld
	infoNamePausedSince // nil when its orchestration name is not paused
)

// GetInstanceInfo returns an instance record with its current execution's
// status and output, and its pause state (InstanceInfo.Pause, what
// InstancePauseState reads), in one script.
func (p *partition) GetInstanceInfo(ctx context.Context, instance string) (duroxide.InstanceInfo, error) {
	const op = "get_instance_info"
	if instance == "" {
		return duroxide.InstanceInfo{}, invalid(op, "empty instance id")
	}
	var a args
	a.str(instance)
	res, err := p.run(ctx, op, scriptGetInstanceInfo, a)
	if err != nil {
		return duroxide.InstanceInfo{}, err
	}
	if res == nil {
		return duroxide.InstanceInfo{}, notFound(op, "instance "+instance)
	}
	return decodeInfo(op, instance, res)
}

// decodeInfo reads an instance record in get_instance_info's reply form.
func decodeInfo(op, instance string, res any) (duroxide.InstanceInfo, error) {
	r := newReply(op, res)
	info := duroxide.InstanceInfo{InstanceID: instance}
	info.OrchestrationName, _ = r.str(infoName)
	info.OrchestrationVersion, _ = r.str(infoVersion)
	info.CurrentExecutionID = uint64(r.int(infoExecution))
	info.CreatedAt = uint64(r.int(infoCreated))
	info.UpdatedAt = uint64(r.int(infoUpdated))
	info.ParentInstanceID, _ = r.str(infoParent)
	info.Status, _ = r.str(infoStatus)
	if out, ok := r.str(infoOutput); ok {
		info.Output = &out
	}
	ps := duroxide.PauseState{Held: uint64(r.int(infoHeld))}
	if s, ok := r.str(infoNamePausedSince); ok {
		if err := namePausedSince(&ps, op, instance, s); err != nil {
			return info, err
		}
	}
	if s, ok := r.str(infoPausedSince); ok {
		if err := pausedSince(&ps, op, instance, s); err != nil {
			return info, err
		}
	}
	if r.err != nil {
		return info, r.err
	}
	info.Pause = &ps
	return info, nil
}

// Reply of lua/get_execution_info.lua (nil for an unknown execution).
const (
	execStatus = iota
	execOutput
	execStarted
	execCompleted
	execEvents
)

// GetExecutionInfo returns one execution's status, output, times and event
// count.
func (p *partition) GetExecutionInfo(ctx context.Context, instance string, executionID uint64) (duroxide.ExecutionInfo, error) {
	const op = "get_execution_info"
	if instance == "" {
		return duroxide.ExecutionInfo{}, invalid(op, "empty instance id")
	}
	var a args
	a.str(instance).u64(executionID)
	res, err := p.run(ctx, op, scriptGetExecutionInfo, a)
	if err != nil {
		return duroxide.ExecutionInfo{}, err
	}
	if res == nil {
		return duroxide.ExecutionInfo{}, notFound(op, fmt.Sprintf("execution %d of instance %s", executionID, instance))
	}
	r := newReply(op, res)
	info := duroxide.ExecutionInfo{ExecutionID: executionID}
	info.Status, _ = r.str(execStatus)
	if out, ok := r.str(execOutput); ok {
		info.Output = &out
	}
	info.StartedAt = uint64(r.int(execStarted))
	if t, ok := r.optInt(execCompleted); ok {
		info.CompletedAt = uint64(t)
	}
	info.EventCount = int(r.int(execEvents))
	return info, r.err
}

// Reply of lua/get_system_metrics.lua.
const (
	metricsInstances = iota
	metricsExecutions
	metricsRunning
	metricsCompleted
	metricsFailed
	metricsEvents
)

// GetSystemMetrics returns totals read from counters and index sizes.
func (p *partition) GetSystemMetrics(ctx context.Context) (duroxide.SystemMetrics, error) {
	const op = "get_system_metrics"
	res, err := p.run(ctx, op, scriptGetSystemMetrics, nil)
	if err != nil {
		return duroxide.SystemMetrics{}, err
	}
	r := newReply(op, res)
	return duroxide.SystemMetrics{
		TotalInstances:     uint64(r.int(metricsInstances)),
		TotalExecutions:    uint64(r.int(metricsExecutions)),
		RunningInstances:   uint64(r.int(metricsRunning)),
		CompletedInstances: uint64(r.int(metricsCompleted)),
		FailedInstances:    uint64(r.int(metricsFailed)),
		TotalEvents:        uint64(r.int(metricsEvents)),
	}, r.err
}

// Reply of lua/get_queue_depths.lua.
const (
	depthOrchestrator = iota
	depthWorker
	depthTimer
)

// GetQueueDepths counts unlocked orchestrator messages and worker items
// visible now; TimerQueue counts orchestrator messages visible only later
// (timers and delayed messages).
func (p *partition) GetQueueDepths(ctx context.Context) (duroxide.QueueDepths, error) {
	const op = "get_queue_depths"
	res, err := p.run(ctx, op, scriptGetQueueDepths, nil)
	if err != nil {
		return duroxide.QueueDepths{}, err
	}
	r := newReply(op, res)
	return duroxide.QueueDepths{
		OrchestratorQueue: int(r.int(depthOrchestrator)),
		WorkerQueue:       int(r.int(depthWorker)),
		TimerQueue:        int(r.int(depthTimer)),
	}, r.err
}

// ListChildren returns the direct children of an instance.
func (p *partition) ListChildren(ctx context.Context, instance string) ([]string, error) {
	const op = "list_children"
	if instance == "" {
		return nil, invalid(op, "empty instance id")
	}
	return p.listIndex(ctx, op, p.keys.Children(instance), false)
}

// GetParentID returns the parent of an instance ("" for a root).
func (p *partition) GetParentID(ctx context.Context, instance string) (string, error) {
	const op = "get_parent_id"
	if instance == "" {
		return "", invalid(op, "empty instance id")
	}
	// The fields read, in HMGET order: every record has a current execution.
	const (
		fieldCur = iota
		fieldParent
	)
	v, err := p.rdb.HMGet(ctx, p.keys.Instance(instance), "cur", "parent").Result()
	if err != nil {
		return "", fail(op, err)
	}
	if v[fieldCur] == nil {
		return "", notFound(op, "instance "+instance)
	}
	parent, _ := v[fieldParent].(string)
	return parent, nil
}

// Reply of lua/get_instance_tree.lua: one array.
const treeIDs = 0

// GetInstanceTree returns an instance and all its descendants, breadth
// first, the root first.
func (p *partition) GetInstanceTree(ctx context.Context, instance string) (duroxide.InstanceTree, error) {
	const op = "get_instance_tree"
	if instance == "" {
		return duroxide.InstanceTree{}, invalid(op, "empty instance id")
	}
	var a args
	a.str(instance)
	res, err := p.run(ctx, op, scriptGetInstanceTree, a)
	if err != nil {
		return duroxide.InstanceTree{}, err
	}
	r := newReply(op, res)
	return duroxide.InstanceTree{RootID: instance, AllIDs: r.strs(treeIDs)}, r.err
}
