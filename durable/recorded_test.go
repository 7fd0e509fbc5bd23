package durable_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// TestRecordedHistories runs, on the Go runtime over Redis, the scenarios whose
// histories duroxide 0.1.26's own Rust runtime recorded (testdata/recorded, copied
// from /work/shared/fixtures/duroxide-recorded; its README gives each scenario), and
// requires every event of every instance and execution the scenario created to
// serialize to exactly the bytes duroxide wrote, except the fields that hold time or
// randomness (see maskEvents).
func TestRecordedHistories(t *testing.T) {
	t.Parallel()
	for _, sc := range recordedScenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			runRecordedScenario(t, sc)
		})
	}
}

// TestRecordedCopiesMatchOriginals keeps testdata/recorded a verbatim copy of the
// shared recordings when the shared directory is present (it is not in a CI checkout).
func TestRecordedCopiesMatchOriginals(t *testing.T) {
	t.Parallel()
	const shared = "../../shared/fixtures/duroxide-recorded"
	if _, err := os.Stat(shared); err != nil {
		t.Skipf("shared recordings %s not present: %v", shared, err)
	}
	names, err := filepath.Glob(filepath.Join(shared, "*"))
	if err != nil || len(names) == 0 {
		t.Fatalf("list %s: %v (%d files)", shared, err, len(names))
	}
	for _, orig := range names {
		want, err := os.ReadFile(orig)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("testdata", "recorded", filepath.Base(orig)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("testdata/recorded/%s differs from %s (%v); re-copy it", filepath.Base(orig), orig, err)
		}
	}
}

// recordedScenario is one recorded scenario: the orchestration started as
// s-<name> and what the driver does while it runs.
type recordedScenario struct {
	name, orchestration, input string
	drive                      func(d *recordedRig, inst string)
}

// recordedScenarios follow the table of testdata/recorded/README.md.
var recordedScenarios = []recordedScenario{
	{name: "01_hello", orchestration: "Hello", input: "world"},
	{name: "02_fanout", orchestration: "FanOut"},
	{name: "03_timer", orchestration: "Timer"},
	{name: "04_external_event", orchestration: "WaitEvent", drive: func(d *recordedRig, inst string) {
		d.h.awaitEvent(inst, "ExternalSubscribed")
		d.h.raise(inst, "Approve", "yes")
	}},
	{name: "05a_race_event_wins", orchestration: "Race", input: "60", drive: func(d *recordedRig, inst string) {
		d.h.awaitEvent(inst, "ExternalSubscribed")
		d.h.raise(inst, "Go", "payload")
	}},
	{name: "05b_race_timer_wins", orchestration: "Race", input: "1"},
	{name: "06_suborchestration", orchestration: "Parent", input: "p"},
	{name: "07_continue_as_new", orchestration: "Cans", input: "0"},
	{name: "08_retry", orchestration: "Retry", input: "r"},
	{name: "09_system_calls", orchestration: "SysCalls"},
	{name: "10_custom_status", orchestration: "Status", input: "st"},
	{name: "11_kv", orchestration: "Kv"},
	{name: "12_cancel", orchestration: "CancelMe", drive: func(d *recordedRig, inst string) {
		d.h.awaitEvent(inst, "ExternalSubscribed")
		d.h.cancel(inst, "user-cancel")
	}},
	{name: "13_queue", orchestration: "Queue", input: "q", drive: func(d *recordedRig, inst string) {
		d.h.awaitEvent(inst, "ActivityScheduled")
		d.h.enqueueEvent(inst, "Q", "m1")
		d.h.awaitEvent(inst, "ExternalEventPersistent")
		d.open("q")
	}},
	{name: "14_race_activity_loses", orchestration: "RaceActivity"},
	{name: "15_race_suborch_loses", orchestration: "RaceChild"},
	{name: "16_continue_as_new_queue", orchestration: "CanQueue", input: "start", drive: func(d *recordedRig, inst string) {
		d.h.awaitEvent(inst, "ActivityScheduled")
		d.h.enqueueEvent(inst, "Q", "m1")
		d.h.enqueueEvent(inst, "Q", "m2")
		d.h.awaitEventsOf(inst, "ExternalEventPersistent", 2)
		d.open("c")
	}},
	{name: "17_detached_and_explicit_id", orchestration: "Spawner"},
	{name: "18_event_before_subscription", orchestration: "LateSub", drive: func(d *recordedRig, inst string) {
		d.h.awaitEvent(inst, "ActivityScheduled")
		d.h.raise(inst, "E", "early")
		d.h.awaitEvent(inst, "ExternalEvent")
		d.open("e")
		d.h.awaitEvent(inst, "ExternalSubscribed")
		d.h.raise(inst, "E", "late")
	}},
}

