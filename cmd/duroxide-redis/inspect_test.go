package main

import (
	"strings"
	"testing"
)

// greeted runs Greet to completion: a root with KV, a custom status, an
// activity and one child.
func greeted(t *testing.T) *deployment {
	t.Helper()
	d := newDeployment(t)
	if st := d.finish(t, "greet-1", "Greet", `"ada"`); st.Output != `hello "ada" / child saw hello "ada"` {
		t.Fatalf("Greet output %q", st.Output)
	}
	return d
}

func TestInstancesListsPagesAndFilters(t *testing.T) {
	d := greeted(t)
	d.finish(t, "loop-1", "Loop", "2")

	expect(t, d.cli("instances"), 0, "INSTANCE", "greet-1", "Greet", "Completed", "loop-1", "just now")

	type pageJSON struct {
		Instances []instanceJSON `json:"instances"`
		Next      string         `json:"next"`
	}
	first := decode[pageJSON](t, d.cli("instances", "--json", "--limit", "2"))
	if len(first.Instances) != 2 || first.Next == "" {
		t.Fatalf("first page: %+v", first)
	}
	rest := decode[pageJSON](t, d.cli("instances", "--json", "--limit", "2", "--cursor", first.Next))
	if len(rest.Instances) != 1 || rest.Next != "" {
		t.Fatalf("second page: %+v", rest)
	}
	seen := map[string]bool{}
	for _, i := range append(first.Instances, rest.Instances...) {
		if i.Status != "Completed" || i.CreatedAt == nil || i.Execution == 0 || seen[i.Instance] {
			t.Errorf("instance %+v (seen before: %v)", i, seen[i.Instance])
		}
		seen[i.Instance] = true
	}

	r := d.cli("instances", "--status", "completed", "--limit", "1")
	expect(t, r, 0, "1 shown (next page: --cursor ")
	if rows := strings.Count(r.stdout, "\n"); rows != 3 {
		t.Errorf("want header, one row and the footer:\n%s", r.stdout)
	}
	expect(t, d.cli("instances", "--status", "Running"), 0, "no instances")
	r = d.cli("instances", "--name", "Loop", "--prefix", "loop-")
	expect(t, r, 0, "loop-1", "1 shown, the last page")
	if strings.Contains(r.stdout, "greet-1") {
		t.Errorf("--name Loop listed another orchestration:\n%s", r.stdout)
	}
	expectFailure(t, d.cli("instances", "--cursor", "bogus"), exitInvalid, `malformed cursor "bogus"`)
}

func TestShowReportsEverythingAboutAnInstance(t *testing.T) {
	d := greeted(t)
	r := d.cli("show", "greet-1")
	expect(t, r, 0, "Greet 1.0.0", "Completed", "greeting (version 1)", "KV (1):\n  greeted", "Children (1):\n  greet-1::sub::")
	if !strings.HasPrefix(r.stdout, "Instance:") {
		t.Errorf("show must start with the instance, not a blank header:\n%s", r.stdout)
	}

	got := decode[instanceDetail](t, d.cli("show", "greet-1", "--json"))
	if got.Instance != "greet-1" || got.Name != "Greet" || got.Status != "Completed" {
		t.Errorf("record: %+v", got.instanceJSON)
	}
	if got.KV["greeted"] != `"ada"` {
		t.Errorf("kv: %v", got.KV)
	}
	if got.CustomStatus == nil || got.CustomStatus.Status == nil || *got.CustomStatus.Status != "greeting" {
		t.Errorf("custom status: %+v", got.CustomStatus)
	}
	if len(got.Children) != 1 || !strings.HasPrefix(got.Children[0], "greet-1::sub::") {
		t.Errorf("children: %v", got.Children)
	}
	if len(got.Executions) != 1 || got.Executions[0].Events < 6 || got.Executions[0].CompletedAt == nil {
		t.Errorf("executions: %+v", got.Executions)
	}
}

func TestHistoryTablesEventsOfAnyExecution(t *testing.T) {
	d := greeted(t)
	expect(t, d.cli("history", "greet-1"), 0,
		"ID", "KIND", "OrchestrationStarted", "Greet", "ActivityScheduled", "Hello", "ActivityCompleted",
		"SubOrchestrationScheduled", "Child", "OrchestrationCompleted", `output=hello "ada"`)

	events := decode[[]map[string]any](t, d.cli("history", "greet-1", "--json"))
	if len(events) < 6 || events[0]["type"] != "OrchestrationStarted" || events[len(events)-1]["type"] != "OrchestrationCompleted" {
		t.Fatalf("events: %v", events)
	}

	d.finish(t, "loop-1", "Loop", "1")
	expect(t, d.cli("history", "loop-1", "--execution", "1"), 0, "OrchestrationContinuedAsNew", "input=2")
	expect(t, d.cli("history", "loop-1"), 0, "output=looped 3")
	expectFailure(t, d.cli("history", "loop-1", "--execution", "9"), exitNotFound, "execution 9 of instance loop-1 not found")
}

func TestTreeDrawsChildrenUnderTheirParent(t *testing.T) {
	d := greeted(t)
	r := d.cli("tree", "greet-1")
	expect(t, r, 0, "greet-1  Greet  Completed\n└─ greet-1::sub::", "Child  Completed")

	root := decode[treeNode](t, d.cli("tree", "greet-1", "--json"))
	if root.Instance != "greet-1" || len(root.Children) != 1 || root.Children[0].Name != "Child" || len(root.Children[0].Children) != 0 {
		t.Fatalf("tree: %+v", root)
	}
}

func TestStatsFromCounters(t *testing.T) {
	d := greeted(t)
	r := d.cli("stats")
	expect(t, r, 0)
	hasRow(t, r.stdout, "instances", "2")
	hasRow(t, r.stdout, "completed", "2")
	hasRow(t, r.stdout, "worker", "queue", "0")

	s := decode[statsJSON](t, d.cli("stats", "--json"))
	if s.Instances != 2 || s.Completed != 2 || s.Running != 0 || s.Executions != 2 || s.Events == 0 {
		t.Fatalf("stats: %+v", s)
	}

	r = d.cli("stats", "--watch", "--interval", "10ms", "--count", "3")
	expect(t, r, 0, "Ctrl-C to stop")
	if n := strings.Count(r.stdout, "Ctrl-C to stop"); n != 3 {
		t.Errorf("want 3 redraws, got %d", n)
	}
	if strings.Contains(r.stdout, "\x1b") {
		t.Errorf("--watch wrote terminal escapes to a non-terminal:\n%q", r.stdout)
	}
}
