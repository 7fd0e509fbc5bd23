package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

// clearScreen moves the cursor home and clears the terminal, so --watch
// redraws in place.
const clearScreen = "\x1b[H\x1b[2J"

// statsJSON is the --json form of stats; the figures come from the
// provider's counters and index sizes, never from reading instances, so a
// --watch loop costs Redis the same whatever the data volume.
type statsJSON struct {
	Time              string `json:"time"`
	Instances         uint64 `json:"instances"`
	Running           uint64 `json:"running"`
	Completed         uint64 `json:"completed"`
	Failed            uint64 `json:"failed"`
	Executions        uint64 `json:"executions"`
	Events            uint64 `json:"events"`
	OrchestratorQueue int    `json:"orchestrator_queue"`
	WorkerQueue       int    `json:"worker_queue"`
	TimerQueue        int    `json:"timer_queue"`
}

func runStats(c *cli, args []string) error {
	fs := c.flags("stats")
	watch := fs.Bool("watch", false, "refresh until interrupted (Ctrl-C)")
	interval := fs.Duration("interval", 2*time.Second, "refresh period of --watch")
	count := fs.Int("count", 0, "with --watch, stop after this many refreshes (0: never)")
	if _, err := c.parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *interval <= 0 || *count < 0 {
		return usageErr("stats", "--interval must be positive and --count not negative")
	}
	s, err := c.open()
	if err != nil {
		return err
	}
	defer s.close()
	if !*watch {
		return c.printStats(s.ctx, s, false)
	}
	return c.watchStats(s, *interval, *count)
}

// watchStats redraws the stats every interval; each refresh gets its own
// --timeout, and Ctrl-C ends the loop as a success. A failed refresh is
// reported on stderr and retried at the next tick, since a watch is most
// wanted while Redis is in trouble; with --count the last refresh's error is
// the exit status.
func (c *cli) watchStats(s *session, interval time.Duration, count int) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for n := 1; ; n++ {
		ctx, cancel := context.WithTimeout(c.base, c.timeout)
		err := c.printStats(ctx, s, true)
		cancel()
		if n == count {
			return err
		}
		if err != nil {
			fmt.Fprintf(c.stderr, "duroxide-redis: %s (retrying every %s)\n", errorText("stats", err), interval)
		}
		select {
		case <-c.base.Done():
			return nil
		case <-tick.C:
		}
	}
}

func (c *cli) printStats(ctx context.Context, s *session, watch bool) error {
	m, err := s.admin.GetSystemMetrics(ctx)
	if err != nil {
		return err
	}
	q, err := s.admin.GetQueueDepths(ctx)
	if err != nil {
		return err
	}
	now := c.now()
	if c.json {
		v := statsJSON{
			Time: now.UTC().Format(time.RFC3339), Instances: m.TotalInstances, Running: m.RunningInstances,
			Completed: m.CompletedInstances, Failed: m.FailedInstances, Executions: m.TotalExecutions,
			Events: m.TotalEvents, OrchestratorQueue: q.OrchestratorQueue, WorkerQueue: q.WorkerQueue, TimerQueue: q.TimerQueue,
		}
		if watch {
			// one compact object per line, for line-oriented consumers (jq, log shippers)
			return writeJSONLine(c.stdout, v)
		}
		return writeJSON(c.stdout, v)
	}
	if watch {
		// clear the screen only on a terminal: piped to a file or a
		// pager, escape codes are noise, and a blank line separates refreshes
		clear := "\n"
		if isTerminal(c.stdout) {
			clear = clearScreen
		}
		fmt.Fprintf(c.stdout, "%sduroxide-redis stats (namespace %s) at %s, Ctrl-C to stop\n\n", clear, c.resolvedNamespace(), now.Format(time.TimeOnly))
	}
	t := newTable(c.stdout, "METRIC", "VALUE")
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	t.row("instances", u(m.TotalInstances))
	t.row("  running", u(m.RunningInstances))
	t.row("  completed", u(m.CompletedInstances))
	t.row("  failed", u(m.FailedInstances))
	t.row("executions", u(m.TotalExecutions))
	t.row("events", u(m.TotalEvents))
	t.row("orchestrator queue", strconv.Itoa(q.OrchestratorQueue))
	t.row("worker queue", strconv.Itoa(q.WorkerQueue))
	t.row("timer queue (due later)", strconv.Itoa(q.TimerQueue))
	return t.flush()
}

// isTerminal reports whether w is a character device (a terminal), the only
// place where --watch redraws in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
