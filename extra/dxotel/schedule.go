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
type scheduleStore struct{ w *provider }

func (m scheduleStore) inner() duroxide.ScheduleStore { return m.w.inner.(duroxide.ScheduleStore) }

// UpsertSchedule traces the write.
func (m scheduleStore) UpsertSchedule(ctx context.Context, id, spec, mode string, paused *bool) (bool, error) {
	return do(m.w, ctx, "schedule_upsert", "", func(ctx context.Context, _ *call) (bool, error) {
		return m.inner().UpsertSchedule(ctx, id, spec, mode, paused)
	})
}

// DeleteSchedule traces the deletion.
func (m scheduleStore) DeleteSchedule(ctx context.Context, id string) (bool, error) {
	return do(m.w, ctx, "schedule_delete", "", func(ctx context.Context, _ *call) (bool, error) {
		return m.inner().DeleteSchedule(ctx, id)
	})
}

// PauseSchedule traces the pause or resume.
func (m scheduleStore) PauseSchedule(ctx context.Context, id string, paused bool, note string) error {
	return do0(m.w, ctx, "schedule_pause", "", func(ctx context.Context) error {
		return m.inner().PauseSchedule(ctx, id, paused, note)
	})
}

// TriggerSchedule traces the trigger.
func (m scheduleStore) TriggerSchedule(ctx context.Context, id string) (uint64, error) {
	return do(m.w, ctx, "schedule_trigger", "", func(ctx context.Context, _ *call) (uint64, error) {
		return m.inner().TriggerSchedule(ctx, id)
	})
}

// GetSchedule traces the read.
func (m scheduleStore) GetSchedule(ctx context.Context, id string, firings int) (*duroxide.ScheduleRecord, error) {
	return do(m.w, ctx, "schedule_get", "", func(ctx context.Context, _ *call) (*duroxide.ScheduleRecord, error) {
		return m.inner().GetSchedule(ctx, id, firings)
	})
}

// ListSchedules traces the read.
func (m scheduleStore) ListSchedules(ctx context.Context) ([]duroxide.ScheduleRecord, error) {
	return do(m.w, ctx, "schedule_list", "", func(ctx context.Context, _ *call) ([]duroxide.ScheduleRecord, error) {
		return m.inner().ListSchedules(ctx)
	})
}

// ClaimScheduleFirings traces the claim.
func (m scheduleStore) ClaimScheduleFirings(ctx context.Context, lease time.Duration, limit int) ([]duroxide.ScheduleClaim, error) {
	return do(m.w, ctx, "schedule_claim", "", func(ctx context.Context, _ *call) ([]duroxide.ScheduleClaim, error) {
		return m.inner().ClaimScheduleFirings(ctx, lease, limit)
	})
}

// ConfirmScheduleFiring traces the confirm, naming the instance started.
func (m scheduleStore) ConfirmScheduleFiring(ctx context.Context, c duroxide.ScheduleConfirm) (bool, error) {
	return do(m.w, ctx, "schedule_confirm", "", func(ctx context.Context, _ *call) (bool, error) {
		return m.inner().ConfirmScheduleFiring(ctx, c)
	}, KeyInstance.String(c.Instance))
}

// TakeBufferedFiring traces the take.
func (m scheduleStore) TakeBufferedFiring(ctx context.Context, id string, nominalMs uint64, lease time.Duration) (bool, error) {
	return do(m.w, ctx, "schedule_take_buffered", "", func(ctx context.Context, _ *call) (bool, error) {
		return m.inner().TakeBufferedFiring(ctx, id, nominalMs, lease)
	})
}

// NextScheduleDue passes the idle poll through untraced.
func (m scheduleStore) NextScheduleDue(ctx context.Context) (duroxide.ScheduleDue, error) {
	return m.inner().NextScheduleDue(ctx)
}
