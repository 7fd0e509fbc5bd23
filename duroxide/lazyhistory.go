package duroxide

import (
	"context"
	"time"
)

// HistoryCursor says where an execution's stored history ends: enough for a runtime that
// kept an instance's replayed state in memory after a turn to tell whether that state is
// still the stored one, without reading the history.
//
// Two cursors of one instance are equal exactly when the history a plain fetch would
// return is the same: the history is append-only and ordered by event id, so an execution
// whose last event id did not change has not changed, unless the instance was deleted and
// created again, which Incarnation tells.
type HistoryCursor struct {
	// ExecutionID is the instance's current execution (as OrchestrationItem.ExecutionID).
	ExecutionID uint64
	// LastEventID is the highest event id stored for that execution; 0 when it has none.
	// Every write of history moves it: the events of an ack's HistoryDelta and those of
	// AppendWithExecution.
	LastEventID uint64
	// Incarnation is opaque and changes whenever the instance is deleted and created again,
	// so an equal (ExecutionID, LastEventID) of a new instance with the same id is told apart.
	// It does not change otherwise, and the ack committing a lazily fetched turn keeps the
	// Incarnation that fetch reported, even the ack of an instance's first turn (which
	// creates it): the state a runtime keeps after a turn matches the next turn's cursor.
	// Only before an instance's first turn is committed may each lazy fetch report another.
	Incarnation string
}

// LazyHistoryFetcher is an optional extension of Provider, checked for with a type
// assertion like OrchestrationAckFetcher: orchestration fetches that do not read the
// history and say instead where it ends, so a runtime that keeps instances' replayed state
// between turns reads the history only when its copy is stale (with ReadWithExecution).
// A runtime without such a cache has no use for it; a provider without it is used through
// the plain fetches.
//
// Its fetches are FetchOrchestrationItem and AckOrchestrationItemAndFetch (same locking,
// messages, attempts, filter, long polling, errors, *FetchAfterAckError), except that they
// do not read the history: the returned item has History nil, HistoryError "", and Cursor
// set. Every other field (OrchestrationName, Version, ExecutionID, Messages, KVSnapshot,
// LockToken, AttemptCount) is filled as by the plain fetch. (HistoryError still reports,
// as the plain fetch does, stored data the fetch did read and could not decode, such as
// the KV snapshot; it never describes the unread history.)
//
// The cursor describes the history a plain fetch would have returned at the moment of the
// fetch: the instance is locked from then on, so no turn changes it until the lock is
// released. A runtime whose copy of instance I is (execution E, last event L, incarnation
// N) may use it for a fetched item of I when item.Cursor equals (E, L, N); after committing
// a turn with a HistoryDelta for execution E' whose last event id is L', its copy's cursor
// is (E', L', N) (an empty delta leaves L). A provider's lazy fetch reads nothing whose
// size grows with the history.
//
// Undecodable stored history is not noticed by a lazy fetch (it reads none): the runtime
// learns of it from ReadWithExecution's ErrUndecodable when it reads the history.
type LazyHistoryFetcher interface {
	// FetchOrchestrationItemLazy is FetchOrchestrationItem without the history read.
	FetchOrchestrationItemLazy(ctx context.Context, lockTimeout, pollTimeout time.Duration, filter *DispatcherCapabilityFilter) (*OrchestrationItem, error)
	// AckOrchestrationItemAndFetchLazy is OrchestrationAckFetcher's
	// AckOrchestrationItemAndFetch whose fetch half is FetchOrchestrationItemLazy.
	AckOrchestrationItemAndFetchLazy(ctx context.Context, lockToken string, commit OrchestrationCommit, lockTimeout, pollTimeout time.Duration, filter *DispatcherCapabilityFilter) (*OrchestrationItem, error)
}
