package durable

import (
	"context"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// SetLimit bounds how many activities named l.Name run at once across every
// runtime of the namespace, and how fast they start (docs/flow-control.md).
// Activities scheduled from then on are bound by it; those already queued
// under an older limit of the name follow this one. With l.Kind
// duroxide.OrchestrationName it bounds instead how many instances of the
// orchestration l.Name run at once (l.Concurrency): a start beyond it is
// accepted and held until a running instance of the name ends or is
// deleted, the oldest held start first. A bad limit (negative, empty name,
// a rate without burst, a rate on an orchestration) is an ErrInvalidInput
// error.
func (c *Client) SetLimit(ctx context.Context, l duroxide.Limit) error {
	p, err := c.flow("set_limit")
	if err != nil {
		return err
	}
	return p.SetLimit(ctx, l)
}

// DeleteLimit removes the limit of the activity or orchestration (kind)
// called name; its queued activities or held instances are no longer held
// back. It reports whether there was one.
func (c *Client) DeleteLimit(ctx context.Context, kind duroxide.NameKind, name string) (bool, error) {
	p, err := c.flow("delete_limit")
	if err != nil {
		return false, err
	}
	return p.DeleteLimit(ctx, kind, name)
}

// Limits lists the limits set, activities then orchestrations, by name;
// an orchestration limit says how many instances run and are held.
func (c *Client) Limits(ctx context.Context) ([]duroxide.Limit, error) {
	p, err := c.flow("limits")
	if err != nil {
		return nil, err
	}
	return p.Limits(ctx)
}
