package redisprovider

import (
	"context"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// SetLimit sets the limit of l.Name (duroxide.FlowController,
// lua/set_limit.lua): items of the name enqueued from now on are bound by
// it, and its groups waiting under an older limit are listed again under
// this one.
func (p *partition) SetLimit(ctx context.Context, l duroxide.Limit) error {
	const op = "set_limit"
	if err := checkLimit(op, l); err != nil {
		return err
	}
	_, err := p.setLimit(ctx, op, l.Name, encodeLimit(l))
	return err
}

// DeleteLimit removes the limit of name (duroxide.FlowController): its items
// still in limit groups are handed out without bound from now on.
func (p *partition) DeleteLimit(ctx context.Context, name string) (bool, error) {
	const op = "delete_limit"
	if name == "" {
		return false, invalid(op, "empty activity name")
	}
	return p.setLimit(ctx, op, name, "")
}

func (p *partition) setLimit(ctx context.Context, op, name, conf string) (bool, error) {
	var a args
	a.str(name).str(conf)
	res, err := p.run(ctx, op, scriptSetLimit, a)
	if err != nil {
		return false, err
	}
	n, ok := res.(int64)
	if !ok {
		return false, undecodable(op, "limit %s: unexpected reply %v", name, res)
	}
	return n == 1, nil
}

// Limits lists the limits set, by name (duroxide.FlowController): one HGETALL.
func (p *partition) Limits(ctx context.Context) ([]duroxide.Limit, error) {
	const op = "limits"
	m, err := p.rdb.HGetAll(ctx, p.keys.Limits()).Result()
	if err != nil {
		return nil, fail(op, err)
	}
	out := make([]duroxide.Limit, 0, len(m))
	for name, v := range m {
		l, ok := decodeLimit(name, v)
		if !ok {
			return nil, undecodable(op, "limit %s: %q", name, v)
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// checkLimit rejects a limit the scripts could not enforce as meant.
func checkLimit(op string, l duroxide.Limit) error {
	switch {
	case l.Name == "":
		return invalid(op, "empty activity name")
	case l.Concurrency < 0:
		return invalid(op, "limit %s: negative concurrency %d", l.Name, l.Concurrency)
	case l.RatePerSecond < 0 || math.IsNaN(l.RatePerSecond) || math.IsInf(l.RatePerSecond, 0):
		return invalid(op, "limit %s: rate %v is not a finite number >= 0", l.Name, l.RatePerSecond)
	case l.Burst < 0:
		return invalid(op, "limit %s: negative burst %d", l.Name, l.Burst)
	case l.RatePerSecond > 0 && l.Burst < 1:
		return invalid(op, "limit %s: a rate needs a burst of at least 1", l.Name)
	case l.RatePerSecond == 0 && l.Burst > 0:
		return invalid(op, "limit %s: a burst without a rate", l.Name)
	case l.Concurrency == 0 && l.RatePerSecond == 0:
		return invalid(op, "limit %s: sets no bound (use DeleteLimit to remove one)", l.Name)
	}
	return nil
}

// encodeLimit writes a limit as lib_lim reads it: '<concurrency> <rate per
// s> <burst>'.
func encodeLimit(l duroxide.Limit) string {
	return strconv.Itoa(l.Concurrency) + " " + strconv.FormatFloat(l.RatePerSecond, 'f', -1, 64) + " " + strconv.Itoa(l.Burst)
}

// decodeLimit reads what encodeLimit wrote.
func decodeLimit(name, v string) (duroxide.Limit, bool) {
	f := strings.Fields(v)
	if len(f) != 3 {
		return duroxide.Limit{}, false
	}
	c, err1 := strconv.Atoi(f[0])
	r, err2 := strconv.ParseFloat(f[1], 64)
	b, err3 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || err3 != nil {
		return duroxide.Limit{}, false
	}
	return duroxide.Limit{Name: name, Concurrency: c, RatePerSecond: r, Burst: b}, true
}

// SetLimit sets l.Name's limit in every partition, each its share: the
// items of a partition are dispatched by that partition's scripts alone,
// so a limit holds across partitions as the sum of per-partition limits.
// Concurrency c over P partitions gives partition i c/P, plus one for the
// first c%P, and at least 1 (so with c < P the bound that holds is P); the
// rate is split evenly, the burst as the concurrency. Limits reports the
// sums, the bound that holds. A partition that fails leaves the others set:
// the call is retried whole.
func (pp *Provider) SetLimit(ctx context.Context, l duroxide.Limit) error {
	if err := checkLimit("set_limit", l); err != nil {
		return err
	}
	for i, p := range pp.parts {
		if err := p.SetLimit(ctx, limitShare(l, i, len(pp.parts))); err != nil {
			return err
		}
	}
	return nil
}

// limitShare is partition i's share of l over n partitions.
func limitShare(l duroxide.Limit, i, n int) duroxide.Limit {
	share := func(v int) int {
		if v == 0 {
			return 0
		}
		s := v / n
		if i < v%n {
			s++
		}
		return max(s, 1)
	}
	return duroxide.Limit{Name: l.Name, Concurrency: share(l.Concurrency), RatePerSecond: l.RatePerSecond / float64(n), Burst: share(l.Burst)}
}

// DeleteLimit removes name's limit from every partition; true when one had
// it.
func (pp *Provider) DeleteLimit(ctx context.Context, name string) (bool, error) {
	had := false
	for _, p := range pp.parts {
		h, err := p.DeleteLimit(ctx, name)
		if err != nil {
			return had, err
		}
		had = had || h
	}
	return had, nil
}

// Limits lists the limits of every partition, summed per name: the bounds
// that hold across the namespace.
func (pp *Provider) Limits(ctx context.Context) ([]duroxide.Limit, error) {
	sum := map[string]*duroxide.Limit{}
	var names []string
	for _, p := range pp.parts {
		ls, err := p.Limits(ctx)
		if err != nil {
			return nil, err
		}
		for _, l := range ls {
			s, ok := sum[l.Name]
			if !ok {
				s = &duroxide.Limit{Name: l.Name}
				sum[l.Name] = s
				names = append(names, l.Name)
			}
			s.Concurrency += l.Concurrency
			s.RatePerSecond += l.RatePerSecond
			s.Burst += l.Burst
		}
	}
	sort.Strings(names)
	out := make([]duroxide.Limit, len(names))
	for i, n := range names {
		out[i] = *sum[n]
	}
	return out, nil
}
