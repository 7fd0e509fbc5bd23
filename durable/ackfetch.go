package durable

import "github.com/duroxide-go/duroxide-redis/duroxide"

// Ack-and-fetch: when the provider implements duroxide.WorkAckFetcher or
// duroxide.OrchestrationAckFetcher, a dispatcher slot acks the unit it
// finished and fetches its next one in a single call, saving a round trip
// per unit. The rules every caller follows:
//
//   - Only the first ack of a unit may fetch. If it fails without saying the
//     ack applied, the unit gets the plain path's handling of a failed ack:
//     the orchestrator retries with the plain ack (then abandons or fails
//     the instance), the worker abandons (or, if the runtime's stop raced
//     the call, acks plainly on the context that outlives the stop). A
//     retryable error leaves open whether the ack applied; a second
//     ack-and-fetch would long-poll inside the retry schedule and could take
//     a second lock while the first call's fetch half is unaccounted for,
//     whereas a plain re-ack of an applied ack just fails on the lock, which
//     every caller already treats as "someone else has it".
//   - A *duroxide.FetchAfterAckError means the ack is durable and only the
//     next fetch failed: the slot treats it as a failed plain fetch (backoff,
//     then plain fetches), never as a failed ack.
//   - A slot that is stopping acks plainly, so it takes no new work; so
//     does a worker while the runtime is at MaxSessionsPerRuntime, whose
//     next fetch must be the session-less one that wakes when a session
//     ends.
//   - The fetch half gets exactly the arguments the slot's plain fetch would
//     pass, and the fetched unit goes through the same handling (renewal,
//     observer, session admission) as a plainly fetched one.
//   - What must wait for the ack but not for the next unit is done when the
//     provider reports the ack applied (duroxide.OrchestrationAckReporter), before its
//     fetch half polls: a turn's engine goes to the instance cache then, so
//     the dispatcher that fetches the instance's next message resumes it
//     without waiting out this call's poll (see runTurn).

// handoff carries the result of an ack-and-fetch from the unit that acked
// to the dispatch loop of its slot. A nil *handoff never fetches: RunTurn,
// which has no dispatch loop, passes one. Acks of other outcomes (poison,
// cancelled activities, failed instances) stay plain: they are rare.
type handoff[T any] struct {
	fetched bool // the last ack fetched too: item and err are that fetch's result
	item    *T
	err     error
	// held lets go, right before an ack-and-fetch, of what the finished
	// unit would otherwise hold while the fetch half long-polls: the
	// worker's place under the session cap (which would keep slots parked
	// at the cap asleep). The orchestrator's lock renewal is kept until
	// the call returns, since the ack half may take longer than the lock
	// has left; its held only marks the ack as begun, so the renewal that
	// then fails on the released lock is expected. It must be safe to call
	// again afterwards.
	held func()
}

// open reports whether the slot may fetch with its ack: it has a dispatch
// loop and is not stopping.
func (h *handoff[T]) open(r *Runtime) bool { return h != nil && r.ctx.Err() == nil }

// keep records what an ack-and-fetch returned and reports whether its ack
// applied; when it did not, nothing is kept and err is the ack's.
func (h *handoff[T]) keep(item *T, err error) bool {
	if err != nil && !duroxide.FetchFailedAfterAck(err) {
		return false
	}
	if err != nil {
		item = nil // an item beside an error is not ours to handle
	}
	h.fetched, h.item, h.err = true, item, err
	return true
}

// take hands the kept fetch result to the dispatch loop once; fetched is
// false when the last unit did not fetch.
func (h *handoff[T]) take() (item *T, fetched bool, err error) {
	item, fetched, err = h.item, h.fetched, h.err
	*h = handoff[T]{}
	return item, fetched, err
}

// release runs held, if the unit set it.
func (h *handoff[T]) release() {
	if h != nil && h.held != nil {
		h.held()
	}
}
