package main

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// flowVerbs are the flow command's verbs and their positional arguments
// after the verb.
var flowVerbs = map[string]int{"list": 0, "priority": 3, "window": 1, "pause": 1, "resume": 1}

// flowJSON is the --json form of the flow settings.
type flowJSON struct {
	ActivityPriorities      map[string]int           `json:"activity_priorities"`
	OrchestrationPriorities map[string]int           `json:"orchestration_priorities"`
	AgingWindow             uint64                   `json:"aging_window"`
	PausedNames             map[string]namePauseJSON `json:"paused_names"`
}

type namePauseJSON struct {
	Since *string `json:"since"`
	Held  uint64  `json:"held"`
}

// runFlow shows and changes the flow settings: priorities by activity and
// orchestration name, the aging window, paused orchestration names.
func runFlow(c *cli, args []string) error {
	pos, s, err := c.parseAndOpen(c.flags("flow"), args, 1, 4)
	if err != nil {
		return err
	}
	defer s.close()
	verb := pos[0]
	if n, ok := flowVerbs[verb]; !ok || len(pos)-1 != n {
		return usageErr("flow", "expected %s", commands()["flow"].args)
	}
	cl := s.client
	switch verb {
	case "list":
		fs, err := cl.FlowSettings(s.ctx)
		if err != nil {
			return err
		}
		return c.printFlow(fs)
	case "priority":
		p, err := strconv.Atoi(pos[3])
		if err != nil {
			return usageErr("flow", "priority %q is not a number 0..%d", pos[3], duroxide.MaxPriority)
		}
		switch pos[1] {
		case "activity":
			err = cl.SetActivityPriority(s.ctx, pos[2], p)
		case "orchestration":
			err = cl.SetOrchestrationPriority(s.ctx, pos[2], p)
		default:
			return usageErr("flow", "priority of %q: want activity or orchestration", pos[1])
		}
		if err != nil {
			return err
		}
		return c.reportAction("priority set", pos[2], pos[1]+" priority "+pos[3])
	case "window":
		w, err := strconv.ParseUint(pos[1], 10, 64)
		if err != nil {
			return usageErr("flow", "aging window %q is not a count of enqueued items", pos[1])
		}
		if err := cl.SetAgingWindow(s.ctx, w); err != nil {
			return err
		}
		return c.reportAction("aging window set", pos[1], "one priority step moves work this many enqueued items ahead")
	case "pause":
		if err := cl.PauseOrchestrationName(s.ctx, pos[1]); err != nil {
			return err
		}
		return c.reportAction("orchestration paused", pos[1], "its instances are held until flow resume "+pos[1])
	default: // resume
		if err := cl.ResumeOrchestrationName(s.ctx, pos[1]); err != nil {
			return err
		}
		return c.reportAction("orchestration resumed", pos[1], "what its instances held is delivered")
	}
}

func (c *cli) printFlow(fs duroxide.FlowSettings) error {
	if c.json {
		out := flowJSON{ActivityPriorities: fs.ActivityPriorities, OrchestrationPriorities: fs.OrchestrationPriorities,
			AgingWindow: fs.AgingWindow, PausedNames: map[string]namePauseJSON{}}
		for name, np := range fs.PausedNames {
			out.PausedNames[name] = namePauseJSON{Since: jsonTime(np.SinceMs), Held: np.Held}
		}
		return writeJSON(c.stdout, out)
	}
	if _, err := fmt.Fprintf(c.stdout, "aging window: %d enqueued items per priority step\n", fs.AgingWindow); err != nil {
		return err
	}
	t := newTable(c.stdout, "KIND", "NAME", "PRIORITY", "PAUSED", "HELD")
	now := c.now()
	for _, r := range flowRows(fs) {
		paused, held := "-", "-"
		if r.Paused {
			paused, held = relTime(r.Since, now), strconv.FormatUint(r.Held, 10)
		}
		t.row(r.Kind, r.Name, strconv.Itoa(r.Priority), paused, held)
	}
	return t.flush()
}

// flowRow is one name's flow settings: its priority and, for an
// orchestration name, its pause.
type flowRow struct {
	Kind, Name string
	Priority   int
	Paused     bool
	Since      time.Time
	Held       uint64
}

// flowRows lists the names that have a priority or a pause, activities
// first, each kind in name order, as the CLI and the dashboard show them.
func flowRows(fs duroxide.FlowSettings) []flowRow {
	var out []flowRow
	orch := func(name string) flowRow {
		r := flowRow{Kind: "orchestration", Name: name, Priority: fs.OrchestrationPriorities[name]}
		if np, ok := fs.PausedNames[name]; ok {
			r.Paused, r.Since, r.Held = true, msTime(np.SinceMs), np.Held
		}
		return r
	}
	for _, name := range namesOf(fs.ActivityPriorities) {
		out = append(out, flowRow{Kind: "activity", Name: name, Priority: fs.ActivityPriorities[name]})
	}
	for _, name := range namesOf(fs.OrchestrationPriorities) {
		out = append(out, orch(name))
	}
	for _, name := range namesOf(fs.PausedNames) {
		if _, ok := fs.OrchestrationPriorities[name]; !ok {
			out = append(out, orch(name))
		}
	}
	return out
}

// namesOf returns the keys of m in order.
func namesOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
