package engine

import (
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// historyIndex is everything a turn asks of an execution's history, kept up
// to date event by event as history is read and the turn appends, so no
// question (is this completion a duplicate, what did this id schedule, is
// the execution over, what is still open) rescans the history. It is built
// once per execution and, through the instance cache, lives across turns.
type historyIndex struct {
	count  int
	lastID uint64
	bytes  int // an estimate of the events' payload, for the cache's bound

	// start is the execution's OrchestrationStarted, when there is one;
	// startFirst reports that it is the first event, as a valid history's is.
	start      *duroxide.OrchestrationStartedEvent
	startFirst bool
	pinned     string // DuroxideVersion of the start event
	// startTimestamp is when the start was written: for a provider without
	// history cursors it tells apart two instances of the same id.
	startTimestamp uint64

	terminal        duroxide.EventKind // Completed, Failed or ContinuedAsNew after the start; nil while running
	anyTerminal     bool               // a terminal event anywhere, even before a start (corrupted)
	cancelRequested *string            // the first OrchestrationCancelRequested's reason
	customStatus    *string            // as accumulated through the execution

	schedules map[uint64]*scheduleRecord
	// strayAnswers are completions whose source schedules nothing of their
	// kind (corrupted or foreign history): still duplicates of a message.
	strayAnswers map[answerKey]bool
	activities   []uint64 // activity schedule ids in schedule order
	subOrchs     []uint64 // sub-orchestration schedule ids in schedule order
}

// scheduleRecord is one schedule event and what history says of it since.
type scheduleRecord struct {
	kind     scheduleKind
	instance string // sub-orchestrations: the child as recorded
	answered bool   // a completion or failure was recorded
	// cancels holds the reason of the cancel request recorded for it, if
	// any; droppedCancel marks one the code asked for by dropping a future.
	cancelled     bool
	droppedCancel bool
}

// answerKey names a completion: the schedule it answers and its kind.
type answerKey struct {
	id   uint64
	kind scheduleKind
}

func newHistoryIndex() *historyIndex {
	return &historyIndex{schedules: map[uint64]*scheduleRecord{}, strayAnswers: map[answerKey]bool{}}
}

// indexHistory builds the index of a stored history.
func indexHistory(h []duroxide.Event) *historyIndex {
	idx := newHistoryIndex()
	for _, ev := range h {
		idx.add(ev)
	}
	return idx
}

// add records one event appended to the execution.
func (x *historyIndex) add(ev duroxide.Event) {
	x.count++
	x.lastID = max(x.lastID, ev.EventID)
	x.bytes += eventSize(ev)
	if kind, ok := scheduleKindOf(ev.Kind); ok {
		x.schedule(ev, kind)
		return
	}
	if kind, ok := answerKindOf(ev.Kind); ok {
		if rec := x.source(ev); rec != nil && rec.kind == kind {
			rec.answered = true
		} else if ev.SourceEventID != nil {
			x.strayAnswers[answerKey{*ev.SourceEventID, kind}] = true
		}
		return
	}
	if kind, reason, ok := cancelOf(ev.Kind); ok {
		if rec := x.source(ev); rec != nil && rec.kind == kind {
			rec.cancelled = true
			rec.droppedCancel = rec.droppedCancel || reason == droppedFuture
		}
		return
	}
	x.addLifecycle(ev)
}

func (x *historyIndex) schedule(ev duroxide.Event, kind scheduleKind) {
	rec := &scheduleRecord{kind: kind}
	switch k := ev.Kind.(type) {
	case duroxide.ActivityScheduledEvent:
		x.activities = append(x.activities, ev.EventID)
	case duroxide.SubOrchestrationScheduledEvent:
		rec.instance = k.Instance
		x.subOrchs = append(x.subOrchs, ev.EventID)
	}
	x.schedules[ev.EventID] = rec
}

// addLifecycle records the events that describe the execution as a whole.
func (x *historyIndex) addLifecycle(ev duroxide.Event) {
	switch k := ev.Kind.(type) {
	case duroxide.OrchestrationStartedEvent:
		if x.start == nil {
			s := k
			x.start, x.startFirst, x.pinned, x.startTimestamp = &s, x.count == 1, ev.DuroxideVersion, ev.TimestampMs
			if k.InitialCustomStatus != nil {
				x.customStatus = k.InitialCustomStatus
			}
		}
	case duroxide.CustomStatusUpdatedEvent:
		x.customStatus = k.Status
	case duroxide.OrchestrationCancelRequestedEvent:
		if x.cancelRequested == nil {
			r := k.Reason
			x.cancelRequested = &r
		}
	default:
		if !isTerminalKind(ev.Kind) {
			return
		}
		x.anyTerminal = true
		if x.terminal == nil && x.start != nil {
			x.terminal = ev.Kind
		}
	}
}

func (x *historyIndex) source(ev duroxide.Event) *scheduleRecord {
	if ev.SourceEventID == nil {
		return nil
	}
	return x.schedules[*ev.SourceEventID]
}

// scheduled returns the kind of what id scheduled, if it scheduled anything
// a completion message can answer.
func (x *historyIndex) scheduled(id uint64) (scheduleKind, bool) {
	rec, ok := x.schedules[id]
	if !ok {
		return 0, false
	}
	return rec.kind, true
}

// answered reports whether a completion of kind for id is in history.
func (x *historyIndex) answered(id uint64, kind scheduleKind) bool {
	if rec, ok := x.schedules[id]; ok && rec.kind == kind && rec.answered {
		return true
	}
	return x.strayAnswers[answerKey{id, kind}]
}

// cancelRecorded reports whether a cancel request for schedule id is in
// history.
func (x *historyIndex) cancelRecorded(id uint64) bool {
	rec, ok := x.schedules[id]
	return ok && rec.cancelled
}

// droppedCancels lists the schedules of kind whose future the code dropped
// in an earlier turn.
func (x *historyIndex) droppedCancels(kind scheduleKind) map[uint64]bool {
	out := map[uint64]bool{}
	for id, rec := range x.schedules {
		if rec.kind == kind && rec.droppedCancel {
			out[id] = true
		}
	}
	return out
}

// completedOrFailed reports a Completed or Failed execution: one a cancel
// request no longer reaches.
func (x *historyIndex) completedOrFailed() bool {
	switch x.terminal.(type) {
	case duroxide.OrchestrationCompletedEvent, duroxide.OrchestrationFailedEvent:
		return true
	}
	return false
}

// inflightActivities are scheduled activities with neither an answer nor a
// cancel request, in schedule order.
func (x *historyIndex) inflightActivities() []uint64 {
	return x.open(x.activities)
}

// openSubOrchestrations are the children, as recorded, that have neither
// ended nor been cancelled.
func (x *historyIndex) openSubOrchestrations() []string {
	var out []string
	for _, id := range x.open(x.subOrchs) {
		out = append(out, x.schedules[id].instance)
	}
	return out
}

func (x *historyIndex) open(ids []uint64) []uint64 {
	var out []uint64
	for _, id := range ids {
		if rec := x.schedules[id]; !rec.answered && !rec.cancelled {
			out = append(out, id)
		}
	}
	return out
}

// info is what the history says about its execution (duroxide's
// HistoryManager).
func (x *historyIndex) info() HistoryInfo {
	var hi HistoryInfo
	if x.start != nil {
		s := x.start
		hi.Started, hi.Name, hi.Version, hi.Input = true, s.Name, s.Version, s.Input
		hi.Parent, hi.ParentID = s.ParentInstance, s.ParentID
	}
	switch x.terminal.(type) {
	case duroxide.OrchestrationCompletedEvent:
		hi.Completed = true
	case duroxide.OrchestrationFailedEvent:
		hi.Failed = true
	case duroxide.OrchestrationContinuedAsNewEvent:
		hi.ContinuedAsNew = true
	}
	return hi
}

// scheduleKindOf classifies the schedule events a completion can answer or
// a cancel can address.
func scheduleKindOf(k duroxide.EventKind) (scheduleKind, bool) {
	switch k.(type) {
	case duroxide.ActivityScheduledEvent:
		return kindActivity, true
	case duroxide.TimerCreatedEvent:
		return kindTimer, true
	case duroxide.SubOrchestrationScheduledEvent:
		return kindSubOrchestration, true
	case duroxide.ExternalSubscribedEvent:
		return kindExternal, true
	case duroxide.QueueSubscribedEvent:
		return kindQueue, true
	}
	return 0, false
}

// answerKindOf classifies completion events by the schedule they answer.
func answerKindOf(k duroxide.EventKind) (scheduleKind, bool) {
	switch k.(type) {
	case duroxide.ActivityCompletedEvent, duroxide.ActivityFailedEvent:
		return kindActivity, true
	case duroxide.TimerFiredEvent:
		return kindTimer, true
	case duroxide.SubOrchestrationCompletedEvent, duroxide.SubOrchestrationFailedEvent:
		return kindSubOrchestration, true
	}
	return 0, false
}

// cancelOf classifies the cancel events of the cancellable families.
func cancelOf(k duroxide.EventKind) (scheduleKind, string, bool) {
	for _, fam := range cancelFamilies {
		if reason, ok := fam.cancel(k); ok {
			return fam.kind, reason, true
		}
	}
	return 0, "", false
}

func isTerminalKind(k duroxide.EventKind) bool {
	switch k.(type) {
	case duroxide.OrchestrationCompletedEvent, duroxide.OrchestrationFailedEvent, duroxide.OrchestrationContinuedAsNewEvent:
		return true
	}
	return false
}

// eventOverhead approximates what an event costs in memory beyond its
// payload strings (the Event struct, its kind, the index's entries).
const eventOverhead = 160

// eventSize estimates an event's memory for the instance cache's byte bound.
func eventSize(ev duroxide.Event) int {
	n := eventOverhead
	switch k := ev.Kind.(type) {
	case duroxide.OrchestrationStartedEvent:
		n += len(k.Input) + len(k.Name)
	case duroxide.ActivityScheduledEvent:
		n += len(k.Input) + len(k.Name)
	case duroxide.ActivityCompletedEvent:
		n += len(k.Result)
	case duroxide.SubOrchestrationScheduledEvent:
		n += len(k.Input) + len(k.Instance)
	case duroxide.SubOrchestrationCompletedEvent:
		n += len(k.Result)
	case duroxide.ExternalEventEvent:
		n += len(k.Data)
	case duroxide.QueueEventDeliveredEvent:
		n += len(k.Data)
	case duroxide.KeyValueSetEvent:
		n += len(k.Value) + len(k.Key)
	}
	return n
}
