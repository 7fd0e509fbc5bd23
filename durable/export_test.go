package durable

import "time"

// WithMaxPayloadBytes returns o with the payload limit lowered to n, so
// tests of the limit need not build payloads of MaxPayloadBytes.
func WithMaxPayloadBytes(o Options, n int) Options {
	o.maxPayloadBytes = n
	return o
}

// UnregisteredDelay is the abandon delay of a runtime with o's options for
// work no handler can run, at the given attempt (duroxide's
// UnregisteredBackoffConfig::delay).
func UnregisteredDelay(o Options, attempt uint32) time.Duration {
	r := &Runtime{opts: o.withDefaults()}
	return r.unregisteredDelay(attempt)
}

// EffectiveOptions is o with the runtime's defaults filled in.
func EffectiveOptions(o Options) Options { return o.withDefaults() }

// RenewalInterval is how often a lock of lockTimeout with the given
// renewal buffer is renewed.
func RenewalInterval(lockTimeout, buffer time.Duration) time.Duration {
	return renewalInterval(lockTimeout, buffer)
}
