package durable

import (
	"encoding/json"

	"github.com/duroxide-go/duroxide-redis/durable/internal/engine"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// poisonHistoryEventID is the event id duroxide gives the failure it
// records for a history that cannot be decoded (no event id is known).
const poisonHistoryEventID = 99999

// poisonOrchestration fails an instance whose batch was fetched more than
// MaxAttempts times (duroxide's fail_orchestration_as_poison).
func (r *Runtime) poisonOrchestration(item *duroxide.OrchestrationItem, eng *engine.Engine) {
	r.opts.Logger.Warn("durable: orchestration message exceeded max attempts, poisoning", "instance", item.Instance,
		"attempt", item.AttemptCount, "max_attempts", r.opts.MaxAttempts)
	if item.HistoryError != "" {
		r.poisonUndecodable(item)
		return
	}
	d := duroxide.ErrorDetails{Poison: &duroxide.PoisonError{
		AttemptCount: item.AttemptCount, MaxAttempts: r.opts.MaxAttempts,
		MessageType: duroxide.PoisonMessageType{Orchestration: &duroxide.PoisonOrchestration{Instance: item.Instance, ExecutionID: item.ExecutionID}},
		Message:     marshalMessages(item.Messages),
	}}
	meta := poisonMetadata(item, d)
	if cause := r.poisonCause(item, eng); cause != "" {
		// The history keeps duroxide's failure exactly; the execution's
		// output, which duroxide fills with the failure's display message,
		// says why as well (Client.Status reads it back as FailureCause).
		out := *meta.Output + poisonCauseSeparator + cause
		meta.Output = &out
	}
	r.ack(item, eng.PoisonCommit(item, d, meta, r.turnEnv()))
}

// poisonCauseSeparator joins a poison failure's display message and its
// cause in the execution's output.
const poisonCauseSeparator = "; cause: "

// poisonCause says why a batch was fetched until it became poison when this
// runtime can tell: its orchestration (or version) is not registered here,
// so every fetch handed it back. "" otherwise (a crash or a hang repeated,
// which leaves no trace to name).
func (r *Runtime) poisonCause(item *duroxide.OrchestrationItem, eng *engine.Engine) string {
	b := engine.ReadBatch(item.Messages, eng.Info(), item.Instance)
	name, version := b.Name, b.Version
	if name == "" {
		name, version = item.OrchestrationName, item.Version
	}
	if name == "" {
		return ""
	}
	if _, _, ok := r.reg.resolve(name, version); ok {
		return ""
	}
	return duroxide.PendingStart{Orchestration: name, Version: version, Reason: notRegisteredReason}.Cause()
}

func (r *Runtime) poisonUndecodable(item *duroxide.OrchestrationItem) {
	d := duroxide.ErrorDetails{Poison: &duroxide.PoisonError{
		AttemptCount: item.AttemptCount, MaxAttempts: r.opts.MaxAttempts,
		MessageType: duroxide.PoisonMessageType{FailedDeserialization: &duroxide.PoisonFailedDeserialization{
			Instance: item.Instance, ExecutionID: item.ExecutionID, Error: item.HistoryError,
		}},
		Message: item.HistoryError,
	}}
	ev := duroxide.NewEvent(poisonHistoryEventID, item.Instance, item.ExecutionID, nil, duroxide.OrchestrationFailedEvent{Details: d})
	r.ack(item, duroxide.OrchestrationCommit{ExecutionID: item.ExecutionID, HistoryDelta: []duroxide.Event{ev}, Metadata: poisonMetadata(item, d)})
}

func poisonMetadata(item *duroxide.OrchestrationItem, d duroxide.ErrorDetails) duroxide.ExecutionMetadata {
	out := engine.DisplayMessage(d)
	return duroxide.ExecutionMetadata{Status: "Failed", Output: &out, OrchestrationName: item.OrchestrationName, OrchestrationVersion: item.Version}
}

// marshalMessages renders work items as a JSON array of duroxide JSON.
func marshalMessages(items []duroxide.WorkItem) string {
	raws := make([]json.RawMessage, 0, len(items))
	for _, it := range items {
		b, err := duroxide.MarshalWorkItem(it)
		if err != nil {
			continue
		}
		raws = append(raws, b)
	}
	b, _ := json.Marshal(raws)
	return string(b)
}
