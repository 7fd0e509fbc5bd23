package dxotel

import (
	"context"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"go.opentelemetry.io/otel/attribute"
)

// admin traces every management call of the inner provider's admin.
type admin struct {
	p     *provider
	inner duroxide.ProviderAdmin
}

var _ duroxide.ProviderAdmin = (*admin)(nil)

// listingAdmin is the instrumented admin of an inner admin that lists
// instances page by page: a tool finds duroxide.InstanceLister by type
// assertion on the admin, so the wrapper has it exactly when the inner
// admin does (a separate type, as for the provider's optional interfaces).
type listingAdmin struct {
	*admin
	lister duroxide.InstanceLister
}

var _ duroxide.InstanceLister = (*listingAdmin)(nil)

// instrumentAdmin wraps the inner provider's admin a, keeping its
// duroxide.InstanceLister.
func instrumentAdmin(w *provider, a duroxide.ProviderAdmin) duroxide.ProviderAdmin {
	ad := &admin{p: w, inner: a}
	if l, ok := a.(duroxide.InstanceLister); ok {
		return &listingAdmin{admin: ad, lister: l}
	}
	return ad
}

func (a *listingAdmin) ListInstancesPage(ctx context.Context, filter duroxide.InstancePageFilter, cursor string, limit int) ([]duroxide.InstanceInfo, string, error) {
	var attrs []attribute.KeyValue
	if filter.Status != "" {
		attrs = append(attrs, KeyStatus.String(filter.Status))
	}
	if filter.Orchestration != "" {
		attrs = append(attrs, KeyOrchestration.String(filter.Orchestration))
	}
	var next string
	page, err := adminCall(a.admin, ctx, "list_instances_page", func(ctx context.Context) ([]duroxide.InstanceInfo, error) {
		page, n, err := a.lister.ListInstancesPage(ctx, filter, cursor, limit)
		next = n
		return page, err
	}, attrs...)
	return page, next, err
}

// adminCall runs one admin operation in a span; the admin surface is not the
// hot path, so it shares the provider's call histogram for simplicity.
func adminCall[T any](a *admin, ctx context.Context, op string, fn func(context.Context) (T, error), attrs ...attribute.KeyValue) (T, error) {
	return do(a.p, ctx, op, "", func(ctx context.Context, _ *call) (T, error) { return fn(ctx) }, attrs...)
}

func (a *admin) ListInstances(ctx context.Context) ([]string, error) {
	return adminCall(a, ctx, "list_instances", a.inner.ListInstances)
}

func (a *admin) ListInstancesByStatus(ctx context.Context, status string) ([]string, error) {
	return adminCall(a, ctx, "list_instances_by_status", func(ctx context.Context) ([]string, error) {
		return a.inner.ListInstancesByStatus(ctx, status)
	}, KeyStatus.String(status))
}

func (a *admin) ListExecutions(ctx context.Context, instance string) ([]uint64, error) {
	return adminCall(a, ctx, "list_executions", func(ctx context.Context) ([]uint64, error) {
		return a.inner.ListExecutions(ctx, instance)
	}, KeyInstance.String(instance))
}

func (a *admin) ReadHistoryWithExecutionID(ctx context.Context, instance string, executionID uint64) ([]duroxide.Event, error) {
	return adminCall(a, ctx, "read_history_with_execution_id", func(ctx context.Context) ([]duroxide.Event, error) {
		return a.inner.ReadHistoryWithExecutionID(ctx, instance, executionID)
	}, instanceAttrs(instance, executionID)...)
}

func (a *admin) ReadHistory(ctx context.Context, instance string) ([]duroxide.Event, error) {
	return adminCall(a, ctx, "read_history", func(ctx context.Context) ([]duroxide.Event, error) {
		return a.inner.ReadHistory(ctx, instance)
	}, KeyInstance.String(instance))
}

func (a *admin) LatestExecutionID(ctx context.Context, instance string) (uint64, error) {
	return adminCall(a, ctx, "latest_execution_id", func(ctx context.Context) (uint64, error) {
		return a.inner.LatestExecutionID(ctx, instance)
	}, KeyInstance.String(instance))
}

