// Package redistest starts redis-server processes and manages namespaces on
// shared Redis servers for tests of this module (the chaos tests, the
// durable runtime's recovery tests, durabletest's real backends).
package redistest

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
)

// Server is a redis-server process owned by one test: its own loopback
// port and data directory, so the test can shut it down, kill it and start
// it again on the same data. The process is killed when the test ends.
type Server struct {
	t    testing.TB
	port int
	dir  string
	args []string // configuration of every start (durable AOF, noeviction)
	cmd  *exec.Cmd
	done chan struct{} // closed when the current process exited
}

// Start starts a durable redis-server (AOF with appendfsync always,
// maxmemory-policy noeviction) with extra configuration arguments, and waits
// until it answers PING. The test is skipped when redis-server is not on
// PATH.
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not on PATH: these tests start and restart their own Redis (CI installs it)")
	}
	s := &Server{t: t, dir: t.TempDir()}
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
func (s *Server) start(extra []string) error {
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
func (s *Server) Restart(extra ...string) {
	s.t.Helper()
	if err := s.start(extra); err != nil {
		s.t.Fatalf("restarting redis-server: %v\n%s", err, s.logTail())
	}
}

// waitUp waits until the server answers PING, or LOADING when loading is
// allowed.
func (s *Server) waitUp(limit time.Duration, loading bool) error {
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
		time.Sleep(20 * time.Millisecond) // sleep: the poll interval of a wait for the server to answer, which also watches for its exit
	}
}

// WaitLoaded waits until the server has loaded its data.
func (s *Server) WaitLoaded() {
	s.t.Helper()
	if err := s.waitUp(60*time.Second, false); err != nil {
		s.t.Fatal(err)
	}
}

func isLoading(err error) bool { return err != nil && strings.Contains(err.Error(), "LOADING") }

// Shutdown stops the server with SHUTDOWN (which flushes the AOF) and waits
// for the process to exit.
func (s *Server) Shutdown() {
	s.t.Helper()
	c := s.client()
	defer c.Close()
	_ = c.Shutdown(context.Background()).Err() // the connection closes: no reply
	s.waitExit()
}

// Crash kills the server with SIGKILL: nothing is flushed.
func (s *Server) Crash() {
	s.t.Helper()
	_ = s.cmd.Process.Kill()
	s.waitExit()
}

func (s *Server) waitExit() {
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.t.Fatalf("redis-server did not exit\n%s", s.logTail())
	}
}

// kill ends the process if it runs (test cleanup).
func (s *Server) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }

// URL is the server's redis:// URL.
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

// client returns a new client of the test's own (not the provider's).
func (s *Server) client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
}

// Client returns a client of the test's own, closed when the test ends.
func (s *Server) Client() *redis.Client {
	c := s.client()
	s.t.Cleanup(func() { c.Close() })
	return c
}

func (s *Server) logTail() string {
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
