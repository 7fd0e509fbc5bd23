package redisprovider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// orchLimitOf returns the orchestration limit of name as Limits lists it.
func orchLimitOf(ctx context.Context, t *testing.T, p duroxide.FlowController, name string) duroxide.Limit {
	t.Helper()
	ls, err := p.Limits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		if l.Kind == duroxide.OrchestrationName && l.Name == name {
			return l
		}
	}
	t.Fatalf("Limits = %+v: no orchestration limit %s", ls, name)
	return duroxide.Limit{}
}

// fetchOrch fetches one orchestration item (nil: none).
func fetchOrch(ctx context.Context, t *testing.T, p duroxide.Provider) *duroxide.OrchestrationItem {
	t.Helper()
	item, err := p.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return item
}

// completedAs is the first turn of inst that completes it at once.
func completedAs(inst, name string) duroxide.OrchestrationCommit {
	c := startedAs(inst, name)
	out := `""`
	c.Metadata.Status, c.Metadata.Output = "Completed", &out
	return c
}

// The scripts of the limit on running instances: starts queued before the
// limit are admitted when a fetch picks them (the others held there), a
// start enqueued under it is held when it is filed, a held start reads as
// pending by the limit, and each completion lets the oldest held start run:
// the fetch order is the start order, one at a time. A start of another name
// is not held, and the activity limit of the same name is another limit.
func TestOrchestrationLimitScriptsAdmitAndRelease(t *testing.T) {
	t.Parallel()
	_, p := newMiniProvider(t)
	ctx := context.Background()
	for _, inst := range []string{"a", "b", "c"} {
		if err := p.EnqueueForOrchestrator(ctx, orchStart(inst, "O"), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.SetLimit(ctx, duroxide.Limit{Kind: duroxide.OrchestrationName, Name: "O", Concurrency: 1}); err != nil {
		t.Fatal(err)
	}
	if err := p.SetLimit(ctx, duroxide.Limit{Name: "O", Concurrency: 9}); err != nil {
		t.Fatal(err)
	}
	first := fetchOrch(ctx, t, p)
	if first == nil || first.Instance != "a" {
		t.Fatalf("first fetch %+v, want a", first)
	}
	if err := p.AckOrchestrationItem(ctx, first.LockToken, startedAs("a", "O")); err != nil {
		t.Fatal(err)
	}
	// b and c, filed before the limit, are held when picked
	if item := fetchOrch(ctx, t, p); item != nil {
		t.Fatalf("fetched %s while a holds the only slot", item.Instance)
	}
	if err := p.EnqueueForOrchestrator(ctx, orchStart("d", "O"), 0); err != nil {
		t.Fatal(err)
	}
	if l := orchLimitOf(ctx, t, p, "O"); l.Concurrency != 1 || l.Running != 1 || l.Held != 3 {
		t.Fatalf("limit %+v, want concurrency 1, 1 running, 3 held", l)
	}
	note, err := p.PendingStart(ctx, "d")
	if err != nil || note == nil || note.Orchestration != "O" || !strings.Contains(note.Reason, "limit on running instances") {
		t.Fatalf("PendingStart(d) = %+v, %v; want held by the limit of O", note, err)
	}
	// another name runs
	if err := p.EnqueueForOrchestrator(ctx, orchStart("x", "X"), 0); err != nil {
		t.Fatal(err)
	}
	if got := fetchInstances(ctx, t, p, func(inst string) duroxide.OrchestrationCommit { return completedAs(inst, "X") }); !slices.Equal(got, []string{"x"}) {
		t.Fatalf("fetched %v, want x alone", got)
	}
	// a completes (an event makes it run a turn): the held run one by one
	if err := p.EnqueueForOrchestrator(ctx, duroxide.ExternalRaised{Instance: "a", Name: "go", Data: `""`}, 0); err != nil {
		t.Fatal(err)
	}
	item := fetchOrch(ctx, t, p)
	if item == nil || item.Instance != "a" {
		t.Fatalf("fetched %+v, want a's event", item)
	}
	done := duroxide.OrchestrationCommit{ExecutionID: 1, Metadata: duroxide.ExecutionMetadata{Status: "Completed"}}
	if err := p.AckOrchestrationItem(ctx, item.LockToken, done); err != nil {
		t.Fatal(err)
	}
	var order []string
	for {
		item := fetchOrch(ctx, t, p)
		if item == nil {
			break
		}
		order = append(order, item.Instance)
		if next := fetchOrch(ctx, t, p); next != nil {
			t.Fatalf("fetched %s while %s holds the only slot", next.Instance, item.Instance)
		}
		if err := p.AckOrchestrationItem(ctx, item.LockToken, completedAs(item.Instance, "O")); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"b", "c", "d"}; !slices.Equal(order, want) {
		t.Fatalf("released %v, want %v (start order)", order, want)
	}
	if l := orchLimitOf(ctx, t, p, "O"); l.Running != 0 || l.Held != 0 {
		t.Fatalf("limit %+v, want none running or held", l)
	}
	ls, err := p.Limits(ctx)
	if err != nil || len(ls) != 2 || ls[0].Kind != duroxide.ActivityName || ls[0].Concurrency != 9 {
		t.Fatalf("Limits = %+v, %v; want the activity limit O (9) then the orchestration limit O", ls, err)
	}
}

// Raising the limit runs held starts at once; deleting it runs the rest.
func TestOrchestrationLimitScriptsRaiseAndDelete(t *testing.T) {
	t.Parallel()
	_, p := newMiniProvider(t)
	ctx := context.Background()
	if err := p.SetLimit(ctx, duroxide.Limit{Kind: duroxide.OrchestrationName, Name: "O", Concurrency: 1}); err != nil {
		t.Fatal(err)
	}
	for _, inst := range []string{"a", "b", "c", "d"} {
		if err := p.EnqueueForOrchestrator(ctx, orchStart(inst, "O"), 0); err != nil {
			t.Fatal(err)
		}
	}
	keep := func(inst string) duroxide.OrchestrationCommit { return startedAs(inst, "O") }
	if got := fetchInstances(ctx, t, p, keep); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("fetched %v, want a", got)
	}
	if err := p.SetLimit(ctx, duroxide.Limit{Kind: duroxide.OrchestrationName, Name: "O", Concurrency: 2}); err != nil {
		t.Fatal(err)
	}
	if got := fetchInstances(ctx, t, p, keep); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("after raising to 2 fetched %v, want b", got)
	}
	had, err := p.DeleteLimit(ctx, duroxide.OrchestrationName, "O")
	if err != nil || !had {
		t.Fatalf("DeleteLimit = %v, %v", had, err)
	}
	if got := fetchInstances(ctx, t, p, keep); !slices.Equal(got, []string{"c", "d"}) {
		t.Fatalf("after the delete fetched %v, want c, d", got)
	}
	if had, err := p.DeleteLimit(ctx, duroxide.OrchestrationName, "O"); err != nil || had {
		t.Fatalf("DeleteLimit again = %v, %v; want false", had, err)
	}
}

