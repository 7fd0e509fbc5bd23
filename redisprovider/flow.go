package redisprovider

import (
	"context"
	"strconv"
	"strings"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

var (
	_ duroxide.FlowController = (*partition)(nil)
	_ duroxide.FlowController = (*Provider)(nil)
)

// resumeBatch bounds the held instances one resume_orchestration_name call files again:
// a name with many of them is resumed in several calls, none of which
// blocks Redis for long.
const resumeBatch = 500

// priorityField names the flow field of a name's priority.
func priorityField(op string, kind duroxide.NameKind, name string, priority int) (string, error) {
	if name == "" {
		return "", invalid(op, "empty %s name", kind)
	}
	if priority < 0 || priority > duroxide.MaxPriority {
		return "", invalid(op, "%s %s: priority %d is outside 0..%d", kind, name, priority, duroxide.MaxPriority)
	}
	switch kind {
	case duroxide.ActivityName:
		return "pa:" + name, nil
	case duroxide.OrchestrationName:
		return "po:" + name, nil
	}
	return "", invalid(op, "name %s: unknown name kind %d", name, int(kind))
}

// SetPriority sets the priority of the activities or orchestrations called
// name (duroxide.FlowController, lua/set_priority.lua).
func (p *partition) SetPriority(ctx context.Context, kind duroxide.NameKind, name string, priority int) (bool, error) {
	const op = "set_priority"
	field, err := priorityField(op, kind, name, priority)
	if err != nil {
		return false, err
	}
	value := ""
	if priority > 0 {
		value = strconv.Itoa(priority)
	}
	return p.setFlow(ctx, op, field, value)
}

// SetAgingWindow sets how far one priority step moves work ahead
// (duroxide.FlowController); 0 restores duroxide.DefaultAgingWindow.
func (p *partition) SetAgingWindow(ctx context.Context, window uint64) (bool, error) {
	const op = "set_aging_window"
	if window > 1<<40 {
		return false, invalid(op, "aging window %d is above 2^40", window)
	}
	value := ""
	if window > 0 && window != duroxide.DefaultAgingWindow {
		value = strconv.FormatUint(window, 10)
	}
	return p.setFlow(ctx, op, "W", value)
}

func (p *partition) setFlow(ctx context.Context, op, field, value string) (bool, error) {
	var a args
	a.str(field).str(value)
	res, err := p.run(ctx, op, scriptSetPriority, a)
	if err != nil {
		return false, err
	}
	n, ok := res.(int64)
	if !ok {
		return false, undecodable(op, "%s: unexpected reply %v", field, res)
	}
	return n == 1, nil
}

// PauseOrchestrationName holds every instance of the orchestration name
// (duroxide.FlowController, lua/pause_orchestration_name.lua).
func (p *partition) PauseOrchestrationName(ctx context.Context, name string) (bool, error) {
	changed, _, err := p.pauseName(ctx, "pause_orchestration_name", name, true)
	return changed, err
}

// ResumeOrchestrationName files the instances held by their name again,
// in batches, and wakes the fetchers (duroxide.FlowController).
func (p *partition) ResumeOrchestrationName(ctx context.Context, name string) (bool, error) {
	const op = "resume_orchestration_name"
	changed, left, err := p.pauseName(ctx, op, name, false)
	for err == nil && left > 0 {
		_, left, err = p.pauseName(ctx, op, name, false)
	}
	return changed, err
}

// pauseName runs one call of pause_orchestration_name: whether the state changed and how
// many instances the name holds after it.
func (p *partition) pauseName(ctx context.Context, op, name string, paused bool) (bool, int64, error) {
	if name == "" {
		return false, 0, invalid(op, "empty orchestration name")
	}
	var a args
	a.str(name).flag(paused).int(resumeBatch)
	res, err := p.run(ctx, op, scriptPauseOrchestrationName, a)
	if err != nil {
		return false, 0, err
	}
	r := newReply(op, res)
	changed, left := r.int(0) == 1, r.int(1)
	if r.err != nil {
		return false, 0, r.err
	}
	return changed, left, nil
}

// FlowSettings reads the flow settings hash and counts the instances each
// paused name holds (duroxide.FlowController).
func (p *partition) FlowSettings(ctx context.Context) (duroxide.FlowSettings, error) {
	const op = "flow_settings"
	fields, err := p.rdb.HGetAll(ctx, p.keys.Flow()).Result()
	if err != nil {
		return duroxide.FlowSettings{}, fail(op, err)
	}
	fs, err := decodeFlow(op, fields)
	if err != nil {
		return fs, err
	}
	for name, np := range fs.PausedNames {
		n, err := p.rdb.ZCard(ctx, p.keys.NameHeld(name)).Result()
		if err != nil {
			return duroxide.FlowSettings{}, fail(op, err)
		}
		np.Held = uint64(n)
		fs.PausedNames[name] = np
	}
	return fs, nil
}

// decodeFlow reads the fields of the flow settings hash (see keys.go).
func decodeFlow(op string, fields map[string]string) (duroxide.FlowSettings, error) {
	fs := duroxide.FlowSettings{
		ActivityPriorities:      map[string]int{},
		OrchestrationPriorities: map[string]int{},
		AgingWindow:             duroxide.DefaultAgingWindow,
		PausedNames:             map[string]duroxide.NamePause{},
	}
	for f, v := range fields {
		kind, name, _ := strings.Cut(f, ":")
		switch kind {
		case "pa", "po":
			n, err := strconv.Atoi(v)
			if err != nil {
				return fs, undecodable(op, "priority of %s: %q", f, v)
			}
			if kind == "pa" {
				fs.ActivityPriorities[name] = n
			} else {
				fs.OrchestrationPriorities[name] = n
			}
		case "W":
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return fs, undecodable(op, "aging window %q", v)
			}
			fs.AgingWindow = n
		case "z":
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return fs, undecodable(op, "pause time of %s: %q", name, v)
			}
			fs.PausedNames[name] = duroxide.NamePause{SinceMs: n}
		}
	}
	return fs, nil
}

