// Package duroxide is the Go form of duroxide's provider contract: the types a storage
// provider exchanges with the duroxide runtime (work items, history events, error details,
// filters), the Provider and ProviderAdmin interfaces, and a codec that reads and writes
// exactly the JSON duroxide's Rust serde_json produces. It has no storage dependency.
//
// # Roles
//
// A provider keeps, per instance, an append-only history split into executions (a
// ContinueAsNew starts the next execution id), an orchestrator queue per instance, one
// worker queue, instance locks, sessions, a key-value store and a custom status. The runtime
// owns every decision and every id; the provider stores what it is given and applies the
// commit of each orchestration turn atomically.
//
// # Peek-lock lifecycle
//
// Fetch methods lock and return work without removing it. A returned item means a lock is
// held until it is acked, abandoned or its timeout expires; an error or a nil item means no
// lock is held. Every fetch increments the attempt count reported with the item, so a
// message that keeps crashing its processor is eventually poisoned by the runtime; an
// abandon with ignoreAttempt takes the increment back for failures that were not the
// message's fault. Expired locks make the work visible again (at-least-once delivery).
//
// # Optional extensions
//
// A provider may implement more interfaces, which the runtime finds with a type assertion
// and uses instead of the plain calls: WorkAckFetcher and OrchestrationAckFetcher (ack
// and fetch the next item in one call), BatchEnqueuer (enqueue several items at once) and
// LazyHistoryFetcher (orchestration fetches that leave the history unread and return a
// HistoryCursor saying where it ends, for a runtime that keeps replayed instances in
// memory between turns). A ProviderAdmin may implement InstanceLister (one page of instance
// records, newest first, for tools). Each is documented where it is declared; none changes
// what the plain calls do.
//
// # Errors
//
// Provider methods return nil or an error wrapping *ProviderError. Retryable errors are
// transient and safe to retry; permanent ones (bad or expired lock_token, invalid input,
// duplicate events, undecodable data) are not. See ProviderError and IsRetryable.
//
// # KV and custom status
//
// KV events in an ack's HistoryDelta go to a per-instance delta; when the ack's status is
// terminal (Completed, Failed, ContinuedAsNew) the delta is merged into the instance's
// store. OrchestrationItem.KVSnapshot is the store only, so replays are deterministic,
// while GetKVValue and GetKVAllValues show the live view. The last CustomStatusUpdatedEvent
// of an ack sets or clears the custom status and bumps its version.
//
// # Wire format
//
// MarshalWorkItem / UnmarshalWorkItem and the MarshalJSON / UnmarshalJSON methods of Event
// and ErrorDetails produce serde_json's compact output byte for byte (same key order, same
// escaping) and decode as strictly as serde does: unknown variants or event types, missing
// or mistyped fields, several variant keys, invalid UTF-8 and trailing data are errors,
// never silently empty values. Unknown extra keys are ignored, as serde ignores them. The
// golden cases live in testdata/ (copied from the shared duroxide-json fixtures).
//
// Two deliberate differences from serde: struct variants written as JSON arrays (which
// serde also accepts but never produces) are rejected, and JSON null is not accepted as an
// empty Event or ErrorDetails.
package duroxide
