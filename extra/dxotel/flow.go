package dxotel

import (
	"context"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// flowLimiter passes duroxide.FlowLimiter through: setting, deleting and
// listing limits are traced under their operation names.
type flowLimiter[C context.Context] struct{ w *provider }

func (m flowLimiter[C]) inner() duroxide.FlowLimiter {
	return m.w.inner.(duroxide.FlowLimiter)
}

// SetLimit traces the set.
func (m flowLimiter[C]) SetLimit(ctx C, l duroxide.Limit) error {
	_, err := do(m.w, ctx, "set_limit", "", func(ctx context.Context, _ *call) (struct{}, error) {
		return struct{}{}, m.inner().SetLimit(ctx, l)
	})
	return err
}

// DeleteLimit traces the delete.
func (m flowLimiter[C]) DeleteLimit(ctx C, name string) (bool, error) {
	return do(m.w, ctx, "delete_limit", "", func(ctx context.Context, _ *call) (bool, error) {
		return m.inner().DeleteLimit(ctx, name)
	})
}

// Limits traces the list.
func (m flowLimiter[C]) Limits(ctx C) ([]duroxide.Limit, error) {
	return do(m.w, ctx, "limits", "", func(ctx context.Context, _ *call) ([]duroxide.Limit, error) {
		return m.inner().Limits(ctx)
	})
}
