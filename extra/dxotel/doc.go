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
// Gauges read the provider's GetQueueDepths and GetSystemMetrics once per
// metric collection, whatever the number of gauges; with the Redis provider
// both are answered from counters and index cardinalities, so a scrape costs
// the same at ten instances as at a hundred thousand.
package dxotel
