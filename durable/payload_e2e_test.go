package durable_test

import (
	"strings"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// limitPayload is n bytes of text with some of what storage escapes or
// must keep intact: a control character (six bytes once JSON-escaped), a
// quote, a backslash and multi-byte UTF-8 among plain ASCII. Mostly ASCII,
// so the test stays quick under the race detector.
func limitPayload(n int) string {
	unit := "\x01\"\\é" + strings.Repeat("a", 59)
	s := strings.Repeat(unit, n/len(unit))
	return s + strings.Repeat("z", n-len(s))
}

// TestE2EPayloadAtTheLimitPassesThrough: an orchestration input of exactly
// MaxPayloadBytes goes to an activity, comes back as its result and
// becomes the output, on every backend: the default limit is one the
// runtime and the storage carry, not only one the client accepts.
func TestE2EPayloadAtTheLimitPassesThrough(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, func(t *testing.T, b durabletest.Backend) {
		reg := durable.NewRegistry()
		reg.MustAddActivity("Echo", func(_ *durable.ActivityContext, in string) (string, error) { return in, nil })
		reg.MustAddOrchestration("PassThrough", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			return ctx.ScheduleActivity("Echo", in).Get()
		})
		env := durabletest.Start(t, reg, durabletest.WithBackend(b))
		in := limitPayload(durable.MaxPayloadBytes)
		if len(in) != durable.MaxPayloadBytes {
			t.Fatalf("payload of %d bytes", len(in))
		}
		st := env.StartAndWait(t, "big", "PassThrough", in)
		if st.Status != durable.StatusCompleted {
			t.Fatalf("status %v: %s", st.Status, st.FailureMessage())
		}
		if st.Output != in {
			t.Fatalf("output of %d bytes differs from the input of %d", len(st.Output), len(in))
		}
	})
}
