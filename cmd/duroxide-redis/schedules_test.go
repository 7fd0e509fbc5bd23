package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// TestSchedulesVerbs drives a schedule through every verb of the
// schedules command against a running deployment.
func TestSchedulesVerbs(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	r := d.cli("schedules", "create", "greeter", "--orchestration", "Greet", "--input", `"ada"`, "--every", "1h", "--overlap", "allow_all")
	if r.code != exitOK || !strings.Contains(r.stdout, "created: greeter") {
		t.Fatalf("create: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := d.cli("schedules", "create", "greeter", "--orchestration", "Greet", "--every", "1h"); r.code != exitConflict {
		t.Fatalf("create twice: exit %d, want a refusal: %q", r.code, r.stderr)
	}
	r = d.cli("schedules", "list")
	if r.code != exitOK || !strings.Contains(r.stdout, "greeter") || !strings.Contains(r.stdout, "every 1h0m0s") || !strings.Contains(r.stdout, "allow_all") {
		t.Fatalf("list: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = d.cli("schedules", "trigger", "greeter", "--json")
	var act actionJSON
	if r.code != exitOK || json.Unmarshal([]byte(r.stdout), &act) != nil {
		t.Fatalf("trigger: %d %q %q", r.code, r.stdout, r.stderr)
	}
	inst := strings.TrimPrefix(act.Detail, "instance ")
	if !strings.HasPrefix(inst, "greeter@") {
		t.Fatalf("trigger names instance %q", inst)
	}
	if st := d.wait(t, inst); st.Output == "" {
		t.Fatalf("the triggered instance %s has no output", inst)
	}
	r = d.cli("schedules", "describe", "greeter", "--next", "3", "--json")
	var sj scheduleJSON
	if r.code != exitOK || json.Unmarshal([]byte(r.stdout), &sj) != nil {
		t.Fatalf("describe: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if len(sj.Next) != 3 || len(sj.Recent) == 0 || sj.Recent[0].Instance != inst || sj.Recent[0].Outcome != "started" {
		t.Fatalf("describe: next %v, recent %+v; want 3 next times and the triggered firing", sj.Next, sj.Recent)
	}
	if r := d.cli("schedules", "pause", "greeter", "--note", "maintenance"); r.code != exitOK {
		t.Fatalf("pause: %d %q", r.code, r.stderr)
	}
	r = d.cli("schedules", "describe", "greeter")
	if r.code != exitOK || !strings.Contains(r.stdout, "paused: maintenance") || !strings.Contains(r.stdout, inst) {
		t.Fatalf("describe paused: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := d.cli("schedules", "resume", "greeter"); r.code != exitOK {
		t.Fatalf("resume: %d %q", r.code, r.stderr)
	}
	if r := d.cli("schedules", "delete", "greeter"); r.code != exitOK {
		t.Fatalf("delete: %d %q", r.code, r.stderr)
	}
	if r := d.cli("schedules", "describe", "greeter"); r.code != exitNotFound {
		t.Fatalf("describe after delete: exit %d, want %d: %q", r.code, exitNotFound, r.stderr)
	}
	if r := d.cli("schedules", "trigger", "nosuch"); r.code != exitNotFound {
		t.Fatalf("trigger of no schedule: exit %d, want %d: %q", r.code, exitNotFound, r.stderr)
	}
}

// TestSchedulesRejectsBadDefinitions checks that a definition durable
// refuses is a usage error that writes nothing.
func TestSchedulesRejectsBadDefinitions(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	for _, args := range [][]string{
		{"schedules", "create", "x", "--orchestration", "Greet", "--cron", "61 * * * *"},
		{"schedules", "create", "x", "--orchestration", "Greet"},
		{"schedules", "create", "x", "--orchestration", "Greet", "--every", "1h", "--overlap", "sometimes"},
		{"schedules", "create", "x", "--orchestration", "Greet", "--cron", "@daily", "--tz", "Mars/Olympus"},
		{"schedules", "pause", "x", "--cron", "@daily"},
		{"schedules", "frobnicate", "x"},
	} {
		if r := d.cli(args...); r.code != exitInvalid {
			t.Errorf("%v: exit %d, want %d: %q", args, r.code, exitInvalid, r.stderr)
		}
	}
	if r := d.cli("schedules", "list"); r.code != exitOK || strings.TrimSpace(r.stdout) != "no schedules" {
		t.Fatalf("list after refusals: %d %q", r.code, r.stdout)
	}
}

// TestUISchedulesPage shows a schedule with its next times and a firing
// linked to its instance.
func TestUISchedulesPage(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	ts, _ := d.ui(t, uiOptions{})
	get(t, ts, "/schedules", 200, "no schedules")
	if r := d.cli("schedules", "create", "greeter", "--orchestration", "Greet", "--input", `"ada"`, "--cron", "@daily", "--tz", "Europe/Paris"); r.code != exitOK {
		t.Fatalf("create: %q", r.stderr)
	}
	r := d.cli("schedules", "trigger", "greeter", "--json")
	var act actionJSON
	if r.code != exitOK || json.Unmarshal([]byte(r.stdout), &act) != nil {
		t.Fatalf("trigger: %d %q", r.code, r.stderr)
	}
	inst := strings.TrimPrefix(act.Detail, "instance ")
	d.wait(t, inst)
	var page string
	durabletest.Eventually(t, "the schedules page showing the triggered firing", func() (bool, error) {
		page = get(t, ts, "/schedules", 200, "greeter", "@daily (Europe/Paris)", "active")
		return strings.Contains(page, "started"), nil
	})
	if !strings.Contains(page, instanceURL(inst)) {
		t.Fatalf("the firing does not link its instance %s:\n%s", inst, page)
	}
}

// TestUIFlowPage shows the limits of both kinds, with what an orchestration
// limit holds, and the names with a priority or a pause.
func TestUIFlowPage(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	ts, _ := d.ui(t, uiOptions{})
	get(t, ts, "/flow", 200, "no limits", "no priorities or paused names")
	for _, args := range [][]string{
		{"limits", "set", "ChargeCard", "--concurrency", "3"},
		{"limits", "set", "Nightly", "--orchestration", "--concurrency", "2"},
		{"flow", "priority", "activity", "ChargeCard", "5"},
		{"flow", "pause", "Nightly"},
	} {
		if r := d.cli(args...); r.code != exitOK {
			t.Fatalf("%v: %q", args, r.stderr)
		}
	}
	page := get(t, ts, "/flow", 200, "ChargeCard", "Nightly", "orchestration", "paused")
	for _, want := range []string{"<td>activity</td><td>ChargeCard</td>\n  <td>3</td>", "<td>orchestration</td><td>Nightly</td>\n  <td>2</td>", "<td>activity</td><td>ChargeCard</td><td>5</td>"} {
		if !strings.Contains(page, want) {
			t.Fatalf("the flow page lacks %q:\n%s", want, page)
		}
	}
}
