package main

import (
	"encoding/json"
	"testing"
)

// TestLimitsVerbs sets, lists, replaces and deletes a limit with the limits
// command, and refuses bad input before writing.
func TestLimitsVerbs(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	expect(t, d.cli("limits", "list"), exitOK, "no limits")
	expect(t, d.cli("limits", "set", "Charge", "--concurrency", "3"), exitOK, "limited: Charge (concurrency 3)")
	expect(t, d.cli("limits", "set", "Mail", "--rate", "50", "--burst", "10"), exitOK, "limited: Mail (rate 50/s, burst 10)")
	expect(t, d.cli("limits", "set", "Charge", "--orchestration", "--concurrency", "2"), exitOK, "limited: orchestration Charge (2 running at once)")
	expect(t, d.cli("limits", "list"), exitOK, "KIND", "activity", "orchestration", "Charge", "Mail", "HELD")
	r := d.cli("limits", "list", "--json")
	var ls []limitJSON
	if r.code != exitOK || json.Unmarshal([]byte(r.stdout), &ls) != nil {
		t.Fatalf("list --json: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if len(ls) != 3 || ls[0] != (limitJSON{Kind: "activity", Name: "Charge", Concurrency: 3}) ||
		ls[1] != (limitJSON{Kind: "activity", Name: "Mail", RatePerSecond: 50, Burst: 10}) ||
		ls[2].Kind != "orchestration" || ls[2].Name != "Charge" || ls[2].Concurrency != 2 ||
		ls[2].Running == nil || *ls[2].Running != 0 || ls[2].Held == nil || *ls[2].Held != 0 {
		t.Fatalf("list --json = %+v", ls)
	}
	expect(t, d.cli("limits", "delete", "Charge"), exitOK, "unlimited: Charge")
	expect(t, d.cli("limits", "delete", "Charge"), exitOK, "had no limit: Charge")
	// the orchestration's limit is its own: the activity's delete left it
	expect(t, d.cli("limits", "list"), exitOK, "orchestration")
	expect(t, d.cli("limits", "delete", "Charge", "--orchestration"), exitOK, "unlimited: orchestration Charge")
	expect(t, d.cli("limits", "delete", "Charge", "--orchestration"), exitOK, "had no limit: orchestration Charge")
	expectFailure(t, d.cli("limits", "set", "Batch", "--orchestration", "--rate", "5"), exitInvalid, "limit of orchestration Batch: an orchestration limit bounds running instances (concurrency) only")
	expectFailure(t, d.cli("limits", "set", "Charge", "--concurrency", "-1"), exitInvalid, "negative concurrency -1")
	expectFailure(t, d.cli("limits", "set", "Charge"), exitInvalid, "sets no bound")
	expectFailure(t, d.cli("limits", "frob"), exitInvalid, "expected list | set NAME")
}

// A start held by its orchestration's limit on running instances shows as
// pending by the limit (with its hint), and limits list counts it.
func TestLimitsOrchestrationHeldStartShows(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	expect(t, d.cli("limits", "set", "Waiter", "--orchestration", "--concurrency", "1"), exitOK, "limited: orchestration Waiter (1 running at once)")
	// w-1 waits for an event, holding the only slot
	expect(t, d.cli("start", "Waiter", "w-1"), exitOK, "started: w-1")
	expect(t, d.cli("start", "Waiter", "w-2"), exitOK, "started: w-2")
	show := d.cli("show", "w-2")
	expect(t, show, exitOK, "pending start: orchestration Waiter (version any) is held by its limit on running instances", "runs when a running instance of Waiter ends")
	hasRow(t, show.stdout, "Status:", "Pending")
	var ls []limitJSON
	r := d.cli("limits", "list", "--json")
	if r.code != exitOK || json.Unmarshal([]byte(r.stdout), &ls) != nil || len(ls) != 1 || ls[0].Held == nil || *ls[0].Held != 1 || *ls[0].Running != 1 {
		t.Fatalf("list --json: %d %q %q", r.code, r.stdout, r.stderr)
	}
}
