package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// scheduleVerbs are the schedules command's verbs and their positional
// arguments after the verb.
var scheduleVerbs = map[string]int{
	"list": 0, "describe": 1, "create": 1, "update": 1, "pause": 1, "resume": 1, "trigger": 1, "delete": 1,
}

// scheduleFlags are the flags that define a schedule: create and update
// only.
var scheduleFlags = []string{"orchestration", "input", "version", "cron", "every", "jitter", "tz", "start-at", "end-at", "overlap", "catchup"}

// scheduleJSON is the --json form of a schedule.
type scheduleJSON struct {
	ID            string               `json:"id"`
	Orchestration string               `json:"orchestration"`
	Version       string               `json:"version,omitempty"`
	Input         string               `json:"input,omitempty"`
	Cron          string               `json:"cron,omitempty"`
	Every         string               `json:"every,omitempty"`
	Jitter        string               `json:"jitter,omitempty"`
	TimeZone      string               `json:"time_zone,omitempty"`
	StartAt       *string              `json:"start_at"`
	EndAt         *string              `json:"end_at"`
	Overlap       string               `json:"overlap"`
	CatchupWindow string               `json:"catchup_window"`
	Paused        bool                 `json:"paused"`
	Note          string               `json:"note,omitempty"`
	Next          []string             `json:"next"`
	Buffered      *string              `json:"buffered"`
	LastInstance  string               `json:"last_instance,omitempty"`
	Recent        []scheduleFiringJSON `json:"recent,omitempty"`
}

type scheduleFiringJSON struct {
	Nominal  string `json:"nominal"`
	Outcome  string `json:"outcome"`
	Instance string `json:"instance,omitempty"`
	At       string `json:"at"`
}

func runSchedules(c *cli, args []string) error {
	fs := c.flags("schedules")
	orch := fs.String("orchestration", "", "create/update: the orchestration each firing starts")
	input := fs.String("input", "", "create/update: its input, a JSON document")
	version := fs.String("version", "", "create/update: its version (default: the newest the workers have)")
	cronExpr := fs.String("cron", "", `create/update: cron expression, 5 or 6 fields, @daily..., "@every 1h"`)
	every := fs.Duration("every", 0, "create/update: fixed interval instead of --cron")
	jitter := fs.Duration("jitter", 0, "create/update: delay each firing by up to this much")
	tz := fs.String("tz", "", "create/update: IANA time zone the cron expression is read in (default UTC)")
	startAt := fs.String("start-at", "", "create/update: no firing before this RFC 3339 time")
	endAt := fs.String("end-at", "", "create/update: no firing after this RFC 3339 time")
	overlap := fs.String("overlap", "skip", "create/update: while the last firing's instance runs: skip, buffer_one, allow_all, cancel_running")
	catchup := fs.Duration("catchup", 0, "create/update: how late a missed firing may still start (default 1m)")
	note := fs.String("note", "", "pause: why (shown by describe)")
	next := fs.Int("next", 5, "describe: how many next firing times to show")
	pos, err := c.parse(fs, args, 1, 2)
	if err != nil {
		return err
	}
	verb := pos[0]
	n, ok := scheduleVerbs[verb]
	if !ok || len(pos)-1 != n {
		return usageErr("schedules", "expected %s", commands()["schedules"].args)
	}
	defining := verb == "create" || verb == "update"
	var misplaced error
	fs.Visit(func(f *flag.Flag) {
		for _, name := range scheduleFlags {
			if f.Name == name && !defining && misplaced == nil {
				misplaced = usageErr("schedules", "--%s applies to create and update, not %s", name, verb)
			}
		}
	})
	if misplaced != nil {
		return misplaced
	}
	var sched durable.Schedule
	if defining {
		if err := checkJSON("schedules", "--input", *input); err != nil {
			return err
		}
		sched = durable.Schedule{ID: pos[1], Orchestration: *orch, Input: *input, Version: *version, Cron: *cronExpr,
			Every: *every, Jitter: *jitter, TimeZone: *tz, Overlap: durable.OverlapPolicy(*overlap), CatchupWindow: *catchup}
		for _, t := range []struct {
			flag string
			v    string
			dst  *time.Time
		}{{"--start-at", *startAt, &sched.StartAt}, {"--end-at", *endAt, &sched.EndAt}} {
			if t.v == "" {
				continue
			}
			at, err := time.Parse(time.RFC3339, t.v)
			if err != nil {
				return usageErr("schedules", "%s %q is not an RFC 3339 time: %v", t.flag, t.v, err)
			}
			*t.dst = at
		}
	}
	s, err := c.open()
	if err != nil {
		return err
	}
	defer s.close()
	cl := s.client
	switch verb {
	case "list":
		ds, err := cl.ListSchedules(s.ctx)
		if err != nil {
			return err
		}
		return c.printSchedules(ds)
	case "describe":
		d, err := cl.DescribeSchedule(s.ctx, pos[1], *next)
		if err != nil {
			return err
		}
		return c.printSchedule(d)
	case "create":
		err = cl.CreateSchedule(s.ctx, sched)
	case "update":
		err = cl.UpdateSchedule(s.ctx, sched)
	case "pause":
		err = cl.PauseSchedule(s.ctx, pos[1], *note)
	case "resume":
		err = cl.ResumeSchedule(s.ctx, pos[1])
	case "delete":
		err = cl.DeleteSchedule(s.ctx, pos[1])
	case "trigger":
		inst, err := cl.TriggerSchedule(s.ctx, pos[1])
		if err != nil {
			return err
		}
		return c.reportAction("triggered", pos[1], "instance "+inst)
	}
	if errors.Is(err, durable.ErrInvalidInput) {
		// durable's check of the definition: an operator's usage error
		return usageErr("schedules", "%v", err)
	}
	if err != nil {
		return err
	}
	return c.reportAction(pastTense(verb), pos[1], "schedule")
}

