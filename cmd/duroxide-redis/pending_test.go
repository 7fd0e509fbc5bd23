package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// waitPendingNote waits until a runtime has handed instance's start back
// with a note: the signal the CLI's views read.
func (d *deployment) waitPendingNote(t *testing.T, instance string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if n, err := d.prov.PendingStart(context.Background(), instance); err == nil && n != nil {
			return
		}
		select {
		case <-d.notes: // a note was written: read again
		case <-deadline:
			t.Fatalf("no pending-start note for %s", instance)
		}
	}
}

// A start of an orchestration no runtime has is visible with its cause in
// show, the instances listing, the other commands' "not found", and the
// dashboard, instead of "not found" until it is poisoned.
func TestAStartNoRuntimeCanRunShowsAsPending(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	expect(t, d.cli("start", "Ghost", "ghost-1", "--input", `"x"`), exitOK, "started: ghost-1 (orchestration Ghost)")
	d.waitPendingNote(t, "ghost-1")
	const cause = "pending start: orchestration Ghost (version any) is not registered in the runtimes that fetched it (attempt "

	show := d.cli("show", "ghost-1")
	expect(t, show, exitOK, cause, "register the orchestration")
	hasRow(t, show.stdout, "Status:", "Pending")
	got := decode[instanceDetail](t, d.cli("show", "ghost-1", "--json"))
	if got.Status != "Pending" || got.Pending == nil || !strings.HasPrefix(got.Pending.Message, cause) || got.Pending.Orchestration != "Ghost" || got.Pending.MaxAttempts != 10 {
		t.Errorf("show --json: %+v %+v", got, got.Pending)
	}

	list := d.cli("instances")
	expect(t, list, exitOK, "Pending starts (1)", "ghost-1", "is not registered in the runtimes that fetched it")
	listed := decode[struct {
		Pending []pendingJSON `json:"pending"`
	}](t, d.cli("instances", "--json"))
	if len(listed.Pending) != 1 || listed.Pending[0].Instance != "ghost-1" {
		t.Errorf("instances --json pending: %+v", listed.Pending)
	}
	if other := d.cli("instances", "--prefix", "other"); strings.Contains(other.stdout, "ghost-1") {
		t.Errorf("a prefix filter let the pending start through:\n%s", other.stdout)
	}

	expectFailure(t, d.cli("history", "ghost-1"), exitNotFound, "history: instance ghost-1 not found: "+cause)
	expectFailure(t, d.cli("start", "Ghost", "ghost-1"), exitConflict, "instance ghost-1 already has a "+cause)

	ts, _ := d.ui(t, uiOptions{})
	get(t, ts, "/instances/ghost-1", 200, `id="pending"`, cause, ">Pending<")
	get(t, ts, "/instances", 200, "Pending starts", `href="/instances/ghost-1"`, cause)
}
