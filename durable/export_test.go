package durable

// WithMaxPayloadBytes returns o with the payload limit lowered to n, so
// tests of the limit need not build payloads of MaxPayloadBytes.
func WithMaxPayloadBytes(o Options, n int) Options {
	o.maxPayloadBytes = n
	return o
}