// recording is one file of testdata/recorded.
type recording struct {
	Scenario string `json:"scenario"`
	Output   struct {
		Status string  `json:"status"`
		Output *string `json:"output"`
		Error  *string `json:"error"`
	} `json:"output"`
	// Instances maps instance id to execution id (decimal) to the events as
	// duroxide's serde wrote them.
	Instances map[string]map[string][]json.RawMessage `json:"instances"`
}

// recordedRig is the state one scenario's activities and driver share.
type recordedRig struct {
	h     *harness
	mu    sync.Mutex
	gates map[string]chan struct{}
	flaky map[string]int
}

// gate is the channel of the named gate, made on first use by either side.
func (d *recordedRig) gate(name string) chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	g, ok := d.gates[name]
	if !ok {
		g = make(chan struct{})
		d.gates[name] = g
	}
	return g
}

func (d *recordedRig) open(name string) { close(d.gate(name)) }

// registry registers the activities and orchestrations of every scenario, as the
// README describes them.
func (d *recordedRig) registry() *durable.Registry {
	echo := func(_ *durable.ActivityContext, in string) (string, error) { return "echo:" + in, nil }
	call := func(ctx *durable.OrchestrationContext, name, in string) (string, error) {
		return ctx.ScheduleActivity(name, in).Get()
	}
	// raceSecond races f against a 1 s timer (RaceActivity, RaceChild).
	raceSecond := func(ctx *durable.OrchestrationContext, f durable.Future[string]) (string, error) {
		if ctx.Select(f, ctx.Timer(time.Second)) == 1 {
			return "timeout", nil
		}
		return f.Get()
	}
	outcome := func(v string, err error) string {
		if err != nil {
			return "err(" + err.Error() + ")"
		}
		return "ok(" + v + ")"
	}
	return durable.NewRegistry().
		MustAddActivity("Echo", echo).
		MustAddActivity("Fail", func(_ *durable.ActivityContext, in string) (string, error) { return "", errors.New("fail:" + in) }).
		MustAddActivity("Flaky", func(_ *durable.ActivityContext, in string) (string, error) {
			d.mu.Lock()
			d.flaky[in]++
			n := d.flaky[in]
			d.mu.Unlock()
			if n <= 2 {
				return "", fmt.Errorf("flaky:%s:attempt%d", in, n)
			}
			return "flaky:" + in + ":ok", nil
		}).
		MustAddActivity("Slow", func(ctx *durable.ActivityContext, in string) (string, error) {
			return d.h.blockUntilCancelled(ctx, in)
		}).
		MustAddActivity("Gate", func(ctx *durable.ActivityContext, in string) (string, error) {
			select {
			case <-d.gate(in):
				return "gate:" + in, nil
			case <-ctx.Done():
				return "", ctx.Err()
			case <-d.h.stop:
				return "", errors.New("test ended")
			}
		}).
		MustAddOrchestration("Hello", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			return call(ctx, "Echo", in)
		}).
		MustAddOrchestration("FanOut", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			fs := []durable.Future[string]{ctx.ScheduleActivity("Echo", "a"), ctx.ScheduleActivity("Echo", "b"), ctx.ScheduleActivity("Echo", "c")}
			ctx.Join(fs[0], fs[1], fs[2])
			return joinOutputs(",", fs...)
		}).
		MustAddOrchestration("Timer", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			_, err := ctx.Timer(time.Second).Get()
			return "timer-done", err
		}).
		MustAddOrchestration("WaitEvent", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			v, err := ctx.WaitForEvent("Approve").Get()
			return "got:" + v, err
		}).
		MustAddOrchestration("Race", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			secs, err := strconv.Atoi(in)
			if err != nil {
				return "", err
			}
			ev := ctx.WaitForEvent("Go")
			if ctx.Select(ev, ctx.Timer(time.Duration(secs)*time.Second)) == 1 {
				return "timeout", nil
			}
			v, err := ev.Get()
			return "event:" + v, err
		}).
		MustAddOrchestration("Child", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			v, err := call(ctx, "Echo", in)
			return "child:" + v, err
		}).
		MustAddOrchestration("FailingChild", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			return call(ctx, "Fail", in)
		}).
		MustAddOrchestration("Parent", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			first := outcome(ctx.ScheduleSubOrchestration("Child", in+"-1").Get())
			second := outcome(ctx.ScheduleSubOrchestration("FailingChild", in+"-2").Get())
			return first + ";" + second, nil
		}).
		MustAddOrchestration("Cans", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			n, err := strconv.Atoi(in)
			if err != nil {
				return "", err
			}
			if _, err := call(ctx, "Echo", "gen"+in); err != nil {
				return "", err
			}
			if n < 2 {
				ctx.ContinueAsNew(strconv.Itoa(n + 1))
			}
			return "done:" + in, nil
		}).
		MustAddOrchestration("Retry", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			return ctx.ScheduleActivityWithRetry("Flaky", in, durable.RetryPolicy{
				MaxAttempts: 3, Backoff: durable.Backoff{Kind: durable.BackoffFixed, Base: 500 * time.Millisecond},
			}).Get()
		}).
		MustAddOrchestration("SysCalls", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			guid, err := ctx.NewGUID().Get()
			if err != nil {
				return "", err
			}
			now, err := ctx.UTCNow().Get()
			return fmt.Sprintf("guid_len=%d;time_positive=%t", len(guid), now.UnixMilli() > 0), err
		}).
		MustAddOrchestration("Status", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			ctx.SetCustomStatus("step1")
			v, err := call(ctx, "Echo", in)
			ctx.SetCustomStatus("step2")
			return v, err
		}).
		MustAddOrchestration("Kv", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			get := func(k string) string {
				if v, ok := ctx.Value(k); ok {
					return v
				}
				return "none"
			}
			ctx.SetValue("a", "1")
			ctx.SetValue("b", "2")
			if _, err := call(ctx, "Echo", "kv"); err != nil {
				return "", err
			}
			a := get("a")
			ctx.ClearValue("a")
			return "a=" + a + ";a_after_clear=" + get("a") + ";b=" + get("b"), nil
		}).
		MustAddOrchestration("CancelMe", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			act, ev := ctx.ScheduleActivity("Slow", "x"), ctx.WaitForEvent("Never")
			ctx.Join(act, ev)
			return joinOutputs(",", act, ev)
		}).
		MustAddOrchestration("Queue", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			g, err := call(ctx, "Gate", in)
			if err != nil {
				return "", err
			}
			m, err := ctx.Dequeue("Q").Get()
			return g + "|" + m, err
		}).
		MustAddOrchestration("RaceActivity", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return raceSecond(ctx, ctx.ScheduleActivity("Slow", "y"))
		}).
		MustAddOrchestration("WaitForever", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.WaitForEvent("Never").Get()
		}).
		MustAddOrchestration("RaceChild", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return raceSecond(ctx, ctx.ScheduleSubOrchestration("WaitForever", "z"))
		}).
		MustAddOrchestration("CanQueue", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			if in == "start" {
				if _, err := call(ctx, "Gate", "c"); err != nil {
					return "", err
				}
				m, err := ctx.Dequeue("Q").Get()
				if err != nil {
					return "", err
				}
				ctx.ContinueAsNew("next:" + m)
			}
			m, err := ctx.Dequeue("Q").Get()
			return in + "|" + m, err
		}).
		MustAddOrchestration("Spawner", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			ctx.StartOrchestration("det-17", "Child", "d")
			return ctx.ScheduleSubOrchestration("Child", "e", durable.WithInstanceID("explicit-17")).Get()
		}).
		MustAddOrchestration("LateSub", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			g, err := call(ctx, "Gate", "e")
			if err != nil {
				return "", err
			}
			v, err := ctx.WaitForEvent("E").Get()
			return g + "|" + v, err
		})
}

