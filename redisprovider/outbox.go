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
//
// The racers' first rounds go in rank order (the race starts at a rotating
// partition): a racer runs its first script only once every racer ranked
// before it has had its turn (ran a script, went to sleep without one, or
// returned). Left to the scheduler, whichever goroutine ran first would
// win, and with work in every partition successive fetches could keep
// missing one partition. After its first round a racer is woken by work
// and goes first come, first served.

type raceKey struct{}

// raceGate serializes the scripts of one racing fetch and orders the
// racers' first rounds.
type raceGate struct {
	mu  sync.Mutex // held while a racer's script runs
	won bool
	// turns[i] is closed once the racer of rank i has had its turn
	turns []chan struct{}
	once  []sync.Once
}

// racer is one partition's fetch in a race, with its rank.
type racer struct {
	g    *raceGate
	rank int
}

// errRaceLost ends the poll of a partition whose race another one won.
// The racing fetch returns the winner's item and never this error.
var errRaceLost = errors.New("another partition's fetch took work")

// newRaceGate returns the gate of a race of n racers.
func newRaceGate(n int) *raceGate {
	g := &raceGate{turns: make([]chan struct{}, n), once: make([]sync.Once, n)}
	for i := range g.turns {
		g.turns[i] = make(chan struct{})
	}
	return g
}

// withRacer returns ctx carrying the racer of rank rank in g.
func withRacer(ctx context.Context, g *raceGate, rank int) context.Context {
	return context.WithValue(ctx, raceKey{}, &racer{g: g, rank: rank})
}

// racerOf returns ctx's racer, nil outside a race.
func racerOf(ctx context.Context) *racer {
	r, _ := ctx.Value(raceKey{}).(*racer)
	return r
}

// passTurn records that ctx's racer has had its first turn (a no-op
// outside a race, or after the first time).
func passTurn(ctx context.Context) {
	if r := racerOf(ctx); r != nil {
		r.pass()
	}
}

func (r *racer) pass() {
	r.g.once[r.rank].Do(func() { close(r.g.turns[r.rank]) })
}

// enterRace admits one fetch script of ctx's race (a no-op without one),
// after the first turns of the racers ranked before: leave(took) ends its
// turn, and an error says the race is won already (or ctx ended).
func enterRace(ctx context.Context) (leave func(took bool), err error) {
	r := racerOf(ctx)
	if r == nil {
		return func(bool) {}, nil
	}
	g := r.g
	for _, turn := range g.turns[:r.rank] {
		select {
		case <-turn:
		case <-ctx.Done():
			r.pass()
			return nil, errRaceLost
		}
	}
	g.mu.Lock()
	if g.won {
		g.mu.Unlock()
		r.pass()
		return nil, errRaceLost
	}
	return func(took bool) {
		g.won = took
		g.mu.Unlock()
		r.pass()
	}, nil
}
