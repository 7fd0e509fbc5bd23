package chaos

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// WaitCompleted waits until every instance of ids is known complete: a nil
// ack completed it, or (when its completing ack failed with an unknown
// outcome) the provider reports it Completed.
func (c *Checker) WaitCompleted(ctx context.Context, p duroxide.Provider, ids []string) error {
	confirmed := map[string]bool{}
	for {
		left := 0
		for id, uncertain := range c.pending(ids) {
			if confirmed[id] {
				continue
			}
			if uncertain && isCompleted(ctx, p, id) {
				confirmed[id] = true
				continue
			}
			left++
		}
		if left == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d instances did not complete: %w", left, len(ids), ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// isCompleted asks the provider whether inst is Completed.
func isCompleted(ctx context.Context, p duroxide.Provider, inst string) bool {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	info, err := p.Admin().GetInstanceInfo(cctx, inst)
	return err == nil && info.Status == "Completed"
}

// Verify reads every instance of ids back (at rest: no dispatcher running)
// and checks the invariants on what is stored: one start, fanOut scheduled
// activities, exactly one result per activity and it is the result of the
// worker ack that returned nil, one completion as the last event, contiguous
// event ids, every event of every nil orchestration ack present byte for
// byte and none of an ack refused with a permanent error, the instance
// Completed and its KV state the final one. It returns the violations found,
// with those recorded while the runtimes ran.
func (c *Checker) Verify(ctx context.Context, p duroxide.Provider, ids []string, fanOut int) []string {
	for _, id := range ids {
		events, err := p.Read(ctx, id)
		if err != nil {
			c.Violationf("reading %s: %v", id, err)
			continue
		}
		for _, v := range c.checkHistory(id, events, fanOut) {
			c.Violationf("%s: %s", id, v)
		}
		if !isCompleted(ctx, p, id) {
			c.Violationf("%s: not Completed", id)
		}
		if kv, err := p.GetKVAllValues(ctx, id); err != nil || len(kv) != 1 || kv[ResultKey] != Output {
			c.Violationf("%s: KV state %v (err %v), want only %s=%q", id, kv, err, ResultKey, Output)
		}
	}
	return c.Violations()
}

// checkHistory checks one instance's history against the workload's shape
// and the ledger.
func (c *Checker) checkHistory(inst string, events []duroxide.Event, fanOut int) []string {
	var bad []string
	scheduled := map[uint64]bool{}
	results := map[uint64][]string{}
	completions := 0
	for i, e := range events {
		if e.EventID != uint64(i+1) {
			bad = append(bad, fmt.Sprintf("event at position %d has id %d", i, e.EventID))
		}
		switch k := e.Kind.(type) {
		case duroxide.ActivityScheduledEvent:
			scheduled[e.EventID] = true
		case duroxide.ActivityCompletedEvent:
			if e.SourceEventID == nil {
				bad = append(bad, fmt.Sprintf("event %d: completion without source", e.EventID))
				continue
			}
			results[*e.SourceEventID] = append(results[*e.SourceEventID], k.Result)
		case duroxide.OrchestrationCompletedEvent:
			completions++
			if i != len(events)-1 {
				bad = append(bad, fmt.Sprintf("event %d completes the orchestration but is not the last", e.EventID))
			}
		}
	}
	if len(events) == 0 {
		return append(bad, "no history")
	}
	if _, ok := events[0].Kind.(duroxide.OrchestrationStartedEvent); !ok {
		bad = append(bad, "first event is "+events[0].Kind.EventType())
	}
	if len(scheduled) != fanOut || completions != 1 {
		bad = append(bad, fmt.Sprintf("%d activities scheduled (want %d), %d completions (want 1)", len(scheduled), fanOut, completions))
	}
	bad = append(bad, c.checkResults(inst, scheduled, results)...)
	return append(bad, c.checkLedger(inst, events)...)
}

// checkResults checks that every scheduled activity has exactly one recorded
// result, the one whose worker ack returned nil (when one did).
func (c *Checker) checkResults(inst string, scheduled map[uint64]bool, results map[uint64][]string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var bad []string
	for id, rs := range results {
		if !scheduled[id] {
			bad = append(bad, fmt.Sprintf("result for activity %d that was never scheduled", id))
		}
		if len(rs) != 1 {
			bad = append(bad, fmt.Sprintf("activity %d has %d results recorded: %q", id, len(rs), rs))
		}
	}
	for id := range scheduled {
		rs := results[id]
		if len(rs) == 0 {
			bad = append(bad, fmt.Sprintf("activity %d has no result", id))
			continue
		}
		if want, ok := c.results[activityKey(inst, duroxide.InitialExecutionID, id)]; ok && rs[0] != want {
			bad = append(bad, fmt.Sprintf("activity %d: recorded %q, but the worker ack that returned nil sent %q", id, rs[0], want))
		}
		if c.rejected[rs[0]] {
			bad = append(bad, fmt.Sprintf("activity %d: recorded %q, but the worker ack that sent it returned a permanent error", id, rs[0]))
		}
	}
	return bad
}

// checkLedger checks that every event of every nil orchestration ack of the
// instance is stored exactly as it was sent, and that no event of an ack
// refused with a permanent error is (events carry their creation time, so
// another turn never produces the same JSON).
func (c *Checker) checkLedger(inst string, events []duroxide.Event) []string {
	c.mu.Lock()
	acked, refused := c.ledger[inst], c.refused[inst]
	c.mu.Unlock()
	var bad []string
	for _, want := range acked {
		got, exp, ok := storedAndSent(events, want)
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("acked event %d (%s) is missing", want.EventID, want.Kind.EventType()))
		case !bytes.Equal(got, exp):
			bad = append(bad, fmt.Sprintf("acked event %d differs from the stored one:\n  acked  %s\n  stored %s", want.EventID, exp, got))
		}
	}
	for _, not := range refused {
		if got, exp, ok := storedAndSent(events, not); ok && bytes.Equal(got, exp) {
			bad = append(bad, fmt.Sprintf("event %d (%s) is stored, but the ack that sent it returned a permanent error", not.EventID, not.Kind.EventType()))
		}
	}
	return bad
}

// storedAndSent returns the JSON of the stored event with e's id and of e;
// ok is false when no event with that id is stored.
func storedAndSent(events []duroxide.Event, e duroxide.Event) (stored, sent []byte, ok bool) {
	i := int(e.EventID) - 1
	if i < 0 || i >= len(events) {
		return nil, nil, false
	}
	stored, _ = events[i].MarshalJSON()
	sent, _ = e.MarshalJSON()
	return stored, sent, true
}
