package providertest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The orchestrator sections rerun with every orchestration fetch going
// through duroxide.LazyHistoryFetcher, followed by the ReadWithExecution a
// runtime whose cached copy is stale makes: so lazy fetches meet every
// invariant of the plain ones (locking, filters, attempts, executions, KV
// snapshots, lock expiry), and on every fetch of those cases the cursor is
// checked against the history read under the same lock.

// lzPathSections are the sections rerun whole; runLazyPaths adds the
// orchestrator cases of Attempts and AckFetch.
var lzPathSections = []string{"Orchestrator", "Capability", "KV"}

// runLazyPaths reruns the orchestrator sections on providers whose
// orchestration fetches are lazy ones completed by a history read; ackFetch
// says the provider has the ack-and-fetch the AckFetch cases need.
func runLazyPaths(t *testing.T, h Harness, ackFetch bool) {
	w := wrapHarness(h, func(p duroxide.Provider) duroxide.Provider { return lazyViaRead{p} })
	t.Run("PlainSectionsThroughLazyFetch", func(t *testing.T) {
		runSections(t, w, lzPathSections)
		t.Run("Attempts", func(t *testing.T) { runCases(t, w, attOrchestratorCases()) })
		if ackFetch {
			t.Run("AckFetch", func(t *testing.T) { runGroups(t, w, afOrchestratorGroups()) })
		}
	})
}

// afOrchestratorGroups returns the orchestrator cases of the AckFetch section.
func afOrchestratorGroups() []caseGroup {
	for _, g := range afGroups {
		if g.name == "Orchestrator" {
			return []caseGroup{g}
		}
	}
	return nil
}

// lazyViaRead is a provider whose FetchOrchestrationItem and
// AckOrchestrationItemAndFetch are the lazy ones, with the history read
// afterwards as a runtime does when its cached copy is stale.
type lazyViaRead struct{ duroxide.Provider }

// unwrap returns the provider under test.
func (l lazyViaRead) unwrap() duroxide.Provider { return l.Provider }

// FetchOrchestrationItem fetches lazily and reads the history.
func (l lazyViaRead) FetchOrchestrationItem(ctx context.Context, lockTimeout, pollTimeout time.Duration,
	filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	item, err := l.Provider.(duroxide.LazyHistoryFetcher).FetchOrchestrationItemLazy(ctx, lockTimeout, pollTimeout, filter)
	if item == nil || err != nil {
		return item, err
	}
	return item, l.fill(ctx, item)
}

// AckOrchestrationItemAndFetch acks and fetches lazily, then reads the
// history; a failed read comes after the ack.
func (l lazyViaRead) AckOrchestrationItemAndFetch(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	item, err := l.Provider.(duroxide.LazyHistoryFetcher).AckOrchestrationItemAndFetchLazy(ctx, lockToken, commit,
		lockTimeout, pollTimeout, filter)
	if item == nil || err != nil {
		return item, err
	}
	if err := l.fill(ctx, item); err != nil {
		return item, &duroxide.FetchAfterAckError{Err: err}
	}
	return item, nil
}

// fill checks that item is a lazy fetch's, reads the history its cursor
// names, checks that the cursor is where that history ends, and puts the
// history in the item as a plain fetch has it. Undecodable history becomes
// HistoryError, as the plain fetch reports it.
func (l lazyViaRead) fill(ctx context.Context, item *duroxide.OrchestrationItem) error {
	c := item.Cursor
	if item.History != nil || c == nil || c.ExecutionID != item.ExecutionID {
		return fmt.Errorf("providertest: lazy fetch of %s (execution %d) returned %d events and cursor %+v; want no events and a cursor of that execution",
			item.Instance, item.ExecutionID, len(item.History), c)
	}
	h, err := l.ReadWithExecution(ctx, item.Instance, c.ExecutionID)
	if errors.Is(err, duroxide.ErrUndecodable) {
		if item.HistoryError == "" {
			item.HistoryError = err.Error()
		}
		return nil
	}
	if err != nil {
		return err
	}
	if last := lastEventID(h); last != c.LastEventID {
		return fmt.Errorf("providertest: lazy fetch of %s: cursor %+v, but execution %d's history ends at event %d",
			item.Instance, *c, c.ExecutionID, last)
	}
	item.History, item.Cursor = h, nil
	return nil
}

// lastEventID is the id of the last event of h, 0 when it is empty.
func lastEventID(h []duroxide.Event) uint64 {
	if len(h) == 0 {
		return 0
	}
	return h[len(h)-1].EventID
}
