package redisprovider

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// pauserProvider is what the pause tests drive: a provider that pauses.
type pauserProvider interface {
	duroxide.Provider
	duroxide.InstancePauser
}

// TestPauseInstanceHoldsMessages walks one instance through pause and
// resume on a Provider and on a Provider: while paused, an event and a
// timer that fires are stored but no fetch hands the instance out; resume
// delivers both, in order; a turn fetched before the pause commits, and
// what arrived meanwhile is held after it.
func TestPauseInstanceHoldsMessages(t *testing.T) {
	t.Parallel()
	m, _ := newMiniProvider(t)
	url := "redis://" + m.Addr() + "/0"
	now := time.UnixMilli(1_800_000_000_000)
	m.SetTime(now)
	for name, open := range map[string]func(ctx context.Context) (pauserProvider, error){
		"provider": func(ctx context.Context) (pauserProvider, error) {
			return openPartition(ctx, Options{URL: url, Namespace: "pause"})
		},
		"partitioned": func(ctx context.Context) (pauserProvider, error) {
			return New(ctx, Options{URL: url, Namespace: "pause-p", Partitions: 3})
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			p, err := open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.(interface{ Close() error }).Close() })
			testPauseInstance(ctx, t, p, func(d time.Duration) { now = now.Add(d); m.SetTime(now) })
		})
	}
}

func testPauseInstance(ctx context.Context, t *testing.T, p pauserProvider, advance func(time.Duration)) {
	if _, err := p.PauseInstance(ctx, ""); !errors.Is(err, duroxide.ErrInvalidInput) {
		t.Fatalf("pause of an empty id: %v, want ErrInvalidInput", err)
	}
	_, err := p.ResumeInstance(ctx, "nope")
	var pe *duroxide.ProviderError
	if !errors.Is(err, duroxide.ErrNotFound) || !errors.As(err, &pe) || pe.Operation != "resume_instance" {
		t.Fatalf("resume of an unknown instance: %v, want an ErrNotFound of resume_instance", err)
	}
	if _, err := p.InstancePauseState(ctx, "nope"); !errors.Is(err, duroxide.ErrNotFound) {
		t.Fatalf("pause state of an unknown instance: %v, want ErrNotFound", err)
	}
	fetch := func() *duroxide.OrchestrationItem {
		t.Helper()
		item, err := p.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		return item
	}
	raise := func(name string, delay time.Duration) {
		t.Helper()
		if err := p.EnqueueForOrchestrator(ctx, duroxide.ExternalRaised{Instance: "i", Name: name, Data: `""`}, delay); err != nil {
			t.Fatal(err)
		}
	}
	names := func(item *duroxide.OrchestrationItem) []string {
		var out []string
		for _, w := range item.Messages {
			switch k := w.(type) {
			case duroxide.ExternalRaised:
				out = append(out, k.Name)
			case duroxide.TimerFired:
				out = append(out, "timer")
			}
		}
		return out
	}
	if err := p.EnqueueForOrchestrator(ctx, startItem("i"), 0); err != nil {
		t.Fatal(err)
	}
	item := fetch()
	if item == nil {
		t.Fatal("the start was not fetched")
	}
	if err := p.AckOrchestrationItem(ctx, item.LockToken, started("i")); err != nil {
		t.Fatal(err)
	}

	wantPause(ctx, t, p, "i", false, 0) // never paused

	if ok, err := p.PauseInstance(ctx, "i"); err != nil || !ok {
		t.Fatalf("pause: %v %v, want a change", ok, err)
	}
	wantPause(ctx, t, p, "i", true, 0)
	if ok, err := p.PauseInstance(ctx, "i"); err != nil || ok {
		t.Fatalf("second pause: %v %v, want no change", ok, err)
	}
	st, err := p.InstancePauseState(ctx, "i")
	if err != nil || !st.Paused || st.SinceMs == 0 {
		t.Fatalf("pause state %+v %v, want paused with a time", st, err)
	}
	raise("e1", 0)
	timer := duroxide.TimerFired{Instance: "i", ExecutionID: 1, ID: 9}
	if err := p.EnqueueForOrchestrator(ctx, timer, time.Second); err != nil {
		t.Fatal(err)
	}
	if st, err := p.InstancePauseState(ctx, "i"); err != nil || st.Held != 2 {
		t.Fatalf("pause state %+v %v, want 2 messages held", st, err)
	}
	wantPause(ctx, t, p, "i", true, 2)
	if got := fetch(); got != nil {
		t.Fatalf("a paused instance was fetched: %v", names(got))
	}
	advance(2 * time.Second) // the timer fires while the instance is paused
	if got := fetch(); got != nil {
		t.Fatalf("a paused instance was fetched once its timer fired: %v", names(got))
	}

	if ok, err := p.ResumeInstance(ctx, "i"); err != nil || !ok {
		t.Fatalf("resume: %v %v, want a change", ok, err)
	}
	if st, err := p.InstancePauseState(ctx, "i"); err != nil || st.Paused {
		t.Fatalf("pause state after resume %+v %v", st, err)
	}
	wantPause(ctx, t, p, "i", false, 2) // resumed, its messages not fetched yet
	item = fetch()
	if item == nil {
		t.Fatal("the resumed instance was not fetched")
	}
	wantPause(ctx, t, p, "i", false, 0) // the fetch took them
	if got := names(item); len(got) != 2 || got[0] != "e1" || got[1] != "timer" {
		t.Fatalf("resumed with %v, want [e1 timer]", got)
	}

	// a turn in flight commits; the instance is held after it
	raise("e2", 0)
	if ok, err := p.PauseInstance(ctx, "i"); err != nil || !ok {
		t.Fatalf("pause of a locked instance: %v %v", ok, err)
	}
	commit := duroxide.OrchestrationCommit{ExecutionID: 1,
		Metadata: duroxide.ExecutionMetadata{OrchestrationName: "O", OrchestrationVersion: "1.0.0"}}
	if err := p.AckOrchestrationItem(ctx, item.LockToken, commit); err != nil {
		t.Fatalf("ack of a turn fetched before the pause: %v", err)
	}
	if got := fetch(); got != nil {
		t.Fatalf("fetched after its in-flight turn, while paused: %v", names(got))
	}
	if ok, err := p.ResumeInstance(ctx, "i"); err != nil || !ok {
		t.Fatalf("resume: %v %v", ok, err)
	}
	if got := fetch(); got == nil || len(names(got)) != 1 || names(got)[0] != "e2" {
		t.Fatalf("after resume: %v, want [e2]", got)
	}
}

