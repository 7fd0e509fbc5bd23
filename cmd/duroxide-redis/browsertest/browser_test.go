package browsertest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/chromedp/chromedp"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// Set by TestMain: the dashboard binary, the browser, and why tests skip.
var (
	binary     string
	browserCtx context.Context
	skipReason string
)

// chromiumNames are the binaries tried, in order, on PATH.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	chrome := os.Getenv("CHROMIUM")
	for _, n := range chromiumNames {
		if chrome != "" {
			break
		}
		chrome, _ = exec.LookPath(n)
	}
	if chrome == "" {
		skipReason = "no chromium binary (tried $CHROMIUM and " + strings.Join(chromiumNames, ", ") + " on PATH): install the chromium package to run the browser tests"
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "duroxide-ui-browser")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "duroxide-redis")
	build := exec.Command("go", "build", "-o", binary, "github.com/duroxide-go/duroxide-redis/cmd/duroxide-redis")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the binary: %v\n%s", err, out)
		return 1
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chrome), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(filepath.Join(dir, "profile")), chromedp.WindowSize(1280, 900),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil { // starts the browser once for every test
		fmt.Fprintf(os.Stderr, "starting %s: %v\n", chrome, err)
		return 1
	}
	browserCtx = ctx
	return m.Run()
}

var namespaceSeq atomic.Int64

// deployment is a namespace on an embedded Redis with a running runtime,
// and dashboards serving it.
type deployment struct {
	t         *testing.T
	url       string // of Redis
	namespace string
	client    *durable.Client
	prov      *redisprovider.Provider
}

func newDeployment(t *testing.T) *deployment {
	t.Helper()
	return newDeploymentOf(t, 1)
}

// newDeploymentOf is newDeployment of a namespace of partitions partitions.
func newDeploymentOf(t *testing.T, partitions int) *deployment {
	t.Helper()
	if binary == "" {
		t.Skip(skipReason)
	}
	mr := miniredis.RunT(t)
	ns := fmt.Sprintf("browser-%d", namespaceSeq.Add(1))
	url := "redis://" + mr.Addr() + "/0"
	p, err := redisprovider.New(context.Background(), redisprovider.Options{URL: url, Namespace: ns, Partitions: partitions})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := durable.NewRuntime(p, registry(), durable.Options{LongPollTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		rt.Shutdown(ctx)
		p.Close()
	})
	return &deployment{t: t, url: url, namespace: ns, client: rt.Client(), prov: p}
}

// registry holds orchestrations that leave what the dashboard shows: an
// activity, a timer, a child, KV, custom status, a wait for an event and
// a failure.
func registry() *durable.Registry {
	reg := durable.NewRegistry()
	reg.MustAddActivity("Charge", func(_ *durable.ActivityContext, in string) (string, error) {
		return `{"charged":true}`, nil
	})
	reg.MustAddActivity("Reserve", func(_ *durable.ActivityContext, in string) (string, error) {
		return "", errors.New("warehouse has no stock for " + in)
	})
	reg.MustAddOrchestration("ProcessOrder", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		ctx.SetValue("customer", "ada")
		ctx.SetCustomStatus("charging")
		if _, err := ctx.ScheduleActivity("Charge", in).Get(); err != nil {
			return "", err
		}
		if _, err := ctx.Timer(50 * time.Millisecond).Get(); err != nil {
			return "", err
		}
		ctx.SetCustomStatus("shipping")
		return ctx.ScheduleSubOrchestration("Ship", in).Get()
	})
	reg.MustAddOrchestration("Ship", func(_ *durable.OrchestrationContext, in string) (string, error) {
		return `"shipped"`, nil
	})
	reg.MustAddOrchestration("Reserve", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		return ctx.ScheduleActivity("Reserve", in).Get()
	})
	reg.MustAddOrchestration("AwaitApproval", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.SetCustomStatus("awaiting approval")
		return ctx.WaitForEvent("approve").Get()
	})
	// Pack runs, in a session, until its test releases it (see packOf).
	reg.MustAddActivity("Pack", func(a *durable.ActivityContext, in string) (string, error) {
		p := packOf(a.InstanceID())
		select {
		case p.started <- struct{}{}:
		default:
		}
		select {
		case <-a.Done():
			return "", a.Err()
		case <-p.release:
			return `"packed"`, nil
		}
	})
	// Fulfil waits for one of everything at once: Pack running, a timer,
	// a child waiting for approval, and its own "ship" event.
	reg.MustAddOrchestration("Fulfil", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		ctx.ScheduleActivity("Pack", in, durable.WithSession("packer-"+ctx.InstanceID()))
		ctx.Timer(2 * time.Hour)
		ctx.ScheduleSubOrchestration("AwaitApproval", "", durable.WithInstanceID(ctx.InstanceID()+"-approval"))
		return ctx.WaitForEvent("ship").Get()
	})
	return reg
}

