package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// ui serves the dashboard of the deployment on a test server.
func (d *deployment) ui(t *testing.T, o uiOptions) (*httptest.Server, *uiServer) {
	t.Helper()
	return serveUI(t, map[string]string{"DUROXIDE_REDIS_URL": redisURL, "DUROXIDE_REDIS_NAMESPACE": d.namespace}, o)
}

// serveUI connects as the command does in the environment env and serves
// the dashboard on a test server.
func serveUI(t *testing.T, env map[string]string, o uiOptions) (*httptest.Server, *uiServer) {
	t.Helper()
	c := &cli{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return env[k] }, now: time.Now, base: context.Background(), timeout: 10 * time.Second}
	s, err := c.open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	u, err := newUIServer(c, s, o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(u)
	t.Cleanup(ts.Close)
	return ts, u
}

// noRedirects lets a test see an action's redirect itself.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// get fetches a page and checks its status and that it holds every want.
func get(t *testing.T, ts *httptest.Server, path string, status int, want ...string) string {
	t.Helper()
	resp, err := noRedirects.Get(ts.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("GET %s: %d, want %d\n%s", path, resp.StatusCode, status, b)
	}
	for _, w := range want {
		if !strings.Contains(string(b), w) {
			t.Errorf("GET %s lacks %q", path, w)
		}
	}
	return string(b)
}

// post submits a form the way the page's own form does (same origin), with
// header changes by the test.
func post(t *testing.T, ts *httptest.Server, path string, form url.Values, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, ts.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", ts.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestUIPages(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	d.finish(t, "g-1", "Greet", "ada")
	d.finish(t, "loop-1", "Loop", "1")
	if err := d.client.StartOrchestration(context.Background(), "w-1", "Waiter", ""); err != nil {
		t.Fatal(err)
	}
	d.waitRunning(t, "w-1")
	ts, _ := d.ui(t, uiOptions{})

	if over := get(t, ts, "/", 200, `id="total">4<`, `id="running">1<`, `id="completed">3<`, "Throughput"); strings.Contains(over, `id="partitions"`) {
		t.Errorf("a namespace of one partition shows a partitions table")
	}
	get(t, ts, "/?partial=1", 200, `id="running">1<`)
	all := get(t, ts, "/instances", 200, "g-1", "loop-1", "w-1", "4 shown")
	if strings.Index(all, ">w-1<") > strings.Index(all, ">g-1<") {
		t.Errorf("instances are not newest first:\n%s", all)
	}
	running := get(t, ts, "/instances?status=running", 200, ">w-1<")
	if strings.Contains(running, ">g-1<") {
		t.Errorf("a completed instance under status Running")
	}
	byName := get(t, ts, "/instances?name=Child", 200, "Child")
	if strings.Contains(byName, ">g-1<") || strings.Contains(byName, ">w-1<") {
		t.Errorf("the name filter let others through")
	}
	byPrefix := get(t, ts, "/instances?prefix=loop", 200, ">loop-1<")
	if strings.Contains(byPrefix, ">g-1<") {
		t.Errorf("the prefix filter let others through")
	}
	get(t, ts, "/instances?status=Sleeping", 400, "unknown status")
	get(t, ts, "/instances?cursor=-3", 400, "cursor")

	// the timeline pairs each completion with its scheduling event, links
	// the child, and shows the payloads in full
	page := get(t, ts, "/instances/g-1", 200, "Greet", "hello ada / child saw hello ada", "greeting",
		"ActivityScheduled", "ActivityCompleted", "answers <a href=\"#e", "SubOrchestrationScheduled", `class="child"`,
		"greeted", `id="delete-form"`)
	if strings.Contains(page, `id="cancel-form"`) {
		t.Errorf("a completed instance offers cancel")
	}
	child := strings.SplitN(strings.SplitN(page, `class="child" href="`, 2)[1], `"`, 2)[0]
	get(t, ts, child, 200, `id="parent" href="/instances/g-1"`, "Child")
	get(t, ts, "/instances/loop-1?execution=1", 200, "ContinuedAsNew", `<tr class="current">`)
	get(t, ts, "/instances/loop-1?execution=9", 404, "execution 9 of instance loop-1 not found")
	get(t, ts, "/instances/nope", 404, "instance nope not found")
	get(t, ts, "/instances/w-1", 200, `id="cancel-form"`, `id="raise-form"`, `name="csrf"`)
	get(t, ts, "/static/app.js", 200, "data-live")

	// any instance id has a page: links escape it
	d.finish(t, "odd/ü id?x", "Child", "x")
	get(t, ts, "/instances?prefix=odd", 200, `href="/instances/odd%2F%C3%BC%20id%3Fx"`)
	get(t, ts, instanceURL("odd/ü id?x"), 200, "odd/ü id?x", "child saw x")
}

