package redisprovider

import (
	"context"
	"time"
)

// The lock operations both queues share: the scripts differ, the checks and
// arguments do not.

// abandon releases the lock token holds through script: visible again after
// delay, ignoreAttempt undoing the fetch's attempt.
func (p *Provider) abandon(ctx context.Context, op, script, token string, delay time.Duration, ignoreAttempt bool) error {
	if err := checkToken(op, token); err != nil {
		return err
	}
	if err := checkDurations(op, delay); err != nil {
		return err
	}
	var a args
	a.str(token).ms(delay).flag(ignoreAttempt)
	_, err := p.run(ctx, op, script, a)
	return err
}

// renew extends the valid, unexpired lock token holds to now + extendFor.
func (p *Provider) renew(ctx context.Context, op, script, token string, extendFor time.Duration) error {
	if err := checkToken(op, token); err != nil {
		return err
	}
	if err := checkDurations(op, extendFor); err != nil {
		return err
	}
	var a args
	a.str(token).ms(extendFor)
	_, err := p.run(ctx, op, script, a)
	return err
}

// giveBack releases a lock whose fetch the caller abandoned (its context
// ended while the reply was on the way), without counting the attempt. If
// Redis cannot be reached the lock expires instead.
func (p *Provider) giveBack(op, script, token string) {
	if err := p.abandon(context.Background(), op, script, token, 0, true); err != nil {
		p.log.Warn("duroxide-redis: could not release the lock of a cancelled fetch; it expires instead",
			"op", op, "error", err)
	}
}