// start starts an orchestration; finish also waits for its end.
func (d *deployment) start(name, instance, input string) {
	d.t.Helper()
	if err := d.client.StartOrchestration(context.Background(), instance, name, input); err != nil {
		d.t.Fatal(err)
	}
}

func (d *deployment) wait(instance string) durable.OrchestrationStatus {
	d.t.Helper()
	st, err := d.client.WaitForOrchestration(context.Background(), instance, 20*time.Second)
	if err != nil {
		d.t.Fatalf("wait %s: %v", instance, err)
	}
	return st
}

// running waits until the dispatcher has created the instance's record, so
// its page exists.
func (d *deployment) running(instance string) {
	d.t.Helper()
	// sleep: the poll interval of a wait on the instance's status
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if st, err := d.client.Status(context.Background(), instance); err == nil && st.Status == durable.StatusRunning {
			return
		}
	}
	d.t.Fatalf("%s never ran", instance)
}

func (d *deployment) finish(name, instance, input string) durable.OrchestrationStatus {
	d.t.Helper()
	d.start(name, instance, input)
	return d.wait(instance)
}

// serve runs the binary's ui command on a free port and returns its base
// URL; Ctrl-C (an interrupt) stops it when the test ends.
func (d *deployment) serve(extra ...string) string {
	d.t.Helper()
	args := append([]string{"ui", "--listen", "127.0.0.1:0", "--redis", d.url, "--namespace", d.namespace}, extra...)
	cmd := exec.Command(binary, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		d.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		d.t.Fatalf("the ui command printed no address: %v", err)
	}
	i := strings.Index(line, "http://")
	if i < 0 {
		d.t.Fatalf("no address in %q", line)
	}
	return strings.Fields(line[i:])[0]
}

// tab opens a browser tab for the test, closed when it ends; every action
// is bounded so that a missing element fails the test instead of hanging.
func tab(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browserCtx)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil { // opens the tab, without a deadline that would close it
		t.Fatal(err)
	}
	ctx, cancelTimeout := context.WithTimeout(ctx, 30*time.Second)
	t.Cleanup(cancelTimeout)
	return ctx
}

func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// get runs one action that reads a value.
func get[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return get(t, ctx, chromedp.Text(chromedp.CSS(sel)))
}

// css shortens the selectors of the tests.
type css = chromedp.CSS

func TestListFilterOpenAndFollowChild(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	d.finish("ProcessOrder", "order-42", `{"sku":"A1"}`)
	d.start("AwaitApproval", "order-43", "")
	base := d.serve()
	ctx := tab(t)

	do(t, ctx, chromedp.Navigate(base+"/instances"), chromedp.WaitVisible(css("#instances")))
	list := text(t, ctx, "#instances tbody")
	for _, want := range []string{"order-42", "order-43", "Ship"} {
		if !strings.Contains(list, want) {
			t.Errorf("the list lacks %s:\n%s", want, list)
		}
	}
	do(t, ctx, chromedp.SetValue(css("#status"), "Running"), chromedp.Click(css("#filter")),
		chromedp.WaitVisible(css(`#instances[data-status="Running"]`)))
	if list := text(t, ctx, "#instances tbody"); !strings.Contains(list, "order-43") || strings.Contains(list, "order-42") {
		t.Errorf("filtered by Running:\n%s", list)
	}

	do(t, ctx, chromedp.Navigate(base+"/instances?prefix=order-42"), chromedp.Click(css(`#instances a[href="/instances/order-42"]`)),
		chromedp.WaitVisible(css("#timeline")))
	tl := text(t, ctx, "#timeline")
	for _, want := range []string{"ActivityScheduled", "ActivityCompleted", "answers #", "TimerCreated", "TimerFired", "SubOrchestrationCompleted"} {
		if !strings.Contains(tl, want) {
			t.Errorf("the timeline lacks %s:\n%s", want, tl)
		}
	}
	do(t, ctx, chromedp.Click(css("#timeline a.child")), chromedp.WaitVisible(css("#parent")))
	if loc := get(t, ctx, chromedp.Location()); !strings.Contains(loc, "/instances/order-42") || !strings.Contains(text(t, ctx, "main"), "Ship") {
		t.Errorf("following the child link led to %s", loc)
	}
	do(t, ctx, chromedp.Click(css("#parent")), chromedp.WaitVisible(css("#timeline a.child")))
	if loc := get(t, ctx, chromedp.Location()); !strings.HasSuffix(loc, "/instances/order-42") {
		t.Errorf("the parent link led to %s", loc)
	}
}