func TestUIActions(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	ctx := context.Background()
	for _, id := range []string{"w-1", "w-2", "w-3"} {
		if err := d.client.StartOrchestration(ctx, id, "Waiter", ""); err != nil {
			t.Fatal(err)
		}
		d.waitRunning(t, id)
	}
	ts, u := d.ui(t, uiOptions{})
	form := func(kv ...string) url.Values {
		v := url.Values{"csrf": {u.csrf}, "confirm": {"yes"}}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	refused := []struct {
		name   string
		form   url.Values
		header map[string]string
		status int
	}{
		{"no token", url.Values{"confirm": {"yes"}}, nil, 403},
		{"wrong token", url.Values{"csrf": {"x"}, "confirm": {"yes"}}, nil, 403},
		{"cross-site fetch", form(), map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"foreign origin", form(), map[string]string{"Sec-Fetch-Site": "", "Origin": "https://evil.example"}, 403},
		{"unconfirmed", url.Values{"csrf": {u.csrf}}, nil, 400},
	}
	for _, c := range refused {
		if resp := post(t, ts, "/instances/w-1/cancel", c.form, c.header); resp.StatusCode != c.status {
			t.Errorf("%s: %d, want %d", c.name, resp.StatusCode, c.status)
		}
	}
	if info, _ := d.prov.GetInstanceInfo(ctx, "w-1"); info.Status != "Running" {
		t.Fatalf("a refused cancel changed w-1: %s", info.Status)
	}

	resp := post(t, ts, "/instances/w-1/cancel", form("reason", "from the ui"), nil)
	if resp.StatusCode != 303 || !strings.HasPrefix(resp.Header.Get("Location"), "/instances/w-1?done=") {
		t.Fatalf("cancel: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if st := d.wait(t, "w-1"); st.Status != durable.StatusFailed || !strings.Contains(fmt.Sprintf("%+v", st.Failure.Application), "from the ui") {
		t.Fatalf("w-1 ended %v (%v)", st.Status, st.Failure)
	}
	if resp := post(t, ts, "/instances/w-1/cancel", form(), nil); resp.StatusCode != 409 {
		t.Errorf("cancel of a failed instance: %d, want 409", resp.StatusCode)
	}

	if resp := post(t, ts, "/instances/w-2/raise", form("event", "go", "data", "{"), nil); resp.StatusCode != 400 {
		t.Errorf("raise with bad JSON: %d, want 400", resp.StatusCode)
	}
	// w-2 waits for "go": "stop" is sent with a warning, and recorded but
	// delivered to nothing, which the timeline marks
	get(t, ts, "/instances/w-2", 200, `id="raise-hint"`, "recorded but not delivered", "duroxide-redis enqueue")
	resp = post(t, ts, "/instances/w-2/raise", form("event", "stop", "data", `"no"`), nil)
	if loc, _ := url.QueryUnescape(resp.Header.Get("Location")); resp.StatusCode != 303 || !strings.Contains(loc, "raised event stop; warning: instance w-2 is not waiting for event stop now") {
		t.Fatalf("raise of an event nobody waits for: %d to %q", resp.StatusCode, loc)
	}
	resp = post(t, ts, "/instances/w-2/raise", form("event", "go", "data", `"ok"`), nil)
	if loc, _ := url.QueryUnescape(resp.Header.Get("Location")); resp.StatusCode != 303 || strings.Contains(loc, "warning") {
		t.Fatalf("raise: %d to %q", resp.StatusCode, loc)
	}
	if st := d.wait(t, "w-2"); st.Status != durable.StatusCompleted || st.Output != `"ok"` {
		t.Fatalf("w-2 ended %v with %q", st.Status, st.Output)
	}
	// the events were taken in in the order sent: stop before go
	timelinePage := get(t, ts, "/instances/w-2", 200, "not delivered: no subscription was waiting")
	if n := strings.Count(timelinePage, `class="undelivered-mark"`); n != 1 {
		t.Errorf("%d events marked undelivered, want 1 (stop):\n%s", n, timelinePage)
	}
	if i, j := strings.Index(timelinePage, `class="undelivered-mark"`), strings.Index(timelinePage, "<summary><code>data</code> &#34;no&#34;"); i < 0 || j < i {
		t.Errorf("the mark is not on stop's event (mark at %d, its data at %d)", i, j)
	}

	if resp := post(t, ts, "/instances/w-3/delete", form(), nil); resp.StatusCode != 409 {
		t.Errorf("delete of a running instance without force: %d, want 409", resp.StatusCode)
	}
	resp = post(t, ts, "/instances/w-3/delete", form("force", "yes"), nil)
	if resp.StatusCode != 303 || !strings.HasPrefix(resp.Header.Get("Location"), "/instances?done=deleted+w-3") {
		t.Fatalf("delete: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	get(t, ts, "/instances/w-3", 404)
	get(t, ts, "/instances?done=deleted+w-3", 200, "deleted w-3")
}

func TestUIReadOnly(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	if err := d.client.StartOrchestration(context.Background(), "w-1", "Waiter", ""); err != nil {
		t.Fatal(err)
	}
	d.waitRunning(t, "w-1")
	ts, u := d.ui(t, uiOptions{readOnly: true})
	page := get(t, ts, "/instances/w-1", 200, "read-only")
	for _, f := range []string{"cancel-form", "raise-form", "delete-form", u.csrf} {
		if strings.Contains(page, f) {
			t.Errorf("the read-only page shows %s", f)
		}
	}
	for _, a := range []string{"cancel", "raise", "delete"} {
		resp := post(t, ts, "/instances/w-1/"+a, url.Values{"csrf": {u.csrf}, "confirm": {"yes"}, "event": {"go"}, "force": {"yes"}}, nil)
		if resp.StatusCode != 403 {
			t.Errorf("%s in read-only mode: %d, want 403", a, resp.StatusCode)
		}
	}
	if info, err := d.prov.GetInstanceInfo(context.Background(), "w-1"); err != nil || info.Status != "Running" {
		t.Fatalf("w-1 after refused actions: %+v %v", info, err)
	}
	if resp := post(t, ts, "/instances/w-1/cancel", nil, nil); resp.Header.Get("Allow") != "" && resp.StatusCode == 405 {
		t.Errorf("actions must be routed (and refused), not missing")
	}
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/instances/w-1/cancel", nil)
	if resp, err := noRedirects.Do(req); err != nil || resp.StatusCode != 405 {
		t.Errorf("GET of an action: %v %v, want 405", resp.StatusCode, err)
	}
}

func TestUIAuthentication(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	ts, _ := d.ui(t, uiOptions{token: "s3cret"})
	get(t, ts, "/instances", 401, "a token is required")
	get(t, ts, "/instances?token=wrong", 401)
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/instances", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	if resp, err := noRedirects.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("bearer: %v %v", resp.StatusCode, err)
	}
	resp, err := noRedirects.Get(ts.URL + "/instances?status=Running&token=s3cret")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/instances?status=Running" {
		t.Fatalf("login link: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 || cookies[0].Value != "s3cret" || !cookies[0].HttpOnly {
		t.Fatalf("login cookie: %+v", cookies)
	}
	req, _ = http.NewRequest(http.MethodGet, ts.URL+"/instances", nil)
	req.AddCookie(cookies[0])
	if resp, err := noRedirects.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("cookie: %v %v", resp.StatusCode, err)
	}

	ba, _ := d.ui(t, uiOptions{basicAuth: "ops:pw"})
	get(t, ba, "/", 401)
	req, _ = http.NewRequest(http.MethodGet, ba.URL+"/", nil)
	req.SetBasicAuth("ops", "pw")
	if resp, err := noRedirects.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("basic auth: %v %v", resp.StatusCode, err)
	}
}

// TestUIListerPages reads the index in small pages: every instance once,
// newest first, the filters applied across pages.
func TestUIListerPages(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	var want []string
	for _, id := range []string{"a-1", "b-1", "a-2", "b-2", "a-3"} {
		d.finish(t, id, "Child", `"x"`)
		want = append([]string{id}, want...)
	}
	_, u := d.ui(t, uiOptions{})
	read := func(f instanceFilter) []string {
		var got []string
		cursor := ""
		for range 10 {
			p, err := u.lister.List(context.Background(), f, cursor, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Instances) > 2 {
				t.Fatalf("a page of %d, limit 2", len(p.Instances))
			}
			for _, i := range p.Instances {
				got = append(got, i.InstanceID)
			}
			if cursor = p.Next; cursor == "" {
				return got
			}
		}
		t.Fatalf("paging never ended: %v", got)
		return nil
	}
	if got := strings.Join(read(instanceFilter{}), " "); got != strings.Join(want, " ") {
		t.Errorf("pages: %s, want %s", got, strings.Join(want, " "))
	}
	if got := strings.Join(read(instanceFilter{Prefix: "a-"}), " "); got != "a-3 a-2 a-1" {
		t.Errorf("prefix a-: %s", got)
	}
	if got := read(instanceFilter{Name: "Greet"}); len(got) != 0 {
		t.Errorf("name Greet: %v", got)
	}
}

func TestUIRejectsBadFlags(t *testing.T) {
	t.Parallel()
	expectFailure(t, runCLI(nil, "ui", "--sample", "0s"), exitInvalid, "--sample must be positive")
	expectFailure(t, runCLI(nil, "ui", "--basic-auth", "nopass"), exitInvalid, "--basic-auth must be USER:PASS")
}
