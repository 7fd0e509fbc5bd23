// What the harness learns from Redis and the machine rather than from its own
// clocks: command counts (client calls counted by a go-redis hook, server
// commands from INFO), memory, the facts that make a result comparable, and
// the key cleanup that keeps runs from disturbing each other.

package main

import (
	"bufio"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	dxredis "github.com/duroxide-go/duroxide-redis"
	"github.com/duroxide-go/duroxide-redis/bench/peer/gwpeer"
)

// callCounter is a go-redis hook that counts the commands a client sends, by
// name; EVALSHA / EVAL / FCALL are counted per script ("evalsha:fetch_work_item",
// "fcall:fetch_work_item"). Client
// calls are what the targets speak of (round trips, "one command per poll
// timeout"): the server's own count also includes every command a script runs
// inside Redis.
type callCounter struct {
	counts    sync.Map          // name -> *atomic.Int64
	scripts   sync.Map          // sha1 hex -> script name
	functions map[string]string // library function -> script name
}

func newCallCounter() *callCounter {
	c := &callCounter{functions: map[string]string{}}
	lib, libErr := dxredis.FunctionLibrary()
	for _, name := range dxredis.ScriptNames() {
		if src, err := dxredis.Script(name); err == nil {
			c.nameScript(name, src)
		}
		if libErr == nil {
			c.functions[lib.Function(name)] = name
		}
	}
	return c
}

// nameScript lets the counter report calls of src under name.
func (c *callCounter) nameScript(name, src string) {
	sum := sha1.Sum([]byte(src))
	c.scripts.Store(hex.EncodeToString(sum[:]), name)
}

func (c *callCounter) add(cmd redis.Cmder) {
	name := cmd.Name()
	if name == "fcall" {
		if args := cmd.Args(); len(args) > 1 {
			if s, ok := c.functions[fmt.Sprint(args[1])]; ok {
				name += ":" + s
			}
		}
	}
	if name == "evalsha" || name == "eval" {
		if args := cmd.Args(); len(args) > 1 {
			key := fmt.Sprint(args[1])
			if name == "eval" {
				sum := sha1.Sum([]byte(key))
				key = hex.EncodeToString(sum[:])
			}
			if s, ok := c.scripts.Load(key); ok {
				name += ":" + s.(string)
			}
		}
	}
	v, ok := c.counts.Load(name)
	if !ok {
		v, _ = c.counts.LoadOrStore(name, new(atomic.Int64))
	}
	v.(*atomic.Int64).Add(1)
}

// DialHook implements redis.Hook.
func (c *callCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook. It also stamps the ack of an
// ack-and-fetch call (see ackStamp).
func (c *callCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.add(cmd)
		err := next(ctx, cmd)
		if st, ok := ctx.Value(ackStampKey{}).(*ackStamp); ok && isScript(cmd) && (err == nil || errors.Is(err, redis.Nil)) {
			st.mark()
		}
		return err
	}
}

// isScript reports a script call: EVALSHA, EVAL or FCALL.
func isScript(cmd redis.Cmder) bool {
	switch cmd.Name() {
	case "evalsha", "eval", "fcall":
		return true
	}
	return false
}

// ackStamp is when the first script of an ack-and-fetch call replied: the
// moment its ack applied (whether it did is the call's own result). With a
// poll timeout the call returns only once its fetch half found work or the
// timeout passed, up to a whole poll timeout after the ack, so the
// observing wrapper reports the completions the ack made at this time, not
// at the call's return. A command sent through a pipeline (the pipelining
// scenario's autopipelined transport) reaches the hook without the call's
// context: then nothing is stamped and the call's return stands in.
type ackStamp struct{ at atomic.Int64 } // unix ns, 0 until the first reply

type ackStampKey struct{}

// withAckStamp returns ctx carrying a new stamp for the hook to set.
func withAckStamp(ctx context.Context) (context.Context, *ackStamp) {
	st := new(ackStamp)
	return context.WithValue(ctx, ackStampKey{}, st), st
}

// mark records the first script reply.
func (s *ackStamp) mark() { s.at.CompareAndSwap(0, time.Now().UnixNano()) }

// time is the stamped time, or now when nothing was stamped.
func (s *ackStamp) time() time.Time {
	if ns := s.at.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Now()
}

// ProcessPipelineHook implements redis.Hook.
func (c *callCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			c.add(cmd)
		}
		return next(ctx, cmds)
	}
}

// snapshot copies the counts.
func (c *callCounter) snapshot() map[string]int64 {
	out := make(map[string]int64)
	c.counts.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}

