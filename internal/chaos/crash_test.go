package chaos

import (
	"testing"
	"time"
)

// faulty is the fault mix of the crash test: one item in six is mishandled.
var faulty = Faults{Vanish: 0.06, Abandon: 0.06, LateAck: 0.04}

// TestCrashAndLeaseRecovery runs a fan-out / fan-in workload while
// dispatchers vanish holding locks, abandon items and ack after their lock
// expired; a third of the way through, the whole process crashes (every
// dispatcher stops at once, locks held, calls cancelled) and a new process
// with a new provider finishes the work once those locks expire. Every
// orchestration must complete exactly once, every activity result be
// recorded exactly once, no lock be held twice, and every late ack be
// refused.
func TestCrashAndLeaseRecovery(t *testing.T) {
	s := runScenario(t, startRedis(t), "crash", 100, Config{FanOut: 5, Orchestrators: 3, Workers: 4,
		LockTimeout: 600 * time.Millisecond, PollTimeout: 300 * time.Millisecond, CallTimeout: 3 * time.Second,
		Orch: faulty, Work: faulty, Seed: 1})
	s.waitCompletions(len(s.ids) / 3)
	s.crash(2)
	s.finish()
	if s.check.Counts("ack_orchestration_item", LockLost)+s.check.Counts("ack_work_item", LockLost) == 0 {
		t.Error("no late ack was refused: the faults did not happen")
	}
}
