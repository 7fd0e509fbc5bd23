// Command bench is the throughput and latency harness of duroxide-redis.
//
//	go run ./bench                                   # smoke: embedded miniredis, seconds
//	go run ./bench -redis redis://127.0.0.1:6379/0   # the real benchmark
//
// It drives the provider only through the duroxide Provider API, next to
// the two references a figure needs to mean anything on a shared machine:
// the machine's own ceiling (plain EVALSHA calls through the same client
// pool) and a well-known peer (asynq) measured in the same run on the same
// Redis. See README.md in this directory for the scenarios and the current
// results, and HISTORY.md for the recorded runs they come from.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// Options configures one run. Zero values mean "the default of the mode"
// (see defaults): a smoke run and a real run differ only in sizes.
type Options struct {
	RedisURL    string        // empty: embedded miniredis, smoke sizes
	Duration    time.Duration // measured window of one point
	Warmup      time.Duration // unmeasured lead-in of one point
	Concurrency []int         // client goroutines per point (workers, dispatchers)
	Payload     int           // bytes of an activity input / task payload
	FanOut      int           // activities per orchestration (turns, workflows, memory)
	TreeDepth   int           // levels of sub-orchestrations below a tree's root (workflows)
	TreeWidth   int           // children per inner node of a tree (workflows)
	SequenceN   []int         // activities awaited one after another by a sequence root (workflows)
	WideN       []int         // activities fanned out and joined by a wide root (workflows)
	ShapeLimit  time.Duration // bound of one sequence or wide root: past it the root is reported as timed out
	InFlight    int           // items (round trip) or orchestrations (turns) in flight per unit of concurrency
	Rate        float64       // enqueues per second of the dispatch-latency scenario
	IdleWindow  time.Duration // how long a blocked fetcher is watched
	IdlePoll    time.Duration // the poll timeout of that fetcher
	ScaleDepths []int         // queued instances of the scale scenario
	Histories   []int         // history lengths of the turn-cost sweep
	Memory      int           // orchestrations completed by the memory scenario
	AsynqPoll   time.Duration // asynq's tuned TaskCheckInterval (its default is 1s)
	Crowd       int           // idle runtimes of the crowd scenario
	CrowdRate   float64       // orchestrations/s the crowd scenario's load starts
	PoolSize    int           // go-redis pool size (0: go-redis default, 10 x GOMAXPROCS)
	// AckFetchNoPoll gives the durable runtime's ack-and-fetch calls no
	// poll timeout (-ackfetch-poll=false): the bench's no-poll path. By
	// default they get the runtime's own, as in an application (see
	// observedProvider). Negated so that the zero Options, which tests
	// build, measure what applications run.
	AckFetchNoPoll bool
	// NoAckFetch turns the durable runtime's ack-and-fetch off
	// (-ackfetch=false, durable.Options.DisableAckFetch): its dispatchers
	// ack and fetch in separate calls, to measure what ack-and-fetch adds or
	// saves on the application's path.
	NoAckFetch bool
	Scenarios  []string // subset to run (nil: all)
	Out        string   // JSON report path ("": a temp dir)
	SVG        string   // chart path ("": next to Out)
	Progress   bool     // live progress on stderr

	// ClusterMasters are the masters of each cluster the cluster scenario
	// starts; ClusterAddrs, when set, name an existing cluster instead
	ClusterMasters    []int
	ClusterAddrs      []string
	ClusterPartitions []int // partition counts of the cluster scenario's namespaces
}