// serverSnap is one reading of the server's command counters.
type serverSnap struct {
	total int64            // total_commands_processed (script-internal commands included)
	cmds  map[string]int64 // calls per command from INFO commandstats; nil when unsupported (miniredis)
	usec  map[string]int64 // server time per command, same source
	cpu   float64          // used_cpu_user + used_cpu_sys of the server process, seconds (0: unknown)
	sys   int64            // the server process's read+write system calls
	sysOK bool             // sys is known
}

// readServer takes one reading with a single INFO call (Redis 7 takes several
// sections at once; miniredis knows only "stats"), which the next reading's
// delta then subtracts.
func readServer(ctx context.Context, admin *redis.Client, embedded bool) (serverSnap, error) {
	section := []any{"info", "server", "stats", "commandstats", "cpu"}
	if embedded {
		section = []any{"info", "stats"}
	}
	txt, err := admin.Do(ctx, section...).Text()
	if err != nil {
		return serverSnap{}, fmt.Errorf("INFO stats: %w", err)
	}
	s := serverSnap{}
	if !embedded {
		s.cmds, s.usec = map[string]int64{}, map[string]int64{}
	}
	if v, ok := infoField(txt, "process_id"); ok {
		s.sys, s.sysOK = ioSyscalls(v)
	}
	if v, ok := infoField(txt, "total_commands_processed"); ok {
		s.total, _ = strconv.ParseInt(v, 10, 64)
	}
	for _, k := range []string{"used_cpu_user", "used_cpu_sys"} {
		if v, ok := infoField(txt, k); ok {
			f, _ := strconv.ParseFloat(v, 64)
			s.cpu += f
		}
	}
	for _, line := range strings.Split(txt, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"); ok && s.cmds != nil {
			name, fields, _ := strings.Cut(rest, ":")
			for _, f := range strings.Split(fields, ",") {
				k, v, _ := strings.Cut(f, "=")
				n, _ := strconv.ParseInt(v, 10, 64)
				switch k {
				case "calls":
					s.cmds[name] = n
				case "usec":
					s.usec[name] = n
				}
			}
		}
	}
	return s, nil
}

// counts is what happened between two readings.
type counts struct {
	Seconds      float64          `json:"seconds"`
	ClientCalls  int64            `json:"client_calls"`              // hooked client(s), plus the provider's BZPOPMIN from the server
	ByCall       map[string]int64 `json:"by_call,omitempty"`         // the same, per command / script
	RedisCmds    int64            `json:"redis_cmds"`                // every command Redis ran, script-internal ones included
	EvalUsecCall float64          `json:"evalsha_usec,omitempty"`    // server time per EVALSHA or FCALL (commandstats)
	BZPopMin     int64            `json:"bzpopmin,omitempty"`        // server-side count; the blocking client is not hooked
	BZPopKnown   bool             `json:"bzpopmin_known"`            // false on miniredis: BZPOPMIN calls are then missing from ClientCalls
	ServerCPU    float64          `json:"server_cpu_sec,omitempty"`  // Redis process CPU time (INFO cpu)
	ClientCPU    float64          `json:"client_cpu_sec,omitempty"`  // this process's CPU time (the harness, the provider's client code, asynq)
	ClientSys    int64            `json:"client_syscalls,omitempty"` // this process's read+write system calls (Linux)
	ServerSys    int64            `json:"server_syscalls,omitempty"` // Redis's read+write system calls (Linux, a Redis of this user)
	Unsupported  string           `json:"unsupported,omitempty"`     // what this server could not tell
	ServerByCmd  map[string]int64 `json:"server_by_cmd,omitempty"`   // commandstats delta, for the curious
	// shards is each cluster master's part of RedisCmds and ServerCPU, in
	// env.shards order, while the cluster scenario measures (nil otherwise)
	shards []shardCounts
}

// shardCounts is what one cluster master ran between two readings.
type shardCounts struct {
	redisCmds int64
	serverCPU float64
}

// probe brackets a measurement: start() reads the counters, stop() reads
// them again and returns the difference.
type probe struct {
	e      *env
	calls  map[string]int64
	srv    serverSnap   // the server's reading, or the sum of the shards'
	shards []serverSnap // each shard's, when env.shards is set
	cpu    float64
	sys    int64
	at     time.Time
	err    error
}

func (e *env) startProbe(ctx context.Context) *probe {
	p := &probe{e: e, calls: e.calls.snapshot(), at: time.Now(), cpu: processCPU()}
	p.sys, _ = ioSyscalls("self")
	p.srv, p.shards, p.err = e.readServers(ctx)
	return p
}

