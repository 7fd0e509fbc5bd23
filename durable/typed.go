package durable

// The generic functions below are the typed forms of the context methods of
// the same name (Go methods cannot have type parameters): ctx.X takes and
// returns strings, durable.X(ctx, ...) encodes inputs to JSON and decodes
// outputs from JSON, as duroxide's *_typed methods do. One rule, no other
// spellings: the Client's typed calls, which need no type parameter, are its
// ...JSON methods.

// ScheduleActivity schedules activity name with input encoded as JSON and
// decodes its JSON result into Out.
func ScheduleActivity[Out any](ctx *OrchestrationContext, name string, input any, opts ...ActivityOption) Future[Out] {
	return typed[Out](ctx.ScheduleActivity(name, mustEncode(input), opts...))
}

// ScheduleActivityWithRetry is the method of the same name with JSON input
// and output.
func ScheduleActivityWithRetry[Out any](ctx *OrchestrationContext, name string, input any, policy RetryPolicy, opts ...ActivityOption) Future[Out] {
	return typed[Out](ctx.ScheduleActivityWithRetry(name, mustEncode(input), policy, opts...))
}

// ScheduleSubOrchestration starts a child orchestration with JSON input and
// decodes its JSON output into Out.
func ScheduleSubOrchestration[Out any](ctx *OrchestrationContext, name string, input any, opts ...OrchestrationOption) Future[Out] {
	return typed[Out](ctx.ScheduleSubOrchestration(name, mustEncode(input), opts...))
}

// WaitForEvent waits for external event name and decodes its JSON data.
func WaitForEvent[T any](ctx *OrchestrationContext, name string) Future[T] {
	return typed[T](ctx.WaitForEvent(name))
}

// Dequeue takes the next message of a persistent queue and decodes its JSON.
func Dequeue[T any](ctx *OrchestrationContext, queue string) Future[T] {
	return typed[T](ctx.Dequeue(queue))
}

// Go is the method of the same name for a block with any result type: the
// block's result is carried as JSON, the way every other value of an
// orchestration is.
func Go[T any](ctx *OrchestrationContext, fn func(ctx *OrchestrationContext) (T, error)) Future[T] {
	return typed[T](ctx.Go(func(block *OrchestrationContext) (string, error) {
		v, err := fn(block)
		if err != nil {
			return "", err
		}
		return mustEncode(v), nil
	}))
}

// ContinueAsNew is the method of the same name with a JSON-encoded input.
// It never returns.
func ContinueAsNew(ctx *OrchestrationContext, input any, opts ...OrchestrationOption) {
	ctx.ContinueAsNew(mustEncode(input), opts...)
}

// StartOrchestration is the method of the same name with a JSON-encoded
// input.
func StartOrchestration(ctx *OrchestrationContext, instance, name string, input any, opts ...OrchestrationOption) {
	ctx.StartOrchestration(instance, name, mustEncode(input), opts...)
}

// SetValue stores value encoded as JSON under key.
func SetValue(ctx *OrchestrationContext, key string, value any) {
	ctx.SetValue(key, mustEncode(value))
}

// Value reads key and decodes its JSON; ok is false when key is unset.
func Value[T any](ctx *OrchestrationContext, key string) (v T, ok bool, err error) {
	s, ok := ctx.Value(key)
	if !ok {
		return v, false, nil
	}
	v, err = decodeJSON[T](s)
	if err != nil {
		return v, true, &DecodeError{Kind: "value", Name: key, Err: err}
	}
	return v, true, nil
}

// mustEncode encodes orchestration-side values. Orchestration code must be
// deterministic, so a value that cannot be encoded is a programming error:
// the panic fails the instance (with duroxide's Panicked details), not the
// process.
func mustEncode(v any) string {
	s, err := encodeJSON(v)
	if err != nil {
		panic("durable: encode input as JSON: " + err.Error())
	}
	return s
}
