package gwpeer

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cschleiden/go-workflows/backend/history"
	"github.com/cschleiden/go-workflows/workflow"
	"github.com/redis/go-redis/v9"
)

// recorder collects what a peer reports.
type recorder struct {
	mu         sync.Mutex
	finished   []string // instance ids, roots prefixed with "root:"
	activities int
	failures   []error
}

func (r *recorder) events() Events {
	return Events{
		Finished: func(inst string, root bool, failure error, _ time.Time) {
			r.mu.Lock()
			defer r.mu.Unlock()
			if root {
				inst = "root:" + inst
			}
			r.finished = append(r.finished, inst)
			if failure != nil {
				r.failures = append(r.failures, failure)
			}
		},
		Activity: func(time.Time) { r.mu.Lock(); r.activities++; r.mu.Unlock() },
	}
}

// waitRoots waits until n roots finished and returns the counts then.
func (r *recorder) waitRoots(t *testing.T, n int) (orchestrations, activities int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r.mu.Lock()
		roots := 0
		for _, f := range r.finished {
			if strings.HasPrefix(f, "root:") {
				roots++
			}
		}
		orchestrations, activities = len(r.finished), r.activities
		r.mu.Unlock()
		if roots >= n {
			return orchestrations, activities
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d roots finished after 20s (%d orchestrations, %d activities)", roots, n, orchestrations, activities)
		}
		time.Sleep(5 * time.Millisecond) // sleep: the poll interval of a wait on the reported completions
	}
}

// TestPeerRunsEachShapeUnderItsPrefix runs one fan-out, one tree and one
// sequence and checks the reported completions against the shapes, and that go-workflows
// wrote no key outside its prefix. It needs a real Redis: go-workflows
// stores instance state through cjson, and miniredis's cjson encodes an
// empty object as an array, which go-workflows then cannot read back.
func TestPeerRunsEachShapeUnderItsPrefix(t *testing.T) {
	url := os.Getenv("DUROXIDE_REDIS_URL")
	if url == "" {
		t.Skip("DUROXIDE_REDIS_URL is not set: go-workflows needs a real Redis (CI sets it)")
	}
	ro, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(ro)
	defer rdb.Close()
	ctx := context.Background()
	prefix := fmt.Sprintf("gw-test-%d:", time.Now().UnixNano())
	defer func() {
		keys, _ := rdb.Keys(ctx, prefix+"*").Result()
		if len(keys) > 0 {
			rdb.Del(ctx, keys...)
		}
	}()
	var rec recorder
	p, err := Start(ctx, rdb, prefix, 2, rec.events())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()

	if err := p.StartFanOut(ctx, "fan-1", FanOutInput{Activities: 5, Payload: "p"}); err != nil {
		t.Fatal(err)
	}
	if o, a := rec.waitRoots(t, 1); o != 1 || a != 5 {
		t.Fatalf("fan-out: %d orchestrations and %d activities finished, want 1 and 5", o, a)
	}
	if err := p.StartTree(ctx, "tree-1", TreeInput{Depth: 2, Width: 3, Payload: "p"}); err != nil {
		t.Fatal(err)
	}
	// 1 + 3 + 9 orchestrations, one activity per leaf, plus the fan-out's
	if o, a := rec.waitRoots(t, 2); o != 1+13 || a != 5+9 {
		t.Fatalf("tree: %d orchestrations and %d activities finished in all, want 14 and 14", o, a)
	}
	if err := p.StartSequence(ctx, "seq-1", SequenceInput{Activities: 3, Payload: "p"}); err != nil {
		t.Fatal(err)
	}
	if o, a := rec.waitRoots(t, 3); o != 14+1 || a != 14+3 {
		t.Fatalf("sequence: %d orchestrations and %d activities finished in all, want 15 and 17", o, a)
	}
	// started, then per activity at least its scheduling and its result, then finished
	if n, err := p.HistoryLength(ctx, "seq-1"); err != nil || n < 2*3+2 {
		t.Errorf("sequence of 3: history of %d events (%v), want at least 8", n, err)
	}
	if _, err := p.HistoryLength(ctx, "never-started"); err == nil {
		t.Error("HistoryLength of an instance this peer never started did not fail")
	}
	if len(rec.failures) > 0 {
		t.Fatalf("orchestrations failed: %v", rec.failures)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	// the instances' own keys carry their ids: each must be under the prefix
	for _, id := range []string{"fan-1", "tree-1", "seq-1"} {
		all, err := rdb.Keys(ctx, "*"+id+"*").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(all) == 0 {
			t.Errorf("no key names instance %s: the check below would prove nothing", id)
		}
		for _, k := range all {
			if !strings.HasPrefix(k, prefix) {
				t.Errorf("key %q outside the peer's prefix %q", k, prefix)
			}
		}
	}
	if p.KeyPattern() != prefix+"*" {
		t.Errorf("KeyPattern %q", p.KeyPattern())
	}
}

// TestCompletionOnlyOnTheFinishingTask: a task of an instance that is
// already finished commits the finished state without a completion event,
// and must not be reported as a second completion.
func TestCompletionOnlyOnTheFinishingTask(t *testing.T) {
	t.Parallel()
	ev := func(typ history.EventType, attr any) *history.Event {
		return history.NewHistoryEvent(1, time.Now(), typ, attr)
	}
	started := ev(history.EventType_WorkflowTaskStarted, &history.WorkflowTaskStartedAttributes{})
	for _, tc := range []struct {
		name     string
		executed []*history.Event
		done     bool
		failure  string
	}{
		{"later task of a finished instance", nil, false, ""},
		{"task without completion", []*history.Event{started}, false, ""},
		{"completed", []*history.Event{started, ev(history.EventType_WorkflowExecutionFinished, &history.ExecutionCompletedAttributes{})}, true, ""},
		{"failed", []*history.Event{started, ev(history.EventType_WorkflowExecutionFinished,
			&history.ExecutionCompletedAttributes{Error: &workflow.Error{Message: "workflow history size exceeded 10000 events"}})},
			true, "workflow history size exceeded 10000 events"},
	} {
		done, failure := completion(tc.executed)
		got := ""
		if failure != nil {
			got = failure.Error()
		}
		if done != tc.done || got != tc.failure {
			t.Errorf("%s: completion = %v, %q; want %v, %q", tc.name, done, got, tc.done, tc.failure)
		}
	}
}