// readServers reads the run's server, or while the cluster scenario
// measures, every master of its cluster and their sum.
func (e *env) readServers(ctx context.Context) (serverSnap, []serverSnap, error) {
	if len(e.shards) == 0 {
		s, err := readServer(ctx, e.admin, e.embedded)
		return s, nil, err
	}
	sum := serverSnap{cmds: map[string]int64{}, usec: map[string]int64{}, sysOK: true}
	each := make([]serverSnap, len(e.shards))
	for i, c := range e.shards {
		s, err := readServer(ctx, c, false)
		if err != nil {
			return sum, nil, fmt.Errorf("shard %s: %w", c.Options().Addr, err)
		}
		each[i] = s
		sum.total += s.total
		sum.cpu += s.cpu
		sum.sys += s.sys
		sum.sysOK = sum.sysOK && s.sysOK
		for k, v := range s.cmds {
			sum.cmds[k] += v
		}
		for k, v := range s.usec {
			sum.usec[k] += v
		}
	}
	return sum, each, nil
}

// stop returns the counts since start.
func (p *probe) stop(ctx context.Context) (counts, error) {
	calls, cpu := p.e.calls.snapshot(), processCPU()
	sys, sysOK := ioSyscalls("self")
	srv, shards, err := p.e.readServers(ctx)
	if p.err != nil {
		err = p.err
	}
	if err != nil {
		return counts{}, err
	}
	c := counts{Seconds: time.Since(p.at).Seconds(), ByCall: map[string]int64{}}
	for k, v := range calls {
		if d := v - p.calls[k]; d > 0 {
			c.ByCall[k] = d
			c.ClientCalls += d
		}
	}
	c.RedisCmds = srv.total - p.srv.total - int64(max(len(shards), 1)) // the first reading's own INFO
	for i, s := range shards {
		c.shards = append(c.shards, shardCounts{redisCmds: s.total - p.shards[i].total - 1, serverCPU: s.cpu - p.shards[i].cpu})
	}
	c.ClientCPU = cpu - p.cpu
	if sysOK {
		c.ClientSys = sys - p.sys
	}
	if srv.sysOK && p.srv.sysOK {
		c.ServerSys = srv.sys - p.srv.sys
	}
	if srv.cpu > 0 {
		c.ServerCPU = srv.cpu - p.srv.cpu
	}
	if srv.cmds == nil {
		c.Unsupported = "INFO commandstats (BZPOPMIN and per-command server counts)"
		return c, nil
	}
	c.ServerByCmd = map[string]int64{}
	for k, v := range srv.cmds {
		if d := v - p.srv.cmds[k]; d > 0 && k != "info" {
			c.ServerByCmd[k] = d
		}
	}
	c.BZPopMin, c.BZPopKnown = c.ServerByCmd["bzpopmin"], true
	// the provider's blocking client is built from the hooked client's options,
	// which do not carry hooks: count its BZPOPMIN on the server side
	if c.BZPopMin > c.ByCall["bzpopmin"] {
		c.ClientCalls += c.BZPopMin - c.ByCall["bzpopmin"]
		c.ByCall["bzpopmin"] = c.BZPopMin
	}
	// the provider runs its scripts by EVALSHA or FCALL, never both
	for _, cmd := range []string{"evalsha", "fcall"} {
		if n := c.ServerByCmd[cmd]; n > 0 {
			c.EvalUsecCall = float64(srv.usec[cmd]-p.srv.usec[cmd]) / float64(n)
		}
	}
	return c, nil
}

// perOp adds per-operation command figures to a point's metrics.
func (c counts) perOp(metrics map[string]float64, ops int64) {
	if ops <= 0 {
		return
	}
	metrics["client_calls_per_op"] = float64(c.ClientCalls) / float64(ops)
	metrics["redis_cmds_per_op"] = float64(c.RedisCmds) / float64(ops)
	if c.EvalUsecCall > 0 {
		metrics["evalsha_server_usec"] = c.EvalUsecCall
	}
	// CPU per operation: on a machine where client and server share the
	// cores, these two add up to what one operation costs the machine
	if c.ServerCPU > 0 {
		metrics["redis_cpu_us_per_op"] = 1e6 * c.ServerCPU / float64(ops)
	}
	if c.ClientCPU > 0 {
		metrics["client_cpu_us_per_op"] = 1e6 * c.ClientCPU / float64(ops)
	}
	if c.ClientSys > 0 {
		metrics["client_syscalls_per_op"] = float64(c.ClientSys) / float64(ops)
	}
	if c.ServerSys > 0 {
		metrics["redis_syscalls_per_op"] = float64(c.ServerSys) / float64(ops)
	}
}