// defaults fills the zero fields of o for its mode. The smoke sizes keep the
// whole run to a few seconds on miniredis (whose figures mean nothing
// anyway); the real ones aim at stable figures in a few minutes.
func defaults(o Options) Options {
	smoke := o.RedisURL == ""
	pick := func(real, smokeV time.Duration) time.Duration {
		if smoke {
			return smokeV
		}
		return real
	}
	if o.Duration == 0 {
		o.Duration = pick(5*time.Second, 200*time.Millisecond)
	}
	if o.Warmup == 0 {
		o.Warmup = min(o.Duration/5, pick(time.Second, 50*time.Millisecond))
	}
	if len(o.Concurrency) == 0 {
		// miniredis compiles every script it runs: at 32 dispatchers with
		// their orchestrations in flight a smoke window would see nothing
		// complete
		o.Concurrency = []int{1, 8, 32}
		if smoke {
			o.Concurrency = []int{1, 4}
		}
	}
	if o.Payload == 0 {
		o.Payload = 100
	}
	if o.FanOut == 0 {
		o.FanOut = 5
	}
	if o.TreeDepth == 0 {
		o.TreeDepth = 2
	}
	if o.TreeWidth == 0 {
		o.TreeWidth = 3
	}
	if len(o.SequenceN) == 0 {
		o.SequenceN = []int{1000}
		if smoke {
			o.SequenceN = []int{10}
		}
	}
	if len(o.WideN) == 0 {
		o.WideN = []int{1000, 10000}
		if smoke {
			o.WideN = []int{20}
		}
	}
	if o.ShapeLimit == 0 {
		o.ShapeLimit = 2 * time.Minute
	}
	if o.InFlight == 0 {
		o.InFlight = 4
		if smoke {
			o.InFlight = 2
		}
	}
	if o.Rate == 0 {
		o.Rate = 500
	}
	if o.IdleWindow == 0 {
		o.IdleWindow = pick(30*time.Second, 300*time.Millisecond)
	}
	if o.IdlePoll == 0 {
		o.IdlePoll = pick(time.Second, 100*time.Millisecond)
	}
	if len(o.ScaleDepths) == 0 {
		if smoke {
			o.ScaleDepths = []int{10, 500}
		} else {
			o.ScaleDepths = []int{10, 100000}
		}
	}
	if len(o.Histories) == 0 {
		o.Histories = []int{10, 100, 1000}
	}
	if o.Memory == 0 {
		o.Memory = 1000
		if smoke {
			o.Memory = 10
		}
	}
	if o.AsynqPoll == 0 {
		o.AsynqPoll = 10 * time.Millisecond
	}
	if o.Crowd == 0 {
		o.Crowd = 1000
		if smoke {
			o.Crowd = 20
		}
	}
	if o.CrowdRate == 0 {
		o.CrowdRate = 100
		if smoke {
			o.CrowdRate = 20
		}
	}
	if len(o.ClusterMasters) == 0 {
		o.ClusterMasters = []int{3, 6}
		if smoke {
			o.ClusterMasters = []int{3}
		}
	}
	if len(o.ClusterPartitions) == 0 {
		o.ClusterPartitions = []int{1, 12}
	}
	return o
}

// scenario is one named part of the benchmark.
type scenario struct {
	name string
	doc  string
	run  func(ctx context.Context, e *env) error
}

// scenarios in run order: the peer runs right after our matching scenarios,
// so the two are measured on a Redis in the same state.
var scenarios = []scenario{
	{"ceiling", "EVALSHA of a trivial and of a 3-command script: the calls/s every figure is divided by", runCeiling},
	{"roundtrip", "activity round trips: EnqueueForWorker, then AckWorkItemAndFetch (FetchWorkItem's long poll when idle)", runRoundTrip},
	{"latency", "enqueue-to-fetch latency at a steady rate; commands of an idle blocked fetcher", runLatency},
	{"peer", "asynq on the same Redis: no-op tasks end to end, latency, idle commands", runPeer},
	{"turns", "orchestrations fanning out and in through a synthetic runtime; turn cost vs history length", runTurns},
	{"workflows", "real orchestrations (fan-out, sub-orchestration tree; sequence and wide roots run to completion) on the durable runtime and on go-workflows", runWorkflows},
	{"scale", "fetch+ack latency with few vs many queued instances and activities", runScale},
	{"memory", "Redis bytes per completed orchestration vs its JSON history", runMemory},
	{"scrape", "Redis work of one metrics scrape (queue depths + system metrics) at few vs many instances", runScrape},
	{"limits", "the activity round trip without and with a flow-control limit on its name (one that never binds): Redis time per round trip", runLimits},
	{"crowd", "a steady load with and without many idle runtimes parked in the same namespace: script calls and pickup latency", runCrowd},
}

