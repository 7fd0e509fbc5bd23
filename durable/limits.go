package durable

import "github.com/duroxide-go/duroxide-redis/durable/internal/engine"

// Size limits, checked before anything reaches storage. A client call over
// one returns an *InvalidInputError (errors.Is(err, ErrInvalidInput)) and
// writes nothing; orchestration code over one fails its instance with a
// message naming the limit, and an activity result over one fails the
// activity as NonRetryable.
const (
	// MaxPayloadBytes is the largest orchestration input or output,
	// activity input or result, and external event or queue message data:
	// 4 MiB, twice Temporal's per-payload limit (2 MB) and equal to its
	// per-message one (4 MB). duroxide sets none. A payload is not written
	// once: an activity's input sits in its ActivityScheduled event and its
	// work item, its result in the completion message and the
	// ActivityCompleted event, and a turn that replays (or a status read)
	// reads the whole history; stored JSON-escaped, each copy can be up to
	// six times the payload. At 64 MiB, the former limit, single Redis calls
	// of one such turn took up to 1.9s on a 2-core machine, near go-redis's
	// default 3s read timeout, and status reads of a history of escaped
	// payloads timed out; at 4 MiB the same turn completes in a fraction of
	// a second on Redis and miniredis, with histories of several payloads at
	// the limit still far from those timeouts.
	MaxPayloadBytes = engine.DefaultMaxPayloadBytes
	// MaxCustomStatusBytes is the largest custom status (duroxide's limit);
	// a turn that sets a larger one fails the instance.
	MaxCustomStatusBytes = engine.MaxCustomStatusBytes
	// MaxKVValueBytes is the largest key-value store value and MaxKVKeys
	// the most keys one instance may hold (duroxide's limits).
	MaxKVValueBytes = engine.MaxKVValueBytes
	MaxKVKeys       = engine.MaxKVKeys
)

// checkPayload rejects a payload over max bytes, naming the operation,
// what the payload is and the limit.
func checkPayload(op, what string, payload string, max int) error {
	if n := len(payload); n > max {
		return invalidInput(op, "%s is %d bytes, over the limit of %d bytes (MaxPayloadBytes)", what, n, max)
	}
	return nil
}
