package redisprovider

import (
	"context"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Schedules live in the namespace's own tag (with one partition, the
// partition's), not spread over partitions: a claim takes the due firings
// of every schedule in one script, and schedules are few next to
// instances. The instances their firings start go to their own partitions
// through the client's start.
var _ duroxide.ScheduleStore = (*Provider)(nil)

// UpsertSchedule writes the schedule in the namespace's own tag.
func (pp *Provider) UpsertSchedule(ctx context.Context, id, spec, mode string, paused *bool) (bool, error) {
	return pp.base.UpsertSchedule(ctx, id, spec, mode, paused)
}

// DeleteSchedule removes the schedule from the namespace's own tag.
func (pp *Provider) DeleteSchedule(ctx context.Context, id string) (bool, error) {
	return pp.base.DeleteSchedule(ctx, id)
}

// PauseSchedule pauses or resumes the schedule.
func (pp *Provider) PauseSchedule(ctx context.Context, id string, paused bool, note string) error {
	return pp.base.PauseSchedule(ctx, id, paused, note)
}

// TriggerSchedule makes a firing now.
func (pp *Provider) TriggerSchedule(ctx context.Context, id string) (uint64, error) {
	return pp.base.TriggerSchedule(ctx, id)
}

// GetSchedule reads the schedule.
func (pp *Provider) GetSchedule(ctx context.Context, id string, firings int) (*duroxide.ScheduleRecord, error) {
	return pp.base.GetSchedule(ctx, id, firings)
}

// ListSchedules reads every schedule.
func (pp *Provider) ListSchedules(ctx context.Context) ([]duroxide.ScheduleRecord, error) {
	return pp.base.ListSchedules(ctx)
}

// ClaimScheduleFirings claims due firings.
func (pp *Provider) ClaimScheduleFirings(ctx context.Context, lease time.Duration, limit int) ([]duroxide.ScheduleClaim, error) {
	return pp.base.ClaimScheduleFirings(ctx, lease, limit)
}

// ConfirmScheduleFiring ends a claimed firing.
func (pp *Provider) ConfirmScheduleFiring(ctx context.Context, c duroxide.ScheduleConfirm) (bool, error) {
	return pp.base.ConfirmScheduleFiring(ctx, c)
}

// TakeBufferedFiring takes a buffered firing.
func (pp *Provider) TakeBufferedFiring(ctx context.Context, id string, nominalMs uint64, lease time.Duration) (bool, error) {
	return pp.base.TakeBufferedFiring(ctx, id, nominalMs, lease)
}

// NextScheduleDue reads when the next firing is due.
func (pp *Provider) NextScheduleDue(ctx context.Context) (duroxide.ScheduleDue, error) {
	return pp.base.NextScheduleDue(ctx)
}
