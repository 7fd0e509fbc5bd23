package providertest

import (
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The ErrorKinds section: every Provider and ProviderAdmin method called with
// a lock token that was never issued or with input the contract rejects, and
// the kind errors.Is must find in the answer. The runtime branches on these
// kinds (ErrLockLost cancels an activity; ErrInvalidInput and the rest are
// bugs not worth retrying), so a provider returning the right words with no
// kind would still break its callers. The sections that own each behaviour
// check that nothing changed; this one checks the classification of all of
// them side by side.

func init() { register("ErrorKinds", runKinds) }

// kindCall is one call that must fail with a permanent error of kind whose
// text names op (and words).
type kindCall struct {
	name  string
	kind  error
	op    string
	words []string
	call  func(e *env) error
}

// runKinds runs one case per call.
func runKinds(t *testing.T, h Harness) {
	calls := append(kindTokenCalls(), kindInputCalls()...)
	calls = append(calls, kindAdminCalls()...)
	cases := make([]envCase, len(calls))
	for i, c := range calls {
		cases[i] = envCase{c.name, func(e *env) {
			wantPermanent(e.t, c.call(e), c.kind, c.op, c.words...)
		}}
	}
	runCases(t, h, cases)
}

// kindBogus is a lock token no provider issued.
const kindBogus = "bogus-token"

// kindTokenCalls are the lock-token methods with a token never issued
// (provider_validation::instance_locking::test_invalid_lock_token_rejection
// and provider_validation::lock_expiration::test_worker_lock_renewal_invalid_token).
func kindTokenCalls() []kindCall {
	lost := func(name, op string, call func(e *env) error) kindCall {
		return kindCall{name + "/BogusToken", duroxide.ErrLockLost, op, []string{"lock_token"}, call}
	}
	return []kindCall{
		lost("AckOrchestrationItem", "ack_orchestration_item", func(e *env) error {
			return e.p.AckOrchestrationItem(e.ctx, kindBogus, orcCommit("A", 1, 1))
		}),
		lost("AbandonOrchestrationItem", "abandon_orchestration_item", func(e *env) error {
			return e.p.AbandonOrchestrationItem(e.ctx, kindBogus, 0, false)
		}),
		lost("RenewOrchestrationItemLock", "renew_orchestration_item_lock", func(e *env) error {
			return e.p.RenewOrchestrationItemLock(e.ctx, kindBogus, longLock)
		}),
		lost("AckWorkItem", "ack_work_item", func(e *env) error {
			return e.p.AckWorkItem(e.ctx, kindBogus, completed("A", 2))
		}),
		lost("AbandonWorkItem", "abandon_work_item", func(e *env) error {
			return e.p.AbandonWorkItem(e.ctx, kindBogus, 0, false)
		}),
		lost("RenewWorkItemLock", "renew_work_item_lock", func(e *env) error {
			return e.p.RenewWorkItemLock(e.ctx, kindBogus, longLock)
		}),
	}
}

// kindInvalid is a call the contract rejects as invalid input.
func kindInvalid(name, op string, call func(e *env) error) kindCall {
	return kindCall{name, duroxide.ErrInvalidInput, op, nil, call}
}

// kindLocked fetches a visible orchestration item for A and returns its
// token, so a call can be made with valid token and bad arguments.
func kindLocked(e *env) string {
	e.enqueue(orcRaise("A", "1"), 0)
	return e.mustFetch(longLock).LockToken
}

// kindLockedWork fetches a worker item and returns its token.
func kindLockedWork(e *env) string {
	e.enqueueWork(activity("A", 2))
	return e.mustFetchWork(longLock, duroxide.AnyTag()).LockToken
}

// kindInputCalls are the Provider methods with empty instance ids, negative
// durations and items on the wrong queue (duroxide.Provider docs: invalid
// input is a permanent error and changes nothing).
func kindInputCalls() []kindCall {
	neg := -time.Second
	return []kindCall{
		kindInvalid("FetchOrchestrationItem/NegativeLock", "fetch_orchestration_item", func(e *env) error { return errOf(e.p.FetchOrchestrationItem(e.ctx, neg, 0, nil)) }),
		kindInvalid("AckOrchestrationItem/ExecutionZero", "ack_orchestration_item", func(e *env) error {
			return e.p.AckOrchestrationItem(e.ctx, kindLocked(e), orcCommit("A", 0, 1))
		}),
		kindInvalid("AbandonOrchestrationItem/NegativeDelay", "abandon_orchestration_item", func(e *env) error {
			return e.p.AbandonOrchestrationItem(e.ctx, kindLocked(e), neg, false)
		}),
		kindInvalid("RenewOrchestrationItemLock/NegativeExtension", "renew_orchestration_item_lock", func(e *env) error {
			return e.p.RenewOrchestrationItemLock(e.ctx, kindLocked(e), neg)
		}),
		kindInvalid("Read/EmptyInstance", "read", func(e *env) error { return errOf(e.p.Read(e.ctx, "")) }),
		kindInvalid("ReadWithExecution/EmptyInstance", "read_with_execution", func(e *env) error { return errOf(e.p.ReadWithExecution(e.ctx, "", 1)) }),
		kindInvalid("AppendWithExecution/EventIDZero", "append_with_execution", func(e *env) error {
			return e.p.AppendWithExecution(e.ctx, "A", 1, orcEvents("A", 1, 0))
		}),
		kindInvalid("EnqueueForWorker/NotAnActivity", "enqueue_for_worker", func(e *env) error {
			return e.p.EnqueueForWorker(e.ctx, orcRaise("A", "1"))
		}),
		kindInvalid("FetchWorkItem/NegativeLock", "fetch_work_item", func(e *env) error { return errOf(e.p.FetchWorkItem(e.ctx, neg, 0, nil, duroxide.AnyTag())) }),
		kindInvalid("AckWorkItem/ActivityAsCompletion", "ack_work_item", func(e *env) error {
			return e.p.AckWorkItem(e.ctx, kindLockedWork(e), activity("A", 3))
		}),
		kindInvalid("AbandonWorkItem/NegativeDelay", "abandon_work_item", func(e *env) error {
			return e.p.AbandonWorkItem(e.ctx, kindLockedWork(e), neg, false)
		}),
		kindInvalid("RenewWorkItemLock/NegativeExtension", "renew_work_item_lock", func(e *env) error {
			return e.p.RenewWorkItemLock(e.ctx, kindLockedWork(e), neg)
		}),
		kindInvalid("RenewSessionLock/NegativeExtension", "renew_session_lock", func(e *env) error { return errOf(e.p.RenewSessionLock(e.ctx, []string{"w"}, neg, longLock)) }),
		kindInvalid("EnqueueForOrchestrator/ActivityExecute", "enqueue_for_orchestrator", func(e *env) error {
			return e.p.EnqueueForOrchestrator(e.ctx, activity("A", 2), 0)
		}),
		kindInvalid("GetCustomStatus/EmptyInstance", "get_custom_status", func(e *env) error { return errOf(e.p.GetCustomStatus(e.ctx, "", 0)) }),
		kindInvalid("GetKVValue/EmptyInstance", "get_kv_value", func(e *env) error {
			_, _, err := e.p.GetKVValue(e.ctx, "", "k")
			return err
		}),
		kindInvalid("GetKVAllValues/EmptyInstance", "get_kv_all_values", func(e *env) error { return errOf(e.p.GetKVAllValues(e.ctx, "")) }),
		kindInvalid("GetInstanceStats/EmptyInstance", "get_instance_stats", func(e *env) error { return errOf(e.p.GetInstanceStats(e.ctx, "")) }),
	}
}

// kindAdminCalls are the ProviderAdmin methods with an empty instance id or
// negative options. An unknown (non-empty) instance is not invalid input:
// the UnknownObjects section covers it.
func kindAdminCalls() []kindCall {
	admin := func(name, op string, call func(e *env, a duroxide.ProviderAdmin) error) kindCall {
		return kindInvalid(name, op, func(e *env) error { return call(e, adm(e)) })
	}
	return []kindCall{
		admin("ListExecutions/EmptyInstance", "list_executions", func(e *env, a duroxide.ProviderAdmin) error { return errOf(a.ListExecutions(e.ctx, "")) }),
		admin("ReadHistoryWithExecutionID/EmptyInstance", "read_history_with_execution_id", func(e *env, a duroxide.ProviderAdmin) error { return errOf(a.ReadHistoryWithExecutionID(e.ctx, "", 1)) }),
		admin("ReadHistory/EmptyInstance", "read_history", func(e *env, a duroxide.ProviderAdmin) error { return errOf(a.ReadHistory(e.ctx, "")) }),
		admin("LatestExecutionID/EmptyInstance", "latest_execution_id", func(e *env, a duroxide.ProviderAdmin) error { return errOf(a.LatestExecutionID(e.ctx, "")) }),
		admin("GetInstanceInfo/EmptyInstance", "get_instance_info", func(e *env, a duroxide.ProviderAdmin) error { return errOf(a.GetInstanceInfo(e.ctx, "")) }),
		admin("GetExecutionInfo/EmptyInstance", "get_execution_info", func(e *env, a duroxide.ProviderAdmin) error { return errOf(a.GetExecutionInfo(e.ctx, "", 1)) }),
		admin("ListChildren/EmptyInstance", "list_children", func(e *env, a duroxide.ProviderAdmin) error { return errOf(a.ListChildren(e.ctx, "")) }),
		admin("GetParentID/EmptyInstance", "get_parent_id", func(e *env, a duroxide.ProviderAdmin) error { return errOf(a.GetParentID(e.ctx, "")) }),
		admin("GetInstanceTree/EmptyInstance", "get_instance_tree", func(e *env, a duroxide.ProviderAdmin) error { return errOf(a.GetInstanceTree(e.ctx, "")) }),
		admin("DeleteInstancesAtomic/EmptyInstance", "delete_instances_atomic", func(e *env, a duroxide.ProviderAdmin) error {
			return errOf(a.DeleteInstancesAtomic(e.ctx, []string{""}, true))
		}),
		admin("DeleteInstance/EmptyInstance", "delete_instance", func(e *env, a duroxide.ProviderAdmin) error { return errOf(a.DeleteInstance(e.ctx, "", true)) }),
		admin("DeleteInstanceBulk/NegativeLimit", "delete_instance_bulk", func(e *env, a duroxide.ProviderAdmin) error {
			return errOf(a.DeleteInstanceBulk(e.ctx, duroxide.InstanceFilter{Limit: -1}))
		}),
		admin("PruneExecutions/EmptyInstance", "prune_executions", func(e *env, a duroxide.ProviderAdmin) error {
			return errOf(a.PruneExecutions(e.ctx, "", duroxide.PruneOptions{}))
		}),
		admin("PruneExecutions/NegativeKeepLast", "prune_executions", func(e *env, a duroxide.ProviderAdmin) error {
			return errOf(a.PruneExecutions(e.ctx, "A", duroxide.PruneOptions{KeepLast: -1}))
		}),
		admin("PruneExecutionsBulk/NegativeLimit", "prune_executions_bulk", func(e *env, a duroxide.ProviderAdmin) error {
			return errOf(a.PruneExecutionsBulk(e.ctx, duroxide.InstanceFilter{Limit: -1}, duroxide.PruneOptions{}))
		}),
		admin("PruneExecutionsBulk/NegativeKeepLast", "prune_executions_bulk", func(e *env, a duroxide.ProviderAdmin) error {
			return errOf(a.PruneExecutionsBulk(e.ctx, duroxide.InstanceFilter{}, duroxide.PruneOptions{KeepLast: -1}))
		}),
	}
}