// runRecordedScenario runs one scenario with the recording's runtime options (one
// orchestration dispatcher, one worker, 1s cancellation grace) on a frozen clock,
// then compares its outcome, its instances, their executions and every event.
func runRecordedScenario(t *testing.T, sc recordedScenario) {
	rec := loadRecording(t, sc.name)
	d := &recordedRig{gates: map[string]chan struct{}{}, flaky: map[string]int{}}
	d.h = startHarness(t, d.registry(), durable.Options{
		OrchestrationConcurrency: 1, WorkerConcurrency: 1, ActivityCancellationGracePeriod: time.Second,
	}, true)
	h := d.h
	inst := "s-" + sc.name
	h.start(inst, sc.orchestration, sc.input)
	if sc.drive != nil {
		sc.drive(d, inst)
	}

	st := h.wait(inst)
	switch want := rec.Output; {
	case want.Status == "Completed" && want.Output != nil:
		if st.Status != durable.StatusCompleted || st.Output != *want.Output {
			t.Errorf("%s: status %v output %q failure %q; want Completed %q", inst, st.Status, st.Output, st.FailureMessage(), *want.Output)
		}
	case want.Status == "Failed" && want.Error != nil:
		if st.Status != durable.StatusFailed || st.FailureMessage() != *want.Error {
			t.Errorf("%s: status %v output %q failure %q; want Failed %q", inst, st.Status, st.Output, st.FailureMessage(), *want.Error)
		}
	default:
		t.Fatalf("recording %s: unexpected outcome %+v", sc.name, want)
	}

	var wantInstances []string
	for id := range rec.Instances {
		wantInstances = append(wantInstances, id)
		h.wait(id) // children too: every recorded instance ended
	}
	sort.Strings(wantInstances)
	gotInstances, err := h.client.Admin().ListInstances(h.ctx)
	sort.Strings(gotInstances)
	if err != nil || !slices.Equal(gotInstances, wantInstances) {
		t.Errorf("instances %v (%v), want %v", gotInstances, err, wantInstances)
	}

	clockMs := uint64(h.now.UnixMilli())
	for _, id := range wantInstances {
		var wantExecs []uint64
		for e := range rec.Instances[id] {
			n, err := strconv.ParseUint(e, 10, 64)
			if err != nil {
				t.Fatalf("recording %s: execution id %q: %v", sc.name, e, err)
			}
			wantExecs = append(wantExecs, n)
		}
		slices.Sort(wantExecs)
		h.wantExecutions(id, wantExecs...)
		for _, exec := range wantExecs {
			want := decodeRecorded(t, rec.Instances[id][strconv.FormatUint(exec, 10)])
			got := h.execHistory(id, exec)
			for _, ev := range got {
				if ev.DuroxideVersion != duroxide.CurrentDuroxideVersion {
					t.Errorf("%s exec %d event %d: duroxide_version %q, want %q", id, exec, ev.EventID, ev.DuroxideVersion, duroxide.CurrentDuroxideVersion)
				}
			}
			// The recording's delays are relative to the time each timer or value
			// was written; ours to the frozen clock every delay was added to.
			compareEncoded(t, fmt.Sprintf("%s exec %d", id, exec),
				maskEvents(t, want, func(ev duroxide.Event, byID map[uint64]duroxide.Event) uint64 {
					if _, fired := ev.Kind.(duroxide.TimerFiredEvent); fired && ev.SourceEventID != nil {
						return byID[*ev.SourceEventID].TimestampMs
					}
					return ev.TimestampMs
				}),
				maskEvents(t, got, func(duroxide.Event, map[uint64]duroxide.Event) uint64 { return clockMs }))
		}
	}
}

