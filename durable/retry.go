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
//
// Every zero field takes duroxide's default on its own, for each kind the
// field applies to: Base 100ms (fixed, linear, exponential), Multiplier 2
// (exponential), Max 30s (linear, exponential; raised to Base when Base is
// larger, so a long Base is never cut short by a cap nobody asked for). A zero
// field cannot mean "zero" because Go cannot tell it from "unset"; use
// BackoffNone to retry without waiting.
type Backoff struct {
	Kind       BackoffKind
	Base       time.Duration // 0 = 100ms
	Multiplier float64       // exponential only; 0 = 2
	Max        time.Duration // linear and exponential; 0 = 30s (or Base, if larger)
}

// Backoff defaults, duroxide's BackoffStrategy::default().
const (
	defaultBackoffBase       = 100 * time.Millisecond
	defaultBackoffMultiplier = 2.0
	defaultBackoffMax        = 30 * time.Second
)

// withDefaults fills each zero field with its default, one by one: filling
// only when all were zero left Base-only policies with a zero multiplier,
// whose every delay after the first was 0.
func (b Backoff) withDefaults() Backoff {
	if b.Base <= 0 {
		b.Base = defaultBackoffBase
	}
	if b.Multiplier == 0 {
		b.Multiplier = defaultBackoffMultiplier
	}
	if b.Max <= 0 {
		b.Max = max(defaultBackoffMax, b.Base)
	}
	return b
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
	if p.Backoff.Kind == BackoffNone {
		return 0
	}
	b := p.Backoff.withDefaults()
	switch b.Kind {
	case BackoffFixed:
		return b.Base
	case BackoffLinear:
		nanos := float64(b.Base) * float64(attempt)
		if nanos > float64(b.Max) {
			return b.Max
		}
		return time.Duration(nanos)
	}
	exp := 0
	if attempt > 0 {
		exp = int(attempt - 1)
	}
	nanos := float64(b.Base) * math.Pow(b.Multiplier, float64(exp))
	if !(nanos > 0) {
		return 0 // a negative or NaN multiplier: Rust's float-to-int cast gives 0 too
	}
	if nanos > float64(b.Max) {
		return b.Max
	}
	return time.Duration(nanos)
}
