package providertest

import (
	"slices"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// admDiscoveryCases lists the listing, reading, info, hierarchy, metrics and queue-depth cases.
func admDiscoveryCases() []envCase {
	return []envCase{
		{"ListInstancesNewestFirst", admListInstances},
		{"ListInstancesByStatus", admListByStatus},
		{"ListInstancesByStatusFollowsCurrentExecution", admListByStatusFollows},
		{"ListExecutionsAscending", admListExecutions},
		{"ReadHistoryLatestAndByExecution", admReadHistory},
		{"LatestExecutionID", admLatestExecution},
		{"UnknownInstanceIsNotFound", admUnknown},
		{"GetInstanceInfo", admInstanceInfo},
		{"GetInstanceInfoTracksUpdates", admInstanceInfoUpdates},
		{"GetInstanceInfoPause", admInstanceInfoPause},
		{"GetExecutionInfo", admExecutionInfo},
		{"HierarchyChildrenParentTree", admHierarchy},
		{"GetSystemMetrics", admSystemMetrics},
		{"GetQueueDepthsVisibleUnlocked", admQueueDepths},
		{"GetQueueDepthsTimerQueue", admQueueDepthsTimers},
		{"GetQueueDepthsCountsTagsAndSessions", admQueueDepthsTagsSessions},
		{"GetQueueDepthsDelayedAbandon", admQueueDepthsAbandonDelay},
		{"GetQueueDepthsExpiredLocksCountAgain", admQueueDepthsExpired},
		{"ListInstancesPageWalksTheIndex", admPageWalk},
		{"ListInstancesPageFilters", admPageFilters},
		{"ListInstancesPageCursorOfADeletedInstance", admPageDeletedCursor},
		{"ListInstancesPageRejectsBadArguments", admPageInvalid},
	}
}

// admListInstances proves ListInstances returns every created instance, newest
// first, and never an instance that was only enqueued
// (provider_validation::management::test_list_instances; duroxide
// src/providers/mod.rs "sorted by creation time (newest first)").
func admListInstances(e *env) {
	admWantInstances(e)
	for _, id := range []string{"a", "b", "c"} {
		kvStart(e, id)
		e.wait(admApart)
	}
	e.enqueue(startItem("queued", "Orch"), 0)
	if got := admList(e); !slices.Equal(got, []string{"c", "b", "a"}) {
		e.t.Fatalf("ListInstances = %q, want [c b a] (newest first)", got)
	}
}

// admListByStatus proves ListInstancesByStatus filters by the status of each
// instance's current execution, including one created and completed by a single
// ack (provider_validation::management::test_list_instances_by_status).
func admListByStatus(e *env) {
	kvStart(e, "run")
	kvStart(e, "done").complete()
	kvStart(e, "fail").fail()
	kvStart(e, "next").continueAsNew()
	admOneShot(e, "oneshot")
	kvStart(e, "can").endAsNew() // last: leaves its ContinueAsNew queued
	admWantSet(e.t, "Running", admByStatus(e, "Running"), "run", "next")
	admWantSet(e.t, "Completed", admByStatus(e, "Completed"), "done", "oneshot")
	admWantSet(e.t, "Failed", admByStatus(e, "Failed"), "fail")
	admWantSet(e.t, "ContinuedAsNew", admByStatus(e, "ContinuedAsNew"), "can")
	admWantSet(e.t, "Bogus", admByStatus(e, "Bogus"))
}

// admOneShot creates an instance whose first ack both starts and completes
// it.
func admOneShot(e *env, id string) {
	e.t.Helper()
	e.enqueue(startItem(id, "Orch"), 0)
	item := e.fetchInstance(id)
	out := `"done"`
	e.ack(item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID: 1,
		HistoryDelta: []duroxide.Event{started(id, 1, "Orch", "1.0.0"),
			event(2, id, 1, duroxide.OrchestrationCompletedEvent{Output: out})},
		Metadata: duroxide.ExecutionMetadata{Status: "Completed", Output: &out,
			OrchestrationName: "Orch", OrchestrationVersion: "1.0.0"},
	})
}

