package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// historyPageSize is how many events one page of the timeline shows: a
// page of a history of any length is rendered and laid out quickly (a
// whole 12,000-event history was a 4.4 MB page taking seconds).
const historyPageSize = 100

// maxFailureLinks caps the failures the page links to above the timeline.
const maxFailureLinks = 20

// failuresKind is the kind filter that keeps every failure event.
const failuresKind = "failures"

// instanceData is the instance page.
type instanceData struct {
	instanceDetail
	Tree      *treeNode
	Execution uint64 // the execution whose history is shown
	Input     *string
	Cancelled bool // Failed because it was cancelled
	Waiting   *waitingFor
	Live      bool // the page refreshes itself while the instance runs
	History   historyPage
	// Rerun is the id offered for starting the failed instance again
	// (empty when not offered: a child, whose parent saw the failure).
	Rerun string
}

// historyPage is the part of an execution's history the page shows.
type historyPage struct {
	Total    int               // events of the execution
	Matching int               // events the kind filter keeps
	Kind     string            // the kind filter, "" for every kind
	Kinds    []kindCount       // the kinds of the execution, for the filter
	Rows     []timelineRow     // this page's
	Page     int               // 1-based
	Pages    int               // of the filtered events
	Links    map[string]string // first, prev, next, last (absent: no such page)
	Failures []failureLink     // the first failures, linked to their page
	// MoreFailures counts the failures beyond the links.
	MoreFailures int
}

type kindCount struct {
	Kind  string
	Count int
}

// failureLink is a failure event, linked to the page that shows it.
type failureLink struct {
	ID   uint64
	Kind string
	URL  string
}

// timelineRow is one event of the history, linked to the event that
// scheduled it or to the one that answered it.
type timelineRow struct {
	ID      uint64
	Kind    string
	Name    string
	At      uint64        // ms since the epoch
	Since   time.Duration // since the execution's first event
	Fields  []eventField
	Failed  bool
	Source  *eventRef     // the scheduling event this one completes
	Answer  *eventRef     // the event completing this one
	Took    time.Duration // between the scheduling event and its answer
	ChildID string        // the sub-orchestration this event names
	// Undelivered marks an ExternalEvent no subscription was waiting for:
	// recorded, but given to no wait.
	Undelivered bool
}

// eventRef is another event of the execution, with the address of the
// page that shows it.
type eventRef struct {
	ID   uint64
	Kind string
	URL  string
}

func (u *uiServer) instance(w http.ResponseWriter, r *http.Request) {
	s, cancel := u.session(r)
	defer cancel()
	id := r.PathValue("id")
	q := r.URL.Query()
	d, err := s.detail(id)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	data := instanceData{instanceDetail: d, Execution: d.Execution}
	if d.Pending != nil { // no record yet: nothing else to read
		u.render(w, r, http.StatusOK, "instance", id, data)
		return
	}
	if e := q.Get("execution"); e != "" {
		if data.Execution, err = strconv.ParseUint(e, 10, 64); err != nil || data.Execution == 0 {
			u.fail(w, r, usageErr("instance", "bad execution %q", e))
			return
		}
	}
	if data.Tree, err = s.tree(id); err != nil {
		u.fail(w, r, err)
		return
	}
	events, err := u.histories.read(s, d.instanceJSON, data.Execution, data.Executions)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	if len(events) > 0 {
		if st, ok := events[0].Kind.(duroxide.OrchestrationStartedEvent); ok {
			data.Input = &st.Input
		}
	}
	current := data.Execution == d.Execution
	if d.Status == "Failed" {
		// the failure event says it for sure; an older execution's page
		// has only the stored message of the current one
		data.Cancelled = current && cancelledBy(events) || !current && strings.HasPrefix(optional(d.Output), cancelledPrefix)
	}
	data.Live = d.Status == "Running"
	if current && d.Status == "Running" {
		var ia redisprovider.InstanceActivity
		if ia, err = s.prov.InstanceActivity(s.ctx, id); err != nil {
			u.fail(w, r, err)
			return
		}
		data.Waiting = waitingOf(events, ia, data.Tree, d.Children, u.c.now())
	}
	if d.Status == "Failed" && d.Parent == "" && !u.opts.readOnly {
		data.Rerun = id + "-rerun"
	}
	if r.URL.Query().Get("partial") != "1" { // the refreshed part has no history
		base := instanceURL(id) + "?execution=" + strconv.FormatUint(data.Execution, 10)
		if data.History, err = historyOf(events, id, d.Children, base, q.Get("kind"), q.Get("page"), q.Get("at")); err != nil {
			u.fail(w, r, err)
			return
		}
	}
	u.render(w, r, http.StatusOK, "instance", id, data)
}