// SetPriority sets the priority in every partition: each files its own
// work by its own copy of the settings.
func (pp *Provider) SetPriority(ctx context.Context, kind duroxide.NameKind, name string, priority int) (bool, error) {
	return pp.everyPartition(func(p *partition) (bool, error) { return p.SetPriority(ctx, kind, name, priority) })
}

// SetAgingWindow sets the aging window in every partition.
func (pp *Provider) SetAgingWindow(ctx context.Context, window uint64) (bool, error) {
	return pp.everyPartition(func(p *partition) (bool, error) { return p.SetAgingWindow(ctx, window) })
}

// PauseOrchestrationName pauses the name in every partition.
func (pp *Provider) PauseOrchestrationName(ctx context.Context, name string) (bool, error) {
	return pp.everyPartition(func(p *partition) (bool, error) { return p.PauseOrchestrationName(ctx, name) })
}

// ResumeOrchestrationName resumes the name in every partition.
func (pp *Provider) ResumeOrchestrationName(ctx context.Context, name string) (bool, error) {
	return pp.everyPartition(func(p *partition) (bool, error) { return p.ResumeOrchestrationName(ctx, name) })
}

// everyPartition applies set to every partition, in order, and reports
// whether any changed. A failure stops it: calling again completes it, as
// every setter is idempotent.
func (pp *Provider) everyPartition(set func(p *partition) (bool, error)) (bool, error) {
	changed := false
	for _, p := range pp.parts {
		c, err := set(p)
		if err != nil {
			return changed, err
		}
		changed = changed || c
	}
	return changed, nil
}

// FlowSettings reads partition 0's settings (every setter writes them to
// all) and sums the instances each paused name holds over the partitions.
func (pp *Provider) FlowSettings(ctx context.Context) (duroxide.FlowSettings, error) {
	const op = "flow_settings"
	fs, err := pp.parts[0].FlowSettings(ctx)
	if err != nil {
		return fs, err
	}
	for name, np := range fs.PausedNames {
		for _, p := range pp.parts[1:] {
			n, err := p.rdb.ZCard(ctx, p.keys.NameHeld(name)).Result()
			if err != nil {
				return duroxide.FlowSettings{}, fail(op, err)
			}
			np.Held += uint64(n)
		}
		fs.PausedNames[name] = np
	}
	return fs, nil
}
