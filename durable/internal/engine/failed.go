package engine

import "github.com/duroxide-go/duroxide-redis/duroxide"

// failedEvent is the OrchestrationFailed that ends an execution, written
// exactly as duroxide's HistoryManager::append_failed writes it: no source,
// and the placeholders instance_id "" and execution_id 0, which duroxide
// never fills in (its recorded histories carry them). The provider stores it
// under the commit's instance and execution all the same, and nothing reads
// those two fields back. duroxide uses it for a failed or cancelled turn, a
// poison message and a failed ack; its limit failure and its
// undecodable-history poison event carry the real ids and do not come here.
func failedEvent(eventID uint64, d duroxide.ErrorDetails) duroxide.Event {
	return duroxide.NewEvent(eventID, "", 0, nil, duroxide.OrchestrationFailedEvent{Details: d})
}
