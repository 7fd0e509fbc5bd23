package redisprovider

import (
	"context"
	"errors"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

var _ duroxide.InstancePauser = (*partition)(nil)

// PauseInstance holds the instance: its messages are stored, not delivered,
// until ResumeInstance (duroxide.InstancePauser, lua/pause_instance.lua).
func (p *partition) PauseInstance(ctx context.Context, instance string) (bool, error) {
	return p.setPaused(ctx, "pause_instance", instance, true)
}

// ResumeInstance files a paused instance again by its held messages and
// wakes the fetchers (duroxide.InstancePauser).
func (p *partition) ResumeInstance(ctx context.Context, instance string) (bool, error) {
	return p.setPaused(ctx, "resume_instance", instance, false)
}

func (p *partition) setPaused(ctx context.Context, op, instance string, paused bool) (bool, error) {
	if instance == "" {
		return false, invalid(op, "empty instance id")
	}
	var a args
	a.str(instance).flag(paused)
	res, err := p.run(ctx, op, scriptPauseInstance, a)
	if err != nil {
		return false, err
	}
	n, ok := res.(int64)
	if !ok {
		return false, undecodable(op, "instance %s: unexpected reply %v", instance, res)
	}
	return n == 1, nil
}

// InstancePauseState reads the pause flag of the instance's record and
// counts its pending messages (duroxide.InstancePauser): an HMGET, which
// also tells an unknown instance (no record) apart, and a ZCARD, sent
// together; then whether its
// orchestration name is paused (duroxide.FlowController).
func (p *partition) InstancePauseState(ctx context.Context, instance string) (duroxide.PauseState, error) {
	const op = "instance_pause_state"
	if instance == "" {
		return duroxide.PauseState{}, invalid(op, "empty instance id")
	}
	var rec *redis.SliceCmd
	var held *redis.IntCmd
	_, err := p.rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
		rec = pl.HMGet(ctx, p.keys.Instance(instance), "cur", "pz", "name")
		held = pl.ZCard(ctx, p.keys.OrchPending(instance))
		return nil
	})
	if err != nil {
		return duroxide.PauseState{}, fail(op, err)
	}
	r := rec.Val()
	if r[0] == nil {
		return duroxide.PauseState{}, notFound(op, "instance "+instance)
	}
	st := duroxide.PauseState{Held: uint64(held.Val())}
	if name, ok := r[2].(string); ok {
		since, err := p.rdb.HGet(ctx, p.keys.Flow(), "z:"+name).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return duroxide.PauseState{}, fail(op, err)
		}
		if err == nil {
			if err := namePausedSince(&st, op, instance, since); err != nil {
				return duroxide.PauseState{}, err
			}
		}
	}
	s, ok := r[1].(string)
	if !ok {
		return st, nil
	}
	if err := pausedSince(&st, op, instance, s); err != nil {
		return duroxide.PauseState{}, err
	}
	return st, nil
}

// namePausedSince marks st held since its orchestration name was paused,
// at s; pausedSince, applied after it, puts the instance's own pause time
// in its place.
func namePausedSince(st *duroxide.PauseState, op, instance, s string) error {
	if err := pausedSince(st, op, instance, s); err != nil {
		return err
	}
	st.NamePaused = true
	return nil
}

// pausedSince marks st paused since the record's field pz, s.
func pausedSince(st *duroxide.PauseState, op, instance, s string) error {
	since, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return undecodable(op, "instance %s: pause time %q", instance, s)
	}
	st.Paused, st.SinceMs = true, since
	return nil
}

var _ duroxide.InstancePauser = (*Provider)(nil)

// PauseInstance pauses the instance in its partition.
func (pp *Provider) PauseInstance(ctx context.Context, instance string) (bool, error) {
	return pp.of(instance).PauseInstance(ctx, instance)
}

// ResumeInstance resumes the instance in its partition.
func (pp *Provider) ResumeInstance(ctx context.Context, instance string) (bool, error) {
	return pp.of(instance).ResumeInstance(ctx, instance)
}

// InstancePauseState reads the instance's pause state in its partition.
func (pp *Provider) InstancePauseState(ctx context.Context, instance string) (duroxide.PauseState, error) {
	return pp.of(instance).InstancePauseState(ctx, instance)
}
