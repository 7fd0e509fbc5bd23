package durable

import "github.com/duroxide-go/duroxide-redis/durable/internal/engine"

// Size limits, checked before anything reaches storage. A client call over
// one returns an *InvalidInputError (errors.Is(err, ErrInvalidInput)) and
// writes nothing; orchestration code over one fails its instance with a
// message naming the limit, and an activity result over one fails the
// activity as NonRetryable.
const (
	// MaxPayloadBytes is the largest orchestration input or output,
	// activity input or result, and external event or queue message data.
	// duroxide sets no such limit; Redis does: one value holds at most
	// 512 MB, and a payload is stored JSON-escaped inside an event or work
	// item, where a control character takes six bytes. 64 MiB keeps even
	// that worst case under Redis's limit.
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
