package redisprovider

// luaScript is a handle on one script, lua/<name>.lua: the provider calls
// scripts through these constants, so a script that does not exist is a
// compile error, not a failed map lookup.
//
// A script is named after the operation it implements (duroxide's snake_case
// method name, the Operation of its errors). Where one script serves several
// methods it carries one of their names: read_history also serves read,
// read_with_execution and read_history_with_execution_id; prune_executions
// also serves prune_executions_bulk. rearm_wake and move_due serve the pollers, no method;
// open_namespace and relay_messages serve Provider's partitions.
// enqueue_for_orchestrator_checked serves the optional CheckedEnqueuer.
// The schedule_* scripts serve duroxide.ScheduleStore; pause_instance
// serves duroxide.InstancePauser (also resume_instance); set_limit (also
// delete_limit), set_orchestration_limit (also delete_limit of an
// orchestration name), set_priority (also set_aging_window) and
// pause_orchestration_name (also resume_orchestration_name) serve
// duroxide.FlowController.
// enqueue_for_orchestrator and enqueue_for_worker also serve the batch
// methods, enqueue_for_orchestrator_batch and enqueue_for_worker_batch.
// abandon_orchestration_item_with_note, get_pending_start and
// list_pending_starts serve duroxide.PendingStartNoter.
// get_instance_activities and get_runtimes serve operators' views
// (InstanceActivity, Runtimes), no duroxide method.
// ack_fetch_work_item and ack_fetch_orchestration_item serve the optional
// ack-and-fetch methods, whose failed ack must read exactly like the plain
// ack's: their errors carry ack_work_item and ack_orchestration_item.
type luaScript int

const (
	scriptAbandonOrchestrationItem luaScript = iota
	scriptAbandonOrchestrationItemWithNote
	scriptAbandonWorkItem
	scriptAckFetchOrchestrationItem
	scriptAckFetchWorkItem
	scriptAckOrchestrationItem
	scriptAckWorkItem
	scriptAppendWithExecution
	scriptCleanupOrphanedSessions
	scriptDeleteInstance
	scriptDeleteInstanceBulk
	scriptDeleteInstancesAtomic
	scriptEnqueueForOrchestratorChecked
	scriptEnqueueForOrchestrator
	scriptEnqueueForWorker
	scriptFetchOrchestrationItem
	scriptFetchWorkItem
	scriptGetExecutionInfo
	scriptGetInstanceActivities
	scriptGetInstanceInfo
	scriptGetInstanceStats
	scriptGetInstanceTree
	scriptGetKVAllValues
	scriptGetKVValue
	scriptGetPendingStart
	scriptGetQueueDepths
	scriptGetRuntimes
	scriptGetSystemMetrics
	scriptLatestExecutionID
	scriptListInstancesPage
	scriptListPendingStarts
	scriptMoveDue
	scriptOpenNamespace
	scriptPauseInstance
	scriptPauseOrchestrationName
	scriptPruneExecutions
	scriptReadHistory
	scriptRearmWake
	scriptRelayMessages
	scriptRenewOrchestrationItemLock
	scriptRenewSessionLock
	scriptRenewWorkItemLock
	scriptSetPriority
	scriptScheduleClaim
	scriptScheduleConfirm
	scriptScheduleDelete
	scriptScheduleGet
	scriptScheduleList
	scriptScheduleNextDue
	scriptSchedulePause
	scriptScheduleTakeBuffered
	scriptScheduleTrigger
	scriptScheduleUpsert
	scriptSetLimit
	scriptSetOrchestrationLimit
	scriptCount // not a script: the number of them
)

// scriptFiles names each handle's Lua file (lua/<name>.lua).
// TestScriptHandlesMatchLuaFiles checks it against the files.
var scriptFiles = [scriptCount]string{
	scriptAbandonOrchestrationItem:         "abandon_orchestration_item",
	scriptAbandonOrchestrationItemWithNote: "abandon_orchestration_item_with_note",
	scriptAbandonWorkItem:                  "abandon_work_item",
	scriptAckFetchOrchestrationItem:        "ack_fetch_orchestration_item",
	scriptAckFetchWorkItem:                 "ack_fetch_work_item",
	scriptAckOrchestrationItem:             "ack_orchestration_item",
	scriptAckWorkItem:                      "ack_work_item",
	scriptAppendWithExecution:              "append_with_execution",
	scriptCleanupOrphanedSessions:          "cleanup_orphaned_sessions",
	scriptDeleteInstance:                   "delete_instance",
	scriptDeleteInstanceBulk:               "delete_instance_bulk",
	scriptDeleteInstancesAtomic:            "delete_instances_atomic",
	scriptEnqueueForOrchestrator:           "enqueue_for_orchestrator",
	scriptEnqueueForOrchestratorChecked:    "enqueue_for_orchestrator_checked",
	scriptEnqueueForWorker:                 "enqueue_for_worker",
	scriptFetchOrchestrationItem:           "fetch_orchestration_item",
	scriptFetchWorkItem:                    "fetch_work_item",
	scriptGetExecutionInfo:                 "get_execution_info",
	scriptGetInstanceActivities:            "get_instance_activities",
	scriptGetInstanceInfo:                  "get_instance_info",
	scriptGetInstanceStats:                 "get_instance_stats",
	scriptGetInstanceTree:                  "get_instance_tree",
	scriptGetKVAllValues:                   "get_kv_all_values",
	scriptGetKVValue:                       "get_kv_value",
	scriptGetPendingStart:                  "get_pending_start",
	scriptGetQueueDepths:                   "get_queue_depths",
	scriptGetRuntimes:                      "get_runtimes",
	scriptGetSystemMetrics:                 "get_system_metrics",
	scriptLatestExecutionID:                "latest_execution_id",
	scriptListInstancesPage:                "list_instances_page",
	scriptListPendingStarts:                "list_pending_starts",
	scriptMoveDue:                          "move_due",
	scriptOpenNamespace:                    "open_namespace",
	scriptPauseInstance:                    "pause_instance",
	scriptPauseOrchestrationName:           "pause_orchestration_name",
	scriptPruneExecutions:                  "prune_executions",
	scriptReadHistory:                      "read_history",
	scriptRearmWake:                        "rearm_wake",
	scriptRelayMessages:                    "relay_messages",
	scriptRenewOrchestrationItemLock:       "renew_orchestration_item_lock",
	scriptRenewSessionLock:                 "renew_session_lock",
	scriptRenewWorkItemLock:                "renew_work_item_lock",
	scriptSetPriority:                      "set_priority",
	scriptScheduleClaim:                    "schedule_claim",
	scriptScheduleConfirm:                  "schedule_confirm",
	scriptScheduleDelete:                   "schedule_delete",
	scriptScheduleGet:                      "schedule_get",
	scriptScheduleList:                     "schedule_list",
	scriptScheduleNextDue:                  "schedule_next_due",
	scriptSchedulePause:                    "schedule_pause",
	scriptScheduleTakeBuffered:             "schedule_take_buffered",
	scriptScheduleTrigger:                  "schedule_trigger",
	scriptScheduleUpsert:                   "schedule_upsert",
	scriptSetLimit:                         "set_limit",
	scriptSetOrchestrationLimit:            "set_orchestration_limit",
}

// String returns the script's name, which is its file's and, for most, its
// operation's.
func (s luaScript) String() string { return scriptFiles[s] }
