package duroxide

import (
	"context"
	"time"
)

// ScheduleRecord is a schedule as a ScheduleStore keeps it. The store does
// not read the spec: the scheduler (durable) parses it and computes firing
// times, and the store keeps the times it is handed, claims due firings and
// records their outcomes atomically.
type ScheduleRecord struct {
	// ID names the schedule.
	ID string
	// Spec is the schedule's definition, opaque to the store (durable writes
	// JSON).
	Spec string
	// Rev counts the writes that reset the next time (of Spec, and
	// resumes): a confirm carrying an older Rev does not move the schedule's
	// next time (the write reset it).
	Rev uint64
	// Paused and Note: a paused schedule does not fire on its times; Note
	// says why (free text).
	Paused bool
	Note   string
	// NextMs is the nominal time of the next firing (ms since the epoch), 0
	// when it is yet to be computed (new, updated or resumed schedules);
	// Ended is true when no firing is left (past its end time).
	NextMs uint64
	Ended  bool
	// FireAtMs is when the next firing is due: NextMs plus its jitter.
	FireAtMs uint64
	// PendingMs and PendingKind describe the firing in progress, claimed and
	// not yet confirmed (PendingKind "": none; "init": computing the next
	// time, "due": a nominal time, "buf": the buffered firing, "trig": a
	// manual trigger).
	PendingMs   uint64
	PendingKind string
	// BufferedMs is the nominal time of the firing held back until the last
	// started instance ends (overlap policy buffer one), 0 for none.
	BufferedMs uint64
	// LastInstance is the instance the schedule started last.
	LastInstance string
	// CreatedMs and UpdatedMs are the store's clock at creation and at the
	// last change of the definition or pause state.
	CreatedMs, UpdatedMs uint64
	// Firings are the recent firings, newest first (filled by GetSchedule
	// only).
	Firings []ScheduleFiringRecord
}

// ScheduleFiringRecord is one recorded firing of a schedule.
type ScheduleFiringRecord struct {
	// NominalMs is the time the firing was for.
	NominalMs uint64
	// Outcome is what the scheduler did: "started", "skipped", "buffered",
	// "missed" (older than the catch-up window), ...
	Outcome string
	// AtMs is when the outcome was recorded (store clock).
	AtMs uint64
	// Instance is the instance the firing started ("" when it started none).
	Instance string
}

// ScheduleClaim is one firing a scheduler claimed: the schedule's record
// with its firing in progress (PendingMs, PendingKind).
type ScheduleClaim struct {
	ScheduleRecord
	// NowMs is the store's clock when the claim was made.
	NowMs uint64
}

// ScheduleConfirm is the end of a claimed firing.
type ScheduleConfirm struct {
	// ID, NominalMs and Rev are those of the claim.
	ID        string
	NominalMs uint64
	Rev       uint64
	// Outcome is recorded with the firing ("": record nothing, for an
	// "init" claim); "started" also makes Instance the schedule's
	// LastInstance, "buffered" holds the firing back (or records it as
	// "skipped" when one is held already).
	Outcome  string
	Instance string
	// Advance moves the schedule to NextMs / FireAtMs, or to no more firings
	// when End is set; without it the schedule's next time is kept (a
	// buffered or triggered firing is not one of its times).
	Advance          bool
	End              bool
	NextMs, FireAtMs uint64
}

// ScheduleDue is what a scheduler sleeps until.
type ScheduleDue struct {
	// NowMs is the store's clock.
	NowMs uint64
	// NextDueMs is when the earliest schedule is due (HasDue false: none);
	// LeaseEndMs when the earliest claimed firing's lease ends (HasLease
	// false: none).
	NextDueMs, LeaseEndMs uint64
	HasDue, HasLease      bool
	// Buffered counts the schedules holding a buffered firing.
	Buffered int
}

// ScheduleStore is an optional extension of Provider that stores schedules
// (durable's Client schedule calls and the scheduler of durable.Runtime use
// it; without it they report that the provider has no schedules). Every
// method is one atomic step of the store; the times it uses are its own
// clock's.
//
// The firing protocol: ClaimScheduleFirings takes due firings, each made
// its schedule's one firing in progress with a lease; the scheduler starts
// the firing's instance (idempotently: the instance id is deterministic)
// and ConfirmScheduleFiring records the outcome and advances the schedule.
// A firing whose lease ends unconfirmed is claimed again by any scheduler.
type ScheduleStore interface {
	// UpsertSchedule writes a schedule's spec. mode is "create" (an existing
	// one is an ErrAlreadyExists error), "update" (a missing one is an
	// ErrNotFound error) or "put". paused nil keeps the pause state (a new
	// schedule is active). The next time is computed again from now.
	UpsertSchedule(ctx context.Context, id, spec, mode string, paused *bool) (created bool, err error)
	// DeleteSchedule removes a schedule and its firing records; false when
	// it did not exist.
	DeleteSchedule(ctx context.Context, id string) (bool, error)
	// PauseSchedule pauses or resumes a schedule (ErrNotFound when it does not
	// exist). A resumed schedule fires from now on: paused times are not
	// caught up.
	PauseSchedule(ctx context.Context, id string, paused bool, note string) error
	// TriggerSchedule makes a firing now, claimed by the next claim; it
	// returns its nominal time. ErrConflict when a firing of the schedule is
	// in progress.
	TriggerSchedule(ctx context.Context, id string) (uint64, error)
	// GetSchedule returns a schedule and up to firings recent firings, nil
	// when it does not exist.
	GetSchedule(ctx context.Context, id string, firings int) (*ScheduleRecord, error)
	// ListSchedules returns every schedule, oldest first, without firings.
	ListSchedules(ctx context.Context) ([]ScheduleRecord, error)
	// ClaimScheduleFirings claims up to max firings (see the protocol above).
	ClaimScheduleFirings(ctx context.Context, lease time.Duration, max int) ([]ScheduleClaim, error)
	// ConfirmScheduleFiring ends a claimed firing; false (and nothing
	// written) when it was no longer in progress.
	ConfirmScheduleFiring(ctx context.Context, c ScheduleConfirm) (bool, error)
	// TakeBufferedFiring makes the buffered firing nominalMs of schedule id
	// its firing in progress; false when it is not buffered any more or
	// another firing is in progress.
	TakeBufferedFiring(ctx context.Context, id string, nominalMs uint64, lease time.Duration) (bool, error)
	// NextScheduleDue reads when the next firing is due.
	NextScheduleDue(ctx context.Context) (ScheduleDue, error)
}
