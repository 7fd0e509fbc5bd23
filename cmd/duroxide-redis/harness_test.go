package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

var namespaceSeq atomic.Int64

// deployment is one namespace on the test server with a running runtime,
// the state the CLI inspects and operates.
type deployment struct {
	namespace string
	prov      *redisprovider.Provider
	client    *durable.Client
	// notes is signalled each time the runtime writes a pending-start note
	notes chan struct{}
}

// noteSignal is the provider the deployment's runtime uses: the provider
// itself (every optional interface kept), signalling each pending-start
// note it writes.
type noteSignal struct {
	*redisprovider.Provider
	notes chan struct{}
}

func (n noteSignal) AbandonOrchestrationItemWithNote(ctx context.Context, token string, delay time.Duration, ignore bool, note duroxide.PendingStart) error {
	err := n.Provider.AbandonOrchestrationItemWithNote(ctx, token, delay, ignore, note)
	select {
	case n.notes <- struct{}{}:
	default: // nobody waits: the note is in Redis for whoever reads later
	}
	return err
}

// result is what one CLI run printed and returned.
type result struct {
	stdout, stderr string
	code           int
}

// newDeployment starts a runtime with the test orchestrations in a
// namespace of its own, so tests never see each other's instances.
func newDeployment(t *testing.T) *deployment {
	t.Helper()
	needRedis(t)
	ns := fmt.Sprintf("clitest-%d-%d", time.Now().UnixNano(), namespaceSeq.Add(1))
	return runDeployment(t, redisprovider.Options{URL: redisURL, Namespace: ns})
}

// runDeployment starts a provider (of opts.Partitions partitions) and a
// runtime with the test orchestrations, both stopped when the test ends.
func runDeployment(t *testing.T, opts redisprovider.Options) *deployment {
	t.Helper()
	p, err := redisprovider.New(context.Background(), opts)
	if err != nil {
		t.Fatalf("provider: %v", err)
	}
	notes := make(chan struct{}, 1)
	rt, err := durable.NewRuntime(noteSignal{p, notes}, testRegistry(), durable.Options{LongPollTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("runtime: %v", err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		rt.Shutdown(sctx)
		p.Close()
	})
	return &deployment{namespace: opts.Namespace, prov: p, client: rt.Client(), notes: notes}
}

// testRegistry holds small orchestrations that leave every kind of state
// the CLI shows: KV, custom status, an activity, a child, several
// executions, and an instance waiting for an event.
func testRegistry() *durable.Registry {
	reg := durable.NewRegistry()
	reg.MustAddActivity("Hello", func(_ *durable.ActivityContext, in string) (string, error) {
		return "hello " + in, nil
	})
	reg.MustAddOrchestration("Greet", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		ctx.SetValue("greeted", in)
		ctx.SetCustomStatus("greeting")
		a, err := ctx.ScheduleActivity("Hello", in).Get()
		if err != nil {
			return "", err
		}
		child, err := ctx.ScheduleSubOrchestration("Child", a).Get()
		return a + " / " + child, err
	})
	reg.MustAddOrchestration("Child", func(_ *durable.OrchestrationContext, in string) (string, error) {
		return "child saw " + in, nil
	})
	reg.MustAddOrchestration("Waiter", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.WaitForEvent("go").Get()
	})
	// Buffered waits for "go", then reads its inbox queue: a message
	// enqueued before "go" waits for it, where an early event is dropped.
	reg.MustAddOrchestration("Buffered", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if _, err := ctx.WaitForEvent("go").Get(); err != nil {
			return "", err
		}
		return ctx.Dequeue("inbox").Get()
	})
	reg.MustAddOrchestration("Typed", durable.Orchestration(func(_ *durable.OrchestrationContext, in struct{ N int }) (int, error) {
		return in.N, nil
	}))
	reg.MustAddOrchestration("Fail", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if _, err := ctx.Timer(time.Millisecond).Get(); err != nil {
			return "", err
		}
		return "", errors.New("card declined")
	})
	reg.MustAddOrchestration("Loop", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		n, _ := strconv.Atoi(in)
		if n < 3 {
			ctx.ContinueAsNew(strconv.Itoa(n + 1))
		}
		return "looped " + in, nil
	})
	// Hold runs, in a session, until its test releases it or the runtime
	// stops, so its item stays locked by a worker that owns the session;
	// it says when it starts.
	reg.MustAddActivity("Hold", func(a *durable.ActivityContext, in string) (string, error) {
		h := holdOf(a.InstanceID())
		select {
		case h.started <- struct{}{}:
		default:
		}
		select {
		case <-a.Done():
			return "", a.Err()
		case <-h.release:
			return "released", nil
		}
	})
	// Busy leaves one of each thing an instance can wait for: an activity
	// running (Hold), one no worker takes (the tag "nobody"), a timer, a
	// child waiting for its own event, and its wait for "approve".
	reg.MustAddOrchestration("Busy", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		ctx.ScheduleActivity("Hold", in, durable.WithSession("s-"+ctx.InstanceID()))
		ctx.ScheduleActivity("Hello", in, durable.WithTag("nobody"))
		ctx.Timer(time.Hour)
		ctx.ScheduleSubOrchestration("Waiter", "", durable.WithInstanceID(ctx.InstanceID()+"-child"))
		return ctx.WaitForEvent("approve").Get()
	})
	addProcessOrder(reg)
	return reg
}

