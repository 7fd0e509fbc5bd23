package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// clearScreen moves the cursor home and clears the terminal, so --watch
// redraws in place.
const clearScreen = "\x1b[H\x1b[2J"

// statsJSON is the --json form of stats; the figures come from the
// provider's counters and index sizes, never from reading instances, so a
// --watch loop costs Redis the same whatever the data volume. Its figures
// are the namespace's; with several partitions, PerPartition has each
// partition's too (which add up to the namespace's, but for instances
// that moved while they were read).
type statsJSON struct {
	Time string `json:"time"`
	figuresJSON
	Partitions   int             `json:"partitions"`
	PerPartition []partitionJSON `json:"per_partition,omitempty"`
}

// figuresJSON are the counters and queue depths of a namespace or of one
// partition.
type figuresJSON struct {
	Instances         uint64 `json:"instances"`
	Running           uint64 `json:"running"`
	Completed         uint64 `json:"completed"`
	Failed            uint64 `json:"failed"`
	Executions        uint64 `json:"executions"`
	Events            uint64 `json:"events"`
	OrchestratorQueue int    `json:"orchestrator_queue"`
	WorkerQueue       int    `json:"worker_queue"`
	TimerQueue        int    `json:"timer_queue"`
	// Outbox counts the messages turns sent to instances of other
	// partitions that the relay has not moved yet (always 0 with one
	// partition).
	Outbox int `json:"outbox"`
}

// partitionJSON is one partition's figures.
type partitionJSON struct {
	Partition int `json:"partition"`
	figuresJSON
}

func (r reading) json() figuresJSON {
	m, q := r.Metrics, r.Queues
	return figuresJSON{
		Instances: m.TotalInstances, Running: m.RunningInstances, Completed: m.CompletedInstances,
		Failed: m.FailedInstances, Executions: m.TotalExecutions, Events: m.TotalEvents,
		OrchestratorQueue: q.OrchestratorQueue, WorkerQueue: q.WorkerQueue, TimerQueue: q.TimerQueue, Outbox: r.Outbox,
	}
}

// reading is one reading of the counters and queue depths of a namespace or
// of one partition.
type reading struct {
	Metrics duroxide.SystemMetrics
	Queues  duroxide.QueueDepths
	Outbox  int // messages to other partitions not relayed yet
}

// namespaceReading is the namespace's reading and, with several
// partitions, each partition's.
type namespaceReading struct {
	Total reading
	Parts []reading // nil with one partition
}

// readStats reads the namespace's counters and queue depths (the
// provider's counter scripts) and, with several partitions, each
// partition's and the size of each one's outbox, the totals added up from
// them (redisprovider.AddMetrics): 2 script calls and a ZCARD per
// partition, whatever the data volume.
func (s *session) readStats(ctx context.Context) (namespaceReading, error) {
	if s.prov == nil || s.prov.Partitions() == 1 {
		total, err := readCounters(ctx, s.admin)
		return namespaceReading{Total: total}, err
	}
	var nr namespaceReading
	for i, p := range s.prov.PartitionAdmins() {
		r, err := readCounters(ctx, p)
		if err != nil {
			return namespaceReading{}, err
		}
		n, err := s.rdb.ZCard(ctx, s.prov.PartitionKeys(i).Outbox()).Result()
		if err != nil {
			return namespaceReading{}, redisError("stats", err)
		}
		r.Outbox = int(n)
		nr.Total.Metrics = redisprovider.AddMetrics(nr.Total.Metrics, r.Metrics)
		nr.Total.Queues = redisprovider.AddQueueDepths(nr.Total.Queues, r.Queues)
		nr.Total.Outbox += r.Outbox
		nr.Parts = append(nr.Parts, r)
	}
	return nr, nil
}

// readCounters reads one provider's counters and queue depths.
func readCounters(ctx context.Context, a duroxide.ProviderAdmin) (reading, error) {
	m, err := a.GetSystemMetrics(ctx)
	if err != nil {
		return reading{}, err
	}
	q, err := a.GetQueueDepths(ctx)
	return reading{Metrics: m, Queues: q}, err
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
	c.warnIfUncreated(s)
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
	nr, err := s.readStats(ctx)
	if err != nil {
		return err
	}
	now := c.now()
	if c.json {
		v := statsJSON{Time: now.UTC().Format(time.RFC3339), figuresJSON: nr.Total.json(), Partitions: max(len(nr.Parts), 1)}
		for i, r := range nr.Parts {
			v.PerPartition = append(v.PerPartition, partitionJSON{Partition: i, figuresJSON: r.json()})
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
	m, q := nr.Total.Metrics, nr.Total.Queues
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
	if len(nr.Parts) == 0 {
		return t.flush()
	}
	t.row("outbox (to relay)", strconv.Itoa(nr.Total.Outbox))
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "\n%d partitions:\n", len(nr.Parts))
	t = newTable(c.stdout, "PARTITION", "INSTANCES", "RUNNING", "COMPLETED", "FAILED", "EXECUTIONS", "EVENTS", "ORCH-Q", "WORKER-Q", "TIMER-Q", "OUTBOX")
	for i, r := range nr.Parts {
		f := r.json()
		t.row(strconv.Itoa(i), u(f.Instances), u(f.Running), u(f.Completed), u(f.Failed), u(f.Executions), u(f.Events),
			strconv.Itoa(f.OrchestratorQueue), strconv.Itoa(f.WorkerQueue), strconv.Itoa(f.TimerQueue), strconv.Itoa(f.Outbox))
	}
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
