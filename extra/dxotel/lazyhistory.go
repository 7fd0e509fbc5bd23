package dxotel

import (
	"context"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// lazyHistoryFetch passes duroxide.LazyHistoryFetcher through. Its calls are
// traced exactly as their history-reading counterparts, under their own
// operation names.
type lazyHistoryFetch[C context.Context] struct{ w *provider }

// FetchOrchestrationItemLazy traces the fetch as FetchOrchestrationItem.
func (m lazyHistoryFetch[C]) FetchOrchestrationItemLazy(ctx C, lockTimeout, pollTimeout time.Duration,
	filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return m.w.fetchOrchestration(ctx, "fetch_orchestration_item_lazy", func(ctx context.Context) (*duroxide.OrchestrationItem, error) {
		return m.w.inner.(duroxide.LazyHistoryFetcher).FetchOrchestrationItemLazy(ctx, lockTimeout, pollTimeout, filter)
	})
}

// AckOrchestrationItemAndFetchLazy traces the combined call as
// AckOrchestrationItemAndFetch, the rest of its poll a lazy fetch.
func (m lazyHistoryFetch[C]) AckOrchestrationItemAndFetchLazy(ctx C, lockToken string, commit duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	lf := m.w.inner.(duroxide.LazyHistoryFetcher)
	return m.w.ackTurnAndFetch(ctx, "ack_orchestration_item_and_fetch_lazy", lockToken, commit, pollTimeout,
		func(ctx context.Context, poll time.Duration) (*duroxide.OrchestrationItem, error) {
			return lf.AckOrchestrationItemAndFetchLazy(ctx, lockToken, commit, lockTimeout, poll, filter)
		}, func(ctx context.Context, poll time.Duration) (*duroxide.OrchestrationItem, error) {
			return lf.FetchOrchestrationItemLazy(ctx, lockTimeout, poll, filter)
		})
}
