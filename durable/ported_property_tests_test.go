package durable_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/property_tests.rs (proptest, 20 cases each):
// properties of the histories of generated orchestrations. The cases come
// from a seeded generator, so a failure names a case that can be rerun.

const propertyCases = 12

// propName is an orchestration name like duroxide's [A-Za-z][A-Za-z0-9]{0,20}.
func propName(r *rand.Rand) string {
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	const alnum = letters + "0123456789"
	b := []byte{letters[r.IntN(len(letters))]}
	for range r.IntN(21) {
		b = append(b, alnum[r.IntN(len(alnum))])
	}
	return string(b)
}

// propInput is an input like duroxide's [a-z0-9]{0,10}.
func propInput(r *rand.Rand) string {
	const chars = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, r.IntN(11))
	for i := range b {
		b[i] = chars[r.IntN(len(chars))]
	}
	return string(b)
}

// propCase is one generated orchestration: name, input and activity count.
type propCase struct {
	name, input string
	activities  int
}

// runPropertyCases registers and runs the generated cases in one Env and
// checks each history with check.
func runPropertyCases(t *testing.T, seed uint64, minActs, maxActs int, check func(c propCase, hist []duroxide.Event) error) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed))
	reg := durable.NewRegistry()
	for i := range maxActs {
		reg.MustAddActivity("Act"+strconv.Itoa(i), func(_ *durable.ActivityContext, in string) (string, error) { return "done-" + in, nil })
	}
	var cases []propCase
	seen := map[string]bool{}
	for len(cases) < propertyCases {
		c := propCase{name: propName(r), input: propInput(r), activities: minActs + r.IntN(maxActs-minActs+1)}
		if seen[c.name] {
			continue
		}
		seen[c.name] = true
		cases = append(cases, c)
		reg.MustAddOrchestration(c.name, func(ctx *durable.OrchestrationContext, in string) (string, error) {
			for i := range c.activities {
				if _, err := ctx.ScheduleActivity("Act"+strconv.Itoa(i), in).Get(); err != nil {
					return "", err
				}
			}
			return in, nil
		})
	}
	env := durabletest.Start(t, reg)
	for _, c := range cases {
		if err := env.Client.StartOrchestration(t.Context(), "test-"+c.name, c.name, c.input); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cases {
		mustComplete(t, env.Wait(t, "test-"+c.name), c.input)
		if err := check(c, read(t, env, "test-"+c.name)); err != nil {
			t.Errorf("seed %d, case %+v: %v", seed, c, err)
		}
	}
}

// TestHistoryProperties mirrors prop_event_ids_monotonic, prop_single_terminal_state,
// prop_activity_lifecycle and prop_history_event_count_bounds.
func TestHistoryProperties(t *testing.T) {
	t.Parallel()
	terminal := func(e duroxide.Event) bool {
		switch e.Kind.(type) {
		case duroxide.OrchestrationCompletedEvent, duroxide.OrchestrationFailedEvent, duroxide.OrchestrationContinuedAsNewEvent:
			return true
		}
		return false
	}
	props := []struct {
		name             string
		minActs, maxActs int
		check            func(c propCase, hist []duroxide.Event) error
	}{
		{"prop_event_ids_monotonic", 1, 1, func(_ propCase, hist []duroxide.Event) error {
			for i, e := range hist {
				if e.EventID != uint64(i+1) {
					return fmt.Errorf("event %d has id %d: ids not 1..n", i, e.EventID)
				}
			}
			return nil
		}},
		{"prop_single_terminal_state", 0, 0, func(_ propCase, hist []duroxide.Event) error {
			n := 0
			for _, e := range hist {
				if terminal(e) {
					n++
				}
			}
			if n != 1 || !terminal(hist[len(hist)-1]) {
				return fmt.Errorf("%d terminal events, last %s: want exactly one, last", n, hist[len(hist)-1].Kind.EventType())
			}
			return nil
		}},
		{"prop_activity_lifecycle", 1, 3, func(c propCase, hist []duroxide.Event) error {
			scheduled, completed := map[uint64]bool{}, map[uint64]bool{}
			for _, e := range hist {
				switch e.Kind.(type) {
				case duroxide.ActivityScheduledEvent:
					scheduled[e.EventID] = true
				case duroxide.ActivityCompletedEvent, duroxide.ActivityFailedEvent:
					completed[*e.SourceEventID] = true
				}
			}
			if len(scheduled) != c.activities || len(completed) != len(scheduled) {
				return fmt.Errorf("%d scheduled, %d completed, want %d each", len(scheduled), len(completed), c.activities)
			}
			for id := range scheduled {
				if !completed[id] {
					return fmt.Errorf("activity %d never completed", id)
				}
			}
			return nil
		}},
		{"prop_history_event_count_bounds", 0, 3, func(c propCase, hist []duroxide.Event) error {
			// started + (scheduled, completed) per activity + terminal
			if want := 2 + 2*c.activities; len(hist) != want {
				return fmt.Errorf("%d events, want %d", len(hist), want)
			}
			return nil
		}},
	}
	for i, p := range props {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			runPropertyCases(t, uint64(20260+i), p.minActs, max(p.maxActs, 1), p.check)
		})
	}
}
