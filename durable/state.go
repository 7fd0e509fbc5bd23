package durable

import "sort"

// completion is a result delivered to a bound schedule.
type completion struct {
	kind  scheduleKind
	value string
	err   error
}

type extSub struct {
	name  string
	index int
}

type queueSub struct {
	id   uint64
	name string
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

	nextToken uint64
	emitted   []*action

	bindings map[uint64]uint64 // token -> schedule event id
	byID     map[uint64]uint64 // schedule event id -> token
	results  map[uint64]completion

	extSubs      map[uint64]extSub // schedule id -> subscription
	extArrivals  map[string][]string
	extNextIndex map[string]int
	extCancelled map[uint64]bool

	queueSubs      []queueSub
	queueArrivals  map[string][]string
	queueCancelled map[uint64]bool
	queueResolved  map[uint64]bool

	subOrchInstances map[uint64]string // token -> instance as recorded

	cancelled map[uint64]scheduleKind // token -> kind, this turn

	customStatus *string
	kv           map[string]string
	kvUpdated    map[string]uint64
}

func newCtxState() *ctxState {
	return &ctxState{
		bindings:         map[uint64]uint64{},
		byID:             map[uint64]uint64{},
		results:          map[uint64]completion{},
		extSubs:          map[uint64]extSub{},
		extArrivals:      map[string][]string{},
		extNextIndex:     map[string]int{},
		extCancelled:     map[uint64]bool{},
		queueArrivals:    map[string][]string{},
		queueCancelled:   map[uint64]bool{},
		queueResolved:    map[uint64]bool{},
		subOrchInstances: map[uint64]string{},
		cancelled:        map[uint64]scheduleKind{},
		kv:               map[string]string{},
		kvUpdated:        map[string]uint64{},
	}
}

func (s *ctxState) emit(a *action) uint64 {
	s.nextToken++
	a.token = s.nextToken
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

func (s *ctxState) bindExternal(scheduleID uint64, name string) {
	idx := s.extNextIndex[name]
	s.extNextIndex[name] = idx + 1
	s.extSubs[scheduleID] = extSub{name: name, index: idx}
}

// hasOpenExternalSlot: an ExternalEvent is only kept for delivery when an
// uncancelled subscription of that name is still waiting for it.
func (s *ctxState) hasOpenExternalSlot(name string) bool {
	active := 0
	for id, sub := range s.extSubs {
		if sub.name == name && !s.extCancelled[id] {
			active++
		}
	}
	return active > len(s.extArrivals[name])
}

func (s *ctxState) externalEvent(scheduleID uint64) (string, bool) {
	sub, ok := s.extSubs[scheduleID]
	if !ok || s.extCancelled[scheduleID] {
		return "", false
	}
	below := 0
	for id, other := range s.extSubs {
		if other.name == sub.name && other.index < sub.index && s.extCancelled[id] {
			below++
		}
	}
	arrivals := s.extArrivals[sub.name]
	i := sub.index - below
	if i < len(arrivals) {
		return arrivals[i], true
	}
	return "", false
}

func (s *ctxState) bindQueue(scheduleID uint64, name string) {
	s.queueSubs = append(s.queueSubs, queueSub{id: scheduleID, name: name})
}

// queueMessage hands a subscription the arrival at its position among the
// uncancelled subscriptions of its queue, once.
func (s *ctxState) queueMessage(scheduleID uint64) (string, bool) {
	if s.queueResolved[scheduleID] || s.queueCancelled[scheduleID] {
		return "", false
	}
	pos, name, found := 0, "", false
	for _, q := range s.queueSubs {
		if q.id == scheduleID {
			name, found = q.name, true
			break
		}
	}
	if !found {
		return "", false
	}
	for _, q := range s.queueSubs {
		if q.id == scheduleID {
			break
		}
		if q.name == name && !s.queueCancelled[q.id] {
			pos++
		}
	}
	arrivals := s.queueArrivals[name]
	if pos >= len(arrivals) {
		return "", false
	}
	s.queueResolved[scheduleID] = true
	return arrivals[pos], true
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
