package durable

import (
	"context"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// TurnOutcome is what RunTurn's dispatcher decided for one fetched item.
type TurnOutcome struct {
	// Commit is what the dispatcher acknowledged; zero when it abandoned.
	Commit duroxide.OrchestrationCommit
	// Abandoned reports that the item was handed back instead (unregistered
	// orchestration, undecodable history, unsupported pinned version), and
	// AbandonDelay the delay it asked for.
	Abandoned    bool
	AbandonDelay time.Duration
}

// RunTurn processes one orchestration item exactly as a dispatcher of a
// Runtime with reg and opts would, and returns the commit it would make,
// without any provider. It exists for golden-history tests: feed it a
// history written by duroxide (or by this runtime) plus the messages of a
// batch, and compare the commit's HistoryDelta, work items and metadata with
// what duroxide wrote. It fails only on invalid options. Event timestamps are taken from the wall clock;
// opts.Clock fixes timer fire times and KV timestamps.
func RunTurn(reg *Registry, item duroxide.OrchestrationItem, opts Options) (TurnOutcome, error) {
	rec := &turnRecorder{}
	r, err := newRuntime(rec, reg, opts)
	if err != nil {
		return TurnOutcome{}, err
	}
	defer r.stop()
	defer r.abort()
	defer r.cache.stop()
	r.id = "runturn"
	r.processOrchestrationItem(&item, nil)
	return rec.outcome, nil
}

// turnRecorder stands in for the provider of one RunTurn: it records the
// dispatcher's ack or abandon; nothing else may be called.
type turnRecorder struct {
	duroxide.Provider
	outcome TurnOutcome
}

func (t *turnRecorder) AckOrchestrationItem(_ context.Context, _ string, c duroxide.OrchestrationCommit) error {
	t.outcome = TurnOutcome{Commit: c}
	return nil
}

func (t *turnRecorder) AbandonOrchestrationItem(_ context.Context, _ string, delay time.Duration, _ bool) error {
	t.outcome = TurnOutcome{Abandoned: true, AbandonDelay: delay}
	return nil
}
