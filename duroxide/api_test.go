package duroxide_test

// This file pins the public API to CONTRACT.md ("package duroxide"): every function and
// method is assigned to a variable of exactly the documented type and every struct is
// built with every documented field name, so any drift fails to compile.

import (
	"context"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// ---- constants ----
var (
	_ uint64 = duroxide.InitialExecutionID
	_ uint64 = duroxide.InitialEventID
	_ int    = duroxide.MaxWorkerTags
	_ string = duroxide.CurrentDuroxideVersion
)

// ---- errors ----
var (
	_ func(*duroxide.ProviderError) string         = (*duroxide.ProviderError).Error
	_ func(*duroxide.ProviderError) error          = (*duroxide.ProviderError).Unwrap
	_ func(string, string) *duroxide.ProviderError = duroxide.Retryable
	_ func(string, string) *duroxide.ProviderError = duroxide.Permanent
	_ func(error) bool                             = duroxide.IsRetryable
	_ error                                        = (*duroxide.ProviderError)(nil)
	_                                              = duroxide.ProviderError{Operation: "", Message: "", Retryable: false, Err: nil}
)

// ---- work items ----
var (
	_ func(duroxide.WorkItem) ([]byte, error) = duroxide.MarshalWorkItem
	_ func([]byte) (duroxide.WorkItem, error) = duroxide.UnmarshalWorkItem

	_ duroxide.WorkItem = duroxide.StartOrchestration{Instance: "", Orchestration: "", Input: "",
		Version: (*string)(nil), ParentInstance: (*string)(nil), ParentID: (*uint64)(nil), ExecutionID: uint64(0)}
	_ duroxide.WorkItem = duroxide.ActivityExecute{Instance: "", ExecutionID: uint64(0), ID: uint64(0),
		Name: "", Input: "", SessionID: (*string)(nil), Tag: (*string)(nil)}
	_ duroxide.WorkItem = duroxide.ActivityCompleted{Instance: "", ExecutionID: uint64(0), ID: uint64(0), Result: ""}
	_ duroxide.WorkItem = duroxide.ActivityFailed{Instance: "", ExecutionID: uint64(0), ID: uint64(0),
		Details: duroxide.ErrorDetails{}}
	_ duroxide.WorkItem = duroxide.TimerFired{Instance: "", ExecutionID: uint64(0), ID: uint64(0), FireAtMs: uint64(0)}
	_ duroxide.WorkItem = duroxide.ExternalRaised{Instance: "", Name: "", Data: ""}
	_ duroxide.WorkItem = duroxide.SubOrchCompleted{ParentInstance: "", ParentExecutionID: uint64(0),
		ParentID: uint64(0), Result: ""}
	_ duroxide.WorkItem = duroxide.SubOrchFailed{ParentInstance: "", ParentExecutionID: uint64(0),
		ParentID: uint64(0), Details: duroxide.ErrorDetails{}}
	_ duroxide.WorkItem = duroxide.CancelInstance{Instance: "", Reason: ""}
	_ duroxide.WorkItem = duroxide.ContinueAsNew{Instance: "", Orchestration: "", Input: "", Version: (*string)(nil),
		CarryForwardEvents: [][2]string(nil), InitialCustomStatus: (*string)(nil)}
	_ duroxide.WorkItem = duroxide.QueueMessage{Instance: "", Name: "", Data: ""}

	_ func(duroxide.StartOrchestration) string = duroxide.StartOrchestration.InstanceID
	_ func(duroxide.SubOrchCompleted) string   = duroxide.SubOrchCompleted.InstanceID
	_ func(duroxide.SubOrchFailed) string      = duroxide.SubOrchFailed.InstanceID
)

// ---- error details ----
var (
	_ = duroxide.ErrorDetails{
		Infrastructure: &duroxide.InfrastructureError{Operation: "", Message: "", Retryable: false},
		Configuration: &duroxide.ConfigurationError{Kind: duroxide.ConfigErrorNondeterminism, Resource: "",
			Message: (*string)(nil)},
		Application: &duroxide.ApplicationError{Kind: duroxide.AppErrorKind{Variant: duroxide.AppErrorCancelled,
			Reason: ""}, Message: "", Retryable: false},
		Poison: &duroxide.PoisonError{AttemptCount: uint32(0), MaxAttempts: uint32(0), Message: "",
			MessageType: duroxide.PoisonMessageType{
				Orchestration: &duroxide.PoisonOrchestration{Instance: "", ExecutionID: uint64(0)},
				Activity: &duroxide.PoisonActivity{Instance: "", ExecutionID: uint64(0), ActivityName: "",
					ActivityID: uint64(0)},
				FailedDeserialization: &duroxide.PoisonFailedDeserialization{Instance: "", ExecutionID: uint64(0),
					Error: ""},
			}},
	}
	_ func(string) duroxide.ErrorDetails               = duroxide.ApplicationFailure
	_ func(duroxide.ErrorDetails) ([]byte, error)      = duroxide.ErrorDetails.MarshalJSON
	_ func(*duroxide.ErrorDetails, []byte) error       = (*duroxide.ErrorDetails).UnmarshalJSON
	_ []duroxide.AppErrorVariant                       = []duroxide.AppErrorVariant{duroxide.AppErrorActivityFailed, duroxide.AppErrorOrchestrationFailed, duroxide.AppErrorPanicked, duroxide.AppErrorCancelled}
	_ func(duroxide.AppErrorKind) ([]byte, error)      = duroxide.AppErrorKind.MarshalJSON
	_ func(*duroxide.AppErrorKind, []byte) error       = (*duroxide.AppErrorKind).UnmarshalJSON
	_ func(duroxide.ConfigErrorKind) ([]byte, error)   = duroxide.ConfigErrorKind.MarshalJSON
	_ func(*duroxide.ConfigErrorKind, []byte) error    = (*duroxide.ConfigErrorKind).UnmarshalJSON
	_ func(duroxide.PoisonMessageType) ([]byte, error) = duroxide.PoisonMessageType.MarshalJSON
	_ func(*duroxide.PoisonMessageType, []byte) error  = (*duroxide.PoisonMessageType).UnmarshalJSON
)

// ---- events ----
var (
	_ = duroxide.Event{EventID: uint64(0), SourceEventID: (*uint64)(nil), InstanceID: "", ExecutionID: uint64(0),
		TimestampMs: uint64(0), DuroxideVersion: "", Kind: duroxide.EventKind(nil)}
	_ func(duroxide.Event) ([]byte, error)                                     = duroxide.Event.MarshalJSON
	_ func(*duroxide.Event, []byte) error                                      = (*duroxide.Event).UnmarshalJSON
	_ func(uint64, string, uint64, *uint64, duroxide.EventKind) duroxide.Event = duroxide.NewEvent
	_ func(duroxide.EventKind) string                                          = duroxide.EventKind.EventType

	_ = []duroxide.EventKind{
		duroxide.OrchestrationStartedEvent{Name: "", Version: "", Input: "", ParentInstance: (*string)(nil),
			ParentID: (*uint64)(nil), CarryForwardEvents: (*[][2]string)(nil), InitialCustomStatus: (*string)(nil)},
		duroxide.OrchestrationCompletedEvent{Output: ""},
		duroxide.OrchestrationFailedEvent{Details: duroxide.ErrorDetails{}},
		duroxide.ActivityScheduledEvent{Name: "", Input: "", SessionID: (*string)(nil), Tag: (*string)(nil)},
		duroxide.ActivityCompletedEvent{Result: ""},
		duroxide.ActivityFailedEvent{Details: duroxide.ErrorDetails{}},
		duroxide.ActivityCancelRequestedEvent{Reason: ""},
		duroxide.TimerCreatedEvent{FireAtMs: uint64(0)},
		duroxide.TimerFiredEvent{FireAtMs: uint64(0)},
		duroxide.ExternalSubscribedEvent{Name: ""},
		duroxide.ExternalEventEvent{Name: "", Data: ""},
		duroxide.OrchestrationChainedEvent{Name: "", Instance: "", Input: ""},
		duroxide.SubOrchestrationScheduledEvent{Name: "", Instance: "", Input: ""},
		duroxide.SubOrchestrationCompletedEvent{Result: ""},
		duroxide.SubOrchestrationFailedEvent{Details: duroxide.ErrorDetails{}},
		duroxide.SubOrchestrationCancelRequestedEvent{Reason: ""},
		duroxide.OrchestrationContinuedAsNewEvent{Input: ""},
		duroxide.OrchestrationCancelRequestedEvent{Reason: ""},
		duroxide.ExternalSubscribedCancelledEvent{Reason: ""},
		duroxide.QueueSubscribedEvent{Name: ""},
		duroxide.QueueEventDeliveredEvent{Name: "", Data: ""},
		duroxide.QueueSubscriptionCancelledEvent{Reason: ""},
		duroxide.CustomStatusUpdatedEvent{Status: (*string)(nil)},
		duroxide.KeyValueSetEvent{Key: "", Value: "", LastUpdatedAtMs: uint64(0)},
		duroxide.KeyValueClearedEvent{Key: ""},
		duroxide.KeyValuesClearedEvent{},
	}
)

// ---- versions and filters ----
var (
	_                                                                  = duroxide.SemverRange{Min: (*semver.Version)(nil), Max: (*semver.Version)(nil)}
	_ func(duroxide.SemverRange, *semver.Version) bool                 = duroxide.SemverRange.Contains
	_                                                                  = duroxide.DispatcherCapabilityFilter{SupportedDuroxideVersions: []duroxide.SemverRange(nil)}
	_ func(*duroxide.DispatcherCapabilityFilter, *semver.Version) bool = (*duroxide.DispatcherCapabilityFilter).IsCompatible

	_ []duroxide.TagFilterKind = []duroxide.TagFilterKind{duroxide.TagDefaultOnly, duroxide.TagOnly,
		duroxide.TagDefaultAnd, duroxide.TagAny, duroxide.TagNone}
	_                                        = duroxide.TagFilter{Kind: duroxide.TagFilterKind(0), Tags: []string(nil)}
	_ func() duroxide.TagFilter              = duroxide.DefaultOnly
	_ func(...string) duroxide.TagFilter     = duroxide.TagsOnly
	_ func(...string) duroxide.TagFilter     = duroxide.DefaultAndTags
	_ func() duroxide.TagFilter              = duroxide.AnyTag
	_ func() duroxide.TagFilter              = duroxide.NoTags
	_ func(duroxide.TagFilter) error         = duroxide.TagFilter.Validate
	_ func(duroxide.TagFilter, *string) bool = duroxide.TagFilter.Matches
	_                                        = duroxide.SessionFetchConfig{OwnerID: "", LockTimeout: time.Duration(0)}
	_                                        = duroxide.ScheduledActivityIdentifier{Instance: "", ExecutionID: uint64(0), ActivityID: uint64(0)}
)

// ---- fetched items, commit, stats ----
var (
	_ = duroxide.KVEntry{Value: "", LastUpdatedAtMs: uint64(0)}
	_ = duroxide.OrchestrationItem{Instance: "", OrchestrationName: "", ExecutionID: uint64(0), Version: "",
		History: []duroxide.Event(nil), Messages: []duroxide.WorkItem(nil), HistoryError: "",
		KVSnapshot: map[string]duroxide.KVEntry(nil), LockToken: "", AttemptCount: uint32(0)}
	_ = duroxide.LockedWorkItem{Item: duroxide.WorkItem(nil), LockToken: "", AttemptCount: uint32(0)}
	_ = duroxide.ExecutionMetadata{Status: "", Output: (*string)(nil), OrchestrationName: "",
		OrchestrationVersion: "", ParentInstanceID: "", PinnedDuroxideVersion: (*semver.Version)(nil)}
	_ = duroxide.OrchestrationCommit{ExecutionID: uint64(0), HistoryDelta: []duroxide.Event(nil),
		WorkerItems: []duroxide.WorkItem(nil), OrchestratorItems: []duroxide.WorkItem(nil),
		Metadata:            duroxide.ExecutionMetadata{},
		CancelledActivities: []duroxide.ScheduledActivityIdentifier(nil)}
	_ = duroxide.CustomStatus{Status: (*string)(nil), Version: uint64(0)}
	_ = duroxide.InstanceStats{HistoryEventCount: uint64(0), HistorySizeBytes: uint64(0),
		QueuePendingCount: uint64(0), KVUserKeyCount: uint64(0), KVTotalValueBytes: uint64(0)}
)

// ---- admin structs ----
var (
	_ = duroxide.InstanceInfo{InstanceID: "", OrchestrationName: "", OrchestrationVersion: "",
		CurrentExecutionID: uint64(0), Status: "", Output: (*string)(nil), CreatedAt: uint64(0),
		UpdatedAt: uint64(0), ParentInstanceID: ""}
	_ = duroxide.ExecutionInfo{ExecutionID: uint64(0), Status: "", Output: (*string)(nil), StartedAt: uint64(0),
		CompletedAt: uint64(0), EventCount: int(0)}
	_ = duroxide.SystemMetrics{TotalInstances: uint64(0), TotalExecutions: uint64(0), RunningInstances: uint64(0),
		CompletedInstances: uint64(0), FailedInstances: uint64(0), TotalEvents: uint64(0)}
	_ = duroxide.QueueDepths{OrchestratorQueue: int(0), WorkerQueue: int(0), TimerQueue: int(0)}
	_ = duroxide.InstanceFilter{InstanceIDs: []string(nil), CompletedBefore: uint64(0), Limit: int(0)}
	_ = duroxide.PruneOptions{KeepLast: int(0), CompletedBefore: uint64(0)}
	_ = duroxide.DeleteInstanceResult{InstancesDeleted: uint64(0), ExecutionsDeleted: uint64(0),
		EventsDeleted: uint64(0), QueueMessagesDeleted: uint64(0)}
	_ = duroxide.PruneResult{InstancesProcessed: uint64(0), ExecutionsDeleted: uint64(0), EventsDeleted: uint64(0)}
	_ = duroxide.InstanceTree{RootID: "", AllIDs: []string(nil)}
)

// ---- interfaces: the method expressions below have exactly CONTRACT.md's signatures,
// and fakeProvider (whose methods repeat them) must satisfy both interfaces. ----

type ctx = context.Context
type dur = time.Duration

var (
	_ = (duroxide.Provider)(nil)
	_ = (duroxide.ProviderAdmin)(nil)

	_ duroxide.Provider      = fakeProvider{}
	_ duroxide.ProviderAdmin = fakeProvider{}

	_ func(duroxide.Provider) string                                                                                             = duroxide.Provider.Name
	_ func(duroxide.Provider) string                                                                                             = duroxide.Provider.Version
	_ func(duroxide.Provider, ctx, dur, dur, *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error)          = duroxide.Provider.FetchOrchestrationItem
	_ func(duroxide.Provider, ctx, string, duroxide.OrchestrationCommit) error                                                   = duroxide.Provider.AckOrchestrationItem
	_ func(duroxide.Provider, ctx, string, dur, bool) error                                                                      = duroxide.Provider.AbandonOrchestrationItem
	_ func(duroxide.Provider, ctx, string, dur) error                                                                            = duroxide.Provider.RenewOrchestrationItemLock
	_ func(duroxide.Provider, ctx, string) ([]duroxide.Event, error)                                                             = duroxide.Provider.Read
	_ func(duroxide.Provider, ctx, string, uint64) ([]duroxide.Event, error)                                                     = duroxide.Provider.ReadWithExecution
	_ func(duroxide.Provider, ctx, string, uint64, []duroxide.Event) error                                                       = duroxide.Provider.AppendWithExecution
	_ func(duroxide.Provider, ctx, duroxide.WorkItem) error                                                                      = duroxide.Provider.EnqueueForWorker
	_ func(duroxide.Provider, ctx, dur, dur, *duroxide.SessionFetchConfig, duroxide.TagFilter) (*duroxide.LockedWorkItem, error) = duroxide.Provider.FetchWorkItem
	_ func(duroxide.Provider, ctx, string, duroxide.WorkItem) error                                                              = duroxide.Provider.AckWorkItem
	_ func(duroxide.Provider, ctx, string, dur, bool) error                                                                      = duroxide.Provider.AbandonWorkItem
	_ func(duroxide.Provider, ctx, string, dur) error                                                                            = duroxide.Provider.RenewWorkItemLock
	_ func(duroxide.Provider, ctx, []string, dur, dur) (int, error)                                                              = duroxide.Provider.RenewSessionLock
	_ func(duroxide.Provider, ctx, dur) (int, error)                                                                             = duroxide.Provider.CleanupOrphanedSessions
	_ func(duroxide.Provider, ctx, duroxide.WorkItem, dur) error                                                                 = duroxide.Provider.EnqueueForOrchestrator
	_ func(duroxide.Provider, ctx, string, uint64) (*duroxide.CustomStatus, error)                                               = duroxide.Provider.GetCustomStatus
	_ func(duroxide.Provider, ctx, string, string) (string, bool, error)                                                         = duroxide.Provider.GetKVValue
	_ func(duroxide.Provider, ctx, string) (map[string]string, error)                                                            = duroxide.Provider.GetKVAllValues
	_ func(duroxide.Provider, ctx, string) (*duroxide.InstanceStats, error)                                                      = duroxide.Provider.GetInstanceStats
	_ func(duroxide.Provider) duroxide.ProviderAdmin                                                                             = duroxide.Provider.Admin

	_ func(duroxide.ProviderAdmin, ctx) ([]string, error)                                                             = duroxide.ProviderAdmin.ListInstances
	_ func(duroxide.ProviderAdmin, ctx, string) ([]string, error)                                                     = duroxide.ProviderAdmin.ListInstancesByStatus
	_ func(duroxide.ProviderAdmin, ctx, string) ([]uint64, error)                                                     = duroxide.ProviderAdmin.ListExecutions
	_ func(duroxide.ProviderAdmin, ctx, string, uint64) ([]duroxide.Event, error)                                     = duroxide.ProviderAdmin.ReadHistoryWithExecutionID
	_ func(duroxide.ProviderAdmin, ctx, string) ([]duroxide.Event, error)                                             = duroxide.ProviderAdmin.ReadHistory
	_ func(duroxide.ProviderAdmin, ctx, string) (uint64, error)                                                       = duroxide.ProviderAdmin.LatestExecutionID
	_ func(duroxide.ProviderAdmin, ctx, string) (duroxide.InstanceInfo, error)                                        = duroxide.ProviderAdmin.GetInstanceInfo
	_ func(duroxide.ProviderAdmin, ctx, string, uint64) (duroxide.ExecutionInfo, error)                               = duroxide.ProviderAdmin.GetExecutionInfo
	_ func(duroxide.ProviderAdmin, ctx) (duroxide.SystemMetrics, error)                                               = duroxide.ProviderAdmin.GetSystemMetrics
	_ func(duroxide.ProviderAdmin, ctx) (duroxide.QueueDepths, error)                                                 = duroxide.ProviderAdmin.GetQueueDepths
	_ func(duroxide.ProviderAdmin, ctx, string) ([]string, error)                                                     = duroxide.ProviderAdmin.ListChildren
	_ func(duroxide.ProviderAdmin, ctx, string) (string, error)                                                       = duroxide.ProviderAdmin.GetParentID
	_ func(duroxide.ProviderAdmin, ctx, string) (duroxide.InstanceTree, error)                                        = duroxide.ProviderAdmin.GetInstanceTree
	_ func(duroxide.ProviderAdmin, ctx, []string, bool) (duroxide.DeleteInstanceResult, error)                        = duroxide.ProviderAdmin.DeleteInstancesAtomic
	_ func(duroxide.ProviderAdmin, ctx, string, bool) (duroxide.DeleteInstanceResult, error)                          = duroxide.ProviderAdmin.DeleteInstance
	_ func(duroxide.ProviderAdmin, ctx, duroxide.InstanceFilter) (duroxide.DeleteInstanceResult, error)               = duroxide.ProviderAdmin.DeleteInstanceBulk
	_ func(duroxide.ProviderAdmin, ctx, string, duroxide.PruneOptions) (duroxide.PruneResult, error)                  = duroxide.ProviderAdmin.PruneExecutions
	_ func(duroxide.ProviderAdmin, ctx, duroxide.InstanceFilter, duroxide.PruneOptions) (duroxide.PruneResult, error) = duroxide.ProviderAdmin.PruneExecutionsBulk
)

// fakeProvider implements both interfaces with CONTRACT.md's exact signatures. An extra
// or missing method in either interface makes the assignments above fail to compile
// (missing) or leaves a method expression above unresolvable (renamed).
type fakeProvider struct{}

func (fakeProvider) Name() string    { return "fake" }
func (fakeProvider) Version() string { return "0" }
func (fakeProvider) FetchOrchestrationItem(ctx context.Context, lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return nil, nil
}
func (fakeProvider) AckOrchestrationItem(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit) error {
	return nil
}
func (fakeProvider) AbandonOrchestrationItem(ctx context.Context, lockToken string, delay time.Duration, ignoreAttempt bool) error {
	return nil
}
func (fakeProvider) RenewOrchestrationItemLock(ctx context.Context, lockToken string, extendFor time.Duration) error {
	return nil
}
func (fakeProvider) Read(ctx context.Context, instance string) ([]duroxide.Event, error) {
	return nil, nil
}
func (fakeProvider) ReadWithExecution(ctx context.Context, instance string, executionID uint64) ([]duroxide.Event, error) {
	return nil, nil
}
func (fakeProvider) AppendWithExecution(ctx context.Context, instance string, executionID uint64, events []duroxide.Event) error {
	return nil
}
func (fakeProvider) EnqueueForWorker(ctx context.Context, item duroxide.WorkItem) error { return nil }
func (fakeProvider) FetchWorkItem(ctx context.Context, lockTimeout, pollTimeout time.Duration, session *duroxide.SessionFetchConfig, tags duroxide.TagFilter) (*duroxide.LockedWorkItem, error) {
	return nil, nil
}
func (fakeProvider) AckWorkItem(ctx context.Context, lockToken string, completion duroxide.WorkItem) error {
	return nil
}
func (fakeProvider) AbandonWorkItem(ctx context.Context, lockToken string, delay time.Duration, ignoreAttempt bool) error {
	return nil
}
func (fakeProvider) RenewWorkItemLock(ctx context.Context, lockToken string, extendFor time.Duration) error {
	return nil
}
func (fakeProvider) RenewSessionLock(ctx context.Context, ownerIDs []string, extendFor, idleTimeout time.Duration) (int, error) {
	return 0, nil
}
func (fakeProvider) CleanupOrphanedSessions(ctx context.Context, idleTimeout time.Duration) (int, error) {
	return 0, nil
}
func (fakeProvider) EnqueueForOrchestrator(ctx context.Context, item duroxide.WorkItem, delay time.Duration) error {
	return nil
}
func (fakeProvider) GetCustomStatus(ctx context.Context, instance string, lastSeenVersion uint64) (*duroxide.CustomStatus, error) {
	return nil, nil
}
func (fakeProvider) GetKVValue(ctx context.Context, instance, key string) (value string, found bool, err error) {
	return "", false, nil
}
func (fakeProvider) GetKVAllValues(ctx context.Context, instance string) (map[string]string, error) {
	return nil, nil
}
func (fakeProvider) GetInstanceStats(ctx context.Context, instance string) (*duroxide.InstanceStats, error) {
	return nil, nil
}
func (fakeProvider) Admin() duroxide.ProviderAdmin { return nil }

func (fakeProvider) ListInstances(ctx context.Context) ([]string, error) { return nil, nil }
func (fakeProvider) ListInstancesByStatus(ctx context.Context, status string) ([]string, error) {
	return nil, nil
}
func (fakeProvider) ListExecutions(ctx context.Context, instance string) ([]uint64, error) {
	return nil, nil
}
func (fakeProvider) ReadHistoryWithExecutionID(ctx context.Context, instance string, executionID uint64) ([]duroxide.Event, error) {
	return nil, nil
}
func (fakeProvider) ReadHistory(ctx context.Context, instance string) ([]duroxide.Event, error) {
	return nil, nil
}
func (fakeProvider) LatestExecutionID(ctx context.Context, instance string) (uint64, error) {
	return 0, nil
}
func (fakeProvider) GetInstanceInfo(ctx context.Context, instance string) (duroxide.InstanceInfo, error) {
	return duroxide.InstanceInfo{}, nil
}
func (fakeProvider) GetExecutionInfo(ctx context.Context, instance string, executionID uint64) (duroxide.ExecutionInfo, error) {
	return duroxide.ExecutionInfo{}, nil
}
func (fakeProvider) GetSystemMetrics(ctx context.Context) (duroxide.SystemMetrics, error) {
	return duroxide.SystemMetrics{}, nil
}
func (fakeProvider) GetQueueDepths(ctx context.Context) (duroxide.QueueDepths, error) {
	return duroxide.QueueDepths{}, nil
}
func (fakeProvider) ListChildren(ctx context.Context, instance string) ([]string, error) {
	return nil, nil
}
func (fakeProvider) GetParentID(ctx context.Context, instance string) (string, error) { return "", nil }
func (fakeProvider) GetInstanceTree(ctx context.Context, instance string) (duroxide.InstanceTree, error) {
	return duroxide.InstanceTree{}, nil
}
func (fakeProvider) DeleteInstancesAtomic(ctx context.Context, ids []string, force bool) (duroxide.DeleteInstanceResult, error) {
	return duroxide.DeleteInstanceResult{}, nil
}
func (fakeProvider) DeleteInstance(ctx context.Context, instance string, force bool) (duroxide.DeleteInstanceResult, error) {
	return duroxide.DeleteInstanceResult{}, nil
}
func (fakeProvider) DeleteInstanceBulk(ctx context.Context, filter duroxide.InstanceFilter) (duroxide.DeleteInstanceResult, error) {
	return duroxide.DeleteInstanceResult{}, nil
}
func (fakeProvider) PruneExecutions(ctx context.Context, instance string, opts duroxide.PruneOptions) (duroxide.PruneResult, error) {
	return duroxide.PruneResult{}, nil
}
func (fakeProvider) PruneExecutionsBulk(ctx context.Context, filter duroxide.InstanceFilter, opts duroxide.PruneOptions) (duroxide.PruneResult, error) {
	return duroxide.PruneResult{}, nil
}

// TestAPIShape exists so `go test -run API` reports this file; the real checks are the
// compile-time assignments above.
func TestAPIShape(t *testing.T) {
	var p duroxide.Provider = fakeProvider{}
	if p.Admin() != nil {
		t.Error("fake provider has no admin")
	}
	// WorkItem is sealed: only this package's variants (value or pointer) implement it.
	var items = []duroxide.WorkItem{duroxide.CancelInstance{}, &duroxide.CancelInstance{}}
	if len(items) != 2 {
		t.Fatal("unreachable")
	}
}
