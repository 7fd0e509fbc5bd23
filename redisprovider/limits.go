package redisprovider

import (
	"context"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/redis/go-redis/v9"
)

// SetLimit sets the limit of l.Name (duroxide.FlowController): for an
// activity name (lua/set_limit.lua) items of the name enqueued from now on
// are bound by it, and its groups waiting under an older limit are listed
// again under this one; for an orchestration name
// (lua/set_orchestration_limit.lua) new instances are admitted by it, and
// instances it holds run while slots are free.
func (p *partition) SetLimit(ctx context.Context, l duroxide.Limit) error {
	const op = "set_limit"
	if err := checkLimit(op, l); err != nil {
		return err
	}
	if l.Kind == duroxide.OrchestrationName {
		_, err := p.setOrchestrationLimit(ctx, op, l.Name, l.Concurrency)
		return err
	}
	_, err := p.setLimit(ctx, op, l.Name, encodeLimit(l))
	return err
}

// DeleteLimit removes the limit of name (duroxide.FlowController): its items
// still in limit groups are handed out without bound from now on, and the
// instances it holds run.
func (p *partition) DeleteLimit(ctx context.Context, kind duroxide.NameKind, name string) (bool, error) {
	const op = "delete_limit"
	if err := checkKind(op, kind, name); err != nil {
		return false, err
	}
	if kind == duroxide.OrchestrationName {
		return p.setOrchestrationLimit(ctx, op, name, 0)
	}
	return p.setLimit(ctx, op, name, "")
}

// checkKind rejects an empty name and a kind that names nothing.
func checkKind(op string, kind duroxide.NameKind, name string) error {
	switch kind {
	case 0, duroxide.ActivityName, duroxide.OrchestrationName:
	default:
		return invalid(op, "limit %s: unknown kind %d", name, int(kind))
	}
	if name == "" {
		return invalid(op, "empty %s name", kindOf(kind))
	}
	return nil
}

// kindOf names kind as errors and the CLI say it (0: activity).
func kindOf(kind duroxide.NameKind) string {
	if kind == 0 {
		return duroxide.ActivityName.String()
	}
	return kind.String()
}

// setOrchestrationLimit runs set_orchestration_limit with concurrency c
// (0: delete the limit) until it has filed every held instance it may:
// whether the name had a limit.
func (p *partition) setOrchestrationLimit(ctx context.Context, op, name string, c int) (bool, error) {
	conf := ""
	if c > 0 {
		conf = strconv.Itoa(c)
	}
	var a args
	a.str(name).str(conf).int(resumeBatch)
	for {
		res, err := p.run(ctx, op, scriptSetOrchestrationLimit, a)
		if err != nil {
			return false, err
		}
		r := newReply(op, res)
		had, held, running := r.int(0) == 1, r.int(1), r.int(2)
		if r.err != nil {
			return false, r.err
		}
		// a batch filed: more while some are held and slots are free
		if held == 0 || (c > 0 && running >= int64(c)) {
			return had, nil
		}
	}
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

// Limits lists the limits set, activities then orchestrations, by name
// (duroxide.FlowController): one HGETALL of the activity limits, one of the
// flow settings, and for each orchestration limit its slots and held
// instances, read in one pipeline.
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
	orch, err := p.orchestrationLimits(ctx, op)
	if err != nil {
		return nil, err
	}
	out = append(out, orch...)
	sortLimits(out)
	return out, nil
}

