package redisprovider

import (
	"context"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Messages between partitions.
//
// A turn runs in its instance's partition, one slot: a message it sends to
// an instance of another partition cannot be written there in the same
// script. It goes to the outbox of the turn's own partition instead, in the
// ack's script (so it is sent exactly when the turn commits), and a relay
// moves it (relay.go). The Provider hands the ack those messages
// through its context, so the single-partition methods keep their
// signatures.

// outboxEntry is one message for an instance of partition part.
type outboxEntry struct {
	part int
	item duroxide.WorkItem
}

type outboxKey struct{}

// withOutbox returns ctx carrying the messages an ack puts in the outbox.
func withOutbox(ctx context.Context, entries []outboxEntry) context.Context {
	if len(entries) == 0 {
		return ctx
	}
	return context.WithValue(ctx, outboxKey{}, entries)
}

// outboxOf returns the outbox messages ctx carries.
func outboxOf(ctx context.Context) []outboxEntry {
	e, _ := ctx.Value(outboxKey{}).([]outboxEntry)
	return e
}

// appendOutbox encodes the outbox section of an ack's arguments: count,
// then partition, instance, JSON and visible at for each.
func appendOutbox(op string, a *args, entries []outboxEntry) error {
	a.int(len(entries))
	for _, e := range entries {
		a.int(e.part)
		if err := a.orchestratorMessage(op, e.item); err != nil {
			return err
		}
	}
	return nil
}
