package durable_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// loggingRegistry logs from an activity and from orchestration code.
func loggingRegistry() *durable.Registry {
	reg := durable.NewRegistry()
	reg.MustAddActivity("Note", func(ac *durable.ActivityContext, in string) (string, error) {
		ac.Logger().Warn("activity-says", "in", in)
		return in, nil
	})
	reg.MustAddOrchestration("Noting", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		ctx.Logger().Warn("orchestration-says")
		return ctx.ScheduleActivity("Note", in).Get()
	})
	return reg
}

// Not parallel: it swaps the process-wide default logger.
func TestLogsGoToTheCallersLoggerNeverTheGlobalOne(t *testing.T) {
	var global bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&global, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })

	env := durabletest.Start(t, loggingRegistry())
	if st := env.StartAndWait(t, "quiet", "Noting", "x"); st.Status != durable.StatusCompleted {
		t.Fatalf("status %v", st)
	}
	if global.Len() != 0 {
		t.Errorf("a runtime without Options.Logger wrote to slog.Default():\n%s", global.String())
	}

	var mine bytes.Buffer
	opts := durable.Options{LongPollTimeout: durabletest.ShutdownGrace / 10,
		Logger: slog.New(slog.NewTextHandler(&mine, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	env2 := durabletest.Start(t, loggingRegistry(), durabletest.WithOptions(opts))
	if st := env2.StartAndWait(t, "loud", "Noting", "y"); st.Status != durable.StatusCompleted {
		t.Fatalf("status %v", st)
	}
	for _, want := range []string{"activity-says", "orchestration-says"} {
		if !strings.Contains(mine.String(), want) {
			t.Errorf("the caller's logger lacks %q:\n%s", want, mine.String())
		}
	}
	if strings.Contains(mine.String(), "level=INFO") {
		t.Errorf("the runtime logged at Info during a plain run:\n%s", mine.String())
	}
	if global.Len() != 0 {
		t.Errorf("slog.Default() received records:\n%s", global.String())
	}
}
