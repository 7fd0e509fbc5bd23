package dxotel

import (
	"context"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// pendingStartNote passes duroxide.PendingStartNoter through: the abandon
// with its note is traced as the unit's abandon is, under its own
// operation name, and the reads as the provider's other reads.
type pendingStartNote[C context.Context] struct{ w *provider }

// AbandonOrchestrationItemWithNote traces the abandon, naming the
// instance.
func (m pendingStartNote[C]) AbandonOrchestrationItemWithNote(ctx C, lockToken string, delay time.Duration, ignoreAttempt bool, note duroxide.PendingStart) error {
	return do0(m.w, ctx, "abandon_orchestration_item_with_note", lockToken, func(ctx context.Context) error {
		return m.w.inner.(duroxide.PendingStartNoter).AbandonOrchestrationItemWithNote(ctx, lockToken, delay, ignoreAttempt, note)
	}, KeyInstance.String(note.Instance))
}

// PendingStart traces the read.
func (m pendingStartNote[C]) PendingStart(ctx C, instance string) (*duroxide.PendingStart, error) {
	return do(m.w, ctx, "get_pending_start", "", func(ctx context.Context, _ *call) (*duroxide.PendingStart, error) {
		return m.w.inner.(duroxide.PendingStartNoter).PendingStart(ctx, instance)
	}, KeyInstance.String(instance))
}

// ListPendingStarts traces the read.
func (m pendingStartNote[C]) ListPendingStarts(ctx C, limit int) ([]duroxide.PendingStart, error) {
	return do(m.w, ctx, "list_pending_starts", "", func(ctx context.Context, _ *call) ([]duroxide.PendingStart, error) {
		return m.w.inner.(duroxide.PendingStartNoter).ListPendingStarts(ctx, limit)
	})
}
