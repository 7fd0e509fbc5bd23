package durable_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/internal/redistest"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// Environment of the child process a recovery test starts: the mode
// ("activity" or "turn", or "limit" for TestConcurrencyLimitAfterProcessKill)
// names where its runtime holds work; the URL and namespace are where the
// work is.
const (
	recoveryChildMode = "DUROXIDE_RECOVERY_CHILD"
	recoveryChildURL  = "DUROXIDE_RECOVERY_URL"
	recoveryChildNS   = "DUROXIDE_RECOVERY_NS"
)

// recoveryChildLockTimeout is the lock the child takes per turn and
// activity: its locks outlive it by at most this much once it is killed.
const recoveryChildLockTimeout = 2 * time.Second

// TestHelperProcess is the child of TestRecoveryAfterProcessKill and
// TestConcurrencyLimitAfterProcessKill: a runtime that holds its work in
// flight until it is killed. Run directly, it does nothing.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(recoveryChildMode)
	if mode == "" {
		return
	}
	if err := runRecoveryChild(mode, os.Getenv(recoveryChildURL), os.Getenv(recoveryChildNS)); err != nil {
		t.Fatal(err)
	}
}

// runRecoveryChild runs the dying runtime until it is killed (or, should
// the parent have died without killing it, for a minute).
func runRecoveryChild(mode, url, ns string) error {
	ctx := context.Background()
	p, err := redisprovider.New(ctx, redisprovider.Options{URL: url, Namespace: ns})
	if err != nil {
		return err
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		return err
	}
	rdb := redis.NewClient(opts)
	keys := recoveryKeys{ns: ns}
	hold := func(what string) {
		rdb.RPush(ctx, keys.held(), what)
		time.Sleep(time.Hour) // sleep: holds the work until the parent kills the process, which ends it without a signal
	}
	hooks := recoveryHooks{ran: func(in string) { rdb.Incr(ctx, keys.runs(in)) }}
	if mode == "turn" {
		hooks.holdTurn = hold
	} else {
		hooks.holdActivity = func(_ *durable.ActivityContext, in string) { hold(in) }
	}
	reg := recoveryRegistry(hooks)
	if mode == "limit" {
		reg = limitKillRegistry(hooks)
	}
	_, err = durable.NewRuntime(p, reg, durable.Options{
		LongPollTimeout: 100 * time.Millisecond, OrchestrationConcurrency: 2, WorkerConcurrency: 3,
		OrchestratorLockTimeout: recoveryChildLockTimeout, OrchestratorLockRenewalBuffer: time.Second,
		WorkerLockTimeout: recoveryChildLockTimeout, WorkerLockRenewalBuffer: time.Second,
	})
	if err != nil {
		return err
	}
	time.Sleep(time.Minute) // sleep: the child runs until the parent kills it, which ends it without a signal
	return nil
}

// recoveryKeys name the test's own bookkeeping keys, beside the namespace.
type recoveryKeys struct{ ns string }

func (k recoveryKeys) runs(in string) string { return "recovery:" + k.ns + ":runs:" + in }
func (k recoveryKeys) held() string          { return "recovery:" + k.ns + ":held" }

// TestRecoveryAfterProcessKill: a runtime in a child process is SIGKILLed
// while it holds activities (after their side effect) or a turn (with the
// completions it fetched uncommitted), its locks still held; a new runtime
// in this process finishes every instance exactly once. It starts its own
// redis-server and is skipped when there is none on PATH.
func TestRecoveryAfterProcessKill(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"activity", "turn"} {
		t.Run("mid-"+mode, func(t *testing.T) {
			t.Parallel()
			testRecoveryAfterProcessKill(t, mode)
		})
	}
}

