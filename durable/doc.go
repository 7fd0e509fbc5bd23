// Package durable is a durable-execution runtime in Go on the duroxide
// provider contract: orchestrations written as ordinary Go functions are
// replayed from an append-only history, and the history they write is
// exactly duroxide's (same event kinds, event ids, source_event_id links,
// sub-orchestration ids and system-call activities), so an instance started
// here can be continued by duroxide and the reverse. The package knows
// nothing of Redis: any duroxide.Provider works (redisprovider is one).
//
// # Pieces
//
//   - Registry: orchestrations by name and semver version, activities by
//     name. Raw functions take and return strings (duroxide stores payloads
//     as strings holding JSON); Orchestration and Activity adapt typed
//     functions, encoding with encoding/json.
//   - OrchestrationContext: everything non-deterministic. Its methods record
//     intent and return a Future; Future.Get blocks the orchestration until
//     the result is in history. ctx.Select races futures (the first ready in
//     argument order wins; losers are cancelled as duroxide drops them),
//     ctx.Join waits for all, ctx.Go runs a block of steps as one future
//     (duroxide's async blocks), so sequences can be raced and joined too.
//     Every method that takes or returns a payload has a typed form: a
//     generic function of the same name taking ctx first (ScheduleActivity,
//     ScheduleActivityWithRetry, ScheduleSubOrchestration, WaitForEvent,
//     Dequeue, Go, ContinueAsNew, StartOrchestration, SetValue, Value),
//     which encodes inputs and decodes results as JSON. The Client's typed
//     calls are its ...JSON methods (StartOrchestrationJSON, RaiseEventJSON,
//     EnqueueEventJSON); its management calls are under Client.Admin.
//   - Runtime: NewRuntime starts orchestration dispatchers and activity
//     workers on the provider's long poll, renews locks of long turns and
//     activities, abandons with backoff on transient errors, poisons work
//     fetched more than Options.MaxAttempts times, runs session-affine
//     activities, and Shutdown stops it within a deadline. With a provider
//     that has the optional ack-and-fetch calls, a worker acks an activity
//     and fetches its next in one call, and so does an orchestration
//     dispatcher with a turn (Options.DisableAckFetch turns both off).
//   - Client: start, raise events, enqueue queue messages, cancel
//     (cascading to children), status, waits, KV reads and the provider's
//     management calls. A start of an existing id is ErrAlreadyExists
//     (UseExisting: start if absent), a signal or cancel of an unknown id
//     ErrNotFound, both checked atomically with the write. Calls ride over
//     transient storage failures until their deadline, repeated under one
//     request id (WithRequestID names it for a caller's own repeats), so
//     nil means applied exactly once.
//   - durabletest: a runtime on an embedded miniredis whose clock skips
//     ahead to the next timer while a test waits and nothing else can run
//     (or moves when told, Env.Advance), waits for an instance to subscribe
//     to an event or create a timer, activity mocks and an optional provider
//     wrapper for fault injection; durabletest.Each runs a test on real
//     Redis and Redis Cluster too when the environment names them.
//   - RunTurn: one dispatcher turn without a provider, returning the commit
//     it would make, for golden-history tests against duroxide.
//
// # Determinism
//
// Orchestration code runs on its own goroutine, but only while the engine
// waits for it: it hands control back whenever it blocks on an unresolved
// future, and each turn replays it from the start. It must therefore only
// use the context for time (UTCNow, Timer), randomness (NewGUID), I/O
// (activities) and concurrency (Select/Join), and must not start goroutines
// that touch the context (a Get from another goroutine deadlocks that
// turn). A replay that schedules something different from the history fails
// the instance with duroxide's nondeterminism error; a panic fails the
// instance, not the process. When a turn ends with the code still blocked,
// its goroutine is ended (runtime.Goexit, so deferred calls run; a wait in
// one of them ends it at once) before the turn commits: nothing outlives a
// turn. Code that blocks outside the context (a channel, a mutex, a network
// call) for longer than Options.TurnDeadlockTimeout is the exception: the
// turn is abandoned with an Error log showing where it is blocked, and its
// goroutine, which Go cannot stop, is left behind.
//
// Go has no destructors, so where duroxide cancels a future by dropping it,
// Go code calls Future.Cancel; Select cancels its losers and every future
// still pending when the orchestration returns is cancelled, which gives the
// same history as duroxide's drops. Get on a cancelled future returns
// ErrCancelled at once and records nothing.
//
// # Errors
//
// Failures are typed for errors.As and classified by sentinels for
// errors.Is, while Error() keeps duroxide's message: *ActivityError
// (ErrActivityFailed), *ChildError (ErrChildFailed), *RetryError
// (ErrRetryExhausted; ErrTimeout when an attempt timed out), *CancelledError
// (ErrCancelled), *PanicError (ErrPanicked), *DecodeError (ErrDecode),
// *WaitTimeoutError (ErrTimeout, context.DeadlineExceeded), *InvalidInputError
// (ErrInvalidInput) and, from OrchestrationStatus.Err, *NondeterminismError
// (ErrNondeterminism) or *OrchestrationError. An activity returns
// NonRetryable(err) to stop ScheduleActivityWithRetry at once.
//
// # Limits
//
// Payloads (inputs, outputs, activity results, event data) are limited to
// MaxPayloadBytes (4 MiB), the custom status to MaxCustomStatusBytes, KV values to
// MaxKVValueBytes and KV keys to MaxKVKeys, checked before anything is
// written: a client call over a limit returns an *InvalidInputError, code
// over one fails its instance with a message naming the limit.
//
// # Example
//
// (Example in example_test.go runs this program on an embedded Redis and
// checks its output.)
//
//	type Order struct {
//		ID    string  `json:"id"`
//		Total float64 `json:"total"`
//	}
//
//	func chargeCard(_ *durable.ActivityContext, o Order) (string, error) {
//		return "receipt-" + o.ID, nil // call the payment service here
//	}
//
//	func processOrder(ctx *durable.OrchestrationContext, o Order) (string, error) {
//		ctx.SetCustomStatus("charging")
//		receipt, err := durable.ScheduleActivityWithRetry[string](ctx, "ChargeCard", o,
//			durable.RetryPolicy{MaxAttempts: 3, Timeout: time.Minute}).Get()
//		if err != nil {
//			return "", err
//		}
//		ctx.SetCustomStatus("awaiting shipment")
//		// Wait up to a day for shipping, whichever comes first.
//		shipped := ctx.WaitForEvent("Shipped")
//		deadline := ctx.Timer(24 * time.Hour)
//		if ctx.Select(shipped, deadline) == 1 {
//			return "", fmt.Errorf("order %s not shipped in time", o.ID)
//		}
//		tracking, _ := shipped.Get()
//		ctx.Logger().Info("shipped", "tracking", tracking)
//		return receipt, nil
//	}
//
//	var redisURL = "redis://127.0.0.1:6379/0"
//
//	func main() {
//		ctx := context.Background()
//		reg := durable.NewRegistry()
//		reg.MustAddActivity("ChargeCard", durable.Activity(chargeCard))
//		reg.MustAddOrchestration("ProcessOrder", durable.Orchestration(processOrder))
//
//		p, err := redisprovider.New(ctx, redisprovider.Options{URL: redisURL})
//		if err != nil {
//			log.Fatal(err)
//		}
//		defer p.Close()
//		rt, err := durable.NewRuntime(p, reg, durable.Options{WorkerConcurrency: 8})
//		if err != nil {
//			log.Fatal(err)
//		}
//		defer rt.Shutdown(context.Background())
//
//		c := rt.Client()
//		if err := c.StartOrchestrationJSON(ctx, "order-42", "ProcessOrder", Order{ID: "42", Total: 9.5}); err != nil {
//			log.Fatal(err)
//		}
//		// Raise "Shipped" once the order waits for it (its custom status says
//		// so): an event that arrives before the orchestration subscribes is kept
//		// in history but never delivered, as in duroxide.
//		var seen uint64
//		for {
//			st, err := c.WaitForStatusChange(ctx, "order-42", seen, time.Minute)
//			if err != nil {
//				log.Fatal(err)
//			}
//			if st.IsTerminal() || st.CustomStatus != nil && *st.CustomStatus == "awaiting shipment" {
//				break
//			}
//			seen = st.CustomStatusVersion
//		}
//		if err := c.RaiseEvent(ctx, "order-42", "Shipped", "1Z999"); err != nil {
//			log.Fatal(err)
//		}
//		st, err := c.WaitForOrchestration(ctx, "order-42", time.Minute)
//		if err != nil {
//			log.Fatal(err)
//		}
//		var receipt string
//		_ = st.DecodeOutput(&receipt)
//		fmt.Println(st.Status, receipt)
//	}
//
// # Replaying stored histories
//
// Before new orchestration code is deployed, ReplayHistory (or
// ReplayHistoryJSON, ReplayInstance) replays stored histories against it
// with the runtime's own replay engine, writing nothing: a *ReplayError
// names the instance, execution and event where code and history part, as
// Temporal's WorkflowReplayer does. Histories come from a provider
// (ReadExecutions) or from `duroxide-redis history INSTANCE --all --json`;
// the CLI cannot know the code, so it only exports, and ReplayMain is the
// replay command a program of a few lines builds with its own Registry.
//
// # Mapping to duroxide
//
//	schedule_activity / _on_session / with_tag     ScheduleActivity(name, in, WithSession, WithTag)
//	schedule_activity_with_retry                   ScheduleActivityWithRetry (a future, raceable)
//	schedule_timer                                 Timer
//	schedule_wait / dequeue_event                  WaitForEvent / Dequeue
//	schedule_sub_orchestration[_versioned][_with_id] ScheduleSubOrchestration(name, in, WithVersion, WithInstanceID)
//	schedule_orchestration[_versioned]             StartOrchestration (detached)
//	continue_as_new[_versioned]                    ContinueAsNew (never returns)
//	set/reset/get_custom_status                    SetCustomStatus / ResetCustomStatus / CustomStatus
//	set/get/clear/clear_all kv, from instance      SetValue / Value / ClearValue / ClearAllValues / ValueFromInstance
//	prune_kv_values_updated_before                 PruneValuesUpdatedBefore (a time.Time cutoff)
//	new_guid / utc_now                             NewGUID / UTCNow (system-call activities)
//	select2/select3, join                          Select, Join
//	async { ... } inside select/join               Go
//	dropping a DurableFuture                       Future.Cancel (Select and orchestration return do it for you)
package durable