// loadRecording reads testdata/recorded/<name>.json.
func loadRecording(t *testing.T, name string) recording {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "recorded", name+".json"))
	if err != nil {
		t.Fatalf("recording %s: %v", name, err)
	}
	var rec recording
	if err := json.Unmarshal(data, &rec); err != nil || rec.Scenario != name || len(rec.Instances) == 0 {
		t.Fatalf("recording %s: %v (scenario %q, %d instances)", name, err, rec.Scenario, len(rec.Instances))
	}
	return rec
}

// decodeRecorded decodes recorded events with the strict wire codec and requires
// each to encode back to exactly the bytes duroxide's serde wrote, so comparing
// encodings below compares with those bytes.
func decodeRecorded(t *testing.T, raws []json.RawMessage) []duroxide.Event {
	t.Helper()
	out := make([]duroxide.Event, len(raws))
	for i, raw := range raws {
		if err := out[i].UnmarshalJSON(raw); err != nil {
			t.Fatalf("recorded event %s does not decode: %v", raw, err)
		}
		again, err := out[i].MarshalJSON()
		if err != nil || !bytes.Equal(again, raw) {
			t.Fatalf("recorded event does not re-encode to its bytes (%v)\n recorded %s\n encoded  %s", err, raw, again)
		}
	}
	return out
}

