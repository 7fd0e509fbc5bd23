package duroxide

import (
	"context"
	"time"
)

// HistoryCursor says where an execution's stored history ends.
type HistoryCursor struct {
	// ExecutionID is the instance's current execution (as OrchestrationItem.ExecutionID).
	ExecutionID uint64
	// LastEventID is the highest event id stored for that execution; 0 when it has none.
	LastEventID uint64
	// Incarnation is opaque and changes whenever the instance is deleted and created again,
	// so an equal (ExecutionID, LastEventID) of a new instance with the same id is told apart.
	Incarnation string
}

// LazyHistoryFetcher is optional. Its fetches are FetchOrchestrationItem and
// AckOrchestrationItemAndFetch (same locking, messages, attempts, filter, long polling,
// errors, *FetchAfterAckError), except that they do not read the history: the returned
// item has History nil, HistoryError "", and Cursor set.
type LazyHistoryFetcher interface {
	FetchOrchestrationItemLazy(ctx context.Context, lockTimeout, pollTimeout time.Duration, filter *DispatcherCapabilityFilter) (*OrchestrationItem, error)
	AckOrchestrationItemAndFetchLazy(ctx context.Context, lockToken string, commit OrchestrationCommit, lockTimeout, pollTimeout time.Duration, filter *DispatcherCapabilityFilter) (*OrchestrationItem, error)
}
