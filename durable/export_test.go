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
