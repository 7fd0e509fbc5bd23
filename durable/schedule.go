package durable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// OverlapPolicy says what a firing does while the instance the schedule
// started last is still running (neither Completed nor Failed).
type OverlapPolicy string

// The overlap policies. The zero value is OverlapSkip.
const (
	// OverlapSkip drops the firing (recorded as "skipped").
	OverlapSkip OverlapPolicy = "skip"
	// OverlapBufferOne holds the firing back until the running instance
	// ends, then starts it; one firing is held at most, later ones are
	// skipped meanwhile.
	OverlapBufferOne OverlapPolicy = "buffer_one"
	// OverlapAllowAll starts the firing anyway.
	OverlapAllowAll OverlapPolicy = "allow_all"
	// OverlapCancelRunning cancels the running instance and starts the
	// firing.
	OverlapCancelRunning OverlapPolicy = "cancel_running"
)

// DefaultCatchupWindow is the catch-up window of a schedule that sets none.
const DefaultCatchupWindow = time.Minute

// ErrNoScheduleStore classifies a schedule call on a provider that does
// not store schedules (one without duroxide.ScheduleStore).
var ErrNoScheduleStore = errors.New("durable: the provider stores no schedules")

// Schedule starts an orchestration at the times of a cron expression or of
// a fixed interval. Each firing starts one instance whose id is the
// schedule's id and the firing's nominal time (FiringInstanceID), so a
// firing is started once however many runtimes run the scheduler, and a
// firing retried after a runtime stopped between claiming and starting it
// finds its instance already there.
type Schedule struct {
	// ID names the schedule (required; no line breaks).
	ID string `json:"-"`
	// Orchestration, Version and Input are what each firing starts
	// (Version "": the newest registered).
	Orchestration string `json:"orchestration"`
	Version       string `json:"version,omitempty"`
	Input         string `json:"input,omitempty"`
	// Cron is a cron expression: 5 fields (minute hour day-of-month month
	// day-of-week), 6 with seconds first, a descriptor (@hourly, @daily,
	// @weekly, @monthly, @yearly) or "@every <duration>", optionally
	// prefixed by "CRON_TZ=<zone> ", parsed by robfig/cron/v3. Set Cron or
	// Every, not both.
	Cron string `json:"cron,omitempty"`
	// Every fires at a fixed interval (at least a second), at StartAt plus
	// whole intervals (or at whole intervals since the Unix epoch without
	// StartAt).
	Every time.Duration `json:"every,omitempty"`
	// Jitter delays each firing by up to this much (the same delay for a
	// given nominal time on every runtime), spreading schedules that share
	// their times. The instance id keeps the nominal time.
	Jitter time.Duration `json:"jitter,omitempty"`
	// TimeZone is the IANA zone Cron is read in (default UTC).
	TimeZone string `json:"time_zone,omitempty"`
	// StartAt and EndAt bound the nominal times fired (zero: unbounded).
	StartAt time.Time `json:"start_at,omitzero"`
	EndAt   time.Time `json:"end_at,omitzero"`
	// Overlap is the overlap policy (default OverlapSkip).
	Overlap OverlapPolicy `json:"overlap,omitempty"`
	// CatchupWindow is how late a firing may still start (default
	// DefaultCatchupWindow, at least one second): after downtime, missed
	// times within the window fire in order, older ones are recorded as
	// "missed" once and skipped.
	CatchupWindow time.Duration `json:"catchup_window,omitempty"`
}

// ScheduleFiring is one recorded firing.
type ScheduleFiring struct {
	// Nominal is the time the firing was for; At when it was recorded.
	Nominal, At time.Time
	// Outcome: "started", "skipped", "buffered", "missed", "failed" (the
	// start was refused: its input or version is invalid) or "invalid" (the
	// stored schedule could not be read).
	Outcome string
	// Instance is the instance it started ("" for none).
	Instance string
}

// ScheduleDescription is a schedule with its state.
type ScheduleDescription struct {
	Schedule
	// Paused and Note: a paused schedule does not fire on its times.
	Paused bool
	Note   string
	// Next are the nominal times of the next firings (as many as asked);
	// empty when none is left (past EndAt) or the schedule is paused.
	Next []time.Time
	// Recent are the recent firings, newest first.
	Recent []ScheduleFiring
	// Buffered is the nominal time of the firing held back by
	// OverlapBufferOne (zero: none).
	Buffered time.Time
	// LastInstance is the instance the schedule started last.
	LastInstance string
	// Created and Updated are the store's times of creation and of the last
	// change.
	Created, Updated time.Time
}

// FiringInstanceID is the instance id a schedule's firing at nominal starts:
// "<schedule id>@<nominal time, RFC 3339 in UTC>".
func FiringInstanceID(scheduleID string, nominal time.Time) string {
	return scheduleID + "@" + nominal.UTC().Format(time.RFC3339Nano)
}

// cronParser reads 5 or 6 fields, descriptors and @every.
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// timetable is a validated schedule's firing times.
type timetable struct {
	s     Schedule
	cron  cron.Schedule
	loc   *time.Location
	catch time.Duration
}