// cancelledBy reports whether an execution failed because it was
// cancelled, by its failure event (the stored output is only a message).
func cancelledBy(events []duroxide.Event) bool {
	for i := len(events) - 1; i >= 0; i-- {
		if f, ok := events[i].Kind.(duroxide.OrchestrationFailedEvent); ok {
			return f.Details.Application != nil && f.Details.Application.Kind.Variant == duroxide.AppErrorCancelled
		}
	}
	return false
}

// isFailure reports the event kinds that record a failure.
func isFailure(kind string) bool { return strings.Contains(kind, "Failed") }

// historyOf cuts the page the query asks for out of an execution's
// history: page (1-based) of the events of kind ("" every kind,
// failuresKind every failure), or the page holding event at. Links between
// a completion and its scheduling event point to the page of the other
// event when it is not on this one.
func historyOf(events []duroxide.Event, instance string, children []string, base, kind, page, at string) (historyPage, error) {
	h := historyPage{Total: len(events), Kind: kind, Links: map[string]string{}}
	counts := map[string]int{}
	pos := make(map[uint64]int, len(events)) // event id -> index
	answer := map[uint64]uint64{}            // scheduling event -> first completion
	for i, e := range events {
		k := e.Kind.EventType()
		counts[k]++
		pos[e.EventID] = i
		if e.SourceEventID != nil {
			if _, ok := answer[*e.SourceEventID]; !ok {
				answer[*e.SourceEventID] = e.EventID
			}
		}
		if isFailure(k) {
			if len(h.Failures) < maxFailureLinks {
				h.Failures = append(h.Failures, failureLink{ID: e.EventID, Kind: k})
			} else {
				h.MoreFailures++
			}
		}
	}
	for k, n := range counts {
		h.Kinds = append(h.Kinds, kindCount{k, n})
	}
	sort.Slice(h.Kinds, func(i, j int) bool { return h.Kinds[i].Kind < h.Kinds[j].Kind })
	keep := func(e duroxide.Event) bool {
		switch kind {
		case "":
			return true
		case failuresKind:
			return isFailure(e.Kind.EventType())
		}
		return e.Kind.EventType() == kind
	}
	var shown []int // indexes of the events the filter keeps
	if kind == "" {
		shown = make([]int, len(events))
		for i := range events {
			shown[i] = i
		}
	} else {
		for i, e := range events {
			if keep(e) {
				shown = append(shown, i)
			}
		}
	}
	h.Matching = len(shown)
	h.Pages = max(1, (len(shown)+historyPageSize-1)/historyPageSize)
	h.Page = 1
	if page != "" {
		n, err := strconv.Atoi(page)
		if err != nil || n < 1 {
			return h, usageErr("instance", "bad page %q", page)
		}
		h.Page = min(n, h.Pages)
	}
	if at != "" {
		id, err := strconv.ParseUint(at, 10, 64)
		i, ok := pos[id]
		if err != nil || !ok {
			return h, usageErr("instance", "no event %q in this execution", at)
		}
		j := sort.SearchInts(shown, i)
		if j == len(shown) || shown[j] != i { // filtered out: show it unfiltered
			return historyOf(events, instance, children, base, "", "", at)
		}
		h.Page = j/historyPageSize + 1
	}
	pageURL := func(kind string, page int) string {
		v := base
		if kind != "" {
			v += "&kind=" + url.QueryEscape(kind)
		}
		return v + "&page=" + strconv.Itoa(page)
	}
	from := (h.Page - 1) * historyPageSize
	to := min(from+historyPageSize, len(shown))
	onPage := map[uint64]bool{}
	for _, i := range shown[from:to] {
		onPage[events[i].EventID] = true
	}
	ref := func(id uint64) *eventRef {
		i, ok := pos[id]
		if !ok {
			return nil
		}
		r := &eventRef{ID: id, Kind: events[i].Kind.EventType(), URL: "#e" + strconv.FormatUint(id, 10)}
		if !onPage[id] {
			r.URL = base + "&at=" + strconv.FormatUint(id, 10) + r.URL
		}
		return r
	}
	for i := range h.Failures {
		f := &h.Failures[i]
		f.URL = ref(f.ID).URL
	}
	if h.Page > 1 {
		h.Links["first"], h.Links["prev"] = pageURL(kind, 1), pageURL(kind, h.Page-1)
	}
	if h.Page < h.Pages {
		h.Links["next"], h.Links["last"] = pageURL(kind, h.Page+1), pageURL(kind, h.Pages)
	}
	undelivered := idSet(durable.UndeliveredExternalEvents(events))
	var start uint64
	if len(events) > 0 {
		start = events[0].TimestampMs
	}
	for _, i := range shown[from:to] {
		e := events[i]
		name, fields, err := eventPayload(e)
		if err != nil {
			return h, err
		}
		row := timelineRow{ID: e.EventID, Kind: e.Kind.EventType(), Name: name, At: e.TimestampMs,
			Since: msBetween(start, e.TimestampMs), Fields: fields, Failed: isFailure(e.Kind.EventType()),
			Undelivered: undelivered[e.EventID]}
		for _, f := range fields {
			if f.Key == "instance" {
				row.ChildID = childID(f.Value, instance, children)
			}
		}
		if e.SourceEventID != nil {
			if row.Source = ref(*e.SourceEventID); row.Source != nil {
				row.Took = msBetween(events[pos[row.Source.ID]].TimestampMs, e.TimestampMs)
			}
		}
		if a, ok := answer[e.EventID]; ok {
			row.Answer = ref(a)
			row.Took = msBetween(e.TimestampMs, events[pos[a]].TimestampMs)
		}
		h.Rows = append(h.Rows, row)
	}
	return h, nil
}

