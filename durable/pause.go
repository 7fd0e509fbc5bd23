package durable

import (
	"context"
	"errors"
	"fmt"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// ErrNoInstancePauser classifies a pause call on a provider that cannot
// pause instances (one without duroxide.InstancePauser).
var ErrNoInstancePauser = errors.New("durable: the provider cannot pause instances")

// pauser is the client's provider as an instance pauser.
func (c *Client) pauser(op string) (duroxide.InstancePauser, error) {
	p, ok := c.p.(duroxide.InstancePauser)
	if !ok {
		return nil, fmt.Errorf("%s: %w", op, ErrNoInstancePauser)
	}
	return p, nil
}

// PauseInstance holds a started instance: what is sent to it (events,
// activity results, timers that fire) is stored and no turn of it runs
// until ResumeInstance. A turn already running commits; the instance is
// held after it. Activities it scheduled still run; their results wait.
// Pausing a paused instance does nothing. An instance without record
// (unknown, or its start not run yet) is an ErrNotFound error.
func (c *Client) PauseInstance(ctx context.Context, instance string) error {
	p, err := c.pauser("pause_instance")
	if err != nil {
		return err
	}
	_, err = p.PauseInstance(ctx, instance)
	return err
}

// ResumeInstance ends a pause: the held messages are delivered, in the
// order they arrived. Resuming an instance that is not paused does nothing.
func (c *Client) ResumeInstance(ctx context.Context, instance string) error {
	p, err := c.pauser("resume_instance")
	if err != nil {
		return err
	}
	_, err = p.ResumeInstance(ctx, instance)
	return err
}

// PauseState reads whether instance is paused, since when, and how many
// messages wait for its next turn.
func (c *Client) PauseState(ctx context.Context, instance string) (duroxide.PauseState, error) {
	p, err := c.pauser("pause_state")
	if err != nil {
		return duroxide.PauseState{}, err
	}
	return p.InstancePauseState(ctx, instance)
}

// pausedFlag reads the pause flag for Status: false on a provider that
// cannot pause, or for an instance deleted since its history was read.
func (c *Client) pausedFlag(ctx context.Context, instance string) (bool, error) {
	p, ok := c.p.(duroxide.InstancePauser)
	if !ok {
		return false, nil
	}
	st, err := p.InstancePauseState(ctx, instance)
	if errors.Is(err, duroxide.ErrNotFound) {
		return false, nil
	}
	return st.Paused, err
}
