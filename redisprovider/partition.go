package redisprovider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	dxredis "github.com/duroxide-go/duroxide-redis"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// partition is one partition of a namespace, a complete single-slot layout
// under one hash tag: its scripts' keys, its pollers and due loop. It
// implements every provider call for the instances it holds; Provider sends
// each call to the partition (or partitions) it concerns. With one
// partition, the partition is the namespace's own tag. Safe for concurrent
// use.
type partition struct {
	rdb         redis.UniversalClient
	pipe        *redis.AutoPipeliner // nil: one round trip per script call
	blocking    redis.UniversalClient
	ownsClient  bool
	ownsBlocker bool
	namespace   string
	keys        dxredis.Keys
	lockTimeout time.Duration
	log         *slog.Logger
	scripts     [scriptCount]*redis.Script
	sources     [scriptCount]string // for EVAL when the server lost a script
	funcs       *functions          // nil: EVALSHA
	// hub runs the partition's pollers; set holds the demands of its
	// fetch classes, shared with the other partitions of its Provider,
	// where it is partition part
	hub  *hub
	set  *pollSet
	part int
	// blockingPoolSize is the blocking client's pool size, for warnings
	blockingPoolSize int

	closeOnce sync.Once
	closed    chan struct{}
}

var (
	_ duroxide.Provider      = (*partition)(nil)
	_ duroxide.ProviderAdmin = (*partition)(nil)
)

