package browsertest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// pack is the Pack activity of one instance: it signals started, and
// returns when release is closed.
type pack struct {
	started, release chan struct{}
	once             sync.Once
}

var packs sync.Map // instance -> *pack

func packOf(instance string) *pack {
	p, _ := packs.LoadOrStore(instance, &pack{started: make(chan struct{}, 1), release: make(chan struct{})})
	return p.(*pack)
}

func (p *pack) free() { p.once.Do(func() { close(p.release) }) }

// startFulfil starts a Fulfil instance (of an id no other test uses: Pack
// activities are told apart by instance) and waits until Pack runs and
// the child's record exists.
func (d *deployment) startFulfil(id string) *pack {
	d.t.Helper()
	p := packOf(id)
	d.t.Cleanup(p.free) // before the runtime stops, which would wait for it
	d.start("Fulfil", id, `{"order":"A-17","lines":3}`)
	select {
	case <-p.started:
	case <-time.After(20 * time.Second):
		d.t.Fatalf("Pack of %s never started", id)
	}
	d.running(id + "-approval")
	return p
}

func count(t *testing.T, ctx context.Context, sel string) int {
	t.Helper()
	return get(t, ctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)))
}

func poll(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr)); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// pollAcrossReload is poll on a page that reloads itself meanwhile, which
// ends a poll in flight: it polls again on the new page.
func pollAcrossReload(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	for range 5 {
		_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr))
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "navigated") && !strings.Contains(err.Error(), "context was destroyed") && !strings.Contains(err.Error(), "Cannot find context") {
			t.Fatalf("%s: %v", what, err)
		}
	}
	t.Fatalf("%s: the page kept navigating", what)
}

// TestWaitingForAndSelfRefresh: a running instance's page shows the
// activity it runs (attempt, worker), its timer's fire time, its
// subscription and its child; it follows the instance without a reload
// while it runs, and shows the end when it finishes.
func TestWaitingForAndSelfRefresh(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	p := d.startFulfil("fulfil-1")
	base := d.serve()
	ctx := tab(t)
	do(t, ctx, chromedp.Navigate(base+"/instances/fulfil-1"), chromedp.WaitVisible(css("#waiting")))
	if in := text(t, ctx, "#input"); !strings.Contains(in, `"order": "A-17"`) {
		t.Errorf("the input shown: %q", in)
	}
	acts := text(t, ctx, "#waiting-activities tbody")
	if !strings.Contains(acts, "Pack") || !strings.Contains(acts, "locked") || !strings.Contains(acts, "session packer-fulfil-1") ||
		text(t, ctx, "#waiting-activities td.attempt") != "1" || !strings.HasPrefix(text(t, ctx, "#waiting-activities td.worker"), "work-") {
		t.Errorf("the running activity: %q (attempt %q, worker %q)", acts, text(t, ctx, "#waiting-activities td.attempt"), text(t, ctx, "#waiting-activities td.worker"))
	}
	if timers := text(t, ctx, "#waiting-timers tbody"); !strings.Contains(timers, "in 1h") && !strings.Contains(timers, "in 2h") {
		t.Errorf("the timer: %q", timers)
	}
	if ev := text(t, ctx, "#waiting-events tbody"); !strings.Contains(ev, "ship") {
		t.Errorf("the subscription: %q", ev)
	}
	if ch := text(t, ctx, "#waiting-children tbody"); !strings.Contains(ch, "fulfil-1-approval") || !strings.Contains(ch, "Running") {
		t.Errorf("the child: %q", ch)
	}
	// the sub-orchestrations section lists the child only
	if n := count(t, ctx, `ul.tree a[href="/instances/fulfil-1"]`); n != 0 || count(t, ctx, `ul.tree a[href="/instances/fulfil-1-approval"]`) != 1 {
		t.Errorf("the sub-orchestrations section lists the instance itself (%d)", n)
	}

	// the activity completes: the list of activities follows, no reload
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
	p.free()
	poll(t, ctx, "the page never showed Pack done", `!document.querySelector("#waiting-activities")`)
	if !get(t, ctx, chromedp.Evaluate[bool](`window.notReloaded === true`)) {
		t.Error("the page reloaded while the instance ran")
	}
	if err := d.client.RaiseEvent(context.Background(), "fulfil-1", "ship", `"now"`); err != nil {
		t.Fatal(err)
	}
	// finished: the page reloads once, with the history's end
	pollAcrossReload(t, ctx, "the page never showed the instance completed", `document.querySelector("#status") && document.querySelector("#status").textContent === "Completed" && window.notReloaded === undefined`)
	if n := count(t, ctx, "#waiting"); n != 0 {
		t.Error("a completed instance shows what it waits for")
	}
	if tl := text(t, ctx, "#timeline"); !strings.Contains(tl, "OrchestrationCompleted") {
		t.Errorf("the reloaded timeline lacks the end: %q", tl)
	}
}