var (
	recordedGUID = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	recordedMs   = regexp.MustCompile(`^[1-9][0-9]*$`)
)

// maskEvents replaces what is time or randomness with values both sides share:
// timestamp_ms and duroxide_version are blanked, a timer's fire_at_ms becomes its
// delay and a KeyValueSet's last_updated_at_ms its offset (both relative to the time
// base gives for the event), and a new_guid or utc_now_ms result, once checked for
// its shape, becomes a placeholder.
func maskEvents(t *testing.T, events []duroxide.Event, base func(ev duroxide.Event, byID map[uint64]duroxide.Event) uint64) []duroxide.Event {
	t.Helper()
	byID := make(map[uint64]duroxide.Event, len(events))
	for _, ev := range events {
		byID[ev.EventID] = ev
	}
	out := make([]duroxide.Event, len(events))
	for i, ev := range events {
		from := base(ev, byID)
		switch k := ev.Kind.(type) {
		case duroxide.TimerCreatedEvent:
			ev.Kind = duroxide.TimerCreatedEvent{FireAtMs: k.FireAtMs - from}
		case duroxide.TimerFiredEvent:
			ev.Kind = duroxide.TimerFiredEvent{FireAtMs: k.FireAtMs - from}
		case duroxide.KeyValueSetEvent:
			k.LastUpdatedAtMs -= from
			ev.Kind = k
		case duroxide.ActivityCompletedEvent:
			if ev.SourceEventID == nil {
				break
			}
			sched, _ := byID[*ev.SourceEventID].Kind.(duroxide.ActivityScheduledEvent)
			shape, placeholder := map[string]*regexp.Regexp{
				"__duroxide_syscall:new_guid":   recordedGUID,
				"__duroxide_syscall:utc_now_ms": recordedMs,
			}[sched.Name], "<"+strings.TrimPrefix(sched.Name, "__duroxide_syscall:")+">"
			if shape == nil {
				break
			}
			if !shape.MatchString(k.Result) {
				t.Errorf("%s event %d: %s result %q has the wrong shape", ev.InstanceID, ev.EventID, sched.Name, k.Result)
			}
			ev.Kind = duroxide.ActivityCompletedEvent{Result: placeholder}
		}
		ev.TimestampMs, ev.DuroxideVersion = 0, ""
		out[i] = ev
	}
	return out
}

// compareEncoded requires the two histories to encode to the same bytes, event by
// event, and reports each difference with both encodings.
func compareEncoded(t *testing.T, what string, want, got []duroxide.Event) {
	t.Helper()
	encode := func(ev duroxide.Event) []byte {
		data, err := ev.MarshalJSON()
		if err != nil {
			t.Fatalf("%s: event %d does not encode: %v", what, ev.EventID, err)
		}
		return data
	}
	for i := range max(len(want), len(got)) {
		switch {
		case i >= len(got):
			t.Errorf("%s: missing event #%d, want %s", what, i+1, encode(want[i]))
		case i >= len(want):
			t.Errorf("%s: unexpected event #%d: %s", what, i+1, encode(got[i]))
		default:
			if w, g := encode(want[i]), encode(got[i]); !bytes.Equal(w, g) {
				t.Errorf("%s: event #%d differs\n want %s\n  got %s", what, i+1, w, g)
			}
		}
	}
}
