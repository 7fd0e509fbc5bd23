package main

import (
	"fmt"
	"strconv"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// limitJSON is the --json form of a limit. Running and held are an
// orchestration limit's instances, omitted for activities.
type limitJSON struct {
	Kind          string  `json:"kind"`
	Name          string  `json:"name"`
	Concurrency   int     `json:"concurrency"`
	RatePerSecond float64 `json:"rate_per_second"`
	Burst         int     `json:"burst"`
	Running       *int    `json:"running,omitempty"`
	Held          *int    `json:"held,omitempty"`
}

// runLimits lists, sets and deletes the flow-control limits of activity
// names, and the limits on running instances of orchestration names
// (--orchestration; docs/flow-control.md).
func runLimits(c *cli, args []string) error {
	fs := c.flags("limits")
	orch := fs.Bool("orchestration", false, "set, delete: NAME is an orchestration: --concurrency bounds its instances running at once")
	conc := fs.Int("concurrency", 0, "set: activities of the name running at once, across every runtime (0: no bound)")
	rate := fs.Float64("rate", 0, "set: activities of the name started per second on average (0: no bound)")
	burst := fs.Int("burst", 0, "set: with --rate, how many may start at once after a quiet spell (default: 1)")
	pos, err := c.parse(fs, args, 1, 2)
	if err != nil {
		return err
	}
	verb := pos[0]
	if n := map[string]int{"list": 1, "set": 2, "delete": 2}[verb]; n == 0 || len(pos) != n {
		return usageErr("limits", "expected %s", commands()["limits"].args)
	}
	s, err := c.open()
	if err != nil {
		return err
	}
	defer s.close()
	cl := s.client
	kind := duroxide.ActivityName
	if *orch {
		kind = duroxide.OrchestrationName
	}
	switch verb {
	case "set":
		b := *burst
		if *rate > 0 && b == 0 {
			b = 1
		}
		l := duroxide.Limit{Kind: kind, Name: pos[1], Concurrency: *conc, RatePerSecond: *rate, Burst: b}
		if err := cl.SetLimit(s.ctx, l); err != nil {
			return err
		}
		return c.reportAction("limited", describeName(l), describeLimit(l))
	case "delete":
		had, err := cl.DeleteLimit(s.ctx, kind, pos[1])
		if err != nil {
			return err
		}
		action := "unlimited"
		if !had {
			action = "had no limit"
		}
		return c.reportAction(action, describeName(duroxide.Limit{Kind: kind, Name: pos[1]}), "no bound")
	}
	ls, err := cl.Limits(s.ctx)
	if err != nil {
		return err
	}
	if c.json {
		out := make([]limitJSON, 0, len(ls))
		for _, l := range ls {
			j := limitJSON{Kind: l.Kind.String(), Name: l.Name, Concurrency: l.Concurrency, RatePerSecond: l.RatePerSecond, Burst: l.Burst}
			if l.Kind == duroxide.OrchestrationName {
				j.Running, j.Held = &l.Running, &l.Held
			}
			out = append(out, j)
		}
		return writeJSON(c.stdout, out)
	}
	if len(ls) == 0 {
		_, err := fmt.Fprintln(c.stdout, "no limits")
		return err
	}
	t := newTable(c.stdout, "KIND", "NAME", "CONCURRENCY", "RATE/S", "BURST", "RUNNING", "HELD")
	for _, l := range ls {
		running, held := "-", "-"
		if l.Kind == duroxide.OrchestrationName {
			running, held = strconv.Itoa(l.Running), strconv.Itoa(l.Held)
		}
		t.row(l.Kind.String(), l.Name, orDash(itoaNonZero(l.Concurrency)), orDash(ftoaNonZero(l.RatePerSecond)), orDash(itoaNonZero(l.Burst)), running, held)
	}
	return t.flush()
}

// describeName names the limited name for the action line: an
// orchestration's says so.
func describeName(l duroxide.Limit) string {
	if l.Kind == duroxide.OrchestrationName {
		return "orchestration " + l.Name
	}
	return l.Name
}

// describeLimit says what a limit bounds, for the action line.
func describeLimit(l duroxide.Limit) string {
	s := ""
	if l.Concurrency > 0 {
		s = "concurrency " + strconv.Itoa(l.Concurrency)
		if l.Kind == duroxide.OrchestrationName {
			s = strconv.Itoa(l.Concurrency) + " running at once"
		}
	}
	if l.RatePerSecond > 0 {
		if s != "" {
			s += ", "
		}
		s += "rate " + ftoaNonZero(l.RatePerSecond) + "/s, burst " + strconv.Itoa(l.Burst)
	}
	return s
}

func itoaNonZero(v int) string {
	if v == 0 {
		return ""
	}
	return strconv.Itoa(v)
}

func ftoaNonZero(v float64) string {
	if v == 0 {
		return ""
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}
