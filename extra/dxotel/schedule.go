package dxotel

import (
	"context"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// scheduleStore passes duroxide.ScheduleStore through: each call is traced
// as the provider's other calls, under its script's operation name, except
// NextScheduleDue, the scheduler's idle poll (a span per refresh per
// runtime would drown the traces of the work).
type scheduleStore[C context.Context] struct{ w *provider }

func (m scheduleStore[C]) inner() duroxide.ScheduleStore { return m.w.inner.(duroxide.ScheduleStore) }

// UpsertSchedule traces the write.
func (m scheduleStore[C]) UpsertSchedule(ctx C, id, spec, mode string, paused *bool) (bool, error) {
	return do(m.w, ctx, "schedule_upsert", "", func(ctx context.Context, _ *call) (bool, error) {
		return m.inner().UpsertSchedule(ctx, id, spec, mode, paused)
	})
}

// DeleteSchedule traces the deletion.
func (m scheduleStore[C]) DeleteSchedule(ctx C, id string) (bool, error) {
	return do(m.w, ctx, "schedule_delete", "", func(ctx context.Context, _ *call) (bool, error) {
		return m.inner().DeleteSchedule(ctx, id)
	})
}

// PauseSchedule traces the pause or resume.
func (m scheduleStore[C]) PauseSchedule(ctx C, id string, paused bool, note string) error {
	return do0(m.w, ctx, "schedule_pause", "", func(ctx context.Context) error {
		return m.inner().PauseSchedule(ctx, id, paused, note)
	})
}

// TriggerSchedule traces the trigger.
func (m scheduleStore[C]) TriggerSchedule(ctx C, id string) (uint64, error) {
	return do(m.w, ctx, "schedule_trigger", "", func(ctx context.Context, _ *call) (uint64, error) {
		return m.inner().TriggerSchedule(ctx, id)
	})
}

// GetSchedule traces the read.
func (m scheduleStore[C]) GetSchedule(ctx C, id string, firings int) (*duroxide.ScheduleRecord, error) {
	return do(m.w, ctx, "schedule_get", "", func(ctx context.Context, _ *call) (*duroxide.ScheduleRecord, error) {
		return m.inner().GetSchedule(ctx, id, firings)
	})
}

// ListSchedules traces the read.
func (m scheduleStore[C]) ListSchedules(ctx C) ([]duroxide.ScheduleRecord, error) {
	return do(m.w, ctx, "schedule_list", "", func(ctx context.Context, _ *call) ([]duroxide.ScheduleRecord, error) {
		return m.inner().ListSchedules(ctx)
	})
}

// ClaimScheduleFirings traces the claim.
func (m scheduleStore[C]) ClaimScheduleFirings(ctx C, lease time.Duration, limit int) ([]duroxide.ScheduleClaim, error) {
	return do(m.w, ctx, "schedule_claim", "", func(ctx context.Context, _ *call) ([]duroxide.ScheduleClaim, error) {
		return m.inner().ClaimScheduleFirings(ctx, lease, limit)
	})
}

// ConfirmScheduleFiring traces the confirm, naming the instance started.
func (m scheduleStore[C]) ConfirmScheduleFiring(ctx C, c duroxide.ScheduleConfirm) (bool, error) {
	return do(m.w, ctx, "schedule_confirm", "", func(ctx context.Context, _ *call) (bool, error) {
		return m.inner().ConfirmScheduleFiring(ctx, c)
	}, KeyInstance.String(c.Instance))
}

// TakeBufferedFiring traces the take.
func (m scheduleStore[C]) TakeBufferedFiring(ctx C, id string, nominalMs uint64, lease time.Duration) (bool, error) {
	return do(m.w, ctx, "schedule_take_buffered", "", func(ctx context.Context, _ *call) (bool, error) {
		return m.inner().TakeBufferedFiring(ctx, id, nominalMs, lease)
	})
}

// NextScheduleDue passes the idle poll through untraced.
func (m scheduleStore[C]) NextScheduleDue(ctx C) (duroxide.ScheduleDue, error) {
	return m.inner().NextScheduleDue(ctx)
}
