package redisprovider

import (
	"context"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// maxPendingStarts caps one ListPendingStarts call: the notes are for
// people to read, and a deployment with more handed-back starts than this
// has one cause to fix, not thousands to list.
const maxPendingStarts = 1000

var _ duroxide.PendingStartNoter = (*partition)(nil)

// AbandonOrchestrationItemWithNote abandons the lock as
// AbandonOrchestrationItem does and, in the same script, stores note as the
// pending-start note of the locked instance if it has no record yet
// (duroxide.PendingStartNoter).
func (p *partition) AbandonOrchestrationItemWithNote(ctx context.Context, lockToken string, delay time.Duration, ignoreAttempt bool, note duroxide.PendingStart) error {
	const op = "abandon_orchestration_item_with_note"
	if err := checkToken(op, lockToken); err != nil {
		return err
	}
	if err := checkDurations(op, delay); err != nil {
		return err
	}
	var a args
	a.str(lockToken).ms(delay).flag(ignoreAttempt).
		str(note.Orchestration).str(note.Version).u64(uint64(note.Attempt)).u64(uint64(note.MaxAttempts)).str(note.Reason)
	_, err := p.run(ctx, op, scriptAbandonOrchestrationItemWithNote, a)
	return err
}

// Reply of lua/get_pending_start.lua, and of each note of
// lua/list_pending_starts.lua.
const (
	noteName = iota
	noteVersion
	noteAttempt
	noteMax
	noteReason
	noteAt
)

// PendingStart returns the pending-start note of an instance that has no
// record, nil when there is none.
func (p *partition) PendingStart(ctx context.Context, instance string) (*duroxide.PendingStart, error) {
	const op = "get_pending_start"
	if instance == "" {
		return nil, invalid(op, "empty instance id")
	}
	var a args
	a.str(instance)
	res, err := p.run(ctx, op, scriptGetPendingStart, a)
	if err != nil || res == nil {
		return nil, err
	}
	n, err := decodeNote(op, instance, res)
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// ListPendingStarts returns up to limit pending-start notes, newest first
// (at most maxPendingStarts).
func (p *partition) ListPendingStarts(ctx context.Context, limit int) ([]duroxide.PendingStart, error) {
	const op = "list_pending_starts"
	if limit < 1 {
		return nil, invalid(op, "limit %d: must be at least 1", limit)
	}
	var a args
	a.int(min(limit, maxPendingStarts))
	res, err := p.run(ctx, op, scriptListPendingStarts, a)
	if err != nil {
		return nil, err
	}
	if res == nil { // no notes: some clients read an empty array as nil
		return nil, nil
	}
	r := newReply(op, res)
	out := make([]duroxide.PendingStart, 0, len(r.v)/2)
	for i := 0; i+1 < len(r.v); i += 2 {
		inst, _ := r.str(i)
		n, err := decodeNote(op, inst, r.at(i+1))
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, r.err
}

// decodeNote reads a note in get_pending_start's reply form.
func decodeNote(op, instance string, res any) (duroxide.PendingStart, error) {
	r := newReply(op, res)
	n := duroxide.PendingStart{Instance: instance}
	n.Orchestration, _ = r.str(noteName)
	n.Version, _ = r.str(noteVersion)
	n.Attempt = uint32(r.int(noteAttempt))
	n.MaxAttempts = uint32(r.int(noteMax))
	n.Reason, _ = r.str(noteReason)
	n.NotedAtMs = uint64(r.int(noteAt))
	return n, r.err
}