// Over partitions each holds its share, and Limits reports the sums.
func TestOrchestrationLimitSharesOverPartitions(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	pp, err := New(context.Background(), Options{URL: "redis://" + m.Addr() + "/0", Namespace: "olp", Partitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pp.Close() })
	ctx := context.Background()
	if err := pp.SetLimit(ctx, duroxide.Limit{Kind: duroxide.OrchestrationName, Name: "O", Concurrency: 4}); err != nil {
		t.Fatal(err)
	}
	shares := []int{}
	for _, part := range pp.parts {
		l := orchLimitOf(ctx, t, part, "O")
		shares = append(shares, l.Concurrency)
	}
	if !slices.Equal(shares, []int{2, 1, 1}) {
		t.Fatalf("shares %v, want 2, 1, 1", shares)
	}
	if l := orchLimitOf(ctx, t, pp, "O"); l.Concurrency != 4 {
		t.Fatalf("Limits: %+v, want the sum 4", l)
	}
	// 12 starts: each partition runs its share, holds the rest
	for i := range 12 {
		if err := pp.EnqueueForOrchestrator(ctx, orchStart(fmt.Sprintf("i%d", i), "O"), 0); err != nil {
			t.Fatal(err)
		}
	}
	fetched := 0
	for {
		item, err := pp.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if item == nil {
			break
		}
		fetched++
	}
	l := orchLimitOf(ctx, t, pp, "O")
	if fetched > 4 || fetched == 0 || l.Running != fetched || l.Held != 12-fetched {
		t.Fatalf("fetched %d, limit %+v: want at most 4 running (the shares), the rest held", fetched, l)
	}
}

// An orchestration limit costs nothing where it is not set: with no flow
// setting no script touches its keys or reads the settings past their one
// EXISTS; with settings (a priority on another name) the scripts that file
// and fetch a new instance read the settings of its name in one HMGET, the
// priority, pause and limit together. Real Redis only: miniredis has no
// MONITOR.
func TestOrchestrationLimitCostsNothingUnset(t *testing.T) {
	p, rdb := openMonitored(t, "olimcost")
	ctx := context.Background()
	flowKey := p.keys.Flow()
	run := func(inst string) {
		if err := p.EnqueueForOrchestrator(ctx, orchStart(inst, "O"), 0); err != nil {
			t.Fatal(err)
		}
		item := fetchOrch(ctx, t, p)
		if item == nil || item.Instance != inst {
			t.Fatalf("fetch %+v, want %s", item, inst)
		}
		if err := p.AckOrchestrationItem(ctx, item.LockToken, completedAs(inst, "O")); err != nil {
			t.Fatal(err)
		}
	}
	count := func(lines []string) (scripts, flowReads, limitKeys int) {
		for _, l := range lines {
			lower := strings.ToLower(l)
			switch {
			case strings.Contains(lower, `"fcall"`) || strings.Contains(lower, `"evalsha"`) || strings.Contains(lower, `"eval"`):
				scripts++
			case strings.Contains(l, `"`+flowKey+`"`) && !strings.Contains(lower, `"exists"`):
				flowReads++
			}
			// the slot field ol rides on the lock's HMGET (with tok): no
			// command of its own
			ownOL := strings.Contains(l, `"ol"`) && !strings.Contains(l, `"tok"`)
			if strings.Contains(l, p.keys.OrchestrationRunning("O")) || strings.Contains(l, p.keys.OrchestrationHeld("O")) || ownOL || strings.Contains(l, `"lh"`) {
				limitKeys++
			}
		}
		return
	}
	scripts, reads, limitKeys := count(monitored(t, rdb, func() { run("a") }))
	if scripts != 3 || reads != 0 || limitKeys != 0 {
		t.Fatalf("unset: %d scripts, %d reads of the settings, %d commands on the limit's keys and fields; want 3, 0, 0", scripts, reads, limitKeys)
	}
	if _, err := p.SetPriority(ctx, duroxide.OrchestrationName, "Other", 2); err != nil {
		t.Fatal(err)
	}
	// enqueue and fetch read O's settings once each, the ack none
	if scripts, reads, limitKeys := count(monitored(t, rdb, func() { run("b") })); reads != 2 || limitKeys != 0 {
		t.Fatalf("a priority on another name: %d scripts, %d reads of the settings, %d on the limit's keys; want 2 reads (one HMGET per filing script), none on the limit", scripts, reads, limitKeys)
	}
}
