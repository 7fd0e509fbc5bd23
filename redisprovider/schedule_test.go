package redisprovider

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// TestScheduleFiringProtocol walks one schedule through the scripts: a
// claim takes it once (a second claim finds nothing), its lease ending
// unconfirmed hands it to the next claim, a confirm advances it, a confirm
// of an older rev keeps the update's reset, trigger, pause and buffering.
func TestScheduleFiringProtocol(t *testing.T) {
	t.Parallel()
	m, p := newMiniProvider(t)
	ctx := context.Background()
	now := time.UnixMilli(1_800_000_000_000)
	m.SetTime(now)
	if created, err := p.UpsertSchedule(ctx, "s", `{"x":1}`, "create", nil); err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	if _, err := p.UpsertSchedule(ctx, "s", `{}`, "create", nil); !errors.Is(err, duroxide.ErrAlreadyExists) {
		t.Fatalf("create twice: %v", err)
	}
	if _, err := p.UpsertSchedule(ctx, "nope", `{}`, "update", nil); !errors.Is(err, duroxide.ErrNotFound) {
		t.Fatalf("update of none: %v", err)
	}
	claim := func(want int) []duroxide.ScheduleClaim {
		t.Helper()
		cs, err := p.ClaimScheduleFirings(ctx, time.Second, 16)
		if err != nil || len(cs) != want {
			t.Fatalf("claim: %d firings (%+v) %v, want %d", len(cs), cs, err, want)
		}
		return cs
	}
	c := claim(1)[0]
	if c.PendingKind != "init" || c.Spec != `{"x":1}` || c.NowMs != uint64(now.UnixMilli()) || c.Rev != 1 {
		t.Fatalf("first claim %+v: want init of rev 1 at now", c)
	}
	claim(0) // one firing in progress per schedule
	m.SetTime(now.Add(2 * time.Second))
	c = claim(1)[0] // the lease ended unconfirmed: claimed again
	next := uint64(now.Add(time.Minute).UnixMilli())
	ok, err := p.ConfirmScheduleFiring(ctx, duroxide.ScheduleConfirm{ID: "s", NominalMs: c.PendingMs, Rev: c.Rev, Advance: true, NextMs: next, FireAtMs: next})
	if err != nil || !ok {
		t.Fatalf("confirm: %v %v", ok, err)
	}
	if ok, _ := p.ConfirmScheduleFiring(ctx, duroxide.ScheduleConfirm{ID: "s", NominalMs: c.PendingMs, Rev: c.Rev}); ok {
		t.Fatal("a second confirm of the same firing applied")
	}
	claim(0) // not due yet
	due, err := p.NextScheduleDue(ctx)
	if err != nil || !due.HasDue || due.NextDueMs != next || due.HasLease {
		t.Fatalf("next due %+v %v, want %d without lease", due, err, next)
	}
	m.SetTime(now.Add(time.Minute))
	c = claim(1)[0]
	if c.PendingKind != "due" || c.PendingMs != next {
		t.Fatalf("due claim %+v", c)
	}
	// an update between claim and confirm: its reset wins over the confirm's next
	if _, err := p.UpsertSchedule(ctx, "s", `{"x":2}`, "update", nil); err != nil {
		t.Fatal(err)
	}
	if ok, err := p.ConfirmScheduleFiring(ctx, duroxide.ScheduleConfirm{ID: "s", NominalMs: c.PendingMs, Rev: c.Rev, Outcome: "started",
		Instance: "s@1", Advance: true, NextMs: next + 60000, FireAtMs: next + 60000}); err != nil || !ok {
		t.Fatalf("confirm: %v %v", ok, err)
	}
	rec, err := p.GetSchedule(ctx, "s", 10)
	if err != nil || rec.NextMs != 0 || rec.Rev != 2 || rec.LastInstance != "s@1" || len(rec.Firings) != 1 || rec.Firings[0].Outcome != "started" {
		t.Fatalf("after update and confirm: %+v %v", rec, err)
	}
	c = claim(1)[0]
	if c.PendingKind != "init" {
		t.Fatalf("after an update the next claim computes the next time: %+v", c)
	}
	if _, err := p.TriggerSchedule(ctx, "s"); !errors.Is(err, duroxide.ErrConflict) {
		t.Fatalf("trigger while a firing is in progress: %v", err)
	}
	if ok, err := p.ConfirmScheduleFiring(ctx, duroxide.ScheduleConfirm{ID: "s", NominalMs: c.PendingMs, Rev: c.Rev, Advance: true, End: true}); err != nil || !ok {
		t.Fatalf("confirm end: %v %v", ok, err)
	}
	claim(0) // ended: never due again
	nominal, err := p.TriggerSchedule(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	c = claim(1)[0]
	if c.PendingKind != "trig" || c.PendingMs != nominal {
		t.Fatalf("trigger claim %+v, want trig at %d", c, nominal)
	}
	if _, err := p.ConfirmScheduleFiring(ctx, duroxide.ScheduleConfirm{ID: "s", NominalMs: c.PendingMs, Rev: c.Rev, Outcome: "buffered"}); err != nil {
		t.Fatal(err)
	}
	if due, _ := p.NextScheduleDue(ctx); due.Buffered != 1 {
		t.Fatalf("buffered count %d", due.Buffered)
	}
	if ok, err := p.TakeBufferedFiring(ctx, "s", nominal+1, time.Second); err != nil || ok {
		t.Fatalf("take of another nominal: %v %v", ok, err)
	}
	if ok, err := p.TakeBufferedFiring(ctx, "s", nominal, time.Second); err != nil || !ok {
		t.Fatalf("take: %v %v", ok, err)
	}
	if err := p.PauseSchedule(ctx, "s", true, "why"); err != nil {
		t.Fatal(err)
	}
	list, err := p.ListSchedules(ctx)
	if err != nil || len(list) != 1 || !list[0].Paused || list[0].Note != "why" || list[0].PendingKind != "buf" || list[0].BufferedMs != 0 {
		t.Fatalf("list: %+v %v", list, err)
	}
	if existed, err := p.DeleteSchedule(ctx, "s"); err != nil || !existed {
		t.Fatalf("delete: %v %v", existed, err)
	}
	if keys := m.Keys(); len(keys) > 0 {
		for _, k := range keys {
			if p.keys.Family(k) == "sch" || p.keys.Family(k) == "schf" {
				t.Fatalf("deleting left %s", k)
			}
		}
	}
	claim(0)
	if err := p.PauseSchedule(ctx, "s", false, ""); !errors.Is(err, duroxide.ErrNotFound) {
		t.Fatalf("resume of a deleted schedule: %v", err)
	}
}