// compile validates s and prepares its times; errors are
// *InvalidInputError naming op and the schedule.
func compile(op string, s Schedule) (*timetable, error) {
	bad := func(format string, args ...any) (*timetable, error) {
		return nil, invalidInput(op, "schedule %q: "+format, append([]any{s.ID}, args...)...)
	}
	if s.ID == "" || strings.ContainsAny(s.ID, "\r\n") {
		return bad("the id is required and holds no line break")
	}
	if s.Orchestration == "" {
		return bad("Orchestration is required")
	}
	if len(s.Input) > MaxPayloadBytes {
		return bad("Input is %d bytes, over MaxPayloadBytes (%d)", len(s.Input), MaxPayloadBytes)
	}
	if (s.Cron == "") == (s.Every == 0) {
		return bad("set one of Cron and Every")
	}
	t := &timetable{s: s, loc: time.UTC, catch: s.CatchupWindow}
	if s.TimeZone != "" {
		loc, err := time.LoadLocation(s.TimeZone)
		if err != nil {
			return bad("time zone %q: %v", s.TimeZone, err)
		}
		t.loc = loc
	}
	if s.Cron != "" {
		c, err := cronParser.Parse(s.Cron)
		if err != nil {
			return bad("cron %q: %v", s.Cron, err)
		}
		t.cron = c
	}
	if s.Every != 0 && s.Every < time.Second {
		return bad("Every %v: at least 1s", s.Every)
	}
	if s.Jitter < 0 || s.CatchupWindow < 0 {
		return bad("Jitter and CatchupWindow must not be negative")
	}
	if !s.StartAt.IsZero() && !s.EndAt.IsZero() && s.EndAt.Before(s.StartAt) {
		return bad("EndAt %v is before StartAt %v", s.EndAt, s.StartAt)
	}
	switch s.Overlap {
	case "", OverlapSkip, OverlapBufferOne, OverlapAllowAll, OverlapCancelRunning:
	default:
		return bad("overlap policy %q is none of skip, buffer_one, allow_all, cancel_running", s.Overlap)
	}
	if t.catch == 0 {
		t.catch = DefaultCatchupWindow
	}
	t.catch = max(t.catch, time.Second)
	return t, nil
}

// next is the first nominal time strictly after after (zero: none left).
func (t *timetable) next(after time.Time) time.Time {
	if !t.s.StartAt.IsZero() && after.Before(t.s.StartAt) {
		after = t.s.StartAt.Add(-time.Nanosecond)
	}
	var n time.Time
	if t.s.Every > 0 {
		anchor := time.Unix(0, 0)
		if !t.s.StartAt.IsZero() {
			anchor = t.s.StartAt
		}
		d := after.Sub(anchor)
		k := d / t.s.Every
		if d < 0 && d%t.s.Every != 0 {
			k--
		}
		n = anchor.Add((k + 1) * t.s.Every)
	} else {
		n = t.cron.Next(after.In(t.loc))
	}
	if n.IsZero() || (!t.s.EndAt.IsZero() && n.After(t.s.EndAt)) {
		return time.Time{}
	}
	return n.UTC()
}

// jitter is the delay of the firing at nominal: a hash of the schedule and
// the time, so every runtime computes the same.
func (t *timetable) jitter(nominal time.Time) time.Duration {
	if t.s.Jitter <= 0 {
		return 0
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s@%d", t.s.ID, nominal.UnixMilli())
	return time.Duration(h.Sum64()%uint64(t.s.Jitter.Milliseconds()+1)) * time.Millisecond
}

// decodeSchedule reads a stored spec.
func decodeSchedule(id, spec string) (*timetable, error) {
	var s Schedule
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		return nil, &DecodeError{Kind: "schedule", Name: id, Err: err}
	}
	s.ID = id
	return compile("schedule", s)
}

// scheduleStore is the client's provider as a schedule store.
func (c *Client) scheduleStore(op string) (duroxide.ScheduleStore, error) {
	st, ok := c.p.(duroxide.ScheduleStore)
	if !ok {
		return nil, fmt.Errorf("%s: %w", op, ErrNoScheduleStore)
	}
	return st, nil
}

// CreateSchedule stores a new schedule; any runtime's scheduler fires it
// from now on. An existing id is an ErrAlreadyExists error; an invalid
// schedule an *InvalidInputError.
func (c *Client) CreateSchedule(ctx context.Context, s Schedule) error {
	return c.putSchedule(ctx, "create_schedule", "create", s)
}

// UpdateSchedule replaces a schedule's definition (ErrNotFound when it does
// not exist). Its next firing is computed again from now; its pause state,
// recent firings and buffered firing are kept.
func (c *Client) UpdateSchedule(ctx context.Context, s Schedule) error {
	return c.putSchedule(ctx, "update_schedule", "update", s)
}