// hold is the Hold activity of one instance: it signals started, and
// returns when release is closed.
type hold struct{ started, release chan struct{} }

var holds sync.Map // instance -> *hold

func holdOf(instance string) *hold {
	h, _ := holds.LoadOrStore(instance, &hold{started: make(chan struct{}, 1), release: make(chan struct{})})
	return h.(*hold)
}

// cli runs the command in-process against the deployment, which it names
// through the environment as an operator's shell would.
func (d *deployment) cli(args ...string) result {
	env := map[string]string{"DUROXIDE_REDIS_URL": redisURL, "DUROXIDE_REDIS_NAMESPACE": d.namespace}
	return runCLI(env, args...)
}

func runCLI(env map[string]string, args ...string) result {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb, func(k string) string { return env[k] })
	return result{out.String(), errb.String(), code}
}

// finish starts an orchestration through the client and waits for it.
func (d *deployment) finish(t *testing.T, instance, name, input string) durable.OrchestrationStatus {
	t.Helper()
	ctx := context.Background()
	if err := d.client.StartOrchestration(ctx, instance, name, input); err != nil {
		t.Fatalf("start %s: %v", instance, err)
	}
	return d.wait(t, instance)
}

func (d *deployment) wait(t *testing.T, instance string) durable.OrchestrationStatus {
	t.Helper()
	st, err := d.client.WaitForOrchestration(context.Background(), instance, 20*time.Second)
	if err != nil {
		t.Fatalf("wait %s: %v", instance, err)
	}
	return st
}

// waitRunning waits until the dispatcher has created instance's record.
func (d *deployment) waitRunning(t *testing.T, instance string) {
	t.Helper()
	durabletest.Eventually(t, "instance "+instance+" reaching Running", func() (bool, error) {
		info, err := d.prov.GetInstanceInfo(context.Background(), instance)
		return info.Status == "Running", err
	})
}

// snapshot is the state a rejected command must leave untouched.
type snapshot struct {
	instances []string
	queues    duroxide.QueueDepths
	metrics   duroxide.SystemMetrics
}

func (d *deployment) snapshot(t *testing.T) snapshot {
	t.Helper()
	ctx := context.Background()
	ids, err := d.prov.ListInstances(ctx)
	if err != nil {
		t.Fatal(err)
	}
	q, err := d.prov.GetQueueDepths(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := d.prov.GetSystemMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return snapshot{ids, q, m}
}

func (s snapshot) String() string { return fmt.Sprintf("%v %+v %+v", s.instances, s.queues, s.metrics) }

// expect checks the exit code and that stdout holds every want.
func expect(t *testing.T, r result, code int, want ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, r.stdout)
		}
	}
}

// expectFailure checks the exit code, an empty stdout and a stderr naming
// the problem.
func expectFailure(t *testing.T, r result, code int, msg string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("a failure printed to stdout:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, msg) {
		t.Errorf("stderr lacks %q:\n%s", msg, r.stderr)
	}
}

// decode parses a --json answer.
func decode[T any](t *testing.T, r result) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("--json output does not decode into %T: %v\n%s", v, err, r.stdout)
	}
	return v
}

// hasRow checks that some line of a table consists of exactly cells
// (separated by any run of spaces).
func hasRow(t *testing.T, out string, cells ...string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if slices.Equal(strings.Fields(line), cells) {
			return
		}
	}
	t.Errorf("no row %q in:\n%s", cells, out)
}
