package redisprovider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// flowProvider is what the flow tests drive.
type flowProvider interface {
	duroxide.Provider
	duroxide.FlowController
	duroxide.InstancePauser
}

// act is an ActivityExecute of activity name with id id, of instance "i".
func act(name string, id uint64) duroxide.WorkItem {
	return duroxide.ActivityExecute{Instance: "i", ExecutionID: 1, ID: id, Name: name, Input: `""`}
}

// fetchActivities fetches and acks n worker items of p and returns their
// names and ids in fetch order. abandonFirst gives the first one back
// before its ack, so it is filed ready again (a retry).
func fetchActivities(ctx context.Context, t *testing.T, p duroxide.Provider, n int) []string {
	t.Helper()
	var out []string
	for range n {
		item, err := p.FetchWorkItem(ctx, time.Minute, 0, nil, duroxide.DefaultOnly())
		if err != nil {
			t.Fatal(err)
		}
		if item == nil {
			t.Fatalf("fetched %v, then nothing: want %d items", out, n)
		}
		a := item.Item.(duroxide.ActivityExecute)
		out = append(out, fmt.Sprintf("%s%d", a.Name, a.ID))
		done := duroxide.ActivityCompleted{Instance: a.Instance, ExecutionID: a.ExecutionID, ID: a.ID, Result: `""`}
		if err := p.AckWorkItem(ctx, item.LockToken, done); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// Higher priority activities are fetched first, in enqueue order within a
// priority; an abandoned one keeps its priority and its place; a name
// without priority keeps FIFO order.
func TestActivityPriorityOrdersTheQueue(t *testing.T) {
	t.Parallel()
	_, p := newMiniProvider(t)
	ctx := context.Background()
	if ok, err := p.SetPriority(ctx, duroxide.ActivityName, "hi", 5); err != nil || !ok {
		t.Fatalf("SetPriority: %v %v", ok, err)
	}
	if ok, err := p.SetPriority(ctx, duroxide.ActivityName, "hi", 5); err != nil || ok {
		t.Fatalf("SetPriority again: %v %v, want no change", ok, err)
	}
	items := []duroxide.WorkItem{act("lo", 1), act("lo", 2), act("hi", 3), act("lo", 4), act("hi", 5)}
	if err := p.EnqueueForWorkerBatch(ctx, items); err != nil {
		t.Fatal(err)
	}
	// the first fetch gives hi3 back: it is filed again, still first
	first, err := p.FetchWorkItem(ctx, time.Minute, 0, nil, duroxide.DefaultOnly())
	if err != nil || first == nil || first.Item.(duroxide.ActivityExecute).ID != 3 {
		t.Fatalf("first fetch %+v %v, want hi3", first, err)
	}
	if err := p.AbandonWorkItem(ctx, first.LockToken, 0, true); err != nil {
		t.Fatal(err)
	}
	got := fetchActivities(ctx, t, p, 5)
	if want := []string{"hi3", "hi5", "lo1", "lo2", "lo4"}; !slices.Equal(got, want) {
		t.Fatalf("fetch order %v, want %v", got, want)
	}
	// removing the priority: FIFO again
	if ok, err := p.SetPriority(ctx, duroxide.ActivityName, "hi", 0); err != nil || !ok {
		t.Fatalf("SetPriority 0: %v %v", ok, err)
	}
	if err := p.EnqueueForWorkerBatch(ctx, []duroxide.WorkItem{act("lo", 6), act("hi", 7)}); err != nil {
		t.Fatal(err)
	}
	if got, want := fetchActivities(ctx, t, p, 2), []string{"lo6", "hi7"}; !slices.Equal(got, want) {
		t.Fatalf("fetch order without priorities %v, want %v", got, want)
	}
}

// The starvation bound: with aging window W, an item is overtaken by at
// most Δp*W items of higher priority enqueued after it. Without aging it
// would wait behind all of them; without priorities, behind none.
func TestPriorityAgingBoundsStarvation(t *testing.T) {
	t.Parallel()
	_, p := newMiniProvider(t)
	ctx := context.Background()
	if _, err := p.SetAgingWindow(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := p.SetPriority(ctx, duroxide.ActivityName, "hi", 1); err != nil {
		t.Fatal(err)
	}
	items := []duroxide.WorkItem{act("lo", 1)}
	for i := range 8 {
		items = append(items, act("hi", uint64(10+i)))
	}
	if err := p.EnqueueForWorkerBatch(ctx, items); err != nil {
		t.Fatal(err)
	}
	got := fetchActivities(ctx, t, p, 9)
	at := slices.Index(got, "lo1")
	// hi10 and hi11 are enqueued less than W after lo1 and go first; hi12,
	// exactly W after, ties with it; every later one goes after it
	if at < 2 || at > 3 {
		t.Fatalf("fetch order %v: lo1 at %d, want 2 or 3 (1 priority step * window 3)", got, at)
	}
	fs, err := p.FlowSettings(ctx)
	if err != nil || fs.AgingWindow != 3 || fs.ActivityPriorities["hi"] != 1 {
		t.Fatalf("FlowSettings %+v %v", fs, err)
	}
}

// orchStart is a StartOrchestration of orchestration name.
func orchStart(inst, name string) duroxide.WorkItem {
	return duroxide.StartOrchestration{Instance: inst, Orchestration: name, Input: `""`, ExecutionID: duroxide.InitialExecutionID}
}

// startedAs is the first turn of inst as orchestration name.
func startedAs(inst, name string) duroxide.OrchestrationCommit {
	ev := duroxide.NewEvent(1, inst, 1, nil, duroxide.OrchestrationStartedEvent{Name: name, Version: "1.0.0", Input: `""`})
	return duroxide.OrchestrationCommit{ExecutionID: 1, HistoryDelta: []duroxide.Event{ev},
		Metadata: duroxide.ExecutionMetadata{OrchestrationName: name, OrchestrationVersion: "1.0.0"}}
}

// fetchInstances fetches (and acks with commit) orchestration items of p
// until none is left, and returns their instances in fetch order.
func fetchInstances(ctx context.Context, t *testing.T, p duroxide.Provider, commit func(inst string) duroxide.OrchestrationCommit) []string {
	t.Helper()
	var out []string
	for {
		item, err := p.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if item == nil {
			return out
		}
		out = append(out, item.Instance)
		if err := p.AckOrchestrationItem(ctx, item.LockToken, commit(item.Instance)); err != nil {
			t.Fatal(err)
		}
	}
}

// nameOf names the orchestration of the test instances: "H..." are "Hi".
func nameOf(inst string) string {
	if inst[0] == 'h' {
		return "Hi"
	}
	return "Lo"
}

// Instances of a higher priority orchestration are fetched first: new
// starts (named by their start, without record) and running instances
// (named by their record) alike; FIFO within a priority.
func TestOrchestrationPriorityOrdersTheQueue(t *testing.T) {
	t.Parallel()
	_, p := newMiniProvider(t)
	ctx := context.Background()
	if _, err := p.SetPriority(ctx, duroxide.OrchestrationName, "Hi", 2); err != nil {
		t.Fatal(err)
	}
	for _, inst := range []string{"l1", "l2", "h1", "l3", "h2"} {
		if err := p.EnqueueForOrchestrator(ctx, orchStart(inst, nameOf(inst)), 0); err != nil {
			t.Fatal(err)
		}
	}
	first := func(inst string) duroxide.OrchestrationCommit { return startedAs(inst, nameOf(inst)) }
	if got, want := fetchInstances(ctx, t, p, first), []string{"h1", "h2", "l1", "l2", "l3"}; !slices.Equal(got, want) {
		t.Fatalf("starts fetched %v, want %v", got, want)
	}
	for _, inst := range []string{"l2", "l1", "h2", "l3", "h1"} {
		if err := p.EnqueueForOrchestrator(ctx, duroxide.ExternalRaised{Instance: inst, Name: "e", Data: `""`}, 0); err != nil {
			t.Fatal(err)
		}
	}
	next := func(string) duroxide.OrchestrationCommit { return duroxide.OrchestrationCommit{ExecutionID: 1} }
	if got, want := fetchInstances(ctx, t, p, next), []string{"h2", "h1", "l2", "l1", "l3"}; !slices.Equal(got, want) {
		t.Fatalf("events fetched %v, want %v", got, want)
	}
}

// Bad settings are ErrInvalidInput errors naming the operation.
func TestFlowSettingsRejectBadInput(t *testing.T) {
	t.Parallel()
	_, p := newMiniProvider(t)
	ctx := context.Background()
	for _, c := range []struct {
		op  string
		run func() (bool, error)
	}{
		{"set_priority", func() (bool, error) { return p.SetPriority(ctx, duroxide.ActivityName, "a", 11) }},
		{"set_priority", func() (bool, error) { return p.SetPriority(ctx, duroxide.OrchestrationName, "o", -1) }},
		{"set_priority", func() (bool, error) { return p.SetPriority(ctx, duroxide.ActivityName, "", 1) }},
		{"set_priority", func() (bool, error) { return p.SetPriority(ctx, duroxide.NameKind(0), "a", 1) }},
		{"set_aging_window", func() (bool, error) { return p.SetAgingWindow(ctx, 1<<41) }},
		{"pause_orchestration_name", func() (bool, error) { return p.PauseOrchestrationName(ctx, "") }},
		{"resume_orchestration_name", func() (bool, error) { return p.ResumeOrchestrationName(ctx, "") }},
	} {
		_, err := c.run()
		var pe *duroxide.ProviderError
		if !errors.Is(err, duroxide.ErrInvalidInput) || !errors.As(err, &pe) || pe.Operation != c.op {
			t.Errorf("%s: %v, want an ErrInvalidInput of %s", c.op, err, c.op)
		}
	}
	if fs, err := p.FlowSettings(ctx); err != nil || len(fs.ActivityPriorities)+len(fs.OrchestrationPriorities)+len(fs.PausedNames) != 0 {
		t.Fatalf("settings after rejected calls: %+v %v", fs, err)
	}
}

// Pausing an orchestration name holds every instance of it: one filed
// ready before the pause (held when a fetch picks it), one that gets a
// message while paused, a new start; other names run. Resuming delivers
// them. The pause shows in each instance's pause state and in the settings.
func TestPauseOrchestrationName(t *testing.T) {
	t.Parallel()
	m, _ := newMiniProvider(t)
	url := "redis://" + m.Addr() + "/0"
	opens := map[string]func(ctx context.Context) (flowProvider, error){
		"provider": func(ctx context.Context) (flowProvider, error) {
			return openPartition(ctx, Options{URL: url, Namespace: "npause"})
		},
		"partitioned": func(ctx context.Context) (flowProvider, error) {
			return New(ctx, Options{URL: url, Namespace: "npause-p", Partitions: 3})
		},
	}
	if real := os.Getenv("DUROXIDE_REDIS_URL"); real != "" {
		ns := fmt.Sprintf("npause-%d", time.Now().UnixNano())
		opens["redis"] = func(ctx context.Context) (flowProvider, error) {
			return openPartition(ctx, Options{URL: real, Namespace: ns})
		}
	}
	for name, open := range opens {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			p, err := open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.(interface{ Close() error }).Close() })
			testPauseName(ctx, t, p)
		})
	}
}