func (c *Client) putSchedule(ctx context.Context, op, mode string, s Schedule) error {
	if _, err := compile(op, s); err != nil {
		return err
	}
	st, err := c.scheduleStore(op)
	if err != nil {
		return err
	}
	spec, err := json.Marshal(s)
	if err != nil {
		return invalidInput(op, "schedule %q: %v", s.ID, err)
	}
	_, err = st.UpsertSchedule(ctx, s.ID, string(spec), mode, nil)
	c.wakeScheduler(err)
	return err
}

// wakeScheduler wakes the scheduler of the client's runtime, if any, after
// a successful schedule write.
func (c *Client) wakeScheduler(err error) {
	if err == nil && c.wake != nil {
		c.wake()
	}
}

// DeleteSchedule removes a schedule and its firing records (ErrNotFound
// when it does not exist). Instances it started are not touched.
func (c *Client) DeleteSchedule(ctx context.Context, id string) error {
	const op = "delete_schedule"
	st, err := c.scheduleStore(op)
	if err != nil {
		return err
	}
	ok, err := st.DeleteSchedule(ctx, id)
	if err == nil && !ok {
		err = duroxide.Errorf(op, ErrNotFound, "schedule %s not found", id)
	}
	return err
}

// PauseSchedule stops a schedule's firings on its times until
// ResumeSchedule; note says why (shown by DescribeSchedule).
func (c *Client) PauseSchedule(ctx context.Context, id, note string) error {
	st, err := c.scheduleStore("pause_schedule")
	if err != nil {
		return err
	}
	return st.PauseSchedule(ctx, id, true, note)
}

// ResumeSchedule resumes a paused schedule: it fires from its next time
// after now; times passed while paused are not caught up.
func (c *Client) ResumeSchedule(ctx context.Context, id string) error {
	st, err := c.scheduleStore("resume_schedule")
	if err != nil {
		return err
	}
	err = st.PauseSchedule(ctx, id, false, "")
	c.wakeScheduler(err)
	return err
}

// TriggerSchedule fires a schedule now, outside its times (paused or not),
// under its overlap policy, and returns the id of the instance the firing
// starts (the first scheduler to claim it starts it). A firing of the
// schedule in progress makes it an ErrConflict error: try again.
func (c *Client) TriggerSchedule(ctx context.Context, id string) (string, error) {
	st, err := c.scheduleStore("trigger_schedule")
	if err != nil {
		return "", err
	}
	ms, err := st.TriggerSchedule(ctx, id)
	if err != nil {
		return "", err
	}
	c.wakeScheduler(nil)
	return FiringInstanceID(id, time.UnixMilli(int64(ms))), nil
}

// DescribeSchedule returns a schedule with its state, its next next
// nominal times and its recent firings (up to 100), or an ErrNotFound
// error.
func (c *Client) DescribeSchedule(ctx context.Context, id string, next int) (ScheduleDescription, error) {
	const op = "describe_schedule"
	st, err := c.scheduleStore(op)
	if err != nil {
		return ScheduleDescription{}, err
	}
	rec, err := st.GetSchedule(ctx, id, 100)
	if err != nil {
		return ScheduleDescription{}, err
	}
	if rec == nil {
		return ScheduleDescription{}, duroxide.Errorf(op, ErrNotFound, "schedule %s not found", id)
	}
	return describe(*rec, next)
}

// ListSchedules returns every schedule with its next nominal time, oldest
// first.
func (c *Client) ListSchedules(ctx context.Context) ([]ScheduleDescription, error) {
	st, err := c.scheduleStore("list_schedules")
	if err != nil {
		return nil, err
	}
	recs, err := st.ListSchedules(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]ScheduleDescription, 0, len(recs))
	for _, rec := range recs {
		d, err := describe(rec, 1)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// describe turns a stored record into a description with n next times.
func describe(rec duroxide.ScheduleRecord, n int) (ScheduleDescription, error) {
	t, err := decodeSchedule(rec.ID, rec.Spec)
	if err != nil {
		return ScheduleDescription{}, err
	}
	d := ScheduleDescription{
		Schedule: t.s, Paused: rec.Paused, Note: rec.Note, LastInstance: rec.LastInstance,
		Created: msTime(rec.CreatedMs), Updated: msTime(rec.UpdatedMs),
	}
	if rec.BufferedMs > 0 {
		d.Buffered = msTime(rec.BufferedMs)
	}
	for _, f := range rec.Firings {
		d.Recent = append(d.Recent, ScheduleFiring{Nominal: msTime(f.NominalMs), At: msTime(f.AtMs), Outcome: f.Outcome, Instance: f.Instance})
	}
	if rec.Paused || rec.Ended {
		return d, nil
	}
	var at time.Time
	if rec.NextMs > 0 {
		at = msTime(rec.NextMs)
	} else { // not computed yet: from the write that reset it, as the scheduler will
		at = t.next(msTime(rec.UpdatedMs))
	}
	for ; len(d.Next) < n && !at.IsZero(); at = t.next(at) {
		d.Next = append(d.Next, at)
	}
	return d, nil
}

func msTime(ms uint64) time.Time { return time.UnixMilli(int64(ms)).UTC() }