// TestLargeHistoryOpensPaged opens a 12,002-event history: one page of 100
// events, its HTML under 200 KB; the kind filter and the failure links
// find the failures on later pages.
func TestLargeHistoryOpensPaged(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	d.start("AwaitApproval", "big-1", "")
	d.running("big-1")
	failed := d.appendSteps("big-1", 6000)
	base := d.serve()
	ctx := tab(t)
	began := time.Now()
	do(t, ctx, chromedp.Navigate(base+"/instances/big-1"), chromedp.WaitVisible(css("#timeline")))
	took := time.Since(began)
	size := get(t, ctx, chromedp.Evaluate[int](`performance.getEntriesByType("navigation")[0].encodedBodySize`))
	loaded := get(t, ctx, chromedp.Evaluate[float64](`performance.getEntriesByType("navigation")[0].loadEventEnd`))
	t.Logf("12,002-event instance: %d bytes of HTML, load event at %.0f ms, navigate+visible %v", size, loaded, took)
	if size > 200<<10 {
		t.Errorf("the first page is %d bytes, over 200 KB", size)
	}
	began = time.Now()
	do(t, ctx, chromedp.Reload(), chromedp.WaitVisible(css("#timeline")))
	t.Logf("again, its history read from the server's memory: navigate+visible %v", time.Since(began))
	if n := count(t, ctx, "#timeline > li"); n != 100 {
		t.Errorf("%d events on the first page, want 100", n)
	}
	if n := count(t, ctx, "#failures a.failure"); n != len(failed) {
		t.Errorf("%d failure links, want %d", n, len(failed))
	}

	// jump to the first failure: its page, scrolled to it
	do(t, ctx, chromedp.Click(css("#failures a.failure")), chromedp.WaitVisible(css(fmt.Sprintf("#e%d", failed[0]))))
	if loc := get(t, ctx, chromedp.Location()); !strings.HasSuffix(loc, fmt.Sprintf("#e%d", failed[0])) {
		t.Errorf("the failure link led to %s", loc)
	}
	if !get(t, ctx, chromedp.Evaluate[bool](fmt.Sprintf(`document.querySelector("#e%d").matches(":target.failed")`, failed[0]))) {
		t.Error("the failure is not the page's target, marked failed")
	}

	// the kind filter keeps the failures alone
	// the page shown before the filter has a failed event too: wait for
	// the filtered page itself
	do(t, ctx, chromedp.SetValue(css("#kind"), "ActivityFailed"), chromedp.Click(css("#kind-filter")))
	pollAcrossReload(t, ctx, "the filtered page never showed", `location.search.includes("kind=ActivityFailed") && document.querySelector("#timeline li.failed") !== null`)
	if n, all := count(t, ctx, "#timeline > li"), count(t, ctx, "#timeline > li.failed"); n != len(failed) || all != n {
		t.Errorf("filtered by ActivityFailed: %d events, %d failed, want %d", n, all, len(failed))
	}
	// next page through the pager, unfiltered
	do(t, ctx, chromedp.Navigate(base+"/instances/big-1"), chromedp.Click(css(".history-pager a.next")), chromedp.WaitVisible(css("#e101")))
	if h := text(t, ctx, "#history small"); !strings.Contains(h, "page 2 of 121") {
		t.Errorf("after next: %q", h)
	}
}

