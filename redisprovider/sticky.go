package redisprovider

import (
	"context"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Sticky routing (duroxide.StickyRouter): the route a call's context
// carries goes into every orchestration fetch (the owner: its instances are
// taken first, and its wake key is waited on) and every orchestration ack
// (owner, wait, ttl: the record the ack writes); a call without a route
// sends an empty owner, whose ack ends the instance's stickiness.
// lua/lib_stky.lua does the rest.

var _ duroxide.StickyRouter = (*partition)(nil)

// SupportsStickyRouting reports that the provider honours the sticky route
// of a call's context (duroxide.WithStickyRoute).
func (p *partition) SupportsStickyRouting() bool { return true }

// stickyRoute is a validated route; the zero value routes nothing.
type stickyRoute struct {
	owner     string
	wait, ttl time.Duration
}

// routeOf reads and checks the sticky route of ctx.
func routeOf(ctx context.Context, op string) (stickyRoute, error) {
	r, ok := duroxide.StickyRouteFrom(ctx)
	if !ok {
		return stickyRoute{}, nil
	}
	if r.Owner == "" {
		return stickyRoute{}, invalid(op, "sticky route with an empty owner")
	}
	if r.Wait <= 0 || r.TTL <= 0 {
		return stickyRoute{}, invalid(op, "sticky route Wait (%v) and TTL (%v) must be positive", r.Wait, r.TTL)
	}
	return stickyRoute{owner: r.Owner, wait: r.Wait, ttl: r.TTL}, nil
}

// ackArgs adds the route to an ack's arguments.
func (r stickyRoute) ackArgs(a *args) {
	a.str(r.owner).ms(r.wait).ms(r.ttl)
}