// waitingFor is what a running instance waits for, from its current
// execution's history (what was scheduled and is not answered) and what
// the queues hold of it.
type waitingFor struct {
	Activities    []waitingActivity
	Timers        []waitingTimer
	Subscriptions []durable.Subscription
	Children      []waitingChild
	// ItemsShown is false when the instance has more activity items than
	// the provider returns: those beyond have no queue state shown.
	ItemsShown bool
	// TurnUntil is set while a runtime runs a turn of the instance;
	// Sticky names the runtime its last turn ran on while it is sticky.
	TurnUntil uint64
	Sticky    string
}

// Empty reports a running instance waiting for nothing the history names
// (a turn may be due, or it waits for a message nothing sends).
func (w *waitingFor) Empty() bool {
	return len(w.Activities)+len(w.Timers)+len(w.Subscriptions)+len(w.Children) == 0
}

type waitingActivity struct {
	ID          uint64 // of its ActivityScheduled
	Name        string
	Scheduled   uint64 // ms
	Session     string
	Tag         string
	Item        *redisprovider.ActivityItem // nil when the queue holds none
	LockedFor   time.Duration               // left of a locked item's lock
	Worker      string
	CancelState string // "cancel requested" when the code dropped it
}

type waitingTimer struct {
	ID     uint64
	FireAt uint64 // ms
	In     string // "in 3m", "due 2s ago"
}

type waitingChild struct {
	ID       uint64 // of its SubOrchestrationScheduled
	Name     string
	Instance string // "" when the child has no record yet
	Status   string
}

