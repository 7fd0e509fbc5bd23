package redisprovider

import (
	"context"
	"errors"
	"sync"
)

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
