package durable

import (
	"context"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// SetLimit bounds how many activities named l.Name run at once across every
// runtime of the namespace, and how fast they start (docs/flow-control.md).
// Activities scheduled from then on are bound by it; those already queued
// under an older limit of the name follow this one. A bad limit (negative,
// empty name, a rate without burst) is an ErrInvalidInput error.
func (c *Client) SetLimit(ctx context.Context, l duroxide.Limit) error {
	p, err := c.flow("set_limit")
	if err != nil {
		return err
	}
	return p.SetLimit(ctx, l)
}

// DeleteLimit removes the limit of activity name; its queued activities
// are no longer held back. It reports whether there was one.
func (c *Client) DeleteLimit(ctx context.Context, name string) (bool, error) {
	p, err := c.flow("delete_limit")
	if err != nil {
		return false, err
	}
	return p.DeleteLimit(ctx, name)
}

// Limits lists the limits set, by activity name.
func (c *Client) Limits(ctx context.Context) ([]duroxide.Limit, error) {
	p, err := c.flow("limits")
	if err != nil {
		return nil, err
	}
	return p.Limits(ctx)
}