func TestCancelAndRaise(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	d.start("AwaitApproval", "order-1", "")
	d.start("AwaitApproval", "order-2", "")
	d.running("order-1")
	d.running("order-2")
	base := d.serve()
	ctx := tab(t)

	// raise: the instance was waiting for the event and completes with it
	do(t, ctx, chromedp.Navigate(base+"/instances/order-1"), chromedp.WaitVisible(css("#raise-form")),
		chromedp.SetValue(css("#event"), "approve"), chromedp.SetValue(css("#data"), `{"by":"ops"}`))
	if get(t, ctx, chromedp.Evaluate[bool](`document.querySelector("#raise-form").checkValidity()`)) {
		t.Fatal("the raise form is valid without its confirmation")
	}
	do(t, ctx, chromedp.Click(css(`#raise-form input[name="confirm"]`)), chromedp.Click(css("#raise")),
		chromedp.WaitVisible(css(".done")))
	if done := text(t, ctx, ".done"); !strings.Contains(done, "raised event approve") {
		t.Errorf("after raise: %q", done)
	}
	if st := d.wait("order-1"); st.Status != durable.StatusCompleted || st.Output != `{"by":"ops"}` {
		t.Fatalf("order-1 ended %v with %q", st.Status, st.Output)
	}
	do(t, ctx, chromedp.Reload(), chromedp.WaitVisible(css("#timeline")))
	if st := text(t, ctx, "h1 .status"); st != "Completed" {
		t.Errorf("the page shows %q after the event", st)
	}

	// cancel, confirmed
	do(t, ctx, chromedp.Navigate(base+"/instances/order-2"), chromedp.WaitVisible(css("#cancel-form")),
		chromedp.SetValue(css(`#cancel-form input[name="reason"]`), "customer called"),
		chromedp.Click(css(`#cancel-form input[name="confirm"]`)), chromedp.Click(css("#cancel")),
		chromedp.WaitVisible(css(".done")))
	if st := d.wait("order-2"); st.Status != durable.StatusFailed {
		t.Fatalf("order-2 ended %v", st.Status)
	}
	do(t, ctx, chromedp.Reload(), chromedp.WaitVisible(css("#output")))
	if out := text(t, ctx, "#output"); !strings.Contains(out, "customer called") {
		t.Errorf("the failure shown lacks the reason: %q", out)
	}
}

func TestReadOnlyHidesActions(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	d.start("AwaitApproval", "order-1", "")
	d.running("order-1")
	base := d.serve("--read-only")
	ctx := tab(t)
	do(t, ctx, chromedp.Navigate(base+"/instances/order-1"), chromedp.WaitVisible(css("#timeline")))
	forms := get(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("form[method=post]").length`))
	if badge := text(t, ctx, ".badge"); forms != 0 || badge != "read-only" {
		t.Errorf("read-only page: %d action forms, badge %q", forms, badge)
	}
}

// TestOverviewRefreshesLive watches the overview's counters follow an
// instance started after the page loaded, without a reload.
func TestOverviewRefreshesLive(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	d.finish("Ship", "ship-1", "")
	base := d.serve("--sample", "200ms")
	ctx := tab(t)
	do(t, ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(css("#live svg")))
	if n := text(t, ctx, "#total"); n != "1" {
		t.Fatalf("the overview counts %s instances, want 1", n)
	}
	d.finish("Ship", "ship-2", "")
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](`document.querySelector("#total").textContent === "2"`)); err != nil {
		t.Fatalf("the overview never showed the second instance: %v (shows %s)", err, text(t, ctx, "#total"))
	}
}

// TestOverviewShowsPartitions: a namespace of four partitions gets a table
// of them, whose instances add up to the namespace's and follow new ones.
func TestOverviewShowsPartitions(t *testing.T) {
	t.Parallel()
	d := newDeploymentOf(t, 4)
	for i := range 4 {
		d.finish("Ship", fmt.Sprintf("ship-%d", i), "")
	}
	base := d.serve("--sample", "200ms")
	ctx := tab(t)
	do(t, ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(css("#partitions")))
	const sum = `[...document.querySelectorAll("#partitions tbody tr")].reduce((n, tr) => n + Number(tr.cells[1].textContent), 0)`
	const rows = `document.querySelectorAll("#partitions tbody tr").length`
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](rows+` === 4 && `+sum+` === 4 && document.querySelector("#total").textContent === "4"`)); err != nil {
		t.Fatalf("the partitions table does not add up to 4 instances in 4 rows: %v (total %s)", err, text(t, ctx, "#total"))
	}
	d.finish("Ship", "ship-4", "")
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](sum+` === 5`)); err != nil {
		t.Fatalf("the partitions table never counted the fifth instance: %v", err)
	}
}