// admWantOnlyIn asserts instance id is listed under status and under no
// other status.
func admWantOnlyIn(e *env, id, status string) {
	e.t.Helper()
	for _, s := range []string{"Running", "Completed", "Failed", "ContinuedAsNew"} {
		if got := slices.Contains(admByStatus(e, s), id); got != (s == status) {
			e.t.Fatalf("ListInstancesByStatus(%q) lists %q: %v, want %v (current status %s)", s, id, got, s == status, status)
		}
	}
}

// admListByStatusFollows proves an instance moves between status lists as
// its current execution changes (ContinuedAsNew, then a Running new
// execution, then Completed).
func admListByStatusFollows(e *env) {
	x := kvStart(e, "x")
	admWantOnlyIn(e, "x", "Running")
	x.endAsNew()
	admWantOnlyIn(e, "x", "ContinuedAsNew")
	x.startNext(nil)
	admWantOnlyIn(e, "x", "Running")
	x.complete()
	admWantOnlyIn(e, "x", "Completed")
}

// admListExecutions proves ListExecutions returns every execution id in
// ascending order (provider_validation::management::test_list_executions).
func admListExecutions(e *env) {
	admChain(e, "x", 3)
	kvStart(e, "single")
	admWantExecutions(e, "x", 1, 2, 3)
	admWantExecutions(e, "single", 1)
}

// admReadHistory proves ReadHistory returns the latest execution's events
// and ReadHistoryWithExecutionID each execution's, exactly as acked.
func admReadHistory(e *env) {
	a := adm(e)
	x := admChain(e, "x", 2)
	got, err := a.ReadHistory(e.ctx, "x")
	if err != nil {
		e.t.Fatalf("ReadHistory: %v", err)
	}
	sameEvents(e.t, "ReadHistory(x)", got, x.hist[2])
	for _, id := range []uint64{1, 2} {
		got, err := a.ReadHistoryWithExecutionID(e.ctx, "x", id)
		if err != nil {
			e.t.Fatalf("ReadHistoryWithExecutionID(x, %d): %v", id, err)
		}
		sameEvents(e.t, "ReadHistoryWithExecutionID", got, x.hist[id])
	}
}

// admWantLatest asserts LatestExecutionID.
func admWantLatest(e *env, id string, want uint64) {
	e.t.Helper()
	if got, err := adm(e).LatestExecutionID(e.ctx, id); err != nil || got != want {
		e.t.Fatalf("LatestExecutionID(%q) = %d, %v; want %d", id, got, err, want)
	}
}

// admLatestExecution proves LatestExecutionID follows the current execution:
// it moves when the new execution's first turn is acked.
func admLatestExecution(e *env) {
	x := kvStart(e, "x")
	admWantLatest(e, "x", 1)
	x.endAsNew()
	admWantLatest(e, "x", 1)
	x.startNext(nil)
	admWantLatest(e, "x", 2)
	x.continueAsNew()
	admWantLatest(e, "x", 3)
}

// admUnknown proves the operations that need an instance return a permanent
// "not found" error for an unknown one, including an instance that was only
// enqueued and an unknown execution of a known instance (duroxide.Provider docs
// "Admin edge cases").
func admUnknown(e *env) {
	a := adm(e)
	kvStart(e, "known")
	e.enqueue(startItem("queued", "Orch"), 0)
	for _, id := range []string{"ghost", "queued"} {
		_, err := a.LatestExecutionID(e.ctx, id)
		admWantNotFound(e.t, err, "latest_execution_id")
		_, err = a.GetInstanceInfo(e.ctx, id)
		admWantNotFound(e.t, err, "get_instance_info")
		_, err = a.GetExecutionInfo(e.ctx, id, 1)
		admWantNotFound(e.t, err, "get_execution_info")
		_, err = a.GetParentID(e.ctx, id)
		admWantNotFound(e.t, err, "get_parent_id")
	}
	_, err := a.GetExecutionInfo(e.ctx, "known", 7)
	admWantNotFound(e.t, err, "get_execution_info")
}

