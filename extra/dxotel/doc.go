// Package dxotel instruments duroxide with OpenTelemetry: a span and a latency
// histogram per provider call, counters for committed turns, activity
// outcomes, poison messages and lock renewals, observable gauges for queue
// depths and instance counts, and (through durable.Observer) a span per
// orchestration turn and per activity execution.
//
// It is a module of its own, like go-redis's extra/redisotel, so the library
// module needs no OpenTelemetry at all; this package uses only the OTel API and
// the application chooses the SDK and exporters.
//
// Typical use:
//
//	obs, err := dxotel.WrapProvider(redisProvider, dxotel.Options{MeterProvider: mp, TracerProvider: tp})
//	rt, err := durable.NewRuntime(obs, registry, durable.Options{Observer: obs.Observer()})
//
// WrapProvider returns a Provider whose dynamic type implements exactly the
// optional provider interfaces of duroxide that the wrapped provider
// implements (duroxide.OrchestrationAckFetcher, duroxide.WorkAckFetcher,
// duroxide.BatchEnqueuer, duroxide.LazyHistoryFetcher,
// duroxide.PendingStartNoter, duroxide.ScheduleStore, duroxide.InstancePauser, duroxide.FlowController, ...), so a runtime on the
// wrapper finds, by the same type assertions, the same fast paths as on the
// bare provider, and no others. The wrapper never emulates a missing one: a
// batch is atomic only when the storage makes it so, a history-free fetch
// built on the plain one would read the history and drop it (so the runtime
// would read it a second time), and an ack-and-fetch built from an ack and a
// fetch would be the runtime's own fallback under a name that promises a
// saved round trip. A combined call is one span (and one recorded duration)
// named after its method; it records the ack as the plain ack does, and what
// it fetched on a "fetched" event. So that the ack is recorded (and the acked
// unit's span ended) when it applies rather than when the long poll for the
// next unit ends, the wrapper runs the inner combined call without the long
// poll and, when it found nothing, waits out the rest with the inner plain
// fetch: the contract's definition of the fetch half, at the cost of one
// more round trip on an idle queue.
//
// Gauges read the provider's GetQueueDepths and GetSystemMetrics once per
// metric collection, whatever the number of gauges; with the Redis provider
// both are answered from counters and index cardinalities, so a scrape costs
// the same at ten instances as at a hundred thousand.
package dxotel
