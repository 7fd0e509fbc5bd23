package chaos

import (
	"testing"
	"time"
)

// TestRedisRestart runs the workload on a Redis with appendonly yes and
// appendfsync always, and takes Redis away twice in the middle of it: once
// with SHUTDOWN, once with SIGKILL, each time starting it again on the same
// data after an outage of 1.5 s. Every call made meanwhile must return a
// retryable error or a context error within its deadline (+ Grace), never a
// permanent error, a panic or a hang; scripts must be reloaded without help;
// every ack that returned nil must be found afterwards exactly as sent; and
// the workload must finish with the invariants of the crash test.
func TestRedisRestart(t *testing.T) {
	srv := startRedis(t)
	s := runScenario(t, srv, "restart", 60, Config{FanOut: 4, Orchestrators: 3, Workers: 4,
		LockTimeout: time.Second, PollTimeout: 300 * time.Millisecond, CallTimeout: time.Second, Seed: 3})
	outage := func(name string, stop func(), completions int) {
		s.waitCompletions(completions)
		before := s.check.Counts("fetch_work_item", Retryable)
		stop()
		time.Sleep(1500 * time.Millisecond) // sleep: the outage's length: the runtime keeps calling a dead server
		srv.Restart()
		t.Logf("%s after %d completions; %d fetches failed retryably meanwhile",
			name, completions, s.check.Counts("fetch_work_item", Retryable)-before)
	}
	outage("SHUTDOWN", srv.Shutdown, len(s.ids)/4)
	outage("SIGKILL", srv.Crash, len(s.ids)/2)
	s.finish()
	if s.check.Counts("fetch_orchestration_item", Retryable)+s.check.Counts("fetch_work_item", Retryable) == 0 {
		t.Error("no call failed during the outages: Redis was not really away")
	}
}