// admInstanceInfo proves GetInstanceInfo of a new instance: name, version,
// execution, Running status, no output, plausible times, root
// (provider_validation::management::test_get_instance_info).
func admInstanceInfo(e *env) {
	before := admNowMs()
	kvStart(e, "x")
	after := admNowMs()
	info := admInfo(e, "x")
	want := duroxide.InstanceInfo{InstanceID: "x", OrchestrationName: "Orch", OrchestrationVersion: "1.0.0",
		CurrentExecutionID: 1, Status: "Running", CreatedAt: info.CreatedAt, UpdatedAt: info.UpdatedAt}
	pause := info.Pause // optional (GetInstanceInfoPause checks it)
	info.Pause = nil
	if info.Output != nil || info != want {
		e.t.Fatalf("GetInstanceInfo = %+v, want %+v", info, want)
	}
	if pause != nil && *pause != (duroxide.PauseState{}) {
		e.t.Fatalf("GetInstanceInfo of a new instance: pause %+v, want not paused and nothing held", *pause)
	}
	admWantTime(e.t, "CreatedAt", info.CreatedAt, before, after)
	admWantTime(e.t, "UpdatedAt", info.UpdatedAt, before, after)
	if info.UpdatedAt < info.CreatedAt {
		e.t.Fatalf("UpdatedAt %d < CreatedAt %d", info.UpdatedAt, info.CreatedAt)
	}
}

// admInstanceInfoPause proves the optional InstanceInfo.Pause, on a
// provider that reports it: in GetInstanceInfo and in ListInstancesPage's
// records it is what InstancePauseState reads (paused or not, since when,
// the messages held), before a pause, while paused with messages held and
// after resume. Without InstancePauser the case is skipped; a provider that
// leaves Pause nil passes.
func admInstanceInfoPause(e *env) {
	p, ok := e.p.(duroxide.InstancePauser)
	if !ok {
		e.t.Skip("the provider does not implement duroxide.InstancePauser")
	}
	kvStart(e, "x")
	check := func(when string, paused bool, held uint64) {
		e.t.Helper()
		st, err := p.InstancePauseState(e.ctx, "x")
		if err != nil {
			e.t.Fatalf("%s: InstancePauseState: %v", when, err)
		}
		if st.Paused != paused || st.Held != held {
			e.t.Fatalf("%s: InstancePauseState = %+v, want paused %v, %d held", when, st, paused, held)
		}
		records := []duroxide.InstanceInfo{admInfo(e, "x")}
		if l, ok := adm(e).(duroxide.InstanceLister); ok {
			page, _, err := l.ListInstancesPage(e.ctx, duroxide.InstancePageFilter{IDPrefix: "x"}, "", 10)
			if err != nil || len(page) != 1 {
				e.t.Fatalf("%s: ListInstancesPage = %+v, %v; want x's record", when, page, err)
			}
			records = append(records, page[0])
		}
		for _, info := range records {
			if info.Pause != nil && *info.Pause != st {
				e.t.Fatalf("%s: record's Pause = %+v, InstancePauseState %+v", when, *info.Pause, st)
			}
		}
	}
	check("never paused", false, 0)
	if _, err := p.PauseInstance(e.ctx, "x"); err != nil {
		e.t.Fatal(err)
	}
	e.enqueue(duroxide.ExternalRaised{Instance: "x", Name: "go", Data: `""`}, 0)
	check("paused, an event held", true, 1)
	if _, err := p.ResumeInstance(e.ctx, "x"); err != nil {
		e.t.Fatal(err)
	}
	check("resumed", false, 1)
}

