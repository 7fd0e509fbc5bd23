package redisprovider

import (
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
)

// ProviderVersion is the version Provider.Version reports.
const ProviderVersion = "0.1.0"

// DefaultNamespace is the namespace used when Options.Namespace is empty.
const DefaultNamespace = "duroxide"

// DefaultLockTimeout is the lock duration used when Options.LockTimeout is 0.
const DefaultLockTimeout = 30 * time.Second

// Options configures a Provider.
type Options struct {
	// Client is used as-is when set: a *redis.Client (single node or
	// Sentinel failover) or a *redis.ClusterClient. The provider never
	// closes it. Set ContextTimeoutEnabled (so calls honour their context's
	// deadline); New logs a warning otherwise. Its retry settings
	// (MaxRetries, MaxRedirects) do not matter: the provider marks every
	// command it sends NoRetry, so go-redis never sends one again after it
	// may have reached the server (which would apply an ack or enqueue
	// twice), and follows only MOVED and ASK, which mean it did not. Long polls
	// block on a separate client built from Client's options (PoolSize
	// BlockingPoolSize, ReadTimeout fitted to the blocking calls); any other
	// UniversalClient is used for blocking too, and then its pool must leave
	// room for one parked connection per partition (see
	// docs/internals.md, "Long polling and connection pools").
	Client redis.UniversalClient
	// URL is parsed with redis.ParseURL when Client is nil, e.g.
	// redis://127.0.0.1:6379/0. The client New builds honours context
	// deadlines.
	URL string
	// Namespace prefixes every key, inside a hash tag so each partition of
	// the namespace (the one it has unless Partitions says more) lives in
	// one Cluster slot. Default "duroxide". Must not contain '{' or '}'.
	Namespace string
	// LockTimeout is the lock duration for callers that pass 0. Default 30s.
	LockTimeout time.Duration
	// BlockingPoolSize caps the connections parked in BZPOPMIN. One is used
	// per partition in this process, whatever the number of fetchers, filters
	// and session owners. A partition that gets none logs a warning. Default
	// 128.
	BlockingPoolSize int
	// Logger receives the few events worth reporting that are not errors of
	// a call (dropped orphan messages, skipped corrupt queue messages).
	// Default: discard (never the global slog.Default()).
	Logger *slog.Logger
	// ForceEvalsha runs the scripts with EVALSHA even where the server has
	// Redis Functions (7.0+), which the provider otherwise loads as one
	// library and calls with FCALL. For tests of the EVALSHA path, which
	// servers without functions (miniredis, Redis 6) use.
	ForceEvalsha bool
	// AutoPipeline makes concurrent script calls share their connection's
	// writes and reads: go-redis's autopipeliner (shared with other users of
	// Client) sends whatever calls are queued as one pipeline. A caller still
	// gets its own reply or error, and is answered as soon as its context
	// ends; a call already queued then still runs, as a call whose reply was
	// lost may have. Off by default: it cuts syscalls per call tenfold, but
	// on a quiet loopback Redis it lost throughput at 8 and 32 callers (one
	// batch in flight leaves Redis idle while the client reads; the bench's
	// pipeline scenario), and it only won on a CPU-starved machine. Turn it
	// on when the network round trip, not Redis, bounds a deployment.
	AutoPipeline bool
	// Partitions is the number of partitions New creates a new namespace
	// with (default 1); 0 opens an existing namespace with the count it
	// has. Each partition has its own hash tag, so a namespace of several
	// spreads over a Cluster's shards. Fixed at creation.
	Partitions int
	// KeepGoRedisLogger leaves go-redis's process-wide logger as the
	// application set it. By default New installs one (once per process)
	// that forwards go-redis's notices (a failed dial, a closed connection)
	// to the Logger of the provider opened last that has one, each kind at
	// most every 30 s with a count of the lines left out, instead of
	// go-redis's default: every notice on stderr, tens a second while Redis
	// is down.
	KeepGoRedisLogger bool
	// OpenOnly makes New write nothing: a namespace not created yet opens
	// as one partition (what a namespace without a layout record is) and
	// stays uncreated. For tools that look before
	// the applications start (the CLI without --partitions, its dashboard):
	// a look must not fix the partition count of a namespace the
	// applications will create with several. Partitions > 0 asks to create
	// and is refused with it.
	OpenOnly bool
}
