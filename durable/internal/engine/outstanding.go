package engine

// maxCarryForward caps the queue messages ContinueAsNew carries over.
const maxCarryForward = 20

// openSchedules is what an execution still waits for when it ends
// (duroxide's get_outstanding_schedule_ids, minus activities, which the
// index's inflightActivities covers).
type openSchedules struct {
	subOrchs      []string // instance ids as recorded
	externalWaits []uint64
	queueWaits    []uint64
}

// outstanding reads what the execution still waits for from the engine's
// index and wait state, as they stand at the end of the turn.
func (e *Engine) outstanding() openSchedules {
	w := e.waits()
	return openSchedules{subOrchs: e.idx.openSubOrchestrations(), externalWaits: w.externals.waiting(), queueWaits: w.queues.waiting()}
}

// waits is the execution's wait state: the code's, or, when the turn ended
// before the code ran, the wait rules applied to the history alone.
func (e *Engine) waits() *waits {
	if e.live != nil {
		return e.live.ctx.st.waits
	}
	return waitsOf(append(e.history[:len(e.history):len(e.history)], e.turn.delta...))
}

// unmatchedQueueMessages lists, in arrival order, the queue messages no
// uncancelled subscription consumed: ContinueAsNew carries them forward.
func (e *Engine) unmatchedQueueMessages() [][2]string {
	return e.waits().queues.unclaimed()
}