func testPauseName(ctx context.Context, t *testing.T, p flowProvider) {
	first := func(inst string) duroxide.OrchestrationCommit { return startedAs(inst, nameOf(inst)) }
	next := func(string) duroxide.OrchestrationCommit { return duroxide.OrchestrationCommit{ExecutionID: 1} }
	raise := func(inst string) {
		t.Helper()
		if err := p.EnqueueForOrchestrator(ctx, duroxide.ExternalRaised{Instance: inst, Name: "e", Data: `""`}, 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, inst := range []string{"h1", "h2", "l1"} {
		if err := p.EnqueueForOrchestrator(ctx, orchStart(inst, nameOf(inst)), 0); err != nil {
			t.Fatal(err)
		}
	}
	if got := fetchInstances(ctx, t, p, first); len(got) != 3 {
		t.Fatalf("started %v", got)
	}
	raise("h1") // ready before the pause
	if ok, err := p.PauseOrchestrationName(ctx, "Hi"); err != nil || !ok {
		t.Fatalf("pause: %v %v", ok, err)
	}
	if ok, err := p.PauseOrchestrationName(ctx, "Hi"); err != nil || ok {
		t.Fatalf("second pause: %v %v, want no change", ok, err)
	}
	raise("h2") // filed while paused
	raise("l1")
	if err := p.EnqueueForOrchestrator(ctx, orchStart("h3", "Hi"), 0); err != nil {
		t.Fatal(err)
	}
	if got := fetchInstances(ctx, t, p, next); !slices.Equal(got, []string{"l1"}) {
		t.Fatalf("fetched %v while Hi is paused, want [l1]", got)
	}
	for _, inst := range []string{"h1", "h2"} {
		st, err := p.InstancePauseState(ctx, inst)
		if err != nil || !st.Paused || !st.NamePaused || st.SinceMs == 0 || st.Held != 1 {
			t.Fatalf("pause state of %s: %+v %v, want held by its name with 1 message", inst, st, err)
		}
		info, err := p.Admin().GetInstanceInfo(ctx, inst)
		if err != nil || info.Pause == nil || *info.Pause != st {
			t.Fatalf("GetInstanceInfo(%s).Pause = %+v %v, want %+v", inst, info.Pause, err, st)
		}
	}
	if st, err := p.InstancePauseState(ctx, "l1"); err != nil || st.Paused || st.NamePaused {
		t.Fatalf("pause state of l1: %+v %v", st, err)
	}
	fs, err := p.FlowSettings(ctx)
	if err != nil || fs.PausedNames["Hi"].SinceMs == 0 || fs.PausedNames["Hi"].Held != 3 {
		t.Fatalf("settings %+v %v, want Hi paused holding 3 instances", fs, err)
	}
	// resuming the instance alone does not release it from its name
	if _, err := p.PauseInstance(ctx, "h1"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ResumeInstance(ctx, "h1"); err != nil {
		t.Fatal(err)
	}
	if got := fetchInstances(ctx, t, p, next); len(got) != 0 {
		t.Fatalf("fetched %v, want nothing while Hi is paused", got)
	}
	if ok, err := p.ResumeOrchestrationName(ctx, "Hi"); err != nil || !ok {
		t.Fatalf("resume: %v %v", ok, err)
	}
	got := fetchInstances(ctx, t, p, func(inst string) duroxide.OrchestrationCommit {
		if inst == "h3" {
			return first(inst)
		}
		return next(inst)
	})
	slices.Sort(got)
	if !slices.Equal(got, []string{"h1", "h2", "h3"}) {
		t.Fatalf("fetched %v after resume, want h1 h2 h3", got)
	}
	if st, err := p.InstancePauseState(ctx, "h1"); err != nil || st.Paused || st.NamePaused {
		t.Fatalf("pause state after resume: %+v %v", st, err)
	}
	if fs, err := p.FlowSettings(ctx); err != nil || len(fs.PausedNames) != 0 {
		t.Fatalf("settings after resume %+v %v", fs, err)
	}
	if ok, err := p.ResumeOrchestrationName(ctx, "Hi"); err != nil || ok {
		t.Fatalf("second resume: %v %v, want no change", ok, err)
	}
}

// An ack-and-fetch weighs the instance its ack makes ready (kept aside,
// never filed) against the ready index by priority-shifted order too: the
// released instance of a higher priority goes before an older message of a
// lower one, and a ready instance of a higher priority before the released
// one's older message.
func TestPriorityWeighsTheInstanceKeptAside(t *testing.T) {
	t.Parallel()
	_, p := newMiniProvider(t)
	ctx := context.Background()
	if _, err := p.SetPriority(ctx, duroxide.OrchestrationName, "Hi", 1); err != nil {
		t.Fatal(err)
	}
	for _, inst := range []string{"h1", "l1"} {
		if err := p.EnqueueForOrchestrator(ctx, orchStart(inst, nameOf(inst)), 0); err != nil {
			t.Fatal(err)
		}
	}
	first := func(inst string) duroxide.OrchestrationCommit { return startedAs(inst, nameOf(inst)) }
	if got := fetchInstances(ctx, t, p, first); len(got) != 2 {
		t.Fatalf("started %v", got)
	}
	raise := func(inst string) {
		t.Helper()
		if err := p.EnqueueForOrchestrator(ctx, duroxide.ExternalRaised{Instance: inst, Name: "e", Data: `""`}, 0); err != nil {
			t.Fatal(err)
		}
	}
	next := duroxide.OrchestrationCommit{ExecutionID: 1}
	for _, c := range []struct{ locked, other string }{{"l1", "h1"}, {"h1", "l1"}} {
		raise(c.locked)
		item, err := p.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
		if err != nil || item == nil || item.Instance != c.locked {
			t.Fatalf("fetch %+v %v, want %s", item, err, c.locked)
		}
		raise(c.locked) // older: released with it, kept aside by the ack
		raise(c.other)  // newer, in the ready index
		got, err := p.AckOrchestrationItemAndFetch(ctx, item.LockToken, next, time.Minute, 0, nil)
		if err != nil || got == nil || got.Instance != "h1" {
			t.Fatalf("ack-and-fetch of %s: %+v %v, want h1 (priority 1)", c.locked, got, err)
		}
		if got := fetchInstances(ctx, t, p, func(string) duroxide.OrchestrationCommit { return next }); !slices.Equal(got, []string{"l1"}) {
			t.Fatalf("then fetched %v, want [l1]", got)
		}
		if err := p.AckOrchestrationItem(ctx, got.LockToken, next); err != nil {
			t.Fatal(err)
		}
	}
}

// A limited activity with a priority: it waits in its limit group, and the
// group is weighed against the plain items of its queue by its first item's
// priority-shifted order, as a plain item is. Within the group, priority
// orders too. A group the limit holds back does not hold back the others.
func TestPriorityOrdersLimitedItems(t *testing.T) {
	t.Parallel()
	_, p := newMiniProvider(t)
	ctx := context.Background()
	if err := p.SetLimit(ctx, duroxide.Limit{Name: "lim", Concurrency: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.SetPriority(ctx, duroxide.ActivityName, "lim", 5); err != nil {
		t.Fatal(err)
	}
	items := []duroxide.WorkItem{act("lo", 1), act("lim", 2), act("lo", 3), act("lim", 4), act("lim", 5)}
	if err := p.EnqueueForWorkerBatch(ctx, items); err != nil {
		t.Fatal(err)
	}
	// lim2 and lim4 go first; lim5 waits for a lease, so the plain items follow
	var got []string
	var tokens []string
	for range 4 {
		wi, err := p.FetchWorkItem(ctx, time.Minute, 0, nil, duroxide.DefaultOnly())
		if err != nil || wi == nil {
			t.Fatalf("fetch after %v: %+v %v", got, wi, err)
		}
		a := wi.Item.(duroxide.ActivityExecute)
		got = append(got, fmt.Sprintf("%s%d", a.Name, a.ID))
		tokens = append(tokens, wi.LockToken)
	}
	if want := []string{"lim2", "lim4", "lo1", "lo3"}; !slices.Equal(got, want) {
		t.Fatalf("fetch order %v, want %v", got, want)
	}
	// a lease given back: lim5 comes out
	if err := p.AbandonWorkItem(ctx, tokens[0], 0, false); err != nil {
		t.Fatal(err)
	}
	// lim2, abandoned, is ready again ahead of lim5 (its older seq, same priority)
	wi, err := p.FetchWorkItem(ctx, time.Minute, 0, nil, duroxide.DefaultOnly())
	if err != nil || wi == nil || wi.Item.(duroxide.ActivityExecute).ID != 2 {
		t.Fatalf("fetch after the abandon %+v %v, want lim2", wi, err)
	}
}
