package main

import (
	"fmt"
	"strconv"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// limitJSON is the --json form of a limit.
type limitJSON struct {
	Name          string  `json:"name"`
	Concurrency   int     `json:"concurrency"`
	RatePerSecond float64 `json:"rate_per_second"`
	Burst         int     `json:"burst"`
}

// runLimits lists, sets and deletes the flow-control limits of activity
// names (docs/flow-control.md).
func runLimits(c *cli, args []string) error {
	fs := c.flags("limits")
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
	switch verb {
	case "set":
		b := *burst
		if *rate > 0 && b == 0 {
			b = 1
		}
		l := duroxide.Limit{Name: pos[1], Concurrency: *conc, RatePerSecond: *rate, Burst: b}
		if err := cl.SetLimit(s.ctx, l); err != nil {
			return err
		}
		return c.reportAction("limited", pos[1], describeLimit(l))
	case "delete":
		had, err := cl.DeleteLimit(s.ctx, pos[1])
		if err != nil {
			return err
		}
		action := "unlimited"
		if !had {
			action = "had no limit"
		}
		return c.reportAction(action, pos[1], "no bound")
	}
	ls, err := cl.Limits(s.ctx)
	if err != nil {
		return err
	}
	if c.json {
		out := make([]limitJSON, 0, len(ls))
		for _, l := range ls {
			out = append(out, limitJSON(l))
		}
		return writeJSON(c.stdout, out)
	}
	if len(ls) == 0 {
		_, err := fmt.Fprintln(c.stdout, "no limits")
		return err
	}
	t := newTable(c.stdout, "ACTIVITY", "CONCURRENCY", "RATE/S", "BURST")
	for _, l := range ls {
		t.row(l.Name, orDash(itoaNonZero(l.Concurrency)), orDash(ftoaNonZero(l.RatePerSecond)), orDash(itoaNonZero(l.Burst)))
	}
	return t.flush()
}

// describeLimit says what a limit bounds, for the action line.
func describeLimit(l duroxide.Limit) string {
	s := ""
	if l.Concurrency > 0 {
		s = "concurrency " + strconv.Itoa(l.Concurrency)
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
