package dxotel

import (
	"context"
	"strings"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// FetchOrchestrationItem traces the fetch and names the instance it locked.
func (w *provider) FetchOrchestrationItem(ctx context.Context, lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return w.fetchOrchestration(ctx, "fetch_orchestration_item", func(ctx context.Context) (*duroxide.OrchestrationItem, error) {
		return w.inner.FetchOrchestrationItem(ctx, lockTimeout, pollTimeout, filter)
	})
}

// fetchOrchestration traces an orchestration fetch, plain or history-free.
func (w *provider) fetchOrchestration(ctx context.Context, op string, fetch func(context.Context) (*duroxide.OrchestrationItem, error)) (*duroxide.OrchestrationItem, error) {
	return do(w, ctx, op, "", func(ctx context.Context, c *call) (*duroxide.OrchestrationItem, error) {
		item, err := fetch(ctx)
		c.fetched(err, orchestrationItemAttrs(item), false)
		return item, err
	})
}

// orchestrationItemAttrs names what an orchestration fetch locked; nil when
// it locked nothing.
func orchestrationItemAttrs(item *duroxide.OrchestrationItem) []attribute.KeyValue {
	if item == nil {
		return nil
	}
	return append(instanceAttrs(item.Instance, item.ExecutionID),
		KeyOrchestration.String(item.OrchestrationName), KeyAttempt.Int64(int64(item.AttemptCount)))
}

// AckOrchestrationItem traces the commit and, once it is durable, counts the
// turn and any poison it records.
func (w *provider) AckOrchestrationItem(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit) error {
	return do0(w, ctx, "ack_orchestration_item", lockToken, func(ctx context.Context) error {
		if err := w.inner.AckOrchestrationItem(ctx, lockToken, commit); err != nil {
			return err
		}
		w.turnCommitted(ctx, lockToken, commit)
		return nil
	}, commitAttrs(commit)...)
}

// commitAttrs names the execution a commit is for.
func commitAttrs(commit duroxide.OrchestrationCommit) []attribute.KeyValue {
	return []attribute.KeyValue{KeyExecution.Int64(int64(commit.ExecutionID))}
}

// turnCommitted records a durable commit: the turn's outcome on its span,
// the turn counter and any poison the commit records.
func (w *provider) turnCommitted(ctx context.Context, lockToken string, commit duroxide.OrchestrationCommit) {
	status := turnStatus(commit.Metadata.Status)
	w.unitSpan(lockToken).SetAttributes(KeyOutcome.String(status))
	w.in.turns.Add(ctx, 1, metric.WithAttributes(KeyStatus.String(status)))
	for _, ev := range commit.HistoryDelta {
		if f, ok := ev.Kind.(duroxide.OrchestrationFailedEvent); ok && f.Details.Poison != nil {
			w.countPoison(ctx, f.Details.Poison)
		}
	}
}

// turnStatus names the status a turn left its execution in; "" in the
// commit means it is still running.
func turnStatus(s string) string {
	switch s {
	case "":
		return "running"
	case "ContinuedAsNew":
		return "continued_as_new"
	default:
		return strings.ToLower(s)
	}
}

// countPoison counts one poisoned message by what was poisoned.
func (w *provider) countPoison(ctx context.Context, p *duroxide.PoisonError) {
	kind := "orchestration"
	switch {
	case p.MessageType.Activity != nil:
		kind = "activity"
	case p.MessageType.FailedDeserialization != nil:
		kind = "deserialization"
	}
	w.in.poison.Add(ctx, 1, metric.WithAttributes(KeyPoisonKind.String(kind)))
}

// AbandonOrchestrationItem traces the abandon.
func (w *provider) AbandonOrchestrationItem(ctx context.Context, lockToken string, delay time.Duration, ignoreAttempt bool) error {
	return do0(w, ctx, "abandon_orchestration_item", lockToken, func(ctx context.Context) error {
		return w.inner.AbandonOrchestrationItem(ctx, lockToken, delay, ignoreAttempt)
	})
}

// RenewOrchestrationItemLock traces and counts the renewal.
func (w *provider) RenewOrchestrationItemLock(ctx context.Context, lockToken string, extendFor time.Duration) error {
	return w.renew(ctx, "renew_orchestration_item_lock", "orchestration", lockToken, func(ctx context.Context) error {
		return w.inner.RenewOrchestrationItemLock(ctx, lockToken, extendFor)
	})
}

// renew traces a lock renewal and counts it by lock kind and outcome: a
// failed renewal is how a runtime learns it lost a lock, so it is worth a
// counter of its own.
func (w *provider) renew(ctx context.Context, op, kind, lockToken string, fn func(context.Context) error) error {
	err := do0(w, ctx, op, lockToken, fn)
	outcome := OutcomeOK
	attrs := []attribute.KeyValue{KeyLockKind.String(kind)}
	if err != nil {
		outcome = OutcomeError
		attrs = append(attrs, KeyErrorType.String(ErrorType(err)))
	}
	w.in.renewals.Add(ctx, 1, metric.WithAttributes(append(attrs, KeyOutcome.String(outcome))...))
	return err
}

// Read traces the history read.
func (w *provider) Read(ctx context.Context, instance string) ([]duroxide.Event, error) {
	return do(w, ctx, "read", "", func(ctx context.Context, _ *call) ([]duroxide.Event, error) {
		return w.inner.Read(ctx, instance)
	}, KeyInstance.String(instance))
}

// ReadWithExecution traces the history read.
func (w *provider) ReadWithExecution(ctx context.Context, instance string, executionID uint64) ([]duroxide.Event, error) {
	return do(w, ctx, "read_with_execution", "", func(ctx context.Context, _ *call) ([]duroxide.Event, error) {
		return w.inner.ReadWithExecution(ctx, instance, executionID)
	}, instanceAttrs(instance, executionID)...)
}

// AppendWithExecution traces the append.
func (w *provider) AppendWithExecution(ctx context.Context, instance string, executionID uint64, events []duroxide.Event) error {
	return do0(w, ctx, "append_with_execution", "", func(ctx context.Context) error {
		return w.inner.AppendWithExecution(ctx, instance, executionID, events)
	}, instanceAttrs(instance, executionID)...)
}

// EnqueueForOrchestrator traces the enqueue.
func (w *provider) EnqueueForOrchestrator(ctx context.Context, item duroxide.WorkItem, delay time.Duration) error {
	return do0(w, ctx, "enqueue_for_orchestrator", "", func(ctx context.Context) error {
		return w.inner.EnqueueForOrchestrator(ctx, item, delay)
	}, workItemAttrs(item)...)
}
