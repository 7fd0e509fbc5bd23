package durable

import (
	"math"
	"time"
)

// BackoffKind names a RetryPolicy's delay shape between attempts.
type BackoffKind int

const (
	// BackoffExponential waits Base * Multiplier^(attempt-1), capped at Max.
	// It is the zero value, so a zero Backoff is duroxide's default shape.
	BackoffExponential BackoffKind = iota
	// BackoffNone retries at once.
	BackoffNone
	// BackoffFixed waits Base every time.
	BackoffFixed
	// BackoffLinear waits Base * attempt, capped at Max.
	BackoffLinear
)

// Backoff is the delay between a failed attempt and the next one. Each delay
// is a durable timer, so it shows up in history as TimerCreated/TimerFired.
type Backoff struct {
	Kind       BackoffKind
	Base       time.Duration // default 100ms for exponential
	Multiplier float64       // exponential only; default 2
	Max        time.Duration // default 30s for exponential
}

// RetryPolicy says how often and how patiently an activity is retried by
// ScheduleActivityWithRetry. The zero value means duroxide's default policy:
// 3 attempts, exponential backoff from 100ms doubling up to 30s, no timeout.
type RetryPolicy struct {
	MaxAttempts uint32 // 0 = 3
	Backoff     Backoff
	// Timeout bounds each attempt with a durable timer; an attempt that times
	// out ends the retries with "timeout: activity timed out" (duroxide does
	// not retry timeouts). Zero means no timeout.
	Timeout time.Duration
}

func (p RetryPolicy) attempts() uint32 {
	if p.MaxAttempts == 0 {
		return 3
	}
	return p.MaxAttempts
}

// DelayForAttempt is the wait after failed attempt number attempt (1-based).
func (p RetryPolicy) DelayForAttempt(attempt uint32) time.Duration {
	b := p.Backoff
	switch b.Kind {
	case BackoffNone:
		return 0
	case BackoffFixed:
		return b.Base
	case BackoffLinear:
		return capDuration(b.Base*time.Duration(attempt), b.Max)
	}
	base, mult, max := b.Base, b.Multiplier, b.Max
	if base == 0 && mult == 0 && max == 0 {
		base, mult, max = 100*time.Millisecond, 2, 30*time.Second
	}
	exp := 0
	if attempt > 0 {
		exp = int(attempt - 1)
	}
	nanos := float64(base) * math.Pow(mult, float64(exp))
	if nanos > float64(math.MaxInt64) {
		return max
	}
	return capDuration(time.Duration(nanos), max)
}

// capDuration caps d at max; a max of zero means no cap.
func capDuration(d, max time.Duration) time.Duration {
	if max > 0 && d > max {
		return max
	}
	return d
}
