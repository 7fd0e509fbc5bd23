package main

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// startBusy starts a Busy instance (of an id no other test uses: the Hold
// activities are told apart by instance) and waits until its Hold activity runs
// and its child's record exists, so everything it waits for is stored.
func (d *deployment) startBusy(t *testing.T, id string) {
	t.Helper()
	h := holdOf(id)
	// released before the runtime stops (cleanups run last first), which
	// would otherwise wait for it
	t.Cleanup(func() { close(h.release) })
	if err := d.client.StartOrchestration(context.Background(), id, "Busy", `{"order":7}`); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.started:
	case <-time.After(20 * time.Second):
		t.Fatalf("the Hold activity of %s never started", id)
	}
	d.waitRunning(t, id+"-child")
}

// section returns the element of page whose id is id, up to the end of its
// tag (name), for assertions that must hold inside it.
func section(t *testing.T, page, id, tag string) string {
	t.Helper()
	i := strings.Index(page, `id="`+id+`"`)
	if i < 0 {
		t.Fatalf("the page has no #%s", id)
	}
	j := strings.Index(page[i:], "</"+tag+">")
	if j < 0 {
		t.Fatalf("#%s is not closed", id)
	}
	return page[i : i+j]
}

func TestUIWaitingFor(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	d.startBusy(t, "b-1")
	ts, _ := d.ui(t, uiOptions{})
	// the runtime routes its instances' turns to itself (sticky routing),
	// which the queue records
	page := get(t, ts, "/instances/b-1", 200, `data-live="/instances/b-1?execution=1&amp;partial=1"`, `id="waiting"`, `id="sticky"`)
	if in := section(t, page, "input", "pre"); !strings.Contains(in, `&#34;order&#34;: 7`) {
		t.Errorf("the input is not shown indented: %s", in)
	}
	acts := section(t, page, "waiting-activities", "table")
	hold := acts[strings.Index(acts, "Hold"):]
	hold = hold[:strings.Index(hold, "</tr>")]
	if !strings.Contains(hold, "locked") || !strings.Contains(hold, `<td class="attempt">1</td>`) ||
		!regexp.MustCompile(`<td class="worker">work-\d+-`).MatchString(hold) || !strings.Contains(hold, "session s-b-1") {
		t.Errorf("the running activity's row lacks its state, attempt, worker or session:\n%s", hold)
	}
	hello := acts[strings.Index(acts, "Hello"):]
	hello = hello[:strings.Index(hello, "</tr>")]
	if !strings.Contains(hello, "tag nobody") || !strings.Contains(hello, `<td class="state">ready`) || !strings.Contains(hello, "0 used") {
		t.Errorf("the activity no worker takes: %s", hello)
	}
	timers := section(t, page, "waiting-timers", "table")
	if !regexp.MustCompile(`<td>\d{4}-\d\d-\d\dT[^<]+Z</td><td>in (59m|1h)`).MatchString(timers) {
		t.Errorf("the hour's timer lacks its fire time: %s", timers)
	}
	if ev := section(t, page, "waiting-events", "table"); !strings.Contains(ev, "<b>approve</b>") || !strings.Contains(ev, "external event") {
		t.Errorf("the subscription: %s", ev)
	}
	if ch := section(t, page, "waiting-children", "table"); !strings.Contains(ch, `href="/instances/b-1-child"`) || !strings.Contains(ch, ">Running<") {
		t.Errorf("the child: %s", ch)
	}
	// the sub-orchestrations section lists the child, not the instance itself
	subs := page[strings.Index(page, "<h2>Sub-orchestrations</h2>")+4:]
	subs = subs[:strings.Index(subs, "<h2")]
	if strings.Contains(subs, `href="/instances/b-1"`) || !strings.Contains(subs, `href="/instances/b-1-child"`) {
		t.Errorf("the sub-orchestrations section:\n%s", subs)
	}
	get(t, ts, "/instances/b-1-child", 200, `id="no-children"`)

	// the refreshed part holds what changes, not the history or the forms
	partial := get(t, ts, "/instances/b-1?partial=1", 200, `id="waiting"`, `id="status"`, `id="executions"`)
	for _, no := range []string{`id="timeline"`, `id="cancel-form"`, "<html"} {
		if strings.Contains(partial, no) {
			t.Errorf("the refreshed part holds %s", no)
		}
	}

	if err := d.client.RaiseEvent(context.Background(), "b-1", "approve", `"yes"`); err != nil {
		t.Fatal(err)
	}
	d.wait(t, "b-1")
	// a finished instance's part tells the script to stop and reload; the
	// page itself no longer refreshes or shows waits
	get(t, ts, "/instances/b-1?partial=1", 200, "data-done")
	// the history the server kept from the earlier views grew: read again
	done := get(t, ts, "/instances/b-1", 200, `id="status">Completed<`, "OrchestrationCompleted")
	if strings.Contains(done, "data-live") || strings.Contains(done, `id="waiting"`) {
		t.Errorf("a completed instance's page refreshes or shows waits")
	}
}

