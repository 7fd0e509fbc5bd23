// Package engine is the durable runtime's replay engine, apart from its
// public API as go-workflows keeps internal/command and
// internal/workflowstate apart from workflow/: orchestration code runs as a
// coroutine on a Context, each action it emits is matched against history
// or numbered as a new event, and completions arriving as messages become
// events through one index of the execution's history (index.go) and one
// positional rule for external events and queue messages (waits.go).
//
// Its interface is small: New(instance, execution, history) builds an
// Engine over a stored history; Engine.Turn(item, batch, version, code, env)
// runs a fetched batch and returns the commit to acknowledge and whether
// the execution goes on; an Engine that goes on can be kept (the runtime's
// instance cache does) and its next Turn feeds the parked code only the new
// messages; Close ends the code. The durable package adds the user API on
// top (OrchestrationContext, Future[T]) and runs engines from its
// dispatchers.
package engine