// env is what every scenario works with.
type env struct {
	opts     Options
	embedded bool // miniredis: figures are smoke, not performance
	url      string
	main     *redis.Client // the provider's and the ceiling's client (hooked: client calls)
	// clientOpts are main's options as configured, before go-redis filled
	// in its defaults and state (a copy of main.Options() would share its
	// push-notification handlers with main)
	clientOpts *redis.Options
	admin      *redis.Client // probes and cleanup, kept out of the counts
	calls      *callCounter
	runID      string
	out        io.Writer
	prog       *progress
	report     *Report
	nsN        atomic.Int64
	// transport is the pipeline scenario's variant while it runs a point
	// (zero: the provider's default)
	transport transport
	// shards are the masters' admin clients while the cluster scenario
	// measures on them: the probe then reads them instead of admin
	shards []*redis.Client
}

// namespace returns a fresh provider namespace for scenario.
func (e *env) namespace(scenario string) string {
	return fmt.Sprintf("bench-%s-%s-%d", e.runID, scenario, e.nsN.Add(1))
}

// provider opens a provider on a fresh namespace; done closes it and deletes
// the namespace's keys.
func (e *env) provider(ctx context.Context, scenario string) (p *redisprovider.Provider, done func(), err error) {
	client, closeClient := e.transport.client(e)
	p, err = redisprovider.New(ctx, redisprovider.Options{Client: client, Namespace: e.namespace(scenario), AutoPipeline: e.transport.autoPipeline})
	if err != nil {
		closeClient()
		return nil, nil, err
	}
	return p, func() {
		p.Close()
		e.cleanup(p.Keys().Prefix() + "*")
		closeClient()
	}, nil
}

// cleanup deletes the keys of pattern, reporting (not failing on) errors.
func (e *env) cleanup(pattern string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := deleteKeys(ctx, e.admin, pattern); err != nil {
		fmt.Fprintf(e.out, "warning: cleanup of %s: %v\n", pattern, err)
	}
}

// Run executes the benchmark described by o and writes its report. The error
// lists the scenarios that failed (a provider bug shows up here, precisely,
// rather than being worked around).
func Run(ctx context.Context, o Options, stdout, stderr io.Writer) (*Report, error) {
	if o.RedisURL == "" && selfHosted(o.Scenarios) {
		// the scenarios bring their own servers: a real run, whose machine
		// facts come from a server of the same binary
		if srv, err := standalone(ctx); err == nil {
			defer srv.stop()
			o.RedisURL = "redis://" + srv.addr + "/0"
		}
	}
	o = defaults(o)
	e := &env{opts: o, out: stdout, calls: newCallCounter(), runID: strconv.FormatInt(time.Now().UnixNano()%1e9, 36)}
	e.prog = newProgress(stderr, o.Progress)
	e.url = o.RedisURL
	if e.url == "" {
		m, err := miniredis.Run()
		if err != nil {
			return nil, fmt.Errorf("starting miniredis: %w", err)
		}
		defer m.Close()
		e.embedded = true
		e.url = "redis://" + m.Addr() + "/0"
	}
	ro, err := redis.ParseURL(e.url)
	if err != nil {
		return nil, fmt.Errorf("-redis %q: %w", e.url, err)
	}
	if o.PoolSize > 0 {
		ro.PoolSize = o.PoolSize
	}
	// The provider's recommended settings (see its Options.Client doc): a
	// benchmark of the setup we tell users to run, without the warning.
	ro.MaxRetries, ro.ContextTimeoutEnabled = -1, true
	base := *ro // NewClient fills in ro: peers get a copy from before
	e.clientOpts = &base
	e.main = redis.NewClient(ro)
	e.main.AddHook(e.calls)
	defer e.main.Close()
	ao := *ro
	ao.PoolSize = 4
	e.admin = redis.NewClient(&ao)
	defer e.admin.Close()
	if err := e.admin.Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("redis at %s: %w", e.url, err)
	}

	e.report = newReport(ctx, e, os.Args)
	fmt.Fprintln(stdout, e.report.Banner())
	var failed []string
	for _, s := range scenarios {
		if !selected(o.Scenarios, s.name) {
			continue
		}
		fmt.Fprintf(stdout, "\n== %s: %s\n", s.name, s.doc)
		start := time.Now()
		// a generous bound: a scenario that overruns it is hung, and says so
		sctx, cancel := context.WithTimeout(ctx, e.bound(s.name))
		err := s.run(sctx, e)
		cancel()
		if err != nil {
			failed = append(failed, s.name)
			e.report.Errors = append(e.report.Errors, ScenarioError{Scenario: s.name, Error: err.Error()})
			fmt.Fprintf(stdout, "!! %s FAILED: %v\n", s.name, err)
		} else {
			fmt.Fprintf(stdout, "   (%s done in %.1fs)\n", s.name, time.Since(start).Seconds())
		}
		if ctx.Err() != nil {
			break
		}
	}
	e.report.finish(e)
	e.report.WriteText(stdout)
	if err := e.report.save(o.Out, o.SVG, stdout); err != nil {
		return e.report, err
	}
	if len(failed) > 0 {
		return e.report, fmt.Errorf("scenarios failed: %s", strings.Join(failed, ", "))
	}
	return e.report, nil
}

