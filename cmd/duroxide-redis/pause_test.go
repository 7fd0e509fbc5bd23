package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// pause holds a running instance (an event raised to it waits, shown by
// show), resume delivers it; both are idempotent and name an unknown
// instance's failure.
func TestPauseAndResumeCommands(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	expectFailure(t, d.cli("pause", "nope"), exitNotFound, "pause: instance nope not found")
	expectFailure(t, d.cli("resume", ""), exitInvalid, "empty instance id")
	expect(t, d.cli("start", "Waiter", "p-1"), 0)
	d.waitRunning(t, "p-1")
	expect(t, d.cli("pause", "p-1"), 0, "paused: p-1 (held: 0)")
	expect(t, d.cli("pause", "p-1"), 0, "already paused: p-1")
	expect(t, d.cli("raise", "p-1", "go", "--data", `"x"`), 0, "raised: p-1")
	expect(t, d.cli("show", "p-1"), 0, "Paused:", "held: 1")
	got := decode[instanceDetail](t, d.cli("show", "p-1", "--json"))
	if got.Paused == nil || got.Paused.Held != 1 || got.Paused.Since == nil || got.Status != "Running" {
		t.Fatalf("show --json of a paused instance: %+v", got.Paused)
	}
	expect(t, d.cli("resume", "p-1"), 0, "resumed: p-1")
	if st := d.wait(t, "p-1"); st.Status != durable.StatusCompleted || st.Output != `"x"` {
		t.Fatalf("p-1 ended %v with %q", st.Status, st.Output)
	}
	expect(t, d.cli("resume", "p-1"), 0, "not paused: p-1")
	if got := decode[instanceDetail](t, d.cli("show", "p-1", "--json")); got.Paused != nil {
		t.Fatalf("show --json after resume: paused %+v", got.Paused)
	}
}

// The dashboard's instance page and list show a Paused badge, the page
// offers resume for a paused instance and pause for a running one; both
// actions work and are refused in read-only mode.
func TestPauseDashboard(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	ctx := context.Background()
	if err := d.client.StartOrchestration(ctx, "p-ui", "Waiter", ""); err != nil {
		t.Fatal(err)
	}
	d.waitRunning(t, "p-ui")
	ts, u := d.ui(t, uiOptions{})
	page := get(t, ts, "/instances/p-ui", 200, `id="pause-form"`)
	if strings.Contains(page, `id="paused"`) {
		t.Fatal("a running instance shows the Paused badge")
	}
	form := url.Values{"csrf": {u.csrf}, "confirm": {"yes"}}
	if resp := post(t, ts, "/instances/p-ui/pause", form, nil); resp.StatusCode != 303 {
		t.Fatalf("pause: %d, want 303", resp.StatusCode)
	}
	if st, err := d.prov.InstancePauseState(ctx, "p-ui"); err != nil || !st.Paused {
		t.Fatalf("after the pause action: %+v %v", st, err)
	}
	get(t, ts, "/instances/p-ui", 200, `id="paused"`, "Paused · 0 held", `id="resume"`)
	get(t, ts, "/instances?prefix=p-ui", 200, `<span class="status Paused">Paused</span>`)
	ro, _ := d.ui(t, uiOptions{readOnly: true})
	if resp := post(t, ro, "/instances/p-ui/resume", form, nil); resp.StatusCode != 403 {
		t.Fatalf("resume in read-only mode: %d, want 403", resp.StatusCode)
	}
	if resp := post(t, ts, "/instances/p-ui/resume", form, nil); resp.StatusCode != 303 {
		t.Fatalf("resume: %d, want 303", resp.StatusCode)
	}
	if st, err := d.prov.InstancePauseState(ctx, "p-ui"); err != nil || st.Paused {
		t.Fatalf("after the resume action: %+v %v", st, err)
	}
	if page := get(t, ts, "/instances?prefix=p-ui", 200, "p-ui"); strings.Contains(page, "status Paused") {
		t.Fatal("the list shows a resumed instance as paused")
	}
}

// commandLog records the commands a Redis client sends, pipelined or not.
type commandLog struct {
	mu   sync.Mutex
	cmds [][]any
}

func (l *commandLog) DialHook(next redis.DialHook) redis.DialHook { return next }

func (l *commandLog) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		l.add(cmd)
		return next(ctx, cmd)
	}
}

func (l *commandLog) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			l.add(c)
		}
		return next(ctx, cmds)
	}
}

func (l *commandLog) add(c redis.Cmder) {
	l.mu.Lock()
	l.cmds = append(l.cmds, c.Args())
	l.mu.Unlock()
}

// pauseReads returns the logged reads of a pause state made outside a
// script (InstancePauseState's HMGET of the record's field pz and ZCARD of
// the instance's queue), and forgets the log.
func (l *commandLog) pauseReads() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, args := range l.cmds {
		name := strings.ToLower(fmt.Sprint(args[0]))
		if name == "zcard" || (name == "hmget" && strings.Contains(fmt.Sprint(args), " pz")) {
			out = append(out, fmt.Sprint(args))
		}
	}
	l.cmds = nil
	return out
}

// The instances list and an instance's page show the pause state their
// records carry (read by the listing's or the record's script): no read of
// the pause state per row, nor for the page; the badges are right for a
// paused instance holding a message, a paused one holding none and one
// never paused.
func TestPauseDashboardReadsNoPauseStatePerRow(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	ctx := context.Background()
	for _, id := range []string{"np-held", "np-empty", "np-never"} {
		if err := d.client.StartOrchestration(ctx, id, "Waiter", ""); err != nil {
			t.Fatal(err)
		}
		d.waitRunning(t, id)
	}
	for _, id := range []string{"np-held", "np-empty"} {
		if _, err := d.prov.PauseInstance(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.client.RaiseEvent(ctx, "np-held", "go", `"x"`); err != nil {
		t.Fatal(err)
	}
	ts, u := d.ui(t, uiOptions{})
	log := &commandLog{}
	u.s.rdb.AddHook(log)
	page := get(t, ts, "/instances?prefix=np-", 200, "np-held", "np-empty", "np-never")
	if reads := log.pauseReads(); len(reads) != 0 {
		t.Errorf("the list read the pause state apart, per row: %q", reads)
	}
	if n := strings.Count(page, `<span class="status Paused">Paused</span>`); n != 2 {
		t.Errorf("the list shows %d Paused badges, want 2 (np-held, np-empty)", n)
	}
	for _, id := range []string{"np-held", "np-empty", "np-never"} {
		row := page[strings.Index(page, ">"+id+"<"):]
		row = row[:strings.Index(row, "</tr>")]
		if paused := strings.Contains(row, "status Paused"); paused != (id != "np-never") {
			t.Errorf("row of %s: paused badge %v\n%s", id, paused, row)
		}
	}
	get(t, ts, "/instances/np-held", 200, `id="paused"`, "Paused · 1 held")
	if page := get(t, ts, "/instances/np-never", 200); strings.Contains(page, `id="paused"`) {
		t.Error("the page of an instance never paused shows the Paused badge")
	}
	if reads := log.pauseReads(); len(reads) != 0 {
		t.Errorf("the instance pages read the pause state apart: %q", reads)
	}
}
