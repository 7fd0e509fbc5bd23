package durable_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// firingRuns counts the runs of the "Count" activity per instance: a
// firing started twice would run it twice.
type firingRuns struct {
	mu   sync.Mutex
	runs map[string]int
}

func (c *firingRuns) count(ctx *durable.ActivityContext, _ string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.runs[ctx.InstanceID()]++
	return "", nil
}

func (c *firingRuns) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.runs {
		out[k] = v
	}
	return out
}

// scheduledRegistry registers "Tick", which runs the counting activity
// once, and "Hold", which waits for the event "done".
func scheduledRegistry(c *firingRuns) *durable.Registry {
	reg := durable.NewRegistry()
	reg.MustAddActivity("Count", c.count)
	reg.MustAddOrchestration("Tick", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.ScheduleActivity("Count", "").Get()
	})
	reg.MustAddOrchestration("Hold", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.WaitForEvent("done").Get()
	})
	return reg
}

// waitRecords waits until schedule id has at least n firing records and
// returns them oldest first.
func waitRecords(t *testing.T, c *durable.Client, id string, n int) []durable.ScheduleFiring {
	t.Helper()
	var recent []durable.ScheduleFiring
	durabletest.Eventually(t, fmt.Sprintf("%d firing records of schedule %s", n, id), func() (bool, error) {
		d, err := c.DescribeSchedule(context.Background(), id, 0)
		recent = d.Recent
		return err == nil && len(recent) >= n, err
	})
	out := make([]durable.ScheduleFiring, 0, len(recent))
	for i := len(recent) - 1; i >= 0; i-- {
		out = append(out, recent[i])
	}
	return out
}

// waitAllRecorded waits until every instance that ran is a started
// firing of schedule id: a firing started under an id of its own, or
// started twice, would leave an instance no record names.
func waitAllRecorded(t *testing.T, cl *durable.Client, id string, c *firingRuns) {
	t.Helper()
	var missing []string
	durabletest.Eventually(t, "every instance that ran recorded as a firing of "+id, func() (bool, error) {
		d, err := cl.DescribeSchedule(context.Background(), id, 0)
		if err != nil {
			return false, err
		}
		recorded := map[string]bool{}
		for _, f := range d.Recent {
			if f.Outcome == "started" {
				recorded[f.Instance] = true
			}
		}
		missing = missing[:0]
		for inst := range c.snapshot() {
			if !recorded[inst] {
				missing = append(missing, inst)
			}
		}
		if len(missing) > 0 {
			return false, fmt.Errorf("instances %v ran, but no firing records them", missing)
		}
		return true, nil
	})
}

// outcomes renders records as "outcome@offset" from start, in units of
// step, e.g. "started@0 skipped@1".
func outcomes(recs []durable.ScheduleFiring, start time.Time, step time.Duration) string {
	var parts []string
	for _, r := range recs {
		parts = append(parts, fmt.Sprintf("%s@%d", r.Outcome, r.Nominal.Sub(start)/step))
	}
	return strings.Join(parts, " ")
}

func TestScheduleTimeSkippingFiresDailyCron(t *testing.T) {
	t.Parallel()
	c := &firingRuns{runs: map[string]int{}}
	env := durabletest.Start(t, scheduledRegistry(c))
	ctx := context.Background()
	if err := env.Client.CreateSchedule(ctx, durable.Schedule{ID: "nightly", Orchestration: "Tick", Cron: "30 2 * * *", TimeZone: "Europe/Paris"}); err != nil {
		t.Fatal(err)
	}
	ids := env.WaitForFirings(t, "nightly", 3)
	paris, _ := time.LoadLocation("Europe/Paris")
	var prev time.Time
	for _, id := range ids[:3] {
		at, err := time.Parse(time.RFC3339Nano, strings.TrimPrefix(id, "nightly@"))
		if err != nil {
			t.Fatalf("instance id %q: %v", id, err)
		}
		if local := at.In(paris); local.Hour() != 2 || local.Minute() != 30 {
			t.Fatalf("firing %s is at %v in Paris, want 02:30", id, local)
		}
		if !prev.IsZero() && at.Sub(prev) < 23*time.Hour {
			t.Fatalf("firings %v and %v are less than a day apart", prev, at)
		}
		prev = at
		if st := env.Wait(t, id); st.Status != durable.StatusCompleted {
			t.Fatalf("%s: %v", id, st.Status)
		}
	}
}