func testRecoveryAfterProcessKill(t *testing.T, mode string) {
	srv := redistest.Start(t)
	rdb := srv.Client()
	keys := recoveryKeys{ns: "recovery-" + mode}
	p, err := redisprovider.New(t.Context(), redisprovider.Options{URL: srv.URL(), Namespace: keys.ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	client := durable.NewClient(p)
	ids := recoveryInstances(6)
	startRecoveryInstances(t, client, ids)

	child := startRecoveryChild(t, mode, srv.URL(), keys.ns)
	inFlight := awaitHeldInRedis(t, rdb, keys, child, map[string]int{"activity": 3, "turn": 2}[mode])
	child.kill(t)
	runs := func(in string) int {
		n, _ := rdb.Get(context.Background(), keys.runs(in)).Int()
		return n
	}
	if mode == "activity" {
		checkActivitiesUnacked(t, client, inFlight, runs)
	} else {
		checkTurnsUncommitted(t, client, inFlight)
	}

	rt, err := durable.NewRuntime(p, recoveryRegistry(recoveryHooks{ran: func(in string) { rdb.Incr(context.Background(), keys.runs(in)) }}),
		durable.Options{LongPollTimeout: 100 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdownRuntime(t, rt) })
	checkRecovered(t, client, ids, runs)
	if mode == "activity" {
		for _, in := range inFlight {
			if n := runs(in); n < 2 {
				t.Errorf("activity %s was in flight when its process died but ran %d times", in, n)
			}
		}
	}
}

// shutdownRuntime stops a runtime a test started itself, within 5 s.
func shutdownRuntime(t testing.TB, rt *durable.Runtime) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		t.Logf("runtime shutdown: %v", err)
	}
}

// recoveryChild is the child process of one recovery test.
type recoveryChild struct {
	cmd    *exec.Cmd
	out    *lockedBuffer
	exited chan struct{}
}

// startRecoveryChild re-executes this test binary as TestHelperProcess.
func startRecoveryChild(t *testing.T, mode, url, ns string) *recoveryChild {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), recoveryChildMode+"="+mode, recoveryChildURL+"="+url, recoveryChildNS+"="+ns)
	c := &recoveryChild{cmd: cmd, out: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = c.out, c.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the child runtime: %v", err)
	}
	go func() {
		_ = cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() { c.kill(t) })
	return c
}

// kill SIGKILLs the child and waits until it is gone.
func (c *recoveryChild) kill(t *testing.T) {
	t.Helper()
	_ = c.cmd.Process.Kill()
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("child %d survived SIGKILL", c.cmd.Process.Pid)
	}
}

// awaitHeldInRedis waits until the child holds n pieces of work and returns
// them; it fails the test with the child's output if the child exits first.
func awaitHeldInRedis(t *testing.T, rdb *redis.Client, keys recoveryKeys, c *recoveryChild, n int) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		held, err := rdb.LRange(t.Context(), keys.held(), 0, -1).Result()
		if err == nil && len(held) >= n {
			return held
		}
		select {
		case <-c.exited:
			t.Fatalf("the child runtime exited before holding %d pieces of work:\n%s", n, c.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child runtime holds %v, not %d pieces of work:\n%s", held, n, c.out.String())
		}
		time.Sleep(10 * time.Millisecond) // sleep: the poll interval of a wait on the child's records in Redis, which also watches for its exit
	}
}

// checkActivitiesUnacked checks the killed child had run each held activity
// once and its result is in no history: the kill came mid-activity.
func checkActivitiesUnacked(t *testing.T, c *durable.Client, held []string, runs func(string) int) {
	t.Helper()
	for _, in := range held {
		instance, _, _ := strings.Cut(in, "/")
		if n := runs(in); n != 1 {
			t.Fatalf("held activity %s ran %d times before the kill", in, n)
		}
		if completedInputs(t, c, instance)[in] {
			t.Fatalf("held activity %s has a result in history: it was not in flight", in)
		}
	}
}

// checkTurnsUncommitted checks each held instance is running and its held
// turn (the one that schedules the last Step) was never committed.
func checkTurnsUncommitted(t *testing.T, c *durable.Client, held []string) {
	t.Helper()
	for _, instance := range held {
		hist, err := c.Admin().ReadHistoryWithExecutionID(t.Context(), instance, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range hist {
			if s, ok := ev.Kind.(duroxide.ActivityScheduledEvent); ok && s.Input == instance+"/last" {
				t.Fatalf("%s: the held turn committed before the kill", instance)
			}
		}
	}
}

// completedInputs maps the inputs of instance's completed activities.
func completedInputs(t *testing.T, c *durable.Client, instance string) map[string]bool {
	t.Helper()
	hist, err := c.Admin().ReadHistoryWithExecutionID(t.Context(), instance, 1)
	if err != nil {
		t.Fatal(err)
	}
	inputs := map[uint64]string{}
	done := map[string]bool{}
	for _, ev := range hist {
		switch k := ev.Kind.(type) {
		case duroxide.ActivityScheduledEvent:
			inputs[ev.EventID] = k.Input
		case duroxide.ActivityCompletedEvent:
			if ev.SourceEventID != nil {
				done[inputs[*ev.SourceEventID]] = true
			}
		}
	}
	return done
}

// lockedBuffer collects a child's output from its copying goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