func pastTense(verb string) string {
	switch verb {
	case "create", "update", "pause", "resume", "delete":
		return strings.TrimSuffix(verb, "e") + "ed"
	}
	return verb
}

// scheduleWhen is a schedule's times in one phrase: its cron expression or
// its interval, with time zone and jitter.
func scheduleWhen(s durable.Schedule) string {
	w := s.Cron
	if s.Every > 0 {
		w = "every " + s.Every.String()
	}
	if s.TimeZone != "" {
		w += " (" + s.TimeZone + ")"
	}
	if s.Jitter > 0 {
		w += " jitter " + s.Jitter.String()
	}
	return w
}

func overlapOf(s durable.Schedule) string {
	if s.Overlap == "" {
		return string(durable.OverlapSkip)
	}
	return string(s.Overlap)
}

func (c *cli) printSchedules(ds []durable.ScheduleDescription) error {
	if c.json {
		out := make([]scheduleJSON, 0, len(ds))
		for _, d := range ds {
			out = append(out, toScheduleJSON(d))
		}
		return writeJSON(c.stdout, out)
	}
	if len(ds) == 0 {
		_, err := fmt.Fprintln(c.stdout, "no schedules")
		return err
	}
	t := newTable(c.stdout, "SCHEDULE", "ORCHESTRATION", "WHEN", "OVERLAP", "STATE", "NEXT", "LAST INSTANCE")
	now := c.now()
	for _, d := range ds {
		state, next := "active", "-"
		if d.Paused {
			state = "paused"
		}
		if len(d.Next) > 0 {
			next = relTime(d.Next[0], now)
		} else if !d.Paused {
			state = "ended"
		}
		t.row(d.ID, d.Orchestration, scheduleWhen(d.Schedule), overlapOf(d.Schedule), state, next, orDash(d.LastInstance))
	}
	return t.flush()
}

func (c *cli) printSchedule(d durable.ScheduleDescription) error {
	if c.json {
		return writeJSON(c.stdout, toScheduleJSON(d))
	}
	t := newTable(c.stdout)
	t.row("Schedule:", d.ID)
	t.row("Orchestration:", d.Orchestration+versionSuffix(d.Version))
	t.row("When:", scheduleWhen(d.Schedule))
	if !d.StartAt.IsZero() || !d.EndAt.IsZero() {
		t.row("Between:", timeOrDash(d.StartAt)+" and "+timeOrDash(d.EndAt))
	}
	t.row("Overlap:", overlapOf(d.Schedule))
	catch := d.CatchupWindow
	if catch == 0 {
		catch = durable.DefaultCatchupWindow
	}
	t.row("Catch-up:", catch.String())
	state := "active"
	if d.Paused {
		state = "paused"
		if d.Note != "" {
			state += ": " + d.Note
		}
	}
	t.row("State:", state)
	if !d.Buffered.IsZero() {
		t.row("Buffered:", d.Buffered.Format(time.RFC3339))
	}
	if d.LastInstance != "" {
		t.row("Last instance:", d.LastInstance)
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintln(c.stdout, "\nNext firings:")
	if len(d.Next) == 0 {
		fmt.Fprintln(c.stdout, "  none")
	}
	now := c.now()
	for _, n := range d.Next {
		fmt.Fprintf(c.stdout, "  %s  (%s)\n", n.Format(time.RFC3339), relTime(n, now))
	}
	fmt.Fprintln(c.stdout, "\nRecent firings:")
	if len(d.Recent) == 0 {
		fmt.Fprintln(c.stdout, "  none")
		return nil
	}
	rt := newTable(c.stdout, "  NOMINAL", "OUTCOME", "INSTANCE", "RECORDED")
	for _, f := range d.Recent {
		rt.row("  "+f.Nominal.Format(time.RFC3339), f.Outcome, orDash(f.Instance), relTime(f.At, now))
	}
	return rt.flush()
}

func toScheduleJSON(d durable.ScheduleDescription) scheduleJSON {
	j := scheduleJSON{ID: d.ID, Orchestration: d.Orchestration, Version: d.Version, Input: d.Input, Cron: d.Cron,
		TimeZone: d.TimeZone, Overlap: overlapOf(d.Schedule), Paused: d.Paused, Note: d.Note, LastInstance: d.LastInstance,
		StartAt: jsonAt(d.StartAt), EndAt: jsonAt(d.EndAt), Buffered: jsonAt(d.Buffered), Next: []string{}}
	if d.Every > 0 {
		j.Every = d.Every.String()
	}
	if d.Jitter > 0 {
		j.Jitter = d.Jitter.String()
	}
	catch := d.CatchupWindow
	if catch == 0 {
		catch = durable.DefaultCatchupWindow
	}
	j.CatchupWindow = catch.String()
	for _, n := range d.Next {
		j.Next = append(j.Next, n.UTC().Format(time.RFC3339Nano))
	}
	for _, f := range d.Recent {
		j.Recent = append(j.Recent, scheduleFiringJSON{Nominal: f.Nominal.UTC().Format(time.RFC3339Nano), Outcome: f.Outcome,
			Instance: f.Instance, At: f.At.UTC().Format(time.RFC3339Nano)})
	}
	return j
}

func jsonAt(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}

func timeOrDash(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format(time.RFC3339)
}

func versionSuffix(v string) string {
	if v == "" {
		return ""
	}
	return " (version " + v + ")"
}
