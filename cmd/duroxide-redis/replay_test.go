package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// TestHistoryAllJSONReplays exports instances with `history --all --json`
// and replays the export with the library replayer: the code that wrote them
// replays clean (a child, KV and custom status; a continue-as-new chain),
// changed code is reported at the event where it parts.
func TestHistoryAllJSONReplays(t *testing.T) {
	t.Parallel()
	d := greeted(t)
	d.finish(t, "loop-1", "Loop", "1")

	for _, inst := range []string{"greet-1", "loop-1"} {
		r := d.cli("history", inst, "--all", "--json")
		expect(t, r, 0)
		if err := durable.ReplayHistoryJSON(testRegistry(), strings.NewReader(r.stdout)); err != nil {
			t.Errorf("%s: replay of the export: %v", inst, err)
		}
	}
	// one execution, as plain `history --json` prints it, replays too
	r := d.cli("history", "loop-1", "--execution", "2", "--json")
	expect(t, r, 0)
	if err := durable.ReplayHistoryJSON(testRegistry(), strings.NewReader(r.stdout)); err != nil {
		t.Errorf("execution 2 alone: %v", err)
	}

	r = d.cli("history", "greet-1", "--all", "--json")
	changed := durable.NewRegistry().MustAddOrchestration("Greet", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		ctx.SetValue("greeted", in)
		ctx.SetCustomStatus("greeting")
		return ctx.ScheduleActivity("Wave", in).Get()
	})
	var re *durable.ReplayError
	if err := durable.ReplayHistoryJSON(changed, strings.NewReader(r.stdout)); !errors.As(err, &re) || re.Instance != "greet-1" ||
		!strings.HasPrefix(re.Expected, "ActivityScheduled") || !strings.Contains(re.Got, "Wave") {
		t.Errorf("changed Greet: %v, want a ReplayError naming the Hello schedule and the Wave call", err)
	}

	expect(t, d.cli("history", "loop-1", "--all"), 0, "execution 1", "execution 2", "execution 3", "input=2", "output=looped 3")
	expectFailure(t, d.cli("history", "loop-1", "--all", "--execution", "1"), exitInvalid, "--all and --execution exclude each other")
	expectFailure(t, d.cli("history", "nope", "--all"), exitNotFound, "instance nope not found")
}
