package durable

import (
	"context"
	"errors"
	"fmt"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// ErrNoFlowController classifies a flow setting call on a provider that
// keeps no flow settings (one without duroxide.FlowController).
var ErrNoFlowController = errors.New("durable: the provider keeps no flow settings")

// flow is the client's provider as a flow controller.
func (c *Client) flow(op string) (duroxide.FlowController, error) {
	p, ok := c.p.(duroxide.FlowController)
	if !ok {
		return nil, fmt.Errorf("%s: %w", op, ErrNoFlowController)
	}
	return p, nil
}

// SetActivityPriority sets the priority (0..duroxide.MaxPriority, 0 the
// default) of the activities called name, in the store: every process
// sharing it fetches activities of a higher priority first, in the order
// they were scheduled within a priority, with a bound on how long lower
// ones wait (see duroxide.FlowController). It applies to activities
// scheduled from now on; a retry keeps the priority its activity had.
func (c *Client) SetActivityPriority(ctx context.Context, name string, priority int) error {
	p, err := c.flow("set_priority")
	if err != nil {
		return err
	}
	_, err = p.SetPriority(ctx, duroxide.ActivityName, name, priority)
	return err
}

// SetOrchestrationPriority sets the priority of the instances of the
// orchestration called name: their turns are fetched first. It applies
// from each instance's next message on.
func (c *Client) SetOrchestrationPriority(ctx context.Context, name string, priority int) error {
	p, err := c.flow("set_priority")
	if err != nil {
		return err
	}
	_, err = p.SetPriority(ctx, duroxide.OrchestrationName, name, priority)
	return err
}

// SetAgingWindow sets how far one priority step moves work ahead, in
// enqueued items (0: duroxide.DefaultAgingWindow): work is overtaken by at
// most (priority difference) * window items enqueued after it.
func (c *Client) SetAgingWindow(ctx context.Context, window uint64) error {
	p, err := c.flow("set_aging_window")
	if err != nil {
		return err
	}
	_, err = p.SetAgingWindow(ctx, window)
	return err
}

// PauseOrchestrationName holds every instance of the orchestration called
// name, running ones and new starts, as PauseInstance holds one: messages
// and timers are kept, no turn runs until ResumeOrchestrationName. Their
// Status says Paused. Pausing a paused name does nothing.
func (c *Client) PauseOrchestrationName(ctx context.Context, name string) error {
	p, err := c.flow("pause_orchestration_name")
	if err != nil {
		return err
	}
	_, err = p.PauseOrchestrationName(ctx, name)
	return err
}

// ResumeOrchestrationName ends the pause of the orchestration called name:
// its held instances run again, each with what was held for it (an
// instance paused itself stays paused).
func (c *Client) ResumeOrchestrationName(ctx context.Context, name string) error {
	p, err := c.flow("resume_orchestration_name")
	if err != nil {
		return err
	}
	_, err = p.ResumeOrchestrationName(ctx, name)
	return err
}

// FlowSettings reads the store's priorities, aging window and paused
// orchestration names.
func (c *Client) FlowSettings(ctx context.Context) (duroxide.FlowSettings, error) {
	p, err := c.flow("flow_settings")
	if err != nil {
		return duroxide.FlowSettings{}, err
	}
	return p.FlowSettings(ctx)
}