// TestScheduleFiresOnceAcrossThreeRuntimesAndCrashes runs three
// schedulers on one namespace, each dropping a claimed firing once, two of
// them before the start (a crash between claim and start) and one after it
// (a crash between start and confirm): every nominal time is recorded
// started once, and its instance ran once.
func TestScheduleFiresOnceAcrossThreeRuntimesAndCrashes(t *testing.T) {
	t.Parallel()
	c := &firingRuns{runs: map[string]int{}}
	reg := scheduledRegistry(c)
	opts := durable.Options{ScheduleLease: 300 * time.Millisecond}
	env := durabletest.Start(t, reg, durabletest.WithOptions(opts))
	rts := []*durable.Runtime{env.Runtime, env.NewRuntime(t, reg, opts), env.NewRuntime(t, reg, opts)}
	var crashes atomic.Int32
	crashed := map[string]bool{}
	var mu sync.Mutex
	for i, rt := range rts {
		stage := "claimed"
		if i == 2 {
			stage = "started"
		}
		durable.SetScheduleHook(rt, func(s, id string, nominal time.Time) bool {
			mu.Lock()
			defer mu.Unlock()
			key := fmt.Sprint(i)
			if s != stage || crashed[key] {
				return true
			}
			crashed[key] = true
			crashes.Add(1)
			return false
		})
	}
	ctx := context.Background()
	if err := env.Client.CreateSchedule(ctx, durable.Schedule{ID: "hourly", Orchestration: "Tick", Cron: "0 * * * *", Overlap: durable.OverlapAllowAll}); err != nil {
		t.Fatal(err)
	}
	ids := env.WaitForFirings(t, "hourly", 8)
	for _, id := range ids {
		env.Wait(t, id)
	}
	if crashes.Load() == 0 {
		t.Fatal("no scheduler dropped a firing: the test tested nothing")
	}
	d, err := env.Client.DescribeSchedule(ctx, "hourly", 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[time.Time]bool{}
	for _, f := range d.Recent {
		if f.Outcome != "started" {
			t.Fatalf("firing %v: outcome %s", f.Nominal, f.Outcome)
		}
		if seen[f.Nominal] {
			t.Fatalf("nominal time %v recorded twice: %+v", f.Nominal, d.Recent)
		}
		seen[f.Nominal] = true
		if want := durable.FiringInstanceID("hourly", f.Nominal); f.Instance != want {
			t.Fatalf("instance %q, want %q", f.Instance, want)
		}
		if f.Nominal.Minute() != 0 || f.Nominal.Second() != 0 {
			t.Fatalf("nominal %v is not on the hour", f.Nominal)
		}
	}
	runs := c.snapshot()
	for _, id := range ids {
		if runs[id] != 1 {
			t.Fatalf("instance %s ran %d times: %v", id, runs[id], runs)
		}
	}
	if len(runs) < len(ids) {
		t.Fatalf("%d instances ran for %d firings", len(runs), len(ids))
	}
	waitAllRecorded(t, env.Client, "hourly", c)
}

// TestScheduleCatchesUpWithinItsWindowAfterDowntime stops the only
// scheduler for five periods of a schedule with a catch-up window of two
// and a half: the times within the window fire when a scheduler is back,
// the first older one is recorded missed, the others are skipped. On
// miniredis the period is an hour and the downtime is a move of the
// clock; on a real Redis (when configured) the period is 3 s and the
// downtime real: the scheduler reads the server's TIME in its claim
// script, which no test can move.
func TestScheduleCatchesUpWithinItsWindowAfterDowntime(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, func(t *testing.T, b durabletest.Backend) {
		c := &firingRuns{runs: map[string]int{}}
		reg := scheduledRegistry(c)
		env := durabletest.Start(t, reg, durabletest.WithBackend(b), durabletest.WithTimeSkipping(false))
		ctx := context.Background()
		step, now := time.Hour, env.Now
		if !b.Clocked {
			step = 3 * time.Second
			rdb := b.Client(t)
			now = func() time.Time {
				tm, err := rdb.Time(ctx).Result()
				if err != nil {
					t.Fatalf("the server's time: %v", err)
				}
				return tm
			}
		}
		start := now().Truncate(step).Add(step)
		if !b.Clocked { // a period to create it in before its first time
			start = start.Add(step)
		}
		s := durable.Schedule{ID: "catchup", Orchestration: "Tick", Every: step, StartAt: start, CatchupWindow: 5 * step / 2,
			Overlap: durable.OverlapAllowAll} // the catch-up firings come faster than Tick ends
		if err := env.Client.CreateSchedule(ctx, s); err != nil {
			t.Fatal(err)
		}
		if b.Clocked {
			env.Advance(start.Sub(env.Now()) + time.Second)
		}
		if got := outcomes(waitRecords(t, env.Client, "catchup", 1), start, step); got != "started@0" {
			t.Fatalf("first firing: %s", got)
		}
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := env.Runtime.Shutdown(sctx); err != nil {
			t.Fatal(err)
		}
		// The scheduler must be back after start+4.5 periods (so that
		// start+2 is out of the window: recorded skipped, not started) and
		// claim before start+5.5 (so that start+3 is in it).
		if b.Clocked {
			env.Advance(5*time.Hour + 10*time.Minute) // downtime: start+5h10m
		} else {
			back := start.Add(46 * step / 10)
			durabletest.Eventually(t, "the server's time at start+4.6 periods, the end of the downtime", func() (bool, error) {
				return !now().Before(back), nil
			})
		}
		env.NewRuntime(t, reg, durable.Options{})
		recs := waitRecords(t, env.Client, "catchup", 5)
		if got, want := outcomes(recs[:5], start, step), "started@0 missed@1 started@3 started@4 started@5"; got != want {
			t.Fatalf("firings %s, want %s", got, want)
		}
		d, err := env.Client.DescribeSchedule(ctx, "catchup", 2)
		if err != nil {
			t.Fatal(err)
		}
		// on miniredis the last firing is start+5h; in real time more may
		// have fired since
		last := d.Recent[0].Nominal
		if len(d.Next) != 2 || !d.Next[0].Equal(last.Add(step)) || !d.Next[1].Equal(last.Add(2*step)) {
			t.Fatalf("next firings %v after the last at %v, want the next two periods", d.Next, last)
		}
	})
}

