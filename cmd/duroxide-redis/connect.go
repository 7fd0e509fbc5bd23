package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// session is an open connection for one command, bounded by --timeout.
type session struct {
	ctx    context.Context
	cancel context.CancelFunc
	rdb    redis.UniversalClient
	prov   *redisprovider.Provider
	admin  duroxide.ProviderAdmin
	client *durable.Client
}

// open connects to the deployment the flags and environment name.
func (c *cli) open() (*session, error) {
	rdb, err := c.redisClient()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(c.base, c.timeout)
	// New opens a namespace of any partition count (one is the
	// layout New opens); --partitions only matters for a new namespace, and
	// without it a new namespace is not created: a look before the
	// applications start must not fix its partition count
	prov, err := redisprovider.New(ctx, redisprovider.Options{
		Client:     rdb,
		Namespace:  c.resolvedNamespace(),
		Partitions: c.partitions,
		OpenOnly:   c.partitions == 0,
		// the CLI silences go-redis itself (quietRedis): it reports the
		// failure that matters once
		KeepGoRedisLogger: true,
		Logger:            slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		cancel()
		rdb.Close()
		return nil, fmt.Errorf("connect to %s: %w", strings.Join(c.urls(), ","), err)
	}
	return &session{ctx: ctx, cancel: cancel, rdb: rdb, prov: prov, admin: prov.Admin(), client: durable.NewClient(prov)}, nil
}

// warnIfUncreated tells an operator who starts a long-running view (ui,
// stats --watch) of a namespace no application has created yet that it
// shows one partition until restarted: the count is read once, at open,
// and the applications may create the namespace with several.
func (c *cli) warnIfUncreated(s *session) {
	k := s.prov.Keys()
	if n, err := s.rdb.Exists(s.ctx, k.Meta(), k.Seq()).Result(); err == nil && n == 0 && s.prov.Partitions() == 1 {
		fmt.Fprintf(c.stderr, "duroxide-redis: namespace %s has not been created yet: shown as one partition; restart this view once its applications have created it\n", c.resolvedNamespace())
	}
}

func (s *session) close() {
	s.prov.Close()
	s.rdb.Close()
	s.cancel()
}

// resolvedNamespace applies the flag, then the environment, then the
// provider's default.
func (c *cli) resolvedNamespace() string {
	if c.namespace != "" {
		return c.namespace
	}
	if ns := c.getenv("DUROXIDE_REDIS_NAMESPACE"); ns != "" {
		return ns
	}
	return redisprovider.DefaultNamespace
}

// urls are the --redis flags, else $DUROXIDE_REDIS_URL (comma-separated for a
// Cluster), else a local server.
func (c *cli) urls() []string {
	if len(c.redis) > 0 {
		return c.redis
	}
	if env := c.getenv("DUROXIDE_REDIS_URL"); env != "" {
		return strings.Split(env, ",")
	}
	return []string{"redis://127.0.0.1:6379/0"}
}

// redisError classifies a failed Redis call the command makes itself: an
// error reply is a permanent failure, anything else (connection, timeout) is
// worth retrying, as the provider classifies its own calls.
func redisError(op string, err error) error {
	var reply redis.Error
	return &duroxide.ProviderError{Operation: op, Message: err.Error(), Retryable: !errors.As(err, &reply), Err: err}
}

// trustCA makes the TLS connections of opts trust the --tls-ca file.
func (c *cli) trustCA(opts []*redis.Options) error {
	if c.tlsCA == "" {
		return nil
	}
	pem, err := os.ReadFile(c.tlsCA)
	if err != nil {
		return usageErr("connect", "--tls-ca: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return usageErr("connect", "--tls-ca %s holds no PEM certificate", c.tlsCA)
	}
	for _, o := range opts {
		if o.TLSConfig == nil {
			return usageErr("connect", "--tls-ca needs rediss:// URLs, got a plain one for %s", o.Addr)
		}
		o.TLSConfig.RootCAs = pool
	}
	return nil
}

// untrustedServer reports a TLS handshake that failed on the server's
// certificate.
func untrustedServer(err error) bool {
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	return errors.As(err, &cv) || errors.As(err, &ua)
}

// quietRedis drops go-redis's own log lines (dial retries and the like):
// the command reports the failure that matters itself, once.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

func init() { redis.SetLogger(quietRedis{}) }

// redisClient builds a single-node client for one URL and a Cluster client
// for several. Like the provider's own client it never re-sends a command
// (a lost reply to a start or raise must not enqueue it twice) and honours
// context deadlines. It dials once: an operator at a prompt (or the next
// --watch refresh) retries, and go-redis's five attempts only multiply the
// wait for an answer that will not change.
func (c *cli) redisClient() (redis.UniversalClient, error) {
	urls := c.urls()
	opts := make([]*redis.Options, len(urls))
	for i, u := range urls {
		u = strings.TrimSpace(u)
		if !strings.Contains(u, "://") {
			// a bare host:port, as Cluster seed lists are often written; a
			// word without a port is a mistyped URL, not a host to look up
			if _, port, err := net.SplitHostPort(u); err != nil || port == "" {
				return nil, usageErr("connect", "redis URL %q is neither redis://HOST:PORT, rediss://HOST:PORT nor HOST:PORT", u)
			}
			u = "redis://" + u
		}
		o, err := redis.ParseURL(u)
		if err != nil {
			return nil, duroxide.Errorf("connect", duroxide.ErrInvalidInput, "redis URL %q: %v", u, err)
		}
		opts[i] = o
	}
	if err := c.trustCA(opts); err != nil {
		return nil, err
	}
	if len(opts) == 1 {
		o := opts[0]
		o.MaxRetries, o.ContextTimeoutEnabled = -1, true
		o.Dialer, o.DialerRetries = dialer(o.TLSConfig), 1
		return redis.NewClient(o), nil
	}
	addrs := make([]string, len(opts))
	for i, o := range opts {
		addrs[i] = o.Addr
	}
	// Cluster nodes share credentials and TLS settings; the first URL's apply.
	first := opts[0]
	return redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: addrs, Username: first.Username, Password: first.Password, TLSConfig: first.TLSConfig,
		MaxRetries: -1, ContextTimeoutEnabled: true, Dialer: dialer(first.TLSConfig), DialerRetries: 1,
	}), nil
}

// tlsHandshakeTimeout bounds a TLS handshake. A plain-text Redis reads a
// TLS hello as the start of an inline command and waits for its end, so
// without a bound a rediss:// URL for a plain port hangs until --timeout and
// then looks like a server that is down.
var tlsHandshakeTimeout = 3 * time.Second

// errNoTLSAnswer is a TLS handshake the server never answered.
type errNoTLSAnswer struct{ addr string }

func (e errNoTLSAnswer) Error() string {
	return fmt.Sprintf("TLS handshake with %s got no answer within %s: the port seems to serve plain-text Redis", e.addr, tlsHandshakeTimeout)
}

// dialer connects like go-redis's own dialer, with the TLS handshake bounded
// by tlsHandshakeTimeout.
func dialer(cfg *tls.Config) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		raw, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
		if err != nil || cfg == nil {
			return raw, err
		}
		conn := tls.Client(raw, cfg.Clone())
		hctx, cancel := context.WithTimeout(ctx, tlsHandshakeTimeout)
		defer cancel()
		if err := conn.HandshakeContext(hctx); err != nil {
			raw.Close()
			if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
				return nil, errNoTLSAnswer{addr}
			}
			return nil, err
		}
		return conn, nil
	}
}
