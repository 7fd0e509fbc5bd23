package redisprovider

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The lock operations both queues share: the scripts differ, the checks and
// arguments do not.

// abandon releases the lock token holds through script: visible again after
// delay, ignoreAttempt undoing the fetch's attempt.
func (p *partition) abandon(ctx context.Context, op string, script luaScript, token string, delay time.Duration, ignoreAttempt bool) error {
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
func (p *partition) renew(ctx context.Context, op string, script luaScript, token string, extendFor time.Duration) error {
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

// giveBackTimeout bounds the release of a lock nobody will use.
const giveBackTimeout = time.Second

// giveBack releases a lock whose fetch the caller abandoned (its context
// ended while the reply was on the way), without counting the attempt. If
// Redis cannot be reached the lock expires instead.
func (p *partition) giveBack(op string, script luaScript, token string) {
	ctx, cancel := context.WithTimeout(context.Background(), giveBackTimeout)
	defer cancel()
	if err := p.abandon(ctx, op, script, token, 0, true); err != nil && duroxide.IsRetryable(err) {
		p.log.Warn("duroxide-redis: could not release the lock of a fetch whose reply was lost; it expires instead",
			"op", op, "error", err)
	}
}

// lostReply releases, in the background, the lock a fetch may have taken
// when its reply was lost (a transport error after the script was sent); an
// unknown token just means the script never ran. The caller returns at once:
// the release is a courtesy, the lock expires anyway.
func (p *partition) lostReply(op string, script luaScript, token string, err error) {
	if duroxide.IsRetryable(err) && maybeSent(err) {
		go p.giveBack(op, script, token)
	}
}

// maybeSent reports whether a failed call may have reached Redis: a failure
// to connect, or to get a pooled connection, proves it did not.
func maybeSent(err error) bool {
	var ne *net.OpError
	if errors.As(err, &ne) && ne.Op == "dial" {
		return false
	}
	return !errors.Is(err, redis.ErrPoolTimeout) && !errors.Is(err, redis.ErrPoolExhausted)
}