// TestUIHistoryPages opens a 12,002-event history: one page of 100 events,
// well under 200 KB, with links to its failures, a filter by kind and
// links across pages.
func TestUIHistoryPages(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	ctx := context.Background()
	if err := d.client.StartOrchestration(ctx, "big-1", "Waiter", ""); err != nil {
		t.Fatal(err)
	}
	d.waitRunning(t, "big-1")
	failed := appendSteps(t, d, "big-1", 6000)
	ts, _ := d.ui(t, uiOptions{})

	began := time.Now()
	page := get(t, ts, "/instances/big-1", 200, "12002 events", "page 1 of 121", `class="next" href="/instances/big-1?execution=1&amp;page=2#history"`)
	t.Logf("first page of 12,002 events: %d bytes in %v", len(page), time.Since(began))
	if len(page) > 200<<10 {
		t.Errorf("the first page is %d bytes, over 200 KB", len(page))
	}
	if n := strings.Count(page, `<li id="e`); n != historyPageSize {
		t.Errorf("%d events on the page, want %d", n, historyPageSize)
	}
	links := section(t, page, "failures", "p")
	if n := strings.Count(links, `class="failure"`); n != len(failed) {
		t.Errorf("%d failure links, want %d:\n%s", n, len(failed), links)
	}
	last := failed[len(failed)-1]
	want := fmt.Sprintf(`href="/instances/big-1?execution=1&amp;at=%d#e%d"`, last, last)
	if !strings.Contains(links, want) {
		t.Fatalf("no link %s in\n%s", want, links)
	}
	get(t, ts, fmt.Sprintf("/instances/big-1?execution=1&at=%d", last), 200, fmt.Sprintf(`<li id="e%d" class="failed answer"`, last), "page 121 of 121")

	kinds := get(t, ts, "/instances/big-1?execution=1&kind=ActivityFailed", 200, "12 ActivityFailed", "page 1 of 1", `<option value="ActivityFailed" selected>ActivityFailed (12)</option>`)
	if n := strings.Count(kinds, `<li id="e`); n != len(failed) {
		t.Errorf("the ActivityFailed filter shows %d events, want %d", n, len(failed))
	}
	get(t, ts, "/instances/big-1?kind=failures", 200, "12 failures")
	// filtered, a completion's scheduling event is on another page: its
	// link goes there
	completions := get(t, ts, "/instances/big-1?execution=1&kind=ActivityCompleted&page=2", 200, "5988 ActivityCompleted", "page 2 of 60")
	if !regexp.MustCompile(`answers <a href="/instances/big-1\?execution=1&amp;at=\d+#e\d+">#\d+ ActivityScheduled</a>`).MatchString(completions) {
		t.Errorf("completions do not link to their scheduling event's page")
	}
	get(t, ts, "/instances/big-1?page=999", 200, "page 121 of 121")
	get(t, ts, "/instances/big-1?page=x", 400, "bad page")
	get(t, ts, "/instances/big-1?at=99999", 400, "no event")
}