// open connects a partition of the namespace's own tag and loads every
// script: New's first step.
func open(ctx context.Context, opts Options) (*partition, error) {
	p, err := newUnloaded(opts)
	if err != nil {
		return nil, err
	}
	if err := p.loadScripts(ctx, opts.ForceEvalsha); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// newUnloaded is New without the scripts: checked options and clients.
func newUnloaded(opts Options) (*partition, error) {
	const op = "new"
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	if strings.ContainsAny(opts.Namespace, "{}") {
		return nil, invalid(op, "namespace %q must not contain '{' or '}': it is the Cluster hash tag", opts.Namespace)
	}
	if opts.LockTimeout < 0 || opts.BlockingPoolSize < 0 {
		return nil, invalid(op, "LockTimeout and BlockingPoolSize must not be negative")
	}
	p := &partition{
		namespace:   opts.Namespace,
		keys:        dxredis.NewKeys(opts.Namespace),
		lockTimeout: opts.LockTimeout,
		log:         opts.Logger,
		closed:      make(chan struct{}),
	}
	if p.lockTimeout == 0 {
		p.lockTimeout = DefaultLockTimeout
	}
	if !opts.KeepGoRedisLogger {
		routeGoRedisLogs(p.log)
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if err := p.connect(opts); err != nil {
		return nil, err
	}
	p.hub = newHub(p)
	newPollSet([]*partition{p})
	return p, nil
}

// connect sets up the command client and the blocking client.
func (p *partition) connect(opts Options) error {
	const op = "new"
	p.rdb = opts.Client
	if p.rdb == nil {
		if opts.URL == "" {
			return invalid(op, "Options needs a Client or a URL")
		}
		o, err := redis.ParseURL(opts.URL)
		if err != nil {
			return &duroxide.ProviderError{Operation: op, Message: "invalid input: URL: " + err.Error(), Kind: duroxide.ErrInvalidInput, Err: err}
		}
		o.MaxRetries = -1
		o.ContextTimeoutEnabled = true
		p.rdb = redis.NewClient(o)
		p.ownsClient = true
	} else {
		warnUnsafeClient(p.log, p.rdb)
	}
	size := opts.BlockingPoolSize
	if size == 0 {
		size = 128
	}
	p.blocking, p.ownsBlocker = blockingClient(p.rdb, size)
	p.blockingPoolSize = size
	if opts.AutoPipeline {
		p.pipe = autoPipeliner(p.rdb)
	}
	return nil
}

// blockingClient builds a client for parked BZPOPMIN calls from the options
// of c, so long polls cannot exhaust c's pool and the read deadline fits the
// block time. Returns c itself for client types it cannot copy.
func blockingClient(c redis.UniversalClient, size int) (redis.UniversalClient, bool) {
	switch c := c.(type) {
	case *redis.Client:
		o := *c.Options()
		o.PushNotificationProcessor = nil // New makes its own; sharing one fails
		o.MaintNotificationsConfig = noMaintNotifications()
		o.PoolSize, o.MinIdleConns, o.MaxIdleConns = size, 0, 0
		o.ReadTimeout = maxBlock + 5*time.Second
		o.MaxRetries = -1 // a lost reply may have popped a marker: wake the fetchers instead
		return redis.NewClient(&o), true
	case *redis.ClusterClient:
		o := *c.Options()
		o.PushNotificationProcessor = nil
		o.MaintNotificationsConfig = noMaintNotifications()
		o.PoolSize, o.MinIdleConns, o.MaxIdleConns = size, 0, 0
		o.ReadTimeout = maxBlock + 5*time.Second
		o.MaxRetries = -1
		return redis.NewClusterClient(&o), true
	}
	return c, false
}

// warnUnsafeClient logs when a caller's client ignores context deadlines.
// Its MaxRetries and MaxRedirects do not matter: the provider sends every
// command at most once whatever they say (see onceCmd).
func warnUnsafeClient(log *slog.Logger, c redis.UniversalClient) {
	var ctxTimeout bool
	switch c := c.(type) {
	case *redis.Client:
		ctxTimeout = c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		ctxTimeout = c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		ctxTimeout = c.Options().ContextTimeoutEnabled
	default:
		// a client of its own making may send a command again after its
		// reply was lost, whatever the command's NoRetry says
		log.Warn("duroxide-redis: Options.Client is neither a *redis.Client nor a *redis.ClusterClient: the provider cannot check that it never re-sends a command whose reply was lost (which would apply it twice) or that it honours context deadlines",
			"client_type", fmt.Sprintf("%T", c))
		return
	}
	if !ctxTimeout {
		log.Warn("duroxide-redis: Options.Client should set ContextTimeoutEnabled: true, so that calls honour their context's deadline")
	}
}

// noMaintNotifications disables maintenance notifications on the blocking
// client: they are for the command client, and copying the caller's config
// would read it while go-redis updates it during a handshake.
func noMaintNotifications() *maintnotifications.Config {
	return &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
}

// loadScripts checks the server and loads every script: as a function
// library where the server has functions (unless forceEvalsha), else into
// the script cache, so that pipelines and the first calls find them (EVALSHA
// also reloads after SCRIPT FLUSH or a restart).
func (p *partition) loadScripts(ctx context.Context, forceEvalsha bool) error {
	if err := p.rdb.Ping(ctx).Err(); err != nil {
		return fail("new", err)
	}
	for h := range scriptCount {
		src, err := dxredis.Script(h.String())
		if err != nil {
			// the embedded Lua does not match the handles: a build bug
			return duroxide.Permanent("new", err.Error())
		}
		p.scripts[h], p.sources[h] = redis.NewScript(src), src
	}
	if !forceEvalsha {
		f, err := p.loadFunctions(ctx)
		if err != nil || f != nil {
			p.funcs = f
			return err
		}
	}
	for h, s := range p.scripts {
		if err := s.Load(ctx, p.rdb).Err(); err != nil {
			return fail("new", fmt.Errorf("loading script %s: %w", luaScript(h), err))
		}
	}
	return nil
}

// UsesFunctions reports whether the provider calls its scripts as Redis
// functions (FCALL) rather than with EVALSHA.
func (p *partition) UsesFunctions() bool { return p.funcs != nil }

// Close puts back the wake-up markers this process holds (so that a
// fetcher or due loop elsewhere answers them), stops the provider's
// pollers and due loop, waits (up to 2 s) for their long polls in flight to return, and
// closes the clients New created. A Client passed in Options
// stays open.
func (p *partition) Close() error {
	var err error
	p.closeOnce.Do(func() {
		close(p.closed)
		if p.hub != nil { // while the clients are open
			p.hub.stopBlocker(closeWait)
			p.hub.close()
		}
		if p.ownsBlocker {
			err = p.blocking.Close()
		}
		if p.ownsClient {
			err = errors.Join(err, p.rdb.Close())
		}
	})
	return err
}

// closeWait bounds how long Close waits for the long polls in flight to
// return before it closes the clients under them.
const closeWait = 2 * time.Second

// WakeFetchers makes every fetch of this provider run its fetch script
// again at once, as if work had been announced to each: the fetches asleep
// wake, one whose script is running now runs it again before it sleeps, and
// the next one to start runs it whatever the last empty fetch learned; the
// due loop plans again from the new time. It is
// for a clock that jumps (durabletest's Advance moves miniredis's): what
// the jump made due was announced to nobody, and the registrations that
// would let a marker reach the sleeping fetchers may have just been purged
// as stale by a script that ran at the new time. Fetches of other providers
// (other processes) are not reached.
func (p *partition) WakeFetchers() {
	if p.hub != nil {
		p.hub.rouse()
	}
}

// Keys returns the key schema of the provider's namespace.
func (p *partition) Keys() dxredis.Keys { return p.keys }

// Name identifies the provider in logs.
func (p *partition) Name() string { return "redis" }

// Version is the provider's version.
func (p *partition) Version() string { return ProviderVersion }

// Admin returns the provider itself: it implements every management method.
func (p *partition) Admin() duroxide.ProviderAdmin { return p }