// orchestrationLimits reads the limits on running instances (flow fields
// 'lo:<name>') with their slots and held instances.
func (p *partition) orchestrationLimits(ctx context.Context, op string) ([]duroxide.Limit, error) {
	fields, err := p.rdb.HGetAll(ctx, p.keys.Flow()).Result()
	if err != nil {
		return nil, fail(op, err)
	}
	var out []duroxide.Limit
	for f, v := range fields {
		name, ok := strings.CutPrefix(f, "lo:")
		if !ok {
			continue
		}
		c, err := strconv.Atoi(v)
		if err != nil {
			return nil, undecodable(op, "limit of orchestration %s: %q", name, v)
		}
		out = append(out, duroxide.Limit{Kind: duroxide.OrchestrationName, Name: name, Concurrency: c})
	}
	if len(out) == 0 {
		return nil, nil
	}
	pipe := p.rdb.Pipeline()
	running, held := make([]*redis.IntCmd, len(out)), make([]*redis.IntCmd, len(out))
	for i, l := range out {
		running[i] = pipe.SCard(ctx, p.keys.OrchestrationRunning(l.Name))
		held[i] = pipe.ZCard(ctx, p.keys.OrchestrationHeld(l.Name))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fail(op, err)
	}
	for i := range out {
		out[i].Running, out[i].Held = int(running[i].Val()), int(held[i].Val())
	}
	return out, nil
}

// sortLimits orders limits as Limits lists them: activities first, then by
// name.
func sortLimits(ls []duroxide.Limit) {
	sort.Slice(ls, func(i, j int) bool {
		if ls[i].Kind != ls[j].Kind {
			return ls[i].Kind < ls[j].Kind
		}
		return ls[i].Name < ls[j].Name
	})
}

// checkLimit rejects a limit the scripts could not enforce as meant.
func checkLimit(op string, l duroxide.Limit) error {
	if err := checkKind(op, l.Kind, l.Name); err != nil {
		return err
	}
	if l.Kind == duroxide.OrchestrationName {
		switch {
		case l.Concurrency < 0:
			return invalid(op, "limit of orchestration %s: negative concurrency %d", l.Name, l.Concurrency)
		case l.RatePerSecond != 0 || l.Burst != 0:
			return invalid(op, "limit of orchestration %s: an orchestration limit bounds running instances (concurrency) only, not a rate or burst", l.Name)
		case l.Concurrency == 0:
			return invalid(op, "limit of orchestration %s: sets no bound (use DeleteLimit to remove one)", l.Name)
		}
		return nil
	}
	switch {
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
	return duroxide.Limit{Kind: duroxide.ActivityName, Name: name, Concurrency: c, RatePerSecond: r, Burst: b}, true
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
	return duroxide.Limit{Kind: l.Kind, Name: l.Name, Concurrency: share(l.Concurrency), RatePerSecond: l.RatePerSecond / float64(n), Burst: share(l.Burst)}
}

// DeleteLimit removes name's limit from every partition; true when one had
// it.
func (pp *Provider) DeleteLimit(ctx context.Context, kind duroxide.NameKind, name string) (bool, error) {
	had := false
	for _, p := range pp.parts {
		h, err := p.DeleteLimit(ctx, kind, name)
		if err != nil {
			return had, err
		}
		had = had || h
	}
	return had, nil
}

// Limits lists the limits of every partition, summed per kind and name:
// the bounds that hold across the namespace (and the instances running and
// held under an orchestration limit).
func (pp *Provider) Limits(ctx context.Context) ([]duroxide.Limit, error) {
	type key struct {
		kind duroxide.NameKind
		name string
	}
	sum := map[key]*duroxide.Limit{}
	out := []duroxide.Limit{}
	var order []key
	for _, p := range pp.parts {
		ls, err := p.Limits(ctx)
		if err != nil {
			return nil, err
		}
		for _, l := range ls {
			k := key{l.Kind, l.Name}
			s, ok := sum[k]
			if !ok {
				s = &duroxide.Limit{Kind: l.Kind, Name: l.Name}
				sum[k] = s
				order = append(order, k)
			}
			s.Concurrency += l.Concurrency
			s.RatePerSecond += l.RatePerSecond
			s.Burst += l.Burst
			s.Running += l.Running
			s.Held += l.Held
		}
	}
	for _, k := range order {
		out = append(out, *sum[k])
	}
	sortLimits(out)
	return out, nil
}
