package redisprovider

import (
	"context"
	"errors"
	"sync"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Messages between partitions (Partitioned).
//
// A turn runs in its instance's partition, one slot: a message it sends to
// an instance of another partition cannot be written there in the same
// script. It goes to the outbox of the turn's own partition instead, in the
// ack's script (so it is sent exactly when the turn commits), and a relay
// moves it (relay.go). The Partitioned provider hands the ack those messages
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

// Racing fetches (Partitioned's long poll over every partition).
//
// A fetch over several partitions long-polls each partition's waiter at
// once, so work in any of them wakes it. Only one of them may take work: a
// race gate in the context lets one script run at a time and none after
// one took work. A partition whose waiter knows nothing changed runs no
// script at all (poll), so an idle fetch over P partitions costs what P idle
// single fetches cost: nothing until a wake-up.

type raceKey struct{}

// raceGate serializes the scripts of one racing fetch.
type raceGate struct {
	mu  sync.Mutex
	won bool
}

// errRaceLost ends the poll of a partition whose race another one won.
// The racing fetch returns the winner's item and never this error.
var errRaceLost = errors.New("another partition's fetch took work")

// withRace returns ctx carrying a new race gate.
func withRace(ctx context.Context) context.Context {
	return context.WithValue(ctx, raceKey{}, &raceGate{})
}

// enterRace admits one fetch script of ctx's race (a no-op without one):
// leave(took) ends its turn, and an error says the race is won already.
func enterRace(ctx context.Context) (leave func(took bool), err error) {
	g, _ := ctx.Value(raceKey{}).(*raceGate)
	if g == nil {
		return func(bool) {}, nil
	}
	g.mu.Lock()
	if g.won {
		g.mu.Unlock()
		return nil, errRaceLost
	}
	return func(took bool) {
		g.won = took
		g.mu.Unlock()
	}, nil
}
