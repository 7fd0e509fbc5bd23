package providertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Error handling (provider_validation::error_handling; duroxide
// docs/provider-implementation-guide.md checklist "Error Handling" and "Error
// Classification"; duroxide src/providers/sqlite.rs; duroxide.Provider docs
// errors: permanent for contract violations, ctx errors unwrap to ctx.Err()).

// orcErrorCases lists the error handling cases.
func orcErrorCases() []envCase {
	return []envCase{
		{"InvalidLockTokenOnAck", orcInvalidTokenOnAck},
		{"DuplicateEventIDRejection", orcDuplicateEventID},
		{"MissingInstanceMetadata", orcMissingMetadata},
		{"CorruptedSerializationData", orcCorrupted},
		{"LockExpirationDuringAck", orcExpiredDuringAck},
		{"CancelledContext", orcCancelledContext},
	}
}

// orcInvalidTokenOnAck proves an ack with a token that was never issued, or
// with the token of a turn already acked, is a permanent lock_token error that
// writes nothing
// (provider_validation::error_handling::test_invalid_lock_token_on_ack;
// duroxide docs/provider-implementation-guide.md "ack_orchestration_item()
// validates lock before committing").
func orcInvalidTokenOnAck(e *env) {
	e.start("A", nil)
	item := e.orcLock("A", orcRaise("A", "1"))
	err := e.p.AckOrchestrationItem(e.ctx, "no-such-token", orcRichCommit("A", 2))
	wantPermanent(e.t, err, duroxide.ErrLockLost, "ack_orchestration_item", "lock_token")
	e.orcWantUntouched("A", 1)
	e.ack(item.LockToken, orcRichCommit("A", 2))
	e.orcWantRichCommitted("A", 1, 2, 3)
	stale := orcCommit("A", 1, 4)
	stale.WorkerItems = []duroxide.WorkItem{activity("A", 4)}
	stale.HistoryDelta = append(stale.HistoryDelta, orcStatusEvent("A", 5, ptr("stale")))
	err = e.p.AckOrchestrationItem(e.ctx, item.LockToken, stale)
	wantPermanent(e.t, err, duroxide.ErrLockLost, "ack_orchestration_item", "lock_token")
	e.orcWantHistory("A", 0, 1, 2, 3)
	e.orcWantStatus("A", 0, orcStatus(ptr("busy"), 1))
	e.noWork(duroxide.AnyTag())
}

// orcDuplicateEventID proves an ack whose delta repeats a stored event id, goes
// back before the last one, or repeats or reorders ids within itself is a
// permanent error writing nothing, and the lock still takes a correct ack
// (provider_validation::error_handling::test_duplicate_event_id_rejection;
// duroxide.Provider docs).
func orcDuplicateEventID(e *env) {
	e.start("A", nil)
	e.orcTurn("A", orcCommit("A", 1, 2, 3))
	item := e.orcLock("A", orcRaise("A", "x"))
	for _, ids := range [][]uint64{{3}, {2}, {1}, {4, 4}, {5, 4}} {
		err := e.p.AckOrchestrationItem(e.ctx, item.LockToken, orcCommit("A", 1, ids...))
		wantPermanent(e.t, err, duroxide.ErrDuplicateEvent, "ack_orchestration_item")
		e.orcWantHistory("A", 0, 1, 2, 3)
	}
	e.ack(item.LockToken, orcCommit("A", 1, 4, 5))
	e.orcWantHistory("A", 0, 1, 2, 3, 4, 5)
}

// orcMissingMetadata proves an instance with no record and no history is
// handled gracefully: it is fetched with empty name and history, execution 1
// and no error, its status and history read as empty, and an ack without
// metadata consumes the message without creating a record
// (provider_validation::error_handling::test_missing_instance_metadata).
func orcMissingMetadata(e *env) {
	item := e.orcLock("ghost", orcRaise("ghost", "1"))
	e.orcWantDescribed(item, "", "")
	e.orcWantExecution(item, 1)
	if len(item.History) != 0 || item.HistoryError != "" {
		e.t.Fatalf("ghost fetched with history %v / error %q", eventIDs(item.History), item.HistoryError)
	}
	e.orcWantStatus("ghost", 0, nil)
	e.orcWantHistory("ghost", 0)
	e.ack(item.LockToken, duroxide.OrchestrationCommit{ExecutionID: 1})
	e.orcWantRecord("ghost", false)
	e.noFetch(nil)
}

// orcCorrupted proves undecodable stored history is handled gracefully: reads
// fail with a permanent error instead of returning a partial history, and a
// fetch returns the locked item with HistoryError set (not an error), which can
// be abandoned and fetched again
// (provider_validation::error_handling::test_corrupted_serialization_data;
// duroxide docs/proposals-impl/provider-capability-filtering.md "History
// Deserialization Contract").
func orcCorrupted(e *env) {
	if e.h.CorruptHistory == nil {
		e.t.Skip("needs Harness.CorruptHistory to store an undecodable history entry")
	}
	e.start("A", nil)
	e.h.CorruptHistory(e.t, e.p, "A", 1)
	_, err := e.p.Read(e.ctx, "A")
	wantPermanent(e.t, err, duroxide.ErrUndecodable, "read")
	_, err = e.p.ReadWithExecution(e.ctx, "A", 1)
	wantPermanent(e.t, err, duroxide.ErrUndecodable, "read_with_execution")
	e.enqueue(orcRaise("A", "1"), 0)
	for attempt := uint32(1); attempt <= 2; attempt++ {
		item := e.fetchInstance("A")
		if item.HistoryError == "" || len(item.History) != 0 {
			e.t.Fatalf("fetch over corrupt history: HistoryError %q, %d events; want an error and no events", item.HistoryError, len(item.History))
		}
		e.orcWantAttempt(item, attempt)
		e.noFetch(nil)
		e.abandon(item.LockToken, 0, false)
	}
}

// orcExpiredDuringAck proves an ack after the lock expired is a permanent
// lock_token error that writes nothing, and the messages are fetched again
// (provider_validation::error_handling::test_lock_expiration_during_ack;
// duroxide src/providers/sqlite.rs).
func orcExpiredDuringAck(e *env) {
	e.start("A", nil)
	e.enqueue(orcRaise("A", "1"), 0)
	item := e.mustFetch(shortLock)
	e.wait(afterShort)
	err := e.p.AckOrchestrationItem(e.ctx, item.LockToken, orcRichCommit("A", 2))
	wantPermanent(e.t, err, duroxide.ErrLockLost, "ack_orchestration_item", "lock_token")
	e.orcWantUntouchedUnlocked("A", 1)
	again := e.fetchInstance("A")
	e.wantMessages(again, orcRaise("A", "1"))
	e.orcWantAttempt(again, 2)
	e.noFetch(nil) // the rejected ack sent nothing to the peer
}

// orcWantCancelled asserts err reports a cancelled context as the contract
// requires: a *duroxide.ProviderError for which errors.Is(err,
// context.Canceled) holds.
func orcWantCancelled(t *testing.T, what string, err error) {
	t.Helper()
	var pe *duroxide.ProviderError
	if err == nil || !errors.Is(err, context.Canceled) || !errors.As(err, &pe) {
		t.Fatalf("%s with a cancelled context: %v (%T); want a *duroxide.ProviderError wrapping context.Canceled", what, err, err)
	}
}

// orcCancelledContext proves calls with a cancelled context fail with an error
// that unwraps to context.Canceled and that a cancelled fetch leaves no lock
// held (duroxide.Provider docs errors; duroxide
// docs/provider-implementation-guide.md checklist "Error Handling").
func orcCancelledContext(e *env) {
	e.enqueue(orcRaise("A", "1"), 0)
	cctx, cancel := context.WithCancel(e.ctx)
	cancel()
	item, err := e.p.FetchOrchestrationItem(cctx, longLock, 0, nil)
	if item != nil {
		e.t.Fatalf("fetch with a cancelled context returned %q", item.Instance)
	}
	orcWantCancelled(e.t, "FetchOrchestrationItem", err)
	_, err = e.p.FetchOrchestrationItem(cctx, longLock, time.Second, nil)
	orcWantCancelled(e.t, "FetchOrchestrationItem (long poll)", err)
	_, err = e.p.Read(cctx, "A")
	orcWantCancelled(e.t, "Read", err)
	e.wantMessages(e.fetchInstance("A"), orcRaise("A", "1"))
}