func (a *admin) GetInstanceInfo(ctx context.Context, instance string) (duroxide.InstanceInfo, error) {
	return adminCall(a, ctx, "get_instance_info", func(ctx context.Context) (duroxide.InstanceInfo, error) {
		return a.inner.GetInstanceInfo(ctx, instance)
	}, KeyInstance.String(instance))
}

func (a *admin) GetExecutionInfo(ctx context.Context, instance string, executionID uint64) (duroxide.ExecutionInfo, error) {
	return adminCall(a, ctx, "get_execution_info", func(ctx context.Context) (duroxide.ExecutionInfo, error) {
		return a.inner.GetExecutionInfo(ctx, instance, executionID)
	}, instanceAttrs(instance, executionID)...)
}

func (a *admin) GetSystemMetrics(ctx context.Context) (duroxide.SystemMetrics, error) {
	return adminCall(a, ctx, "get_system_metrics", a.inner.GetSystemMetrics)
}

func (a *admin) GetQueueDepths(ctx context.Context) (duroxide.QueueDepths, error) {
	return adminCall(a, ctx, "get_queue_depths", a.inner.GetQueueDepths)
}

func (a *admin) ListChildren(ctx context.Context, instance string) ([]string, error) {
	return adminCall(a, ctx, "list_children", func(ctx context.Context) ([]string, error) {
		return a.inner.ListChildren(ctx, instance)
	}, KeyInstance.String(instance))
}

func (a *admin) GetParentID(ctx context.Context, instance string) (string, error) {
	return adminCall(a, ctx, "get_parent_id", func(ctx context.Context) (string, error) {
		return a.inner.GetParentID(ctx, instance)
	}, KeyInstance.String(instance))
}

func (a *admin) GetInstanceTree(ctx context.Context, instance string) (duroxide.InstanceTree, error) {
	return adminCall(a, ctx, "get_instance_tree", func(ctx context.Context) (duroxide.InstanceTree, error) {
		return a.inner.GetInstanceTree(ctx, instance)
	}, KeyInstance.String(instance))
}

func (a *admin) DeleteInstancesAtomic(ctx context.Context, ids []string, force bool) (duroxide.DeleteInstanceResult, error) {
	return adminCall(a, ctx, "delete_instances_atomic", func(ctx context.Context) (duroxide.DeleteInstanceResult, error) {
		return a.inner.DeleteInstancesAtomic(ctx, ids, force)
	})
}

func (a *admin) DeleteInstance(ctx context.Context, instance string, force bool) (duroxide.DeleteInstanceResult, error) {
	return adminCall(a, ctx, "delete_instance", func(ctx context.Context) (duroxide.DeleteInstanceResult, error) {
		return a.inner.DeleteInstance(ctx, instance, force)
	}, KeyInstance.String(instance))
}

func (a *admin) DeleteInstanceBulk(ctx context.Context, filter duroxide.InstanceFilter) (duroxide.DeleteInstanceResult, error) {
	return adminCall(a, ctx, "delete_instance_bulk", func(ctx context.Context) (duroxide.DeleteInstanceResult, error) {
		return a.inner.DeleteInstanceBulk(ctx, filter)
	})
}

func (a *admin) PruneExecutions(ctx context.Context, instance string, opts duroxide.PruneOptions) (duroxide.PruneResult, error) {
	return adminCall(a, ctx, "prune_executions", func(ctx context.Context) (duroxide.PruneResult, error) {
		return a.inner.PruneExecutions(ctx, instance, opts)
	}, KeyInstance.String(instance))
}

func (a *admin) PruneExecutionsBulk(ctx context.Context, filter duroxide.InstanceFilter, opts duroxide.PruneOptions) (duroxide.PruneResult, error) {
	return adminCall(a, ctx, "prune_executions_bulk", func(ctx context.Context) (duroxide.PruneResult, error) {
		return a.inner.PruneExecutionsBulk(ctx, filter, opts)
	})
}