// deleteKeys removes every key matching pattern with SCAN + DEL. Bench-only:
// a library must never walk the keyspace, but a harness cleaning up its own
// uniquely named namespace may. DEL, not UNLINK: memory freed in the
// background would still be freeing while the next scenario measures (the
// memory scenario's used_memory delta first of all).
func deleteKeys(ctx context.Context, admin *redis.Client, pattern string) (int, error) {
	var (
		cursor uint64
		n      int
	)
	for {
		keys, next, err := admin.Scan(ctx, cursor, pattern, 1000).Result()
		if err != nil {
			return n, fmt.Errorf("SCAN %s: %w", pattern, err)
		}
		if len(keys) > 0 {
			if err := admin.Del(ctx, keys...).Err(); err != nil {
				return n, fmt.Errorf("DEL: %w", err)
			}
			n += len(keys)
		}
		if cursor = next; cursor == 0 {
			return n, nil
		}
	}
}

// scanKeys lists the keys matching pattern.
func scanKeys(ctx context.Context, admin *redis.Client, pattern string) ([]string, error) {
	var out []string
	iter := admin.Scan(ctx, 0, pattern, 1000).Iterator()
	for iter.Next(ctx) {
		out = append(out, iter.Val())
	}
	return out, iter.Err()
}

// usedMemory reads INFO memory used_memory (0, nil on miniredis, which has
// no such section).
func usedMemory(ctx context.Context, admin *redis.Client, embedded bool) (int64, error) {
	if embedded {
		return 0, nil
	}
	txt, err := admin.Info(ctx, "memory").Result()
	if err != nil {
		return 0, err
	}
	if v, ok := infoField(txt, "used_memory"); ok {
		return strconv.ParseInt(v, 10, 64)
	}
	return 0, fmt.Errorf("INFO memory has no used_memory")
}

// infoField finds the value of key in an INFO reply ("key:value" lines).
func infoField(txt, key string) (string, bool) {
	for _, line := range strings.Split(txt, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), key+":"); ok {
			return v, true
		}
	}
	return "", false
}

// Machine describes where a run happened: without it a figure means nothing.
type Machine struct {
	CPUModel     string            `json:"cpu_model"`
	CPUs         int               `json:"cpus"`
	GOMAXPROCS   int               `json:"gomaxprocs"`
	MemTotal     string            `json:"mem_total"`
	Kernel       string            `json:"kernel"`
	GoVersion    string            `json:"go_version"`
	Server       string            `json:"server"` // "redis 7.0.15" or "miniredis v2.40.0 (embedded)"
	ServerConfig map[string]string `json:"server_config,omitempty"`
	Modules      map[string]string `json:"modules"` // versions of go-redis, asynq, miniredis
	PoolSize     int               `json:"client_pool_size"`
	LoadStart    string            `json:"loadavg_start"` // /proc/loadavg: a busy shared machine shows here
	LoadEnd      string            `json:"loadavg_end"`
	Loopback     bool              `json:"loopback"`
}

// machine gathers the facts; anything unreadable is left empty rather than
// failing the run.
func (e *env) machine(ctx context.Context) Machine {
	m := Machine{
		CPUs:       runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		GoVersion:  runtime.Version(),
		Modules:    map[string]string{},
		PoolSize:   e.main.Options().PoolSize,
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		n := 0
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), ":")
			switch strings.TrimSpace(k) {
			case "model name":
				m.CPUModel = strings.TrimSpace(v)
			case "processor":
				n++
			}
		}
		f.Close()
		if n > 0 {
			m.CPUs = n
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if v, ok := infoField(string(b), "MemTotal"); ok {
			m.MemTotal = strings.TrimSpace(v)
		}
	}
	m.LoadStart = loadAvg()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = "linux " + strings.TrimSpace(string(b))
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			switch d.Path {
			case "github.com/redis/go-redis/v9", "github.com/hibiken/asynq", "github.com/alicebob/miniredis/v2", gwpeer.Module:
				m.Modules[d.Path] = d.Version
			}
		}
	}
	if host, _, err := net.SplitHostPort(e.main.Options().Addr); err == nil {
		ip := net.ParseIP(host)
		m.Loopback = host == "localhost" || (ip != nil && ip.IsLoopback())
	}
	if e.embedded {
		m.Server = "miniredis " + m.Modules["github.com/alicebob/miniredis/v2"] + " (embedded, in this process)"
		return m
	}
	if txt, err := e.admin.Info(ctx, "server").Result(); err == nil {
		if v, ok := infoField(txt, "redis_version"); ok {
			m.Server = "redis " + v
		}
	}
	m.ServerConfig = map[string]string{}
	for _, k := range []string{"hz", "appendonly", "appendfsync", "save", "maxmemory-policy", "io-threads"} {
		if v, err := e.admin.ConfigGet(ctx, k).Result(); err == nil {
			m.ServerConfig[k] = v[k]
		}
	}
	return m
}

// loadAvg is the 1, 5 and 15 minute load average ("" when unknown). On a
// shared machine it says whether other work competed with the run.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
