// Package redisprovider is a duroxide provider that stores orchestration
// history, queues, locks, sessions and KV state in Redis.
//
// Every state change is one Lua script (see the module's lua/ directory), so
// each provider call is atomic and costs one round trip (which concurrent
// calls can share: Options.AutoPipeline). On Redis 7 the
// scripts are loaded as one function library and called with FCALL, so the
// Lua they share is compiled once per server; elsewhere (and with
// Options.ForceEvalsha) they run with EVALSHA. Workers and orchestration
// dispatchers can ack and fetch their next item in one call
// (duroxide.WorkAckFetcher, duroxide.OrchestrationAckFetcher), and an
// orchestration fetch can leave the history unread and return where it ends
// instead (duroxide.LazyHistoryFetcher), for a runtime that keeps instances'
// replayed state between turns: such a fetch costs the same for any history
// length. Several runtimes can have an instance's turns routed back to the
// runtime that ran its last one (duroxide.StickyRouter,
// duroxide.WithStickyRoute).
// Every key of a partition shares one hash tag, so the provider runs on a
// single node, behind Sentinel, or on Redis Cluster. A namespace has one
// partition unless it is created with more (Options.Partitions), which
// spreads it over a Cluster's shards; Provider, which New returns, serves a
// namespace of any count. Time is Redis's clock.
//
// A fetch with a poll timeout blocks without polling: each partition parks
// one connection per process in BZPOPMIN on the wake-up keys of the work its
// callers can take, and a long-lived poller per kind of fetch runs the fetch
// script for them when work arrives or becomes due. Blocking uses its own
// connections (see Options), so parked ones never starve other calls.
//
// # Errors
//
// Every method returns nil or a *duroxide.ProviderError whose kind errors.Is
// finds; callers branch on the kind, never on the message (which names the
// operation, in duroxide's snake_case, and the object):
//
//   - duroxide.ErrUnavailable, and only it, is retryable: Redis could not be
//     reached or answered with a transient refusal (LOADING, BUSY, TRYAGAIN,
//     failover, OOM, ...), or ctx ended (errors.Is(err, ctx.Err()) holds).
//     Any method.
//   - duroxide.ErrInvalidInput: empty instance ids, negative durations,
//     KeepLast or Limit, a nil or wrong work item for the queue, event or
//     execution id 0, an invalid TagFilter or session config, KV keys or
//     values over the limits; New's options. Also any call on a closed
//     client. Nothing is written.
//   - duroxide.ErrLockLost: an empty, unknown or (except for abandon) expired
//     lock token, of AckOrchestrationItem, AbandonOrchestrationItem,
//     RenewOrchestrationItemLock, AckWorkItem, AbandonWorkItem and
//     RenewWorkItemLock; for the worker queue also an item cancelled under its
//     lock.
//   - duroxide.ErrDuplicateEvent: AckOrchestrationItem and
//     AppendWithExecution, for an event id not after the last stored one.
//   - duroxide.ErrNotFound: GetInstanceInfo, GetParentID, DeleteInstance and
//     PruneExecutions of an instance without a record; LatestExecutionID and
//     ReadHistory of one with neither a record nor an execution;
//     GetExecutionInfo of an unknown execution. Other reads and lists of an
//     unknown instance return nothing instead.
//   - duroxide.ErrConflict: DeleteInstance of a sub-orchestration, or of a
//     tree holding a Running instance without force; DeleteInstancesAtomic of
//     a Running instance without force, or of a set that leaves a child out.
//   - duroxide.ErrUndecodable: stored data that cannot be decoded: events on
//     Read, ReadWithExecution, ReadHistory, ReadHistoryWithExecutionID; a
//     work item on FetchWorkItem; a KV entry on GetKVValue and
//     GetKVAllValues; ids and versions on ListExecutions, LatestExecutionID
//     and GetCustomStatus; a key of the wrong type or a script reply without
//     its declared shape on any method. FetchOrchestrationItem reports
//     undecodable history in the item's HistoryError instead, so the runtime
//     can fail the instance.
//
// A server refusal that none of these describes (authentication, ACL, a
// script failing at run time) is permanent and has no kind: it is a
// deployment problem or a bug, not a state of the data.
package redisprovider