// TestScheduleOverlapPolicies fires a schedule of an orchestration that
// runs until told three times, ends what runs, and fires it once more: on
// miniredis hourly, moving its clock, and on a real Redis (when
// configured) every second.
func TestScheduleOverlapPolicies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		policy durable.OverlapPolicy
		// the records by nominal time, in steps from the first (a buffered
		// firing's start is recorded beside its buffering)
		want string
	}{
		{durable.OverlapSkip, "started@0 skipped@1 skipped@2 started@3"},
		{durable.OverlapBufferOne, "started@0 buffered@1 started@1 skipped@2 started@3"},
		{durable.OverlapAllowAll, "started@0 started@1 started@2 started@3"},
		{durable.OverlapCancelRunning, "started@0 started@1 started@2 started@3"},
	}
	durabletest.Each(t, func(t *testing.T, b durabletest.Backend) {
		for _, tc := range cases {
			t.Run(string(tc.policy), func(t *testing.T) {
				t.Parallel()
				c := &firingRuns{runs: map[string]int{}}
				env := durabletest.Start(t, scheduledRegistry(c), durabletest.WithBackend(b), durabletest.WithTimeSkipping(false))
				ctx := context.Background()
				step := time.Hour
				if !b.Clocked {
					step = time.Second
				}
				start := env.Now().Truncate(step).Add(2 * step)
				s := durable.Schedule{ID: "ov-" + string(tc.policy), Orchestration: "Hold", Every: step, StartAt: start, Overlap: tc.policy}
				if err := env.Client.CreateSchedule(ctx, s); err != nil {
					t.Fatal(err)
				}
				if b.Clocked { // to a second before the first firing
					env.Advance(start.Sub(env.Now()) - step + time.Second)
				}
				fire := func(n int) []durable.ScheduleFiring {
					if b.Clocked {
						env.Advance(step)
					}
					return waitRecords(t, env.Client, s.ID, n)
				}
				end := func(instance string) {
					st, err := env.Client.Status(ctx, instance)
					if err != nil {
						t.Fatal(err)
					}
					if !st.IsTerminal() {
						if err := env.Client.RaiseEvent(ctx, instance, "done", `"ok"`); err != nil {
							t.Fatal(err)
						}
					}
					env.Wait(t, instance)
				}
				fire(1)
				fire(2)
				recs := fire(3)
				want3 := strings.Join(strings.Fields(tc.want)[:3], " ")
				if tc.policy == durable.OverlapBufferOne {
					want3 = "started@0 buffered@1 skipped@2"
				}
				if got := outcomes(recs, start, step); got != want3 {
					t.Fatalf("three firings while the first runs: %s, want %s", got, want3)
				}
				first := recs[0].Instance
				if tc.policy == durable.OverlapCancelRunning {
					if st := env.Wait(t, first); st.Status != durable.StatusFailed || !errors.Is(st.Err(), durable.ErrCancelled) {
						t.Fatalf("the first instance was not cancelled: %v %s", st.Status, st.FailureMessage())
					}
				}
				for _, r := range recs {
					if r.Instance != "" {
						end(r.Instance)
					}
				}
				if tc.policy == durable.OverlapBufferOne {
					recs = waitRecords(t, env.Client, s.ID, 4) // released when the first ended
					end(durable.FiringInstanceID(s.ID, start.Add(step)))
				}
				recs = fire(len(recs) + 1)
				if got := outcomes(recs, start, step); got != tc.want {
					t.Fatalf("firings %s, want %s", got, tc.want)
				}
				for id, n := range c.snapshot() {
					if n > 1 {
						t.Fatalf("%s ran %d times", id, n)
					}
				}
			})
		}
	})
}

