package durable

import (
	"context"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// noAdmin is Client.Admin's answer for a provider without management: a
// value rather than nil, so c.Admin().ListInstances(ctx) needs no nil check
// and still reports why it cannot answer.
type noAdmin struct{}

var _ duroxide.ProviderAdmin = noAdmin{}

func (noAdmin) ListInstances(context.Context) ([]string, error) { return nil, ErrNoManagement }
func (noAdmin) ListInstancesByStatus(context.Context, string) ([]string, error) {
	return nil, ErrNoManagement
}
func (noAdmin) ListExecutions(context.Context, string) ([]uint64, error) { return nil, ErrNoManagement }
func (noAdmin) ReadHistoryWithExecutionID(context.Context, string, uint64) ([]duroxide.Event, error) {
	return nil, ErrNoManagement
}
func (noAdmin) ReadHistory(context.Context, string) ([]duroxide.Event, error) {
	return nil, ErrNoManagement
}
func (noAdmin) LatestExecutionID(context.Context, string) (uint64, error) { return 0, ErrNoManagement }
func (noAdmin) GetInstanceInfo(context.Context, string) (duroxide.InstanceInfo, error) {
	return duroxide.InstanceInfo{}, ErrNoManagement
}
func (noAdmin) GetExecutionInfo(context.Context, string, uint64) (duroxide.ExecutionInfo, error) {
	return duroxide.ExecutionInfo{}, ErrNoManagement
}
func (noAdmin) GetSystemMetrics(context.Context) (duroxide.SystemMetrics, error) {
	return duroxide.SystemMetrics{}, ErrNoManagement
}
func (noAdmin) GetQueueDepths(context.Context) (duroxide.QueueDepths, error) {
	return duroxide.QueueDepths{}, ErrNoManagement
}
func (noAdmin) ListChildren(context.Context, string) ([]string, error) { return nil, ErrNoManagement }
func (noAdmin) GetParentID(context.Context, string) (string, error)    { return "", ErrNoManagement }
func (noAdmin) GetInstanceTree(context.Context, string) (duroxide.InstanceTree, error) {
	return duroxide.InstanceTree{}, ErrNoManagement
}
func (noAdmin) DeleteInstancesAtomic(context.Context, []string, bool) (duroxide.DeleteInstanceResult, error) {
	return duroxide.DeleteInstanceResult{}, ErrNoManagement
}
func (noAdmin) DeleteInstance(context.Context, string, bool) (duroxide.DeleteInstanceResult, error) {
	return duroxide.DeleteInstanceResult{}, ErrNoManagement
}
func (noAdmin) DeleteInstanceBulk(context.Context, duroxide.InstanceFilter) (duroxide.DeleteInstanceResult, error) {
	return duroxide.DeleteInstanceResult{}, ErrNoManagement
}
func (noAdmin) PruneExecutions(context.Context, string, duroxide.PruneOptions) (duroxide.PruneResult, error) {
	return duroxide.PruneResult{}, ErrNoManagement
}
func (noAdmin) PruneExecutionsBulk(context.Context, duroxide.InstanceFilter, duroxide.PruneOptions) (duroxide.PruneResult, error) {
	return duroxide.PruneResult{}, ErrNoManagement
}
