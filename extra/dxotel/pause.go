package dxotel

import (
	"context"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// instancePauser passes duroxide.InstancePauser through: pausing and
// resuming are traced under their operation names; the state read too.
type instancePauser[C context.Context] struct{ w *provider }

func (m instancePauser[C]) inner() duroxide.InstancePauser {
	return m.w.inner.(duroxide.InstancePauser)
}

// PauseInstance traces the pause.
func (m instancePauser[C]) PauseInstance(ctx C, instance string) (bool, error) {
	return do(m.w, ctx, "pause_instance", "", func(ctx context.Context, _ *call) (bool, error) {
		return m.inner().PauseInstance(ctx, instance)
	}, KeyInstance.String(instance))
}

// ResumeInstance traces the resume.
func (m instancePauser[C]) ResumeInstance(ctx C, instance string) (bool, error) {
	return do(m.w, ctx, "resume_instance", "", func(ctx context.Context, _ *call) (bool, error) {
		return m.inner().ResumeInstance(ctx, instance)
	}, KeyInstance.String(instance))
}

// InstancePauseState traces the read.
func (m instancePauser[C]) InstancePauseState(ctx C, instance string) (duroxide.PauseState, error) {
	return do(m.w, ctx, "instance_pause_state", "", func(ctx context.Context, _ *call) (duroxide.PauseState, error) {
		return m.inner().InstancePauseState(ctx, instance)
	}, KeyInstance.String(instance))
}