// appendSteps appends n activity steps (scheduled, then completed or,
// every 500th, failed) to the running instance's execution and returns
// the failures' ids.
func (d *deployment) appendSteps(instance string, n int) []uint64 {
	d.t.Helper()
	ctx := context.Background()
	h, err := d.prov.Admin().ReadHistory(ctx, instance)
	if err != nil {
		d.t.Fatal(err)
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
				d.t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	return failed
}

// TestListColumnsOverviewAndRerun: the list shows failures, cancellations
// apart and custom statuses; the overview counts by orchestration with a
// failure rate and lists the runtimes; a failed instance is started again
// as a new one.
func TestListColumnsOverviewAndRerun(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	d.finish("Reserve", "order-40", `{"sku":"Z9"}`)
	d.finish("Ship", "ship-1", "")
	d.start("AwaitApproval", "order-41", "")
	d.start("AwaitApproval", "order-43", "")
	d.running("order-41")
	d.running("order-43")
	if err := d.client.CancelInstance(context.Background(), "order-43", "customer called"); err != nil {
		t.Fatal(err)
	}
	d.wait("order-43")
	d.startFulfil("fulfil-2")
	base := d.serve("--sample", "200ms")
	ctx := tab(t)

	do(t, ctx, chromedp.Navigate(base+"/instances"), chromedp.WaitVisible(css("#instances")))
	row := func(id string) string {
		return get(t, ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector('#instances a[href="/instances/%s"]').closest("tr").innerText`, id)))
	}
	if r := row("order-40"); !strings.Contains(r, "Failed") || !strings.Contains(r, "warehouse has no stock") {
		t.Errorf("the failed row: %q", r)
	}
	if r := row("order-43"); !strings.Contains(r, "Cancelled") || !strings.Contains(r, "customer called") {
		t.Errorf("the cancelled row: %q", r)
	}
	if r := row("order-41"); !strings.Contains(r, "awaiting approval") {
		t.Errorf("the custom status: %q", r)
	}
	do(t, ctx, chromedp.SetValue(css("#status"), "Cancelled"), chromedp.Click(css("#filter")),
		chromedp.WaitVisible(css(`#instances[data-status="Cancelled"]`)))
	if list := text(t, ctx, "#instances tbody"); !strings.Contains(list, "order-43") || strings.Contains(list, "order-40") {
		t.Errorf("filtered by Cancelled:\n%s", list)
	}

	do(t, ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(css("#names")))
	names := func(name string) string {
		return fmt.Sprintf(`[...document.querySelectorAll("#names tbody tr")].find(tr => tr.cells[0].textContent === %q)`, name)
	}
	poll(t, ctx, "the Reserve row never showed a 100% failure rate", names("Reserve")+`?.cells[6].textContent === "100.0%"`)
	poll(t, ctx, "the AwaitApproval row never counted the cancellation apart", names("AwaitApproval")+`?.cells[5].textContent === "1" && `+names("AwaitApproval")+`.cells[4].textContent === "0"`)
	poll(t, ctx, "the runtimes never showed a fetcher and the session held", `document.querySelectorAll("#fetchers .fetcher").length > 0 && /owner work-\d+-\S+ holds session packer-fulfil-2/.test(document.querySelector("#sessions").innerText)`)

	// run the failed order again
	do(t, ctx, chromedp.Navigate(base+"/instances/order-40"), chromedp.WaitVisible(css("#rerun-form")))
	if hint := text(t, ctx, "#retry-hint"); !strings.Contains(hint, "Retry in place is not in duroxide's model") {
		t.Errorf("the hint: %q", hint)
	}
	do(t, ctx, chromedp.SetValue(css("#rerun-id"), "order-40-b"), chromedp.Click(css(`#rerun-form input[name="confirm"]`)),
		chromedp.Click(css("#rerun")), chromedp.WaitVisible(css(".done")))
	if done := text(t, ctx, ".done"); !strings.Contains(done, "started Reserve") || !strings.Contains(done, "order-40-b") {
		t.Errorf("after run again: %q", done)
	}
	if st := d.wait("order-40-b"); st.Status != durable.StatusFailed {
		t.Errorf("the new instance ended %v", st.Status)
	}
}
