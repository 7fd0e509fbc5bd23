package durable_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// e2eHangBound is how long a test waits for a call that must not hang.
const e2eHangBound = 15 * time.Second

// stuckEnv is an Env, its logs recorded, with an activity that ignores its
// context and an orchestration that blocks outside its context, each of
// which signals when it has started; both stay stuck until the test ends
// (released before the Env shuts down).
type stuckEnv struct {
	*durabletest.Env
	logs               *recordingHandler
	activityIn, turnIn chan struct{}
}

func startStuck(t *testing.T, opts durable.Options) stuckEnv {
	release := make(chan struct{})
	s := stuckEnv{logs: newRecordingHandler(), activityIn: make(chan struct{}, 16), turnIn: make(chan struct{}, 16)}
	reg := durable.NewRegistry()
	reg.MustAddActivity("Deaf", func(*durable.ActivityContext, string) (string, error) {
		s.activityIn <- struct{}{}
		<-release
		return "", nil
	})
	reg.MustAddOrchestration("CallsDeaf", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		return ctx.ScheduleActivity("Deaf", "").Get()
	})
	reg.MustAddOrchestration("BlocksOutside", func(*durable.OrchestrationContext, string) (string, error) {
		s.turnIn <- struct{}{}
		<-release // a channel the context knows nothing of
		return "", nil
	})
	opts.LongPollTimeout, opts.Logger = 100*time.Millisecond, slog.New(s.logs)
	s.Env = durabletest.Start(t, reg, durabletest.WithOptions(opts))
	t.Cleanup(func() { close(release) }) // runs before the Env's own cleanup
	return s
}

// logRecord is one record a recordingHandler kept, its attributes as text.
type logRecord struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

// recordingHandler keeps every record logged through it, for assertions,
// and signals each one on seen (buffered; a record nobody waits for is not
// signalled).
type recordingHandler struct {
	mu      *sync.Mutex
	records *[]logRecord
	with    []slog.Attr
	seen    chan struct{}
}

func newRecordingHandler() *recordingHandler {
	return &recordingHandler{mu: &sync.Mutex{}, records: &[]logRecord{}, seen: make(chan struct{}, 1)}
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{level: r.Level, msg: r.Message, attrs: map[string]string{}}
	for _, a := range h.with {
		rec.attrs[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.String()
		return true
	})
	h.mu.Lock()
	*h.records = append(*h.records, rec)
	h.mu.Unlock()
	select {
	case h.seen <- struct{}{}:
	default:
	}
	return nil
}

// messages returns the records' messages, in order.
func (h *recordingHandler) messages() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, len(*h.records))
	for i, r := range *h.records {
		out[i] = r.level.String() + " " + r.msg
	}
	return out
}

// count is how many records' messages contain sub.
func (h *recordingHandler) count(sub string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, r := range *h.records {
		if strings.Contains(r.msg, sub) {
			n++
		}
	}
	return n
}

func (h *recordingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.with = append(append([]slog.Attr{}, h.with...), as...)
	return &c
}

func (h *recordingHandler) WithGroup(string) slog.Handler { return h }

// find returns the records at level whose attribute key has value.
func (h *recordingHandler) find(level slog.Level, key, value string) []logRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []logRecord
	for _, r := range *h.records {
		if r.level == level && r.attrs[key] == value {
			out = append(out, r)
		}
	}
	return out
}

// A turn blocked outside the orchestration context is abandoned after
// TurnDeadlockTimeout with an Error log naming the instance and where its
// code is blocked; the abandon counts as an attempt, so a turn that blocks
// every time is poisoned, and nothing keeps waiting for the stuck code.
func TestTurnBlockedOutsideContextIsAbandonedThenPoisoned(t *testing.T) {
	t.Parallel()
	env := startStuck(t, durable.Options{TurnDeadlockTimeout: 200 * time.Millisecond, MaxAttempts: 2})
	if err := env.Client.StartOrchestration(t.Context(), "blocked", "BlocksOutside", ""); err != nil {
		t.Fatal(err)
	}
	st, err := env.Client.WaitForOrchestration(t.Context(), "blocked", e2eHangBound)
	if err != nil {
		t.Fatalf("the blocked instance never ended: %v", err)
	}
	if st.Status != durable.StatusFailed || st.Failure.Poison == nil {
		t.Fatalf("status %v %q, want poisoned", st.Status, st.FailureMessage())
	}
	errs := env.logs.find(slog.LevelError, "instance", "blocked")
	if len(errs) == 0 {
		t.Fatal("no Error log names the blocked instance")
	}
	var stack string
	for _, r := range errs {
		for _, v := range r.attrs {
			if strings.Contains(v, "startStuck") {
				stack = v
			}
		}
	}
	if !strings.Contains(stack, "chan receive") {
		t.Fatalf("no Error log shows where the code is blocked: %+v", errs)
	}
	// The stuck goroutines are still blocked; the runtime must not wait for them.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := env.Runtime.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown after the abandoned turns: %v", err)
	}
}
