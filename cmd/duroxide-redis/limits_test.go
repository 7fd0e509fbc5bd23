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
	expect(t, d.cli("limits", "list"), exitOK, "ACTIVITY", "Charge", "Mail")
	r := d.cli("limits", "list", "--json")
	var ls []limitJSON
	if r.code != exitOK || json.Unmarshal([]byte(r.stdout), &ls) != nil {
		t.Fatalf("list --json: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if len(ls) != 2 || ls[0] != (limitJSON{Name: "Charge", Concurrency: 3}) || ls[1] != (limitJSON{Name: "Mail", RatePerSecond: 50, Burst: 10}) {
		t.Fatalf("list --json = %+v", ls)
	}
	expect(t, d.cli("limits", "delete", "Charge"), exitOK, "unlimited: Charge")
	expect(t, d.cli("limits", "delete", "Charge"), exitOK, "had no limit: Charge")
	expectFailure(t, d.cli("limits", "set", "Charge", "--concurrency", "-1"), exitInvalid, "negative concurrency -1")
	expectFailure(t, d.cli("limits", "set", "Charge"), exitInvalid, "sets no bound")
	expectFailure(t, d.cli("limits", "frob"), exitInvalid, "expected list | set NAME")
}
