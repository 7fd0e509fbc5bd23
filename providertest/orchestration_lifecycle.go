package providertest

import (
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Instance creation and metadata (provider_validation::instance_creation;
// duroxide src/providers/mod.rs enqueue_for_orchestrator "DO NOT create
// instance here"; duroxide.Provider docs "Instance creation"; duroxide
// docs/provider-implementation-guide.md ack pseudocode COALESCE of name and
// version).

// orcCreationCases lists the instance creation cases.
func orcCreationCases() []envCase {
	return []envCase{
		{"InstanceCreationViaMetadata", orcCreationViaMetadata},
		{"NoInstanceCreationOnEnqueue", orcNoCreationOnEnqueue},
		{"NullVersionHandling", orcNullVersion},
		{"SubOrchestrationInstanceCreation", orcSubOrchCreation},
		{"AckWithoutNameCreatesNoRecord", orcAckWithoutName},
		{"NameAndVersionUpdatedOnlyWhenGiven", orcNameVersionUpdates},
	}
}

// orcWantDescribed asserts the orchestration name and version a fetched
// item reports.
func (e *env) orcWantDescribed(item *duroxide.OrchestrationItem, name, version string) {
	e.t.Helper()
	if item.OrchestrationName != name || item.Version != version {
		e.t.Fatalf("%s fetched as %q version %q, want %q version %q", item.Instance, item.OrchestrationName, item.Version, name, version)
	}
}

// orcWantInfo asserts name, version and parent of a record when the
// provider has the management capability (info nil: it has none).
func (e *env) orcWantInfo(info *duroxide.InstanceInfo, name, version, parent string) {
	e.t.Helper()
	if info == nil {
		return
	}
	if info.OrchestrationName != name || info.OrchestrationVersion != version || info.ParentInstanceID != parent {
		e.t.Fatalf("instance info %+v, want name %q version %q parent %q", *info, name, version, parent)
	}
}

// orcFirstTurn acks the first turn of instance (fetched as item) with
// metadata m.
func (e *env) orcFirstTurn(item *duroxide.OrchestrationItem, m duroxide.ExecutionMetadata) {
	e.t.Helper()
	e.ack(item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID:  1,
		HistoryDelta: []duroxide.Event{started(item.Instance, 1, m.OrchestrationName, m.OrchestrationVersion)},
		Metadata:     m,
	})
}

// orcCreationViaMetadata proves the record appears with the first ack that
// carries an orchestration name, not on enqueue or fetch; before it, a fetch
// describes the instance from its StartOrchestration
// (provider_validation::instance_creation::test_instance_creation_via_metadata;
// duroxide docs/provider-implementation-guide.md fetch pseudocode "New
// instance: extract from StartOrchestration message").
func orcCreationViaMetadata(e *env) {
	start := startItem("A", "Orch")
	start.Version = ptr("1.2.0")
	e.enqueue(start, 0)
	e.orcWantRecord("A", false)
	item := e.fetchInstance("A")
	e.orcWantDescribed(item, "Orch", "1.2.0")
	e.orcWantExecution(item, 1)
	e.orcWantRecord("A", false)
	e.orcFirstTurn(item, duroxide.ExecutionMetadata{Status: "Running", OrchestrationName: "Orch", OrchestrationVersion: "1.2.0"})
	info := e.orcWantRecord("A", true)
	e.orcWantInfo(info, "Orch", "1.2.0", "")
	if info != nil && (info.CurrentExecutionID != 1 || info.Status != "Running") {
		e.t.Fatalf("instance info %+v, want execution 1 Running", *info)
	}
	e.orcWantDescribed(e.orcLock("A", orcRaise("A", "x")), "Orch", "1.2.0")
}

// orcNoCreationOnEnqueue proves enqueueing any message, now or delayed, creates
// no instance
// (provider_validation::instance_creation::test_no_instance_creation_on_enqueue).
func orcNoCreationOnEnqueue(e *env) {
	e.enqueue(startItem("A", "Orch"), 0)
	e.enqueue(startItem("B", "Orch"), longLock)
	e.enqueue(orcRaise("C", "x"), 0)
	e.enqueue(duroxide.CancelInstance{Instance: "D", Reason: "r"}, 0)
	for _, inst := range []string{"A", "B", "C", "D"} {
		e.orcWantRecord(inst, false)
		e.orcWantHistory(inst, 0)
		e.orcWantStatus(inst, 0, nil)
	}
	if a := e.p.Admin(); a != nil {
		if ids, err := a.ListInstances(e.ctx); err != nil || len(ids) != 0 {
			e.t.Fatalf("ListInstances = %v, %v; want none", ids, err)
		}
	}
}

// orcNullVersion proves an absent version is handled as empty: a
// StartOrchestration without version is fetched with version "", and an ack
// with an empty version creates a record whose version is ""
// (provider_validation::instance_creation::test_null_version_handling;
// duroxide.Provider docs "an empty version is stored as empty").
func orcNullVersion(e *env) {
	item := e.orcLock("A", startItem("A", "Orch"))
	e.orcWantDescribed(item, "Orch", "")
	e.orcFirstTurn(item, duroxide.ExecutionMetadata{Status: "Running", OrchestrationName: "Orch"})
	e.orcWantInfo(e.orcWantRecord("A", true), "Orch", "", "")
	e.orcWantDescribed(e.orcLock("A", orcRaise("A", "x")), "Orch", "")
}

// orcSubOrchCreation proves a StartOrchestration a parent sends in its ack does
// not create the child; the child is fetched like any new instance and gets its
// record (with its parent) from its own first ack
// (provider_validation::instance_creation::test_sub_orchestration_instance_creation).
func orcSubOrchCreation(e *env) {
	e.start("P", nil)
	item := e.orcLock("P", orcRaise("P", "1"))
	child := duroxide.StartOrchestration{
		Instance: "P-child", Orchestration: "Child", Input: `"c"`, Version: ptr("2.0.0"),
		ParentInstance: ptr("P"), ParentID: ptr(uint64(2)), ExecutionID: 1,
	}
	scheduled := duroxide.SubOrchestrationScheduledEvent{Name: "Child", Instance: "P-child", Input: `"c"`}
	e.ack(item.LockToken, duroxide.OrchestrationCommit{
		ExecutionID:       1,
		HistoryDelta:      []duroxide.Event{event(2, "P", 1, scheduled)},
		OrchestratorItems: []duroxide.WorkItem{child},
	})
	e.orcWantRecord("P-child", false)
	got := e.fetchInstance("P-child")
	e.wantMessages(got, child)
	e.orcWantDescribed(got, "Child", "2.0.0")
	if len(got.History) != 0 {
		e.t.Fatalf("new child fetched with history %v", eventIDs(got.History))
	}
	e.orcFirstTurn(got, duroxide.ExecutionMetadata{
		Status: "Running", OrchestrationName: "Child", OrchestrationVersion: "2.0.0", ParentInstanceID: "P",
	})
	e.orcWantInfo(e.orcWantRecord("P-child", true), "Child", "2.0.0", "P")
	if a := e.p.Admin(); a != nil {
		if parent, err := a.GetParentID(e.ctx, "P-child"); err != nil || parent != "P" {
			e.t.Fatalf("GetParentID = %q, %v; want P", parent, err)
		}
	}
}

// orcAckWithoutName proves an ack without orchestration name creates no record
// (its history is still written, to execution 1), and a later ack with a name
// does (duroxide.Provider docs "ack creates the instance record when none
// exists and Metadata.OrchestrationName is set").
func orcAckWithoutName(e *env) {
	item := e.orcLock("A", startItem("A", "Orch"))
	e.orcFirstTurn(item, duroxide.ExecutionMetadata{Status: "Running", OrchestrationVersion: "1.0.0"})
	e.orcWantRecord("A", false)
	e.orcWantHistory("A", 0, 1)
	c := orcCommit("A", 1, 2)
	c.Metadata.OrchestrationName = "Orch"
	e.orcTurn("A", c)
	e.orcWantInfo(e.orcWantRecord("A", true), "Orch", "", "")
	e.orcWantHistory("A", 0, 1, 2)
}

// orcNameVersionUpdates proves an ack changes the stored name and version only
// when it gives them (duroxide.Provider docs ExecutionMetadata "" = unchanged).
func orcNameVersionUpdates(e *env) {
	e.start("A", nil)
	steps := []struct{ name, version, wantName, wantVersion string }{
		{"", "", "Orch", "1.0.0"},
		{"", "2.0.0", "Orch", "2.0.0"},
		{"Renamed", "", "Renamed", "2.0.0"},
	}
	for i, s := range steps {
		c := orcCommit("A", 1, uint64(i+2))
		c.Metadata = duroxide.ExecutionMetadata{OrchestrationName: s.name, OrchestrationVersion: s.version}
		e.orcTurn("A", c)
		e.orcWantInfo(e.orcWantRecord("A", true), s.wantName, s.wantVersion, "")
		item := e.orcLock("A", orcRaise("A", "look"))
		e.orcWantDescribed(item, s.wantName, s.wantVersion)
		e.ack(item.LockToken, duroxide.OrchestrationCommit{ExecutionID: 1})
	}
}