// admInstanceInfoUpdates proves GetInstanceInfo follows later acks: version
// changes, the current execution after ContinueAsNew, the final status and
// output, UpdatedAt moving forward while CreatedAt stays.
func admInstanceInfoUpdates(e *env) {
	x := kvStart(e, "x")
	first := admInfo(e, "x")
	e.wait(admApart)
	x.turnWith(duroxide.OrchestrationCommit{Metadata: duroxide.ExecutionMetadata{OrchestrationVersion: "1.1.0"}})
	info := admInfo(e, "x")
	if info.OrchestrationVersion != "1.1.0" || info.CreatedAt != first.CreatedAt || info.UpdatedAt <= first.UpdatedAt {
		e.t.Fatalf("after a version change GetInstanceInfo = %+v (before %+v): want version 1.1.0, same CreatedAt, later UpdatedAt", info, first)
	}
	x.continueAsNew()
	if info = admInfo(e, "x"); info.CurrentExecutionID != 2 || info.Status != "Running" || info.Output != nil {
		e.t.Fatalf("after ContinueAsNew GetInstanceInfo = %+v, want execution 2 Running without output", info)
	}
	x.complete()
	info = admInfo(e, "x")
	if info.Status != "Completed" || info.Output == nil || *info.Output != `"done"` || info.CurrentExecutionID != 2 {
		e.t.Fatalf("after completion GetInstanceInfo = %+v, want execution 2 Completed with output \"done\"", info)
	}
}

// admWantExec asserts an execution's status, output, event count and
// whether it has a completion time (not before its start).
func admWantExec(e *env, in *kvInst, execution uint64, status string, output *string) duroxide.ExecutionInfo {
	e.t.Helper()
	info := admExec(e, in.id, execution)
	ended := status != "Running"
	if info.ExecutionID != execution || info.Status != status || info.EventCount != len(in.hist[execution]) ||
		(info.CompletedAt != 0) != ended || (ended && info.CompletedAt < info.StartedAt) ||
		(info.Output == nil) != (output == nil) || (output != nil && *info.Output != *output) {
		e.t.Fatalf("GetExecutionInfo(%q, %d) = %+v (output %v), want status %s, %d events, output %v, completed %v",
			in.id, execution, info, info.Output, status, len(in.hist[execution]), output, ended)
	}
	return info
}

// admExecutionInfo proves GetExecutionInfo: event count, start time,
// CompletedAt 0 while running and set on Completed, Failed and ContinuedAsNew
// (provider_validation::management::test_get_execution_info; duroxide.Provider
// docs "Admin edge cases").
func admExecutionInfo(e *env) {
	before := admNowMs()
	x := kvStart(e, "x")
	info := admWantExec(e, x, 1, "Running", nil)
	admWantTime(e.t, "StartedAt", info.StartedAt, before, admNowMs())
	x.turn("", duroxide.ExternalEventEvent{Name: "poke", Data: `"x"`}, admSched())
	admWantExec(e, x, 1, "Running", nil)
	x.continueAsNew()
	info = admWantExec(e, x, 1, "ContinuedAsNew", ptr(`"next"`))
	admWantTime(e.t, "CompletedAt", info.CompletedAt, before, admNowMs())
	admWantExec(e, x, 2, "Running", nil)
	x.complete()
	admWantExec(e, x, 2, "Completed", ptr(`"done"`))
	f := kvStart(e, "f")
	f.fail()
	admWantExec(e, f, 1, "Failed", ptr(`"boom"`))
}

// admHierarchy proves ListChildren, GetParentID and GetInstanceTree over a
// parent with two children and a grandchild created through acks with
// Metadata.ParentInstanceID.
func admHierarchy(e *env) {
	a := adm(e)
	kvStart(e, "p")
	kvStartChild(e, "c1", "p")
	kvStartChild(e, "c2", "p")
	kvStartChild(e, "g", "c1")
	for id, want := range map[string][]string{"p": {"c1", "c2"}, "c1": {"g"}, "c2": nil, "g": nil, "ghost": nil} {
		kids, err := a.ListChildren(e.ctx, id)
		if err != nil {
			e.t.Fatalf("ListChildren(%q): %v", id, err)
		}
		admWantSet(e.t, "ListChildren("+id+")", kids, want...)
	}
	for id, want := range map[string]string{"p": "", "c1": "p", "c2": "p", "g": "c1"} {
		if got, err := a.GetParentID(e.ctx, id); err != nil || got != want {
			e.t.Fatalf("GetParentID(%q) = %q, %v; want %q", id, got, err, want)
		}
		if got := admInfo(e, id).ParentInstanceID; got != want {
			e.t.Fatalf("GetInstanceInfo(%q).ParentInstanceID = %q, want %q", id, got, want)
		}
	}
	for root, want := range map[string][]string{"p": {"p", "c1", "c2", "g"}, "c1": {"c1", "g"}, "g": {"g"}} {
		tree, err := a.GetInstanceTree(e.ctx, root)
		if err != nil || tree.RootID != root {
			e.t.Fatalf("GetInstanceTree(%q) = %+v, %v", root, tree, err)
		}
		admWantSet(e.t, "GetInstanceTree("+root+").AllIDs", tree.AllIDs, want...)
	}
}

