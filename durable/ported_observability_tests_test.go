package durable_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// Ports of duroxide's tests/observability_tests.rs that concern the
// runtime's logs. Its metrics tests map onto extra/dxotel (see
// docs/observability.md and the table); duroxide's trace_info/trace_warn/...
// are the slog.Logger of each context here, at the same four levels.

// TestTracingEmitsAllLevels mirrors activity_tracing_emits_all_levels and
// orchestration_tracing_emits_all_levels: records at debug, info, warn and
// error from user code reach Options.Logger with the correlation fields.
//
// Differs from duroxide: activity records carry instance_id, execution_id,
// activity_name, activity_id and worker_id, not orchestration_name, which
// the worker does not know without a provider read per activity
// (ActivityContext.OrchestrationName reads it on demand).
func TestTracingEmitsAllLevels(t *testing.T) {
	t.Parallel()
	levels := []slog.Level{slog.LevelInfo, slog.LevelWarn, slog.LevelError, slog.LevelDebug}
	logAll := func(l *slog.Logger, prefix string) {
		for _, lv := range levels {
			l.Log(t.Context(), lv, prefix+" "+lv.String())
		}
	}
	cases := []struct {
		name, instance, prefix string
		reg                    *durable.Registry
		want                   map[string]string // attributes every record must carry
		absent                 []string
	}{
		{"activity_tracing_emits_all_levels", "trace-activity-instance", "activity",
			durable.NewRegistry().
				MustAddActivity("TraceActivity", func(ctx *durable.ActivityContext, _ string) (string, error) {
					logAll(ctx.Logger(), "activity")
					return "ok", nil
				}).
				MustAddOrchestration("TraceOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
					return ctx.ScheduleActivity("TraceActivity", "payload").Get()
				}),
			map[string]string{"instance_id": "trace-activity-instance", "execution_id": "1", "activity_name": "TraceActivity", "activity_id": "2"},
			nil},
		{"orchestration_tracing_emits_all_levels", "trace-orch-instance", "orch",
			durable.NewRegistry().MustAddOrchestration("TraceOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
				logAll(ctx.Logger(), "orch")
				return "done", nil
			}),
			map[string]string{"instance_id": "trace-orch-instance", "execution_id": "1", "orchestration_name": "TraceOrch", "orchestration_version": "1.0.0"},
			[]string{"activity_name"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			logs := newRecordingHandler()
			env := durabletest.Start(t, c.reg, durabletest.WithOptions(durable.Options{LongPollTimeout: 100 * time.Millisecond, Logger: slog.New(logs)}))
			if st := env.StartAndWait(t, c.instance, "TraceOrch", ""); st.Status != durable.StatusCompleted {
				t.Fatalf("status %v: %s", st.Status, st.FailureMessage())
			}
			for _, lv := range levels {
				msg := c.prefix + " " + lv.String()
				var found []logRecord
				for _, r := range logs.find(lv, "instance_id", c.instance) {
					if r.msg == msg {
						found = append(found, r)
					}
				}
				if len(found) != 1 {
					t.Errorf("%d %s records %q, want 1 (the replay of the completing turn must not repeat it); all: %v", len(found), lv, msg, logs.messages())
					continue
				}
				for k, v := range c.want {
					if found[0].attrs[k] != v {
						t.Errorf("%q: %s = %q, want %q (attrs %v)", msg, k, found[0].attrs[k], v, found[0].attrs)
					}
				}
				for _, k := range c.absent {
					if _, ok := found[0].attrs[k]; ok {
						t.Errorf("%q carries %s", msg, k)
					}
				}
			}
		})
	}
}
