package durable

import (
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// stickyTTL is how long after its last turn here an instance stays routed
// to this runtime. The cache keeps an instance for as long as its bounds
// allow, so the longer the better for hits; what a gone runtime costs its
// instances is one StickyWait each, before another runtime takes them.
const stickyTTL = time.Hour

// stickyProvider is p as this runtime uses it: with sticky routing when p
// offers it (duroxide.StickyRouter) and the instance cache is on, so that an
// instance's turns come back to the runtime that holds its replayed state
// instead of going to whichever runtime fetches first. The view is p in all
// else, so every call goes through it.
func stickyProvider(p duroxide.Provider, id string, opts Options, cacheOn bool) duroxide.Provider {
	sr, ok := p.(duroxide.StickyRouter)
	if !ok || !cacheOn || opts.StickyWait < 0 {
		return p
	}
	v, err := sr.WithStickyRouting(id, duroxide.StickyOptions{Wait: opts.StickyWait, TTL: stickyTTL})
	if err != nil {
		opts.Logger.Warn("durable: sticky routing unavailable, turns go to any runtime", "error", err)
		return p
	}
	return v
}
