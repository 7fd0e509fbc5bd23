package dxotel

import (
	"context"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// GetCustomStatus traces the read.
func (w *provider) GetCustomStatus(ctx context.Context, instance string, lastSeenVersion uint64) (*duroxide.CustomStatus, error) {
	return do(w, ctx, "get_custom_status", "", func(ctx context.Context, _ *call) (*duroxide.CustomStatus, error) {
		return w.inner.GetCustomStatus(ctx, instance, lastSeenVersion)
	}, KeyInstance.String(instance))
}

// kvValue is GetKVValue's pair of results, carried through do.
type kvValue struct {
	value string
	found bool
}

// GetKVValue traces the read.
func (w *provider) GetKVValue(ctx context.Context, instance, key string) (string, bool, error) {
	v, err := do(w, ctx, "get_kv_value", "", func(ctx context.Context, _ *call) (kvValue, error) {
		value, found, err := w.inner.GetKVValue(ctx, instance, key)
		return kvValue{value, found}, err
	}, KeyInstance.String(instance))
	return v.value, v.found, err
}

// GetKVAllValues traces the read.
func (w *provider) GetKVAllValues(ctx context.Context, instance string) (map[string]string, error) {
	return do(w, ctx, "get_kv_all_values", "", func(ctx context.Context, _ *call) (map[string]string, error) {
		return w.inner.GetKVAllValues(ctx, instance)
	}, KeyInstance.String(instance))
}

// GetInstanceStats traces the read.
func (w *provider) GetInstanceStats(ctx context.Context, instance string) (*duroxide.InstanceStats, error) {
	return do(w, ctx, "get_instance_stats", "", func(ctx context.Context, _ *call) (*duroxide.InstanceStats, error) {
		return w.inner.GetInstanceStats(ctx, instance)
	}, KeyInstance.String(instance))
}
