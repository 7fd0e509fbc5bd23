package redisprovider

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The optional lazy fetches (duroxide.LazyHistoryFetcher): the fetch and
// ack-and-fetch scripts with their lazy argument set, which read no history
// and return its cursor instead: the execution record's last event id (kept
// by every append, the ack's and AppendWithExecution's) and the instance
// record's incarnation. Neither grows with the history, so a lazy fetch costs
// the same for 10 events as for 10,000, and a runtime whose cached copy is
// current saves the history's transfer and decoding; it is still one round
// trip, and the miss costs the runtime one ReadWithExecution.

var _ duroxide.LazyHistoryFetcher = (*partition)(nil)

// FetchOrchestrationItemLazy is FetchOrchestrationItem without the history
// read: the item's History is nil and its Cursor says where the history of
// its execution ends (see duroxide.LazyHistoryFetcher).
func (p *partition) FetchOrchestrationItemLazy(ctx context.Context, lockTimeout, pollTimeout time.Duration,
	filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return p.fetchOrchestration(ctx, lockTimeout, pollTimeout, filter, true)
}

// AckOrchestrationItemAndFetchLazy is AckOrchestrationItemAndFetch whose
// fetch half is FetchOrchestrationItemLazy's, in one script.
func (p *partition) AckOrchestrationItemAndFetchLazy(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit,
	lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return p.ackOrchestrationAndFetch(ctx, lockToken, commit, lockTimeout, pollTimeout, filter, true, nil)
}

// The cursor of a lazy fetch's reply, in the place of the history's events
// (orchHistory).
const (
	cursorLast        = iota // last event id of the execution read, "0" when none
	cursorIncarnation        // the instance's incarnation
	cursorFirst              // optional: the execution's first event, for an instance without a record
)

// decodeCursor reads a lazy fetch's cursor of execution executionID, with the
// first event when the reply has it (for describeNewInstance). What cannot
// be decoded is described in problem, as an undecodable history is by a
// plain fetch; the cursor is never nil.
func decodeCursor(raw []string, executionID uint64) (c *duroxide.HistoryCursor, first []duroxide.Event, problem string) {
	c = &duroxide.HistoryCursor{ExecutionID: executionID}
	if len(raw) <= cursorIncarnation {
		return c, nil, fmt.Sprintf("history cursor of execution %d: %d parts, want at least 2", executionID, len(raw))
	}
	c.Incarnation = raw[cursorIncarnation]
	last, err := strconv.ParseUint(raw[cursorLast], 10, 64)
	if err != nil {
		return c, nil, fmt.Sprintf("history cursor of execution %d: last event id %q: %v", executionID, raw[cursorLast], err)
	}
	c.LastEventID = last
	if len(raw) > cursorFirst {
		first, problem = decodeHistory(raw[cursorFirst:cursorFirst+1], executionID)
	}
	return c, first, problem
}