// waitingOf reads what the execution events is waiting for: every
// activity, timer and sub-orchestration scheduled and not answered (their
// completion names the scheduling event as its source; a cancel request
// leaves an activity's item to be deleted), and the subscriptions still
// open; activities get what the worker queue holds of them.
func waitingOf(events []duroxide.Event, ia redisprovider.InstanceActivity, tree *treeNode, children []string, now time.Time) *waitingFor {
	answered := map[uint64]bool{}
	cancelled := map[uint64]bool{}
	for _, e := range events {
		if e.SourceEventID == nil {
			continue
		}
		switch e.Kind.(type) {
		case duroxide.ActivityCancelRequestedEvent, duroxide.SubOrchestrationCancelRequestedEvent:
			cancelled[*e.SourceEventID] = true
		default:
			answered[*e.SourceEventID] = true
		}
	}
	items := map[uint64]*redisprovider.ActivityItem{}
	var exec uint64
	if len(events) > 0 {
		exec = events[0].ExecutionID
	}
	for i := range ia.Items {
		if it := &ia.Items[i]; it.ExecutionID == exec {
			items[it.ActivityID] = it
		}
	}
	status := map[string]string{}
	if tree != nil {
		for _, c := range tree.Children {
			status[c.Instance] = c.Status
		}
	}
	w := &waitingFor{ItemsShown: ia.Total <= len(ia.Items), TurnUntil: ia.TurnLockedUntil, Sticky: ia.StickyOwner,
		Subscriptions: durable.WaitingSubscriptions(events)}
	for _, e := range events {
		if answered[e.EventID] {
			continue
		}
		switch k := e.Kind.(type) {
		case duroxide.ActivityScheduledEvent:
			a := waitingActivity{ID: e.EventID, Name: k.Name, Scheduled: e.TimestampMs, Session: deref(k.SessionID), Tag: deref(k.Tag), Item: items[e.EventID]}
			if cancelled[e.EventID] {
				if a.Item == nil {
					continue // dropped and gone from the queue
				}
				a.CancelState = "cancel requested"
			}
			if a.Item != nil {
				a.Worker = a.Item.SessionOwner
				if a.Item.State == "locked" {
					a.LockedFor = msBetween(ia.Now, a.Item.LockedUntil)
				}
			}
			w.Activities = append(w.Activities, a)
		case duroxide.TimerCreatedEvent:
			t := waitingTimer{ID: e.EventID, FireAt: k.FireAtMs}
			if d := msTime(k.FireAtMs).Sub(now); d >= 0 {
				t.In = "in " + spanText(d)
			} else {
				t.In = "due " + spanText(-d) + " ago"
			}
			w.Timers = append(w.Timers, t)
		case duroxide.SubOrchestrationScheduledEvent:
			if cancelled[e.EventID] {
				continue
			}
			c := waitingChild{ID: e.EventID, Name: k.Name, Instance: childID(k.Instance, events[0].InstanceID, children)}
			c.Status = status[c.Instance]
			if c.Instance == "" {
				c.Status = "not started yet"
			}
			w.Children = append(w.Children, c)
		}
	}
	return w
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// childID finds the sub-orchestration a SubOrchestrationScheduled names
// among the instance's children: the runtime may prefix the name it was
// given with the parent's id.
func childID(name, instance string, children []string) string {
	for _, c := range children {
		if c == name || c == instance+"::"+name {
			return c
		}
	}
	return ""
}

func msBetween(from, to uint64) time.Duration {
	if to < from {
		return 0
	}
	return time.Duration(to-from) * time.Millisecond
}

// prettyJSON indents a JSON value for reading; anything else is shown as is.
func prettyJSON(s string) string {
	var b bytes.Buffer
	if json.Indent(&b, []byte(s), "", "  ") != nil {
		return s
	}
	return b.String()
}

// The times of the records, for the templates, which see exported names only.
func (i instanceJSON) CreatedMs() uint64    { return i.createdMs }
func (i instanceJSON) UpdatedMs() uint64    { return i.updatedMs }
func (e executionJSON) StartedMs() uint64   { return e.startedMs }
func (e executionJSON) CompletedMs() uint64 { return e.completedMs }
