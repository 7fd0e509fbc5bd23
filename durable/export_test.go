package durable

import "time"

// WithMaxPayloadBytes returns o with the payload limit lowered to n, so
// tests of the limit need not build payloads of MaxPayloadBytes.
func WithMaxPayloadBytes(o Options, n int) Options {
	o.maxPayloadBytes = n
	return o
}

// SetScheduleHook makes rt's scheduler call h after claiming a firing
// ("claimed") and after starting it ("started"); h returning false drops
// the firing there, as a runtime stopping at that point would.
func SetScheduleHook(rt *Runtime, h func(stage, scheduleID string, nominal time.Time) bool) {
	f := scheduleHook(func(stage scheduleStage, id string, nominal time.Time) bool { return h(string(stage), id, nominal) })
	rt.schedHook.Store(&f)
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
