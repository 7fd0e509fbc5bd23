package redisprovider

import (
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Sticky routing (duroxide.StickyRouter): a view is a Provider sharing its
// parent's connections, scripts and waiters, with a route. The route goes
// into every orchestration fetch (the owner: its offers are taken first, and
// its wake key is waited on) and every orchestration ack (owner, wait, ttl:
// the record the ack writes); a provider without a route sends an empty
// owner, whose ack ends the instance's stickiness. lua/lib_stky.lua does the
// rest.

var _ duroxide.StickyRouter = (*Provider)(nil)

// stickyRoute is the sticky routing of a view; the zero value routes nothing.
type stickyRoute struct {
	owner     string
	wait, ttl time.Duration
}

// WithStickyRouting returns the provider as the runtime owner uses it: its
// orchestration acks of a running execution make the instance sticky to
// owner for opts.TTL, its orchestration fetches take owner's instances
// first, and others take them only opts.Wait after they became fetchable
// (see duroxide.StickyRouter). The view shares this provider's connections;
// its Close does nothing.
func (p *Provider) WithStickyRouting(owner string, opts duroxide.StickyOptions) (duroxide.Provider, error) {
	const op = "with_sticky_routing"
	if owner == "" {
		return nil, invalid(op, "empty sticky owner")
	}
	if opts.Wait <= 0 || opts.TTL <= 0 {
		return nil, invalid(op, "sticky Wait (%v) and TTL (%v) must be positive", opts.Wait, opts.TTL)
	}
	return &Provider{shared: p.shared, route: stickyRoute{owner: owner, wait: opts.Wait, ttl: opts.TTL}}, nil
}

// fetchArgs adds the route to a fetch's arguments and wake keys: owner's
// fetchers also wake when one of its instances is offered.
func (r stickyRoute) fetchArgs(p *Provider, a *args, keys []string) []string {
	a.str(r.owner)
	if r.owner != "" && len(keys) > 0 {
		keys = append(keys, p.keys.OrchStickyWake(r.owner))
	}
	return keys
}

// ackArgs adds the route to an ack's arguments.
func (r stickyRoute) ackArgs(a *args) {
	a.str(r.owner).ms(r.wait).ms(r.ttl)
}
