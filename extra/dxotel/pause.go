package dxotel

import (
	"context"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// instancePauser passes duroxide.InstancePauser through: pausing and
// resuming are traced under their operation names; the state read too.
type instancePauser struct{ w *provider }

func (m instancePauser) inner() duroxide.InstancePauser { return m.w.inner.(duroxide.InstancePauser) }

// PauseInstance traces the pause.
func (m instancePauser) PauseInstance(ctx context.Context, instance string) (bool, error) {
	return do(m.w, ctx, "pause_instance", "", func(ctx context.Context, _ *call) (bool, error) {
		return m.inner().PauseInstance(ctx, instance)
	}, KeyInstance.String(instance))
}

// ResumeInstance traces the resume.
func (m instancePauser) ResumeInstance(ctx context.Context, instance string) (bool, error) {
	return do(m.w, ctx, "resume_instance", "", func(ctx context.Context, _ *call) (bool, error) {
		return m.inner().ResumeInstance(ctx, instance)
	}, KeyInstance.String(instance))
}

// InstancePauseState traces the read.
func (m instancePauser) InstancePauseState(ctx context.Context, instance string) (duroxide.PauseState, error) {
	return do(m.w, ctx, "instance_pause_state", "", func(ctx context.Context, _ *call) (duroxide.PauseState, error) {
		return m.inner().InstancePauseState(ctx, instance)
	}, KeyInstance.String(instance))
}
