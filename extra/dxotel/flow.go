package dxotel

import (
	"context"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// flowController passes duroxide.FlowController through: every setter is
// traced under its operation name with the name it sets; the reads too.
type flowController[C context.Context] struct{ w *provider }

func (m flowController[C]) inner() duroxide.FlowController {
	return m.w.inner.(duroxide.FlowController)
}

// SetPriority traces the setting, with the name under the attribute of its
// kind.
func (m flowController[C]) SetPriority(ctx C, kind duroxide.NameKind, name string, priority int) (bool, error) {
	key := KeyActivityName
	if kind == duroxide.OrchestrationName {
		key = KeyOrchestration
	}
	return do(m.w, ctx, "set_priority", "", func(ctx context.Context, _ *call) (bool, error) {
		return m.inner().SetPriority(ctx, kind, name, priority)
	}, key.String(name))
}

// SetAgingWindow traces the setting.
func (m flowController[C]) SetAgingWindow(ctx C, window uint64) (bool, error) {
	return do(m.w, ctx, "set_aging_window", "", func(ctx context.Context, _ *call) (bool, error) {
		return m.inner().SetAgingWindow(ctx, window)
	})
}

// PauseOrchestrationName traces the pause.
func (m flowController[C]) PauseOrchestrationName(ctx C, name string) (bool, error) {
	return do(m.w, ctx, "pause_orchestration_name", "", func(ctx context.Context, _ *call) (bool, error) {
		return m.inner().PauseOrchestrationName(ctx, name)
	}, KeyOrchestration.String(name))
}

// ResumeOrchestrationName traces the resume.
func (m flowController[C]) ResumeOrchestrationName(ctx C, name string) (bool, error) {
	return do(m.w, ctx, "resume_orchestration_name", "", func(ctx context.Context, _ *call) (bool, error) {
		return m.inner().ResumeOrchestrationName(ctx, name)
	}, KeyOrchestration.String(name))
}

// FlowSettings traces the read.
func (m flowController[C]) FlowSettings(ctx C) (duroxide.FlowSettings, error) {
	return do(m.w, ctx, "flow_settings", "", func(ctx context.Context, _ *call) (duroxide.FlowSettings, error) {
		return m.inner().FlowSettings(ctx)
	})
}

// SetLimit traces the set.
func (m flowController[C]) SetLimit(ctx C, l duroxide.Limit) error {
	_, err := do(m.w, ctx, "set_limit", "", func(ctx context.Context, _ *call) (struct{}, error) {
		return struct{}{}, m.inner().SetLimit(ctx, l)
	})
	return err
}

// DeleteLimit traces the delete.
func (m flowController[C]) DeleteLimit(ctx C, kind duroxide.NameKind, name string) (bool, error) {
	return do(m.w, ctx, "delete_limit", "", func(ctx context.Context, _ *call) (bool, error) {
		return m.inner().DeleteLimit(ctx, kind, name)
	})
}

// Limits traces the list.
func (m flowController[C]) Limits(ctx C) ([]duroxide.Limit, error) {
	return do(m.w, ctx, "limits", "", func(ctx context.Context, _ *call) ([]duroxide.Limit, error) {
		return m.inner().Limits(ctx)
	})
}