// admSystemMetrics proves GetSystemMetrics totals follow instances as they
// start, complete, fail, continue as new and get deleted
// (provider_validation::management::test_get_system_metrics).
func admSystemMetrics(e *env) {
	admWantMetrics(e, duroxide.SystemMetrics{})
	a, b, c := kvStart(e, "a"), kvStart(e, "b"), kvStart(e, "c")
	admWantMetrics(e, duroxide.SystemMetrics{TotalInstances: 3, TotalExecutions: 3, RunningInstances: 3, TotalEvents: 3})
	a.complete()
	admWantMetrics(e, duroxide.SystemMetrics{TotalInstances: 3, TotalExecutions: 3, RunningInstances: 2, CompletedInstances: 1, TotalEvents: 4})
	b.fail()
	admWantMetrics(e, duroxide.SystemMetrics{TotalInstances: 3, TotalExecutions: 3, RunningInstances: 1,
		CompletedInstances: 1, FailedInstances: 1, TotalEvents: 5})
	c.continueAsNew()
	admWantMetrics(e, duroxide.SystemMetrics{TotalInstances: 3, TotalExecutions: 4, RunningInstances: 1,
		CompletedInstances: 1, FailedInstances: 1, TotalEvents: 7})
	res, err := adm(e).DeleteInstance(e.ctx, "a", false)
	admWantDeleted(e.t, "DeleteInstance(a)", res, err, duroxide.DeleteInstanceResult{InstancesDeleted: 1, ExecutionsDeleted: 1, EventsDeleted: 2})
	admWantMetrics(e, duroxide.SystemMetrics{TotalInstances: 2, TotalExecutions: 3, RunningInstances: 1, FailedInstances: 1, TotalEvents: 5})
}

// admQueueDepths proves OrchestratorQueue and WorkerQueue count unlocked items
// visible now: locking takes items out of the count, abandoning puts them back
// (provider_validation::management::test_get_queue_depths; duroxide.Provider
// docs "Admin edge cases").
func admQueueDepths(e *env) {
	admWantDepths(e, 0, 0, 0)
	e.enqueue(startItem("a", "Orch"), 0)
	e.enqueue(duroxide.ExternalRaised{Instance: "a", Name: "ev", Data: "1"}, 0)
	e.enqueue(startItem("b", "Orch"), 0)
	admWantDepths(e, 3, 0, 0)
	e.enqueueWork(admAct("a", 1, 2))
	e.enqueueWork(admAct("b", 1, 2))
	admWantDepths(e, 3, 2, 0)
	item := e.fetchInstance("a")
	admWantDepths(e, 1, 2, 0)
	w := e.fetchWork(longLock, nil, duroxide.DefaultOnly())
	if w == nil {
		e.t.Fatal("FetchWorkItem returned nothing, want an item")
	}
	admWantDepths(e, 1, 1, 0)
	e.abandonWork(w.LockToken, 0, false)
	e.abandon(item.LockToken, 0, false)
	admWantDepths(e, 3, 2, 0)
}

// admQueueDepthsTagsSessions proves WorkerQueue counts ready items of every
// tag queue and of sessions, claimed or not, and stops counting them while
// locked.
func admQueueDepthsTagsSessions(e *env) {
	gpu, sid := "gpu", "sess-1"
	tagged, sess := admAct("a", 1, 2), admAct("a", 1, 3)
	tagged.Tag, sess.SessionID = &gpu, &sid
	e.enqueueWork(admAct("a", 1, 1))
	e.enqueueWork(tagged)
	e.enqueueWork(sess)
	admWantDepths(e, 0, 3, 0)
	cfg := &duroxide.SessionFetchConfig{OwnerID: "w1", LockTimeout: longLock}
	var tokens []string
	for range 3 {
		w := e.fetchWork(longLock, cfg, duroxide.DefaultAndTags("gpu"))
		if w == nil {
			e.t.Fatal("FetchWorkItem returned nothing, want an item")
		}
		tokens = append(tokens, w.LockToken)
	}
	admWantDepths(e, 0, 0, 0)
	for _, tok := range tokens {
		e.abandonWork(tok, 0, false)
	}
	admWantDepths(e, 0, 3, 0)
}

