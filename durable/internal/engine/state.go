package engine

import "sort"

// completion is a result delivered to a bound schedule.
type completion struct {
	kind  scheduleKind
	value string
	err   error
}

// ctxState is the replay state of one turn: duroxide's CtxInner. Tokens
// number actions in the order code emits them; bindings tie a token to the
// event id of its schedule event; results, arrivals and cancellations are
// looked up through those bindings.
type ctxState struct {
	replaying bool
	// coroutines is the orchestration's coroutine, whose stop at the turn's
	// end stops its Go blocks' too; panicMsg is the first
	// panic of a Go block, which fails the turn like a panic of the code.
	coroutines []*coroutine
	panicMsg   *string
	// maxPayload bounds an emitted action's input; limitMsg is the first
	// action over it, which was not emitted and fails the turn.
	maxPayload int
	limitMsg   *string

	nextToken uint64
	emitted   []*action

	bindings map[uint64]uint64 // token -> schedule event id
	byID     map[uint64]uint64 // schedule event id -> token
	results  map[uint64]completion

	// waits match arrivals to subscriptions (waits.go).
	*waits

	subOrchInstances map[uint64]string // token -> instance as recorded

	cancelled map[uint64]scheduleKind // token -> kind, this turn

	customStatus *string
	kv           map[string]string
	kvUpdated    map[string]uint64
}

func newCtxState() *ctxState {
	s := &ctxState{
		bindings:         map[uint64]uint64{},
		byID:             map[uint64]uint64{},
		results:          map[uint64]completion{},
		subOrchInstances: map[uint64]string{},
		cancelled:        map[uint64]scheduleKind{},
		kv:               map[string]string{},
		kvUpdated:        map[string]uint64{},
		waits:            newWaits(),
	}
	return s
}

func (s *ctxState) emit(a *action) uint64 {
	s.nextToken++
	a.token = s.nextToken
	if msg := payloadViolation(a, s.maxPayload); msg != "" {
		// Never emitted, so never recorded: its future stays pending and
		// the next poll fails the turn.
		if s.limitMsg == nil {
			s.limitMsg = &msg
		}
		return a.token
	}
	s.emitted = append(s.emitted, a)
	return a.token
}

func (s *ctxState) drainEmitted() []*action {
	out := s.emitted
	s.emitted = nil
	return out
}

func (s *ctxState) bind(token, scheduleID uint64) {
	s.bindings[token] = scheduleID
	s.byID[scheduleID] = token
}

func (s *ctxState) deliver(scheduleID uint64, c completion) {
	if token, ok := s.byID[scheduleID]; ok {
		s.results[token] = c
	}
}

func (s *ctxState) result(token uint64, kind scheduleKind) (completion, bool) {
	c, ok := s.results[token]
	if !ok || c.kind != kind {
		return completion{}, false
	}
	return c, true
}

func (s *ctxState) externalEvent(scheduleID uint64) (string, bool) {
	return s.externals.delivered(scheduleID)
}

func (s *ctxState) queueMessage(scheduleID uint64) (string, bool) {
	return s.queues.delivered(scheduleID)
}

func (s *ctxState) markCancelled(token uint64, kind scheduleKind) {
	s.cancelled[token] = kind
}

// cancelledIDs lists the schedule ids of this turn's cancelled futures of one
// kind, in token order (duroxide iterates a hash set here; token order is the
// deterministic choice).
func (s *ctxState) cancelledIDs(kind scheduleKind) []uint64 {
	tokens := make([]uint64, 0, len(s.cancelled))
	for t, k := range s.cancelled {
		if k == kind {
			tokens = append(tokens, t)
		}
	}
	sort.Slice(tokens, func(i, j int) bool { return tokens[i] < tokens[j] })
	var ids []uint64
	for _, t := range tokens {
		if id, ok := s.bindings[t]; ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// stopAll ends every coroutine of the turn.
func (s *ctxState) stopAll() {
	for _, co := range s.coroutines {
		co.stop()
	}
}
