package redisprovider

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// maxScheduleFirings caps the firings GetSchedule returns: the store keeps
// the newest 100 (lua/schedule_confirm.lua).
const maxScheduleFirings = 100

var _ duroxide.ScheduleStore = (*partition)(nil)

// checkScheduleID rejects the ids no schedule may have: empty, or holding a
// character that cannot appear in the instance ids of its firings.
func checkScheduleID(op, id string) error {
	if id == "" {
		return invalid(op, "empty schedule id")
	}
	if strings.ContainsAny(id, "\n\r") {
		return invalid(op, "schedule id %q holds a line break", id)
	}
	return nil
}

// UpsertSchedule writes a schedule's spec (duroxide.ScheduleStore).
func (p *partition) UpsertSchedule(ctx context.Context, id, spec, mode string, paused *bool) (bool, error) {
	const op = "schedule_upsert"
	if err := checkScheduleID(op, id); err != nil {
		return false, err
	}
	if mode != "create" && mode != "update" && mode != "put" {
		return false, invalid(op, "schedule %s: mode %q is none of create, update, put", id, mode)
	}
	if spec == "" {
		return false, invalid(op, "schedule %s: empty spec", id)
	}
	var a args
	a.str(id).str(spec).str(mode)
	switch {
	case paused == nil:
		a.str("")
	default:
		a.flag(*paused)
	}
	res, err := p.run(ctx, op, scriptScheduleUpsert, a)
	if err != nil {
		return false, err
	}
	r := newReply(op, res)
	created := r.int(0) == 1
	return created, r.err
}

// DeleteSchedule removes a schedule (duroxide.ScheduleStore).
func (p *partition) DeleteSchedule(ctx context.Context, id string) (bool, error) {
	const op = "schedule_delete"
	if err := checkScheduleID(op, id); err != nil {
		return false, err
	}
	var a args
	a.str(id)
	res, err := p.run(ctx, op, scriptScheduleDelete, a)
	if err != nil {
		return false, err
	}
	return res == int64(1), nil
}

// PauseSchedule pauses or resumes a schedule (duroxide.ScheduleStore).
func (p *partition) PauseSchedule(ctx context.Context, id string, paused bool, note string) error {
	const op = "schedule_pause"
	if err := checkScheduleID(op, id); err != nil {
		return err
	}
	var a args
	a.str(id).flag(paused).str(note)
	_, err := p.run(ctx, op, scriptSchedulePause, a)
	return err
}

// TriggerSchedule makes a firing now (duroxide.ScheduleStore).
func (p *partition) TriggerSchedule(ctx context.Context, id string) (uint64, error) {
	const op = "schedule_trigger"
	if err := checkScheduleID(op, id); err != nil {
		return 0, err
	}
	var a args
	a.str(id)
	res, err := p.run(ctx, op, scriptScheduleTrigger, a)
	if err != nil {
		return 0, err
	}
	n, ok := res.(int64)
	if !ok {
		return 0, undecodable(op, "schedule %s: unexpected reply", id)
	}
	return uint64(n), nil
}

// GetSchedule reads a schedule and its recent firings
// (duroxide.ScheduleStore).
func (p *partition) GetSchedule(ctx context.Context, id string, firings int) (*duroxide.ScheduleRecord, error) {
	const op = "schedule_get"
	if err := checkScheduleID(op, id); err != nil {
		return nil, err
	}
	var a args
	a.str(id).int(min(max(firings, 0), maxScheduleFirings))
	res, err := p.run(ctx, op, scriptScheduleGet, a)
	if err != nil || res == nil {
		return nil, err
	}
	r := newReply(op, res)
	rec, err := decodeSchedule(op, id, r.at(0))
	if err != nil {
		return nil, err
	}
	if firings > 0 {
		for _, f := range r.strs(1) {
			fr, err := decodeFiring(op, id, f)
			if err != nil {
				return nil, err
			}
			rec.Firings = append(rec.Firings, fr)
		}
	}
	return &rec, r.err
}