// appendSteps appends n activity steps (scheduled, then completed or,
// every 500th, failed) to the current execution of a running instance and
// returns the ids of the failures.
func appendSteps(t *testing.T, d *deployment, instance string, n int) []uint64 {
	t.Helper()
	ctx := context.Background()
	h, err := d.prov.Admin().ReadHistory(ctx, instance)
	if err != nil {
		t.Fatal(err)
	}
	id := h[len(h)-1].EventID
	var failed []uint64
	var batch []duroxide.Event
	for i := range n {
		id++
		src := id
		batch = append(batch, duroxide.NewEvent(id, instance, 1, nil, duroxide.ActivityScheduledEvent{Name: "Step", Input: fmt.Sprintf(`{"step":%d,"sku":"A-%d"}`, i, i%97)}))
		id++
		if i%500 == 499 {
			failed = append(failed, id)
			batch = append(batch, duroxide.NewEvent(id, instance, 1, &src, duroxide.ActivityFailedEvent{Details: duroxide.ApplicationFailure(fmt.Sprintf("step %d: warehouse timeout", i))}))
		} else {
			batch = append(batch, duroxide.NewEvent(id, instance, 1, &src, duroxide.ActivityCompletedEvent{Result: `{"ok":true}`}))
		}
		if len(batch) >= 2000 || i == n-1 {
			if err := d.prov.AppendWithExecution(ctx, instance, 1, batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	return failed
}

func TestUIListColumnsAndOverviewNames(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	ctx := context.Background()
	d.finish(t, "g-1", "Greet", "ada")
	d.finish(t, "f-1", "Fail", "")
	d.finish(t, "f-2", "Fail", "")
	if err := d.client.StartOrchestration(ctx, "w-1", "Waiter", ""); err != nil {
		t.Fatal(err)
	}
	d.waitRunning(t, "w-1")
	if err := d.client.CancelInstance(ctx, "w-1", "customer called"); err != nil {
		t.Fatal(err)
	}
	d.wait(t, "w-1")
	d.startBusy(t, "b-list")
	ts, _ := d.ui(t, uiOptions{})

	list := get(t, ts, "/instances", 200, "<th>Failure</th><th>Custom status</th>")
	row := func(id string) string {
		i := strings.Index(list, `href="/instances/`+id+`"`)
		if i < 0 {
			t.Fatalf("no row for %s", id)
		}
		return list[i : i+strings.Index(list[i:], "</tr>")]
	}
	if r := row("f-1"); !strings.Contains(r, `status Failed">Failed<`) || !strings.Contains(r, `<td class="reason" title="card declined">card declined</td>`) {
		t.Errorf("a failed row: %s", r)
	}
	if r := row("w-1"); !strings.Contains(r, `status Cancelled">Cancelled<`) || !strings.Contains(r, "canceled: customer called") {
		t.Errorf("a cancelled row: %s", r)
	}
	if r := row("g-1"); !strings.Contains(r, `<td class="custom" title="greeting">greeting</td>`) || !strings.Contains(r, `<td class="reason" title=""></td>`) {
		t.Errorf("a completed row with custom status: %s", r)
	}
	cancelled := get(t, ts, "/instances?status=cancelled", 200, `data-status="Cancelled"`, `href="/instances/w-1"`, "1 shown")
	if strings.Contains(cancelled, `href="/instances/f-1"`) {
		t.Errorf("the Cancelled filter lists a failure")
	}
	get(t, ts, "/instances?status=Failed", 200, `href="/instances/w-1"`, `href="/instances/f-1"`)
	get(t, ts, "/instances/w-1", 200, `id="status">Cancelled<`, "<th>Cancelled</th>")
	get(t, ts, "/instances/f-1", 200, `id="status">Failed<`, "<th>Failure</th>")

	over := get(t, ts, "/", 200, `id="names"`, `id="runtimes"`)
	names := section(t, over, "names", "table")
	for name, want := range map[string]string{
		"Fail":   `<td>2</td><td>0</td><td>0</td><td class="failed">2</td><td>0</td><td class="rate">100.0%</td>`,
		"Waiter": `<td>2</td><td>1</td><td>0</td><td class="failed">0</td><td>1</td><td class="rate">0.0%</td>`, // b-list's child runs, w-1 was cancelled
		"Greet":  `<td>1</td><td>0</td><td>1</td><td class="failed">0</td><td>0</td><td class="rate">0.0%</td>`,
		"Busy":   `<td>1</td><td>1</td><td>0</td><td class="failed">0</td><td>0</td><td class="rate">-</td>`,
	} {
		if !strings.Contains(names, `<a href="/instances?name=`+name+`">`+name+`</a></td>`+want) {
			t.Errorf("the %s row is not %s in\n%s", name, want, names)
		}
	}
	rt := section(t, over, "runtimes", "table")
	if !regexp.MustCompile(`owner <b>work-\d+-[^<]+</b> holds session s-b-list`).MatchString(rt) || !strings.Contains(rt, `id="locked-activities">1<`) {
		t.Errorf("the runtimes table lacks b-list's session or its locked activity:\n%s", rt)
	}
}

func TestUIRerun(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	d.finish(t, "f-1", "Fail", `"in"`)
	if err := d.client.StartOrchestration(context.Background(), "w-1", "Waiter", ""); err != nil {
		t.Fatal(err)
	}
	d.waitRunning(t, "w-1")
	ts, u := d.ui(t, uiOptions{})
	get(t, ts, "/instances/f-1", 200, `id="rerun-form"`, `value="f-1-rerun"`, "Retry in place is not in duroxide's model")
	form := url.Values{"csrf": {u.csrf}, "confirm": {"yes"}, "new": {"f-1-again"}}
	resp := post(t, ts, "/instances/f-1/rerun", form, nil)
	if resp.StatusCode != 303 || !strings.HasPrefix(resp.Header.Get("Location"), "/instances/f-1-again?done=started+Fail") {
		t.Fatalf("rerun: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if st := d.wait(t, "f-1-again"); st.Status != durable.StatusFailed {
		t.Fatalf("the rerun ended %v", st.Status)
	}
	h, err := d.prov.Admin().ReadHistory(context.Background(), "f-1-again")
	if err != nil {
		t.Fatal(err)
	}
	if st := h[0].Kind.(duroxide.OrchestrationStartedEvent); st.Input != `"in"` || st.Name != "Fail" {
		t.Errorf("the rerun started %s with %q", st.Name, st.Input)
	}
	if resp := post(t, ts, "/instances/f-1/rerun", form, nil); resp.StatusCode != 409 {
		t.Errorf("a rerun under an existing id: %d, want 409", resp.StatusCode)
	}
	if resp := post(t, ts, "/instances/w-1/rerun", url.Values{"csrf": {u.csrf}, "confirm": {"yes"}, "new": {"w-2"}}, nil); resp.StatusCode != 409 {
		t.Errorf("a rerun of a running instance: %d, want 409", resp.StatusCode)
	}
	ro, u2 := d.ui(t, uiOptions{readOnly: true})
	if page := get(t, ro, "/instances/f-1", 200, `id="retry-hint"`); strings.Contains(page, "rerun-form") {
		t.Errorf("the read-only page offers to run again")
	}
	if resp := post(t, ro, "/instances/f-1/rerun", url.Values{"csrf": {u2.csrf}, "confirm": {"yes"}, "new": {"f-1-ro"}}, nil); resp.StatusCode != 403 {
		t.Errorf("rerun in read-only mode: %d, want 403", resp.StatusCode)
	}
}
