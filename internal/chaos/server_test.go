package chaos

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// redisServer is a redis-server process owned by one test: its own loopback
// port and data directory, so the test can shut it down, kill it and start
// it again on the same data. The process is killed when the test ends.
type redisServer struct {
	t    testing.TB
	port int
	dir  string
	args []string // configuration of every start (durable AOF, noeviction)
	cmd  *exec.Cmd
	done chan struct{} // closed when the current process exited
	// evalsha makes newProvider's providers use EVALSHA, not the function
	// library Redis 7 offers
	evalsha bool
}

// startRedis starts a durable redis-server (AOF with appendfsync always,
// maxmemory-policy noeviction) with extra configuration arguments, and waits
// until it answers PING. The test is skipped when redis-server is not on
// PATH.
func startRedis(t testing.TB, extra ...string) *redisServer {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not on PATH: these tests start and restart their own Redis (CI installs it)")
	}
	s := &redisServer{t: t, dir: t.TempDir()}
	s.args = append([]string{"--bind", "127.0.0.1", "--dir", s.dir, "--daemonize", "no",
		"--save", "", "--appendonly", "yes", "--appendfsync", "always",
		"--maxmemory-policy", "noeviction", "--logfile", filepath.Join(s.dir, "redis.log")}, extra...)
	var err error
	for try := 0; try < 5; try++ { // a free port can be taken before redis binds it
		s.port = freePort(t)
		if err = s.start(nil); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(s.kill)
	return s
}

// freePort returns a loopback port nothing listens on right now.
func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// start runs the process with the server's arguments plus extra and waits
// until it answers PING (or LOADING).
func (s *redisServer) start(extra []string) error {
	args := append([]string{"--port", strconv.Itoa(s.port)}, s.args...)
	s.cmd = exec.Command("redis-server", append(args, extra...)...)
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		close(done)
	}(s.cmd, s.done)
	return s.waitUp(10*time.Second, true)
}

// Restart starts the server again on the same port and data directory, with
// extra configuration arguments for this start only.
func (s *redisServer) Restart(extra ...string) {
	s.t.Helper()
	if err := s.start(extra); err != nil {
		s.t.Fatalf("restarting redis-server: %v\n%s", err, s.logTail())
	}
}

// waitUp waits until the server answers PING, or LOADING when loading is
// allowed.
func (s *redisServer) waitUp(limit time.Duration, loading bool) error {
	c := s.client()
	defer c.Close()
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil || (loading && isLoading(err)) {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("redis-server exited: %v\n%s", err, s.logTail())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server on port %d does not answer: %v", s.port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitLoaded waits until the server has loaded its data.
func (s *redisServer) WaitLoaded() {
	s.t.Helper()
	if err := s.waitUp(60*time.Second, false); err != nil {
		s.t.Fatal(err)
	}
}

func isLoading(err error) bool { return err != nil && strings.Contains(err.Error(), "LOADING") }

// Shutdown stops the server with SHUTDOWN (which flushes the AOF) and waits
// for the process to exit.
func (s *redisServer) Shutdown() {
	s.t.Helper()
	c := s.client()
	defer c.Close()
	_ = c.Shutdown(context.Background()).Err() // the connection closes: no reply
	s.waitExit()
}

// Crash kills the server with SIGKILL: nothing is flushed.
func (s *redisServer) Crash() {
	s.t.Helper()
	_ = s.cmd.Process.Kill()
	s.waitExit()
}

func (s *redisServer) waitExit() {
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.t.Fatalf("redis-server did not exit\n%s", s.logTail())
	}
}

// kill ends the process if it runs (test cleanup).
func (s *redisServer) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// Addr is the server's host:port.
func (s *redisServer) Addr() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }

// URL is the server's redis:// URL.
func (s *redisServer) URL() string { return "redis://" + s.Addr() + "/0" }

// client returns a new client of the test's own (not the provider's).
func (s *redisServer) client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
}

// Client returns a client of the test's own, closed when the test ends.
func (s *redisServer) Client() *redis.Client {
	c := s.client()
	s.t.Cleanup(func() { c.Close() })
	return c
}

func (s *redisServer) logTail() string {
	b, err := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return strings.Join(lines, "\n")
}

// newProvider connects a provider to the server's URL in namespace ns,
// closed when the test ends.
func newProvider(t testing.TB, s *redisServer, ns string) *redisprovider.Provider {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := redisprovider.New(ctx, redisprovider.Options{URL: s.URL(), Namespace: ns, ForceEvalsha: s.evalsha})
	if err != nil {
		t.Fatalf("redisprovider.New: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// instanceIDs names n instances.
func instanceIDs(prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%04d", prefix, i)
	}
	return ids
}

// report logs the checker's call counts and fails the test on violations.
func report(t testing.TB, c *Checker, violations []string) {
	t.Helper()
	t.Logf("calls:\n%s", c.Summary())
	if len(violations) > 20 {
		t.Errorf("%d violations; the first 20:", len(violations))
		violations = violations[:20]
	}
	for _, v := range violations {
		t.Error(v)
	}
}

// quietLogger drops go-redis's internal log lines (dial failures during the
// outages these tests cause on purpose).
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

func init() { redis.SetLogger(quietLogger{}) }