// admQueueDepthsTimers proves TimerQueue counts orchestrator messages visible
// later (a delayed enqueue, a future TimerFired of an ack) and that a
// message moves to OrchestratorQueue once it is visible, as does a
// TimerFired whose time has passed.
func admQueueDepthsTimers(e *env) {
	x := kvStart(e, "x")
	e.enqueue(duroxide.ExternalRaised{Instance: "x", Name: "late", Data: "1"}, time.Minute)
	admWantDepths(e, 0, 0, 1)
	base := x.next
	x.turnWith(duroxide.OrchestrationCommit{OrchestratorItems: []duroxide.WorkItem{
		duroxide.TimerFired{Instance: "x", ExecutionID: 1, ID: base, FireAtMs: admNowMs() + 60_000},
	}}, duroxide.TimerCreatedEvent{FireAtMs: admNowMs() + 60_000})
	admWantDepths(e, 0, 0, 2)
	e.enqueue(duroxide.ExternalRaised{Instance: "x", Name: "soon", Data: "2"}, 300*time.Millisecond)
	admWantDepths(e, 0, 0, 3)
	want := duroxide.QueueDepths{OrchestratorQueue: 1, TimerQueue: 2}
	eventually(e.t, 10*time.Second, "the delayed message counted as visible", func() bool { return admDepths(e) == want })
	base = x.next
	x.turnWith(duroxide.OrchestrationCommit{OrchestratorItems: []duroxide.WorkItem{
		duroxide.TimerFired{Instance: "x", ExecutionID: 1, ID: base, FireAtMs: admNowMs() - 10_000},
	}}, duroxide.TimerCreatedEvent{FireAtMs: admNowMs() - 10_000})
	admWantDepths(e, 1, 0, 2)
}

// admQueueDepthsAbandonDelay proves items abandoned with a delay are not
// counted as visible now: the orchestrator messages count as visible later
// (TimerQueue) and the worker item is not counted (TimerQueue counts
// orchestrator messages only).
func admQueueDepthsAbandonDelay(e *env) {
	e.enqueue(startItem("a", "Orch"), 0)
	e.enqueue(duroxide.ExternalRaised{Instance: "a", Name: "ev", Data: "1"}, 0)
	e.enqueueWork(admAct("a", 1, 2))
	item := e.fetchInstance("a")
	w := e.fetchWork(longLock, nil, duroxide.DefaultOnly())
	if w == nil {
		e.t.Fatal("FetchWorkItem returned nothing, want an item")
	}
	admWantDepths(e, 0, 0, 0)
	e.abandon(item.LockToken, time.Minute, false)
	e.abandonWork(w.LockToken, time.Minute, false)
	admWantDepths(e, 0, 0, 2)
	e.noFetch(nil)
}

// admQueueDepthsExpired proves items whose lock expired are unlocked and
// visible again, so they count in OrchestratorQueue / WorkerQueue before
// anyone fetches them again.
func admQueueDepthsExpired(e *env) {
	e.enqueue(startItem("a", "Orch"), 0)
	e.enqueue(duroxide.ExternalRaised{Instance: "a", Name: "ev", Data: "1"}, 0)
	e.enqueueWork(admAct("a", 1, 2))
	if item := e.fetch(shortLock, nil); item == nil {
		e.t.Fatal("FetchOrchestrationItem returned nothing, want instance a")
	}
	if w := e.fetchWork(shortLock, nil, duroxide.DefaultOnly()); w == nil {
		e.t.Fatal("FetchWorkItem returned nothing, want an item")
	}
	admWantDepths(e, 0, 0, 0)
	e.wait(afterShort)
	admWantDepths(e, 2, 1, 0)
}
