package durable

import (
	"context"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// stickyTTL is how long after its last turn here an instance stays routed
// to this runtime. The cache keeps an instance for as long as its bounds
// allow, so the longer the better for hits; what a gone runtime costs its
// instances is one StickyWait each, before another runtime takes them.
const stickyTTL = time.Hour

// stickyContext is ctx carrying this runtime's sticky route when p honours
// routes (duroxide.StickyRouter) and the instance cache is on, so that an
// instance's turns come back to the runtime that holds its replayed state
// instead of going to whichever runtime fetches first. Every provider call
// of the runtime is made under it; the provider reads it on orchestration
// fetches and acks only.
func stickyContext(ctx context.Context, p duroxide.Provider, id string, opts Options, cacheOn bool) context.Context {
	sr, ok := p.(duroxide.StickyRouter)
	if !ok || !sr.SupportsStickyRouting() || !cacheOn || opts.StickyWait < 0 {
		return ctx
	}
	return duroxide.WithStickyRoute(ctx, duroxide.StickyRoute{Owner: id, Wait: opts.StickyWait, TTL: stickyTTL})
}
