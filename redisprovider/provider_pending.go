package redisprovider

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

var _ duroxide.PendingStartNoter = (*Provider)(nil)

// AbandonOrchestrationItemWithNote abandons a lock in the token's
// partition, which is its instance's: the note is written there, where the
// instance's record will be created.
func (pp *Provider) AbandonOrchestrationItemWithNote(ctx context.Context, lockToken string, delay time.Duration, ignoreAttempt bool, note duroxide.PendingStart) error {
	p, _, _, inner := pp.unwrapToken(lockToken)
	return p.AbandonOrchestrationItemWithNote(ctx, inner, delay, ignoreAttempt, note)
}

// PendingStart reads the note in the instance's partition.
func (pp *Provider) PendingStart(ctx context.Context, instance string) (*duroxide.PendingStart, error) {
	return pp.of(instance).PendingStart(ctx, instance)
}

// ListPendingStarts merges the newest notes of every partition, each read
// with the whole limit, so the first limit of the merge are the newest of
// the namespace.
func (pp *Provider) ListPendingStarts(ctx context.Context, limit int) ([]duroxide.PendingStart, error) {
	if len(pp.parts) == 1 {
		return pp.parts[0].ListPendingStarts(ctx, limit)
	}
	lists, err := eachPart(pp, func(p *partition) ([]duroxide.PendingStart, error) { return p.ListPendingStarts(ctx, limit) })
	if err != nil {
		return nil, err
	}
	all := slices.Concat(lists...)
	slices.SortStableFunc(all, func(a, b duroxide.PendingStart) int {
		return cmp.Or(cmp.Compare(b.NotedAtMs, a.NotedAtMs), cmp.Compare(a.Instance, b.Instance))
	})
	return all[:min(len(all), limit, maxPendingStarts)], nil
}
