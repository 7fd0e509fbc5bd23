package durable

// The generic helpers below are the typed forms of the context methods (Go
// methods cannot have type parameters): inputs are encoded to JSON, outputs
// decoded from JSON, as duroxide's *_typed methods do.

// CallActivity schedules activity name with input encoded as JSON and
// decodes its JSON result into Out.
func CallActivity[Out any](ctx *OrchestrationContext, name string, input any, opts ...ActivityOption) Future[Out] {
	return typed[Out](ctx.ScheduleActivity(name, mustEncode(input), opts...))
}

// CallActivityWithRetry is ScheduleActivityWithRetry with JSON input and output.
func CallActivityWithRetry[Out any](ctx *OrchestrationContext, name string, input any, policy RetryPolicy, opts ...ActivityOption) (Out, error) {
	s, err := ctx.ScheduleActivityWithRetry(name, mustEncode(input), policy, opts...)
	if err != nil {
		var zero Out
		return zero, err
	}
	out, err := decodeJSON[Out](s)
	if err != nil {
		return out, &DecodeError{Kind: "activity", Name: name, Err: err}
	}
	return out, nil
}

// CallSubOrchestration starts a child orchestration with JSON input and
// decodes its JSON output into Out.
func CallSubOrchestration[Out any](ctx *OrchestrationContext, name string, input any, opts ...OrchestrationOption) Future[Out] {
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

// ContinueAsNewWith is ContinueAsNew with a JSON-encoded input. It never returns.
func ContinueAsNewWith(ctx *OrchestrationContext, input any, opts ...OrchestrationOption) {
	ctx.ContinueAsNew(mustEncode(input), opts...)
}

// StartOrchestrationWith is StartOrchestration with a JSON-encoded input.
func StartOrchestrationWith(ctx *OrchestrationContext, name, instance string, input any, opts ...OrchestrationOption) {
	ctx.StartOrchestration(name, instance, mustEncode(input), opts...)
}

// SetValueJSON stores value encoded as JSON under key.
func SetValueJSON(ctx *OrchestrationContext, key string, value any) {
	ctx.SetValue(key, mustEncode(value))
}

// ValueJSON reads key and decodes its JSON; ok is false when key is unset.
func ValueJSON[T any](ctx *OrchestrationContext, key string) (v T, ok bool, err error) {
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