// TestScheduleFiresOnceAcrossThreeProcesses runs three schedulers, each on
// a provider and Redis connection of its own as separate processes would
// have, every second in real time; the process that claims the first
// firing shuts down before starting it, and another firing is dropped
// between start and confirm. Each
// nominal time is recorded once, with its own instance, run once.
func TestScheduleFiresOnceAcrossThreeProcesses(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, func(t *testing.T, b durabletest.Backend) {
		c := &firingRuns{runs: map[string]int{}}
		reg := scheduledRegistry(c)
		env := durabletest.Start(t, reg, durabletest.WithBackend(b), durabletest.WithTimeSkipping(false),
			durabletest.WithOptions(durable.Options{DisableScheduler: true}))
		ns := strings.TrimSuffix(strings.TrimPrefix(env.Provider.Keys().Prefix(), "{"), "}:")
		var mu sync.Mutex
		dropped := map[string]bool{}
		for range 3 {
			var rdb redis.UniversalClient
			if env.Redis != nil {
				rdb = redis.NewClient(&redis.Options{Addr: env.Redis.Addr()})
			} else {
				rdb = b.Client(t)
			}
			p, err := redisprovider.New(context.Background(), redisprovider.Options{Client: rdb, Namespace: ns})
			if err != nil {
				t.Fatal(err)
			}
			rt, err := durable.NewRuntime(p, reg, durable.Options{ScheduleLease: 300 * time.Millisecond, ScheduleRefresh: 50 * time.Millisecond,
				LongPollTimeout: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			durable.SetScheduleHook(rt, func(stage, _ string, _ time.Time) bool {
				mu.Lock()
				defer mu.Unlock()
				if dropped[stage] {
					return true
				}
				dropped[stage] = true
				if stage == "claimed" {
					// this process dies with the firing claimed: the
					// other two carry on
					go func() {
						sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
						defer cancel()
						_ = rt.Shutdown(sctx)
					}()
				}
				return false
			})
			t.Cleanup(func() {
				sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_ = rt.Shutdown(sctx)
				_ = p.Close()
				_ = rdb.Close()
			})
		}
		ctx := context.Background()
		if err := env.Client.CreateSchedule(ctx, durable.Schedule{ID: "tick", Orchestration: "Tick", Every: time.Second, Overlap: durable.OverlapAllowAll}); err != nil {
			t.Fatal(err)
		}
		recs := waitRecords(t, env.Client, "tick", 4)
		seen := map[time.Time]bool{}
		for _, r := range recs {
			if r.Outcome != "started" || seen[r.Nominal] || r.Instance != durable.FiringInstanceID("tick", r.Nominal) {
				t.Fatalf("firing records %+v: want one started record per nominal time, with its own instance", recs)
			}
			seen[r.Nominal] = true
			env.Wait(t, r.Instance)
		}
		mu.Lock()
		if !dropped["claimed"] || !dropped["started"] {
			t.Errorf("dropped %v: the crashes did not happen", dropped)
		}
		mu.Unlock()
		for _, r := range recs {
			if n := c.snapshot()[r.Instance]; n != 1 {
				t.Fatalf("%s ran %d times", r.Instance, n)
			}
		}
		waitAllRecorded(t, env.Client, "tick", c)
	})
}

// TestScheduleOnPartitionedNamespace fires a schedule of a 4-partition
// namespace: its record is in the namespace's own tag, its firings'
// instances land in several partitions, and time skipping sees it.
func TestScheduleOnPartitionedNamespace(t *testing.T) {
	t.Parallel()
	c := &firingRuns{runs: map[string]int{}}
	b := durabletest.Miniredis()
	b.Partitions = 4
	env := durabletest.Start(t, scheduledRegistry(c), durabletest.WithBackend(b))
	if err := env.Client.CreateSchedule(context.Background(), durable.Schedule{ID: "p", Orchestration: "Tick", Every: 10 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	parts := map[int]bool{}
	for _, id := range env.WaitForFirings(t, "p", 8) {
		if st := env.Wait(t, id); st.Status != durable.StatusCompleted {
			t.Fatalf("%s: %v", id, st.Status)
		}
		parts[env.Provider.PartitionOf(id)] = true
	}
	if len(parts) < 2 {
		t.Fatalf("the firings' instances are all in partition %v: the test crossed no partitions", parts)
	}
	if !env.Redis.Exists(env.Provider.Keys().Schedule("p")) {
		t.Fatal("the schedule is not in the namespace's own tag")
	}
}

// TestSchedulePauseResumeTriggerUpdate: a paused schedule does not fire on
// its times and does not catch them up when resumed; a trigger fires it
// paused or not; an update moves its times; a deleted one is gone.
func TestSchedulePauseResumeTriggerUpdate(t *testing.T) {
	t.Parallel()
	c := &firingRuns{runs: map[string]int{}}
	env := durabletest.Start(t, scheduledRegistry(c), durabletest.WithTimeSkipping(false))
	ctx := context.Background()
	start := env.Now().Truncate(time.Hour).Add(time.Hour)
	s := durable.Schedule{ID: "pr", Orchestration: "Tick", Every: time.Hour, StartAt: start, Overlap: durable.OverlapAllowAll}
	if err := env.Client.CreateSchedule(ctx, s); err != nil {
		t.Fatal(err)
	}
	env.Advance(start.Sub(env.Now()) + time.Second)
	waitRecords(t, env.Client, "pr", 1)
	if err := env.Client.PauseSchedule(ctx, "pr", "maintenance"); err != nil {
		t.Fatal(err)
	}
	env.Advance(3 * time.Hour) // start+3h: three times pass while paused
	inst, err := env.Client.TriggerSchedule(ctx, "pr")
	if err != nil {
		t.Fatal(err)
	}
	recs := waitRecords(t, env.Client, "pr", 2)
	if recs[1].Instance != inst || recs[1].Outcome != "started" {
		t.Fatalf("the trigger of a paused schedule: %+v, want %s started", recs, inst)
	}
	d, err := env.Client.DescribeSchedule(ctx, "pr", 1)
	if err != nil || !d.Paused || d.Note != "maintenance" || len(d.Next) != 0 {
		t.Fatalf("paused: %+v %v", d, err)
	}
	if err := env.Client.ResumeSchedule(ctx, "pr"); err != nil {
		t.Fatal(err)
	}
	env.Advance(time.Hour) // start+4h: the first time after the resume
	recs = waitRecords(t, env.Client, "pr", 3)
	if got := outcomes(recs, start, time.Hour); got != "started@0 started@3 started@4" { // @3: the trigger at start+3h+1s
		t.Fatalf("after resume: %s, want no catch-up of the paused hours", got)
	}
	s.Every = 2 * time.Hour
	if err := env.Client.UpdateSchedule(ctx, s); err != nil {
		t.Fatal(err)
	}
	d, err = env.Client.DescribeSchedule(ctx, "pr", 2)
	if err != nil || len(d.Next) != 2 || !d.Next[0].Equal(start.Add(6*time.Hour)) || !d.Next[1].Equal(start.Add(8*time.Hour)) {
		t.Fatalf("after update: next %v %v, want start+6h, start+8h", d.Next, err)
	}
	if err := env.Client.DeleteSchedule(ctx, "pr"); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Client.DescribeSchedule(ctx, "pr", 0); !errors.Is(err, durable.ErrNotFound) {
		t.Fatalf("describe after delete: %v", err)
	}
	if err := env.Client.DeleteSchedule(ctx, "pr"); !errors.Is(err, durable.ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
}