// ListSchedules reads every schedule (duroxide.ScheduleStore).
func (p *partition) ListSchedules(ctx context.Context) ([]duroxide.ScheduleRecord, error) {
	const op = "schedule_list"
	res, err := p.run(ctx, op, scriptScheduleList, nil)
	if err != nil || res == nil {
		return nil, err
	}
	r := newReply(op, res)
	out := make([]duroxide.ScheduleRecord, 0, len(r.v)/2)
	for i := 0; i+1 < len(r.v); i += 2 {
		id, _ := r.str(i)
		rec, err := decodeSchedule(op, id, r.at(i+1))
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, r.err
}

// ClaimScheduleFirings claims due firings (duroxide.ScheduleStore).
func (p *partition) ClaimScheduleFirings(ctx context.Context, lease time.Duration, limit int) ([]duroxide.ScheduleClaim, error) {
	const op = "schedule_claim"
	if lease <= 0 || limit < 1 {
		return nil, invalid(op, "lease %v and max %d must be positive", lease, limit)
	}
	var a args
	a.ms(lease).int(limit)
	res, err := p.run(ctx, op, scriptScheduleClaim, a)
	if err != nil {
		return nil, err
	}
	r := newReply(op, res)
	now := uint64(r.int(0))
	var out []duroxide.ScheduleClaim
	for i := 1; i < len(r.v); i++ {
		e := newReply(op, r.at(i))
		id, _ := e.str(0)
		rec, err := decodeSchedule(op, id, e.at(1))
		if err != nil {
			return nil, err
		}
		if e.err != nil {
			return nil, e.err
		}
		out = append(out, duroxide.ScheduleClaim{ScheduleRecord: rec, NowMs: now})
	}
	return out, r.err
}

// ConfirmScheduleFiring ends a claimed firing (duroxide.ScheduleStore).
func (p *partition) ConfirmScheduleFiring(ctx context.Context, c duroxide.ScheduleConfirm) (bool, error) {
	const op = "schedule_confirm"
	if err := checkScheduleID(op, c.ID); err != nil {
		return false, err
	}
	if strings.ContainsAny(c.Outcome, " \n") {
		return false, invalid(op, "schedule %s: outcome %q holds a space", c.ID, c.Outcome)
	}
	var a args
	a.str(c.ID).u64(c.NominalMs).u64(c.Rev).str(c.Outcome).str(c.Instance)
	switch {
	case !c.Advance:
		a.str("-").str("0")
	case c.End:
		a.str("end").str("0")
	default:
		a.at(c.NextMs).at(c.FireAtMs)
	}
	res, err := p.run(ctx, op, scriptScheduleConfirm, a)
	if err != nil {
		return false, err
	}
	return res != nil, nil
}

// TakeBufferedFiring makes a buffered firing the schedule's firing in
// progress (duroxide.ScheduleStore).
func (p *partition) TakeBufferedFiring(ctx context.Context, id string, nominalMs uint64, lease time.Duration) (bool, error) {
	const op = "schedule_take_buffered"
	if err := checkScheduleID(op, id); err != nil {
		return false, err
	}
	if lease <= 0 {
		return false, invalid(op, "schedule %s: lease %v must be positive", id, lease)
	}
	var a args
	a.str(id).u64(nominalMs).ms(lease)
	res, err := p.run(ctx, op, scriptScheduleTakeBuffered, a)
	if err != nil {
		return false, err
	}
	return res == int64(1), nil
}

// NextScheduleDue reads when the next firing is due
// (duroxide.ScheduleStore).
func (p *partition) NextScheduleDue(ctx context.Context) (duroxide.ScheduleDue, error) {
	const op = "schedule_next_due"
	res, err := p.run(ctx, op, scriptScheduleNextDue, nil)
	if err != nil {
		return duroxide.ScheduleDue{}, err
	}
	r := newReply(op, res)
	d := duroxide.ScheduleDue{NowMs: uint64(r.int(0)), Buffered: int(r.int(3))}
	if v := r.int(1); v >= 0 {
		d.NextDueMs, d.HasDue = uint64(v), true
	}
	if v := r.int(2); v >= 0 {
		d.LeaseEndMs, d.HasLease = uint64(v), true
	}
	return d, r.err
}

// decodeSchedule reads a schedule record from its HGETALL form.
func decodeSchedule(op, id string, v any) (duroxide.ScheduleRecord, error) {
	r := newReply(op, v)
	rec := duroxide.ScheduleRecord{ID: id}
	num := func(s string) uint64 {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil && r.err == nil {
			r.err = undecodable(op, "schedule %s: field value %q is not a number", id, s)
		}
		return n
	}
	for i := 0; i+1 < len(r.v); i += 2 {
		f, _ := r.str(i)
		val, _ := r.str(i + 1)
		switch f {
		case "spec":
			rec.Spec = val
		case "rev":
			rec.Rev = num(val)
		case "paused":
			rec.Paused = val == "1"
		case "note":
			rec.Note = val
		case "next":
			if val == "end" {
				rec.Ended = true
			} else if val != "" {
				rec.NextMs = num(val)
			}
		case "fireat":
			rec.FireAtMs = num(val)
		case "pnom":
			rec.PendingMs = num(val)
		case "pkind":
			rec.PendingKind = val
		case "buf":
			rec.BufferedMs = num(val)
		case "last":
			rec.LastInstance = val
		case "created":
			rec.CreatedMs = num(val)
		case "updated":
			rec.UpdatedMs = num(val)
		}
	}
	return rec, r.err
}

// decodeFiring reads a firing record, '<nominal> <outcome> <at> <instance>'.
func decodeFiring(op, id, s string) (duroxide.ScheduleFiringRecord, error) {
	parts := strings.SplitN(s, " ", 4)
	if len(parts) != 4 {
		return duroxide.ScheduleFiringRecord{}, undecodable(op, "schedule %s: firing record %q", id, s)
	}
	nominal, err1 := strconv.ParseUint(parts[0], 10, 64)
	at, err2 := strconv.ParseUint(parts[2], 10, 64)
	if err1 != nil || err2 != nil {
		return duroxide.ScheduleFiringRecord{}, undecodable(op, "schedule %s: firing record %q", id, s)
	}
	return duroxide.ScheduleFiringRecord{NominalMs: nominal, Outcome: parts[1], AtMs: at, Instance: parts[3]}, nil
}