// wantPause checks the pause state of inst as each read reports it: the
// record of GetInstanceInfo and of ListInstancesPage (which carry it, read
// in the same script as the rest) and InstancePauseState agree, and say
// paused (with a time) or not, with held messages waiting.
func wantPause(ctx context.Context, t *testing.T, p pauserProvider, inst string, paused bool, held uint64) {
	t.Helper()
	st, err := p.InstancePauseState(ctx, inst)
	if err != nil {
		t.Fatal(err)
	}
	if st.Paused != paused || st.Held != held || (st.SinceMs != 0) != paused {
		t.Fatalf("InstancePauseState(%s) = %+v, want paused %v, %d held", inst, st, paused, held)
	}
	info, err := p.Admin().GetInstanceInfo(ctx, inst)
	if err != nil {
		t.Fatal(err)
	}
	if info.Pause == nil || *info.Pause != st {
		t.Fatalf("GetInstanceInfo(%s).Pause = %+v, want %+v", inst, info.Pause, st)
	}
	page, _, err := p.Admin().(duroxide.InstanceLister).ListInstancesPage(ctx, duroxide.InstancePageFilter{IDPrefix: inst}, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 1 || page[0].InstanceID != inst || page[0].Pause == nil || *page[0].Pause != st {
		t.Fatalf("ListInstancesPage(%s) = %+v, want its record with pause %+v", inst, page, st)
	}
}

// Pausing takes an instance out of whichever index it is in: ready, delayed
// (its timer then fires into the hold) or offered to its sticky owner; no
// fetch, with the owner's route or without, takes it until resume.
func TestPauseInstanceLeavesEveryIndex(t *testing.T) {
	t.Parallel()
	m, p := newMiniProvider(t)
	now := time.UnixMilli(1_800_000_000_000)
	m.SetTime(now)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	owned := duroxide.WithStickyRoute(ctx, duroxide.StickyRoute{Owner: "rt-1", Wait: time.Minute, TTL: time.Hour})
	fetch := func(ctx context.Context) *duroxide.OrchestrationItem {
		t.Helper()
		item, err := p.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		return item
	}
	create := func(inst string, ackCtx context.Context) {
		t.Helper()
		if err := p.EnqueueForOrchestrator(ctx, startItem(inst), 0); err != nil {
			t.Fatal(err)
		}
		item := fetch(ctx)
		if item == nil || item.Instance != inst {
			t.Fatalf("fetch of %s's start: %v", inst, item)
		}
		if err := p.AckOrchestrationItem(ackCtx, item.LockToken, started(inst)); err != nil {
			t.Fatal(err)
		}
	}
	create("ready", ctx)
	create("delayed", ctx)
	create("sticky", owned)
	send := func(inst string, delay time.Duration) {
		t.Helper()
		if err := p.EnqueueForOrchestrator(ctx, duroxide.ExternalRaised{Instance: inst, Name: "e", Data: `""`}, delay); err != nil {
			t.Fatal(err)
		}
	}
	send("ready", 0)
	send("delayed", time.Second)
	send("sticky", 0) // offered to rt-1 alone
	for _, inst := range []string{"ready", "delayed", "sticky"} {
		if ok, err := p.PauseInstance(ctx, inst); err != nil || !ok {
			t.Fatalf("pause %s: %v %v", inst, ok, err)
		}
	}
	now = now.Add(2 * time.Second) // the delayed message is due
	m.SetTime(now)
	if got := fetch(owned); got != nil {
		t.Fatalf("the owner fetched paused %s", got.Instance)
	}
	if got := fetch(ctx); got != nil {
		t.Fatalf("fetched paused %s", got.Instance)
	}
	for _, inst := range []string{"ready", "delayed", "sticky"} {
		if ok, err := p.ResumeInstance(ctx, inst); err != nil || !ok {
			t.Fatalf("resume %s: %v %v", inst, ok, err)
		}
	}
	got := map[string]bool{}
	for _, c := range []context.Context{owned, owned, owned} { // the owner takes any instance too
		item := fetch(c)
		if item == nil {
			t.Fatalf("after resume, fetched only %v", got)
		}
		got[item.Instance] = true
	}
	if !got["ready"] || !got["delayed"] || !got["sticky"] {
		t.Fatalf("after resume fetched %v, want all three", got)
	}
}