// bound is how long scenario may run before it counts as hung: 20 minutes,
// and for workflows one -shape-timeout (plus a minute to stop its engine)
// per sequence and wide root on top, since those are bounded one by one
// rather than by a window.
func (e *env) bound(scenario string) time.Duration {
	b := 20 * time.Minute
	if scenario != "workflows" {
		return b
	}
	for _, en := range engines {
		if !en.fanOutOnly {
			roots := len(e.opts.SequenceN) + len(e.opts.WideN)
			b += time.Duration(roots) * (e.opts.ShapeLimit + time.Minute)
		}
	}
	return b
}

// selfHosted reports whether every scenario of names starts its own Redis
// servers (the cluster scenario), so a run of them needs no -redis to be a
// real run.
func selfHosted(names []string) bool {
	return len(names) > 0 && !slices.ContainsFunc(names, func(n string) bool { return n != "cluster" })
}

// standalone starts a plain redis-server for a run of self-hosted scenarios.
func standalone(ctx context.Context) (*server, error) {
	if _, err := exec.LookPath(redisServerBinary); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "duroxide-bench-redis-")
	if err != nil {
		return nil, err
	}
	s, err := startServer(ctx, dir, false)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.dir = dir
	return s, nil
}

func selected(names []string, name string) bool {
	if len(names) == 0 {
		return true
	}
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// intList is a flag of comma-separated integers.
type intList []int

func (l *intList) String() string {
	s := make([]string, len(*l))
	for i, v := range *l {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

func (l *intList) Set(v string) error {
	*l = nil
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(strings.ReplaceAll(f, "_", "")))
		if err != nil || n <= 0 {
			return fmt.Errorf("%q is not a positive integer", f)
		}
		*l = append(*l, n)
	}
	return nil
}

func main() {
	var o Options
	var conc, depths, hist, seqN, wideN, masters, parts intList
	var scen, clusterAddrs string
	flag.StringVar(&o.RedisURL, "redis", "", "Redis URL, e.g. redis://127.0.0.1:6379/0 (default: embedded miniredis smoke run)")
	flag.DurationVar(&o.Duration, "duration", 0, "measured time per point (default 5s; smoke 200ms)")
	flag.DurationVar(&o.Warmup, "warmup", 0, "unmeasured lead-in per point (default min(duration/5, 1s))")
	flag.Var(&conc, "concurrency", "comma-separated concurrency levels (default 1,8,32; smoke 1,4)")
	flag.IntVar(&o.Payload, "payload", 0, "payload bytes of an activity input / task (default 100)")
	flag.IntVar(&o.FanOut, "fanout", 0, "activities per orchestration (default 5)")
	flag.IntVar(&o.TreeDepth, "tree-depth", 0, "levels of sub-orchestrations below a tree's root (default 2)")
	flag.IntVar(&o.TreeWidth, "tree-width", 0, "children per inner node of a tree (default 3)")
	flag.Var(&seqN, "sequence-n", "activities of each sequence root of workflows, awaited one after another (default 1000; smoke 10)")
	flag.Var(&wideN, "wide-n", "activities of each wide root of workflows, fanned out and joined (default 1000,10000; smoke 20)")
	flag.DurationVar(&o.ShapeLimit, "shape-timeout", 0, "bound of one sequence or wide root; past it the root is reported as timed out (default 2m)")
	flag.IntVar(&o.InFlight, "inflight", 0, "items or orchestrations in flight per unit of concurrency (default 4; smoke 2)")
	flag.Float64Var(&o.Rate, "rate", 0, "enqueues/s of the dispatch-latency scenario (default 500)")
	flag.DurationVar(&o.IdleWindow, "idle", 0, "how long an idle blocked fetcher is watched (default 30s; smoke 300ms)")
	flag.DurationVar(&o.IdlePoll, "idle-poll", 0, "poll timeout of the idle fetcher (default 1s; smoke 100ms)")
	flag.Var(&depths, "scale", "queued instances compared by the scale scenario (default 10,100000; smoke 10,500)")
	flag.Var(&hist, "history", "history lengths of the turn-cost sweep (default 10,100,1000)")
	flag.IntVar(&o.Memory, "memory", 0, "orchestrations completed by the memory scenario (default 1000; smoke 10)")
	flag.DurationVar(&o.AsynqPoll, "asynq-poll", 0, "asynq's tuned TaskCheckInterval (default 10ms; asynq's own default 1s is measured too)")
	flag.IntVar(&o.Crowd, "crowd", 0, "idle runtimes of the crowd scenario (default 1000; smoke 20)")
	flag.Float64Var(&o.CrowdRate, "crowd-rate", 0, "orchestrations/s the crowd scenario starts (default 100; smoke 20)")
	flag.IntVar(&o.PoolSize, "pool", 0, "go-redis pool size (default: go-redis's, 10 x GOMAXPROCS)")
	ackFetch := flag.Bool("ackfetch", true, "let the durable runtime ack and fetch in one call (ack-and-fetch, as applications do by default); =false sets its DisableAckFetch")
	ackFetchPoll := flag.Bool("ackfetch-poll", true, "give the durable runtime's ack-and-fetch calls its own poll timeout, as in an application; =false measures the no-poll path (their fetch half does not wait, the runtime's plain fetch long-polls instead)")
	flag.Var(&masters, "cluster-masters", "masters of each Redis Cluster the cluster scenario starts from redis-server, no replicas (default 3,6; smoke 3)")
	flag.StringVar(&clusterAddrs, "cluster", "", "comma-separated host:port of an existing Redis Cluster for the cluster scenario, instead of starting its own")
	flag.Var(&parts, "cluster-partitions", "partition counts of the cluster scenario's namespaces; the cross-partition points use the largest (default 1,12)")
	flag.StringVar(&scen, "scenarios", "", "comma-separated subset of: "+scenarioNames())
	flag.StringVar(&o.Out, "out", "", "JSON report path (default: a new temp dir)")
	flag.StringVar(&o.SVG, "svg", "", "SVG chart path (default: the -out path with .svg)")
	flag.BoolVar(&o.Progress, "progress", true, "show live progress on stderr")
	flag.Parse()
	o.Concurrency, o.ScaleDepths, o.Histories, o.SequenceN, o.WideN = conc, depths, hist, seqN, wideN
	o.ClusterMasters, o.ClusterPartitions = masters, parts
	o.AckFetchNoPoll, o.NoAckFetch = !*ackFetchPoll, !*ackFetch
	if clusterAddrs != "" {
		o.ClusterAddrs = strings.Split(clusterAddrs, ",")
	}
	if scen != "" {
		for _, s := range strings.Split(scen, ",") {
			s = strings.TrimSpace(s)
			if !strings.Contains(","+scenarioNames()+",", ","+s+",") {
				fmt.Fprintf(os.Stderr, "unknown scenario %q (have %s)\n", s, scenarioNames())
				os.Exit(2)
			}
			o.Scenarios = append(o.Scenarios, s)
		}
	}
	if o.Out == "" {
		dir, err := os.MkdirTemp("", "duroxide-bench-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		o.Out = filepath.Join(dir, "results.json")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := Run(ctx, o, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		if errors.Is(err, context.Canceled) {
			os.Exit(130)
		}
		os.Exit(1)
	}
}

func scenarioNames() string {
	names := make([]string, len(scenarios))
	for i, s := range scenarios {
		names[i] = s.name
	}
	return strings.Join(names, ",")
}
