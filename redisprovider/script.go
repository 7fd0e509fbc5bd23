package redisprovider

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// args accumulates the ARGV of a script call in the order its header lists.
type args []any

func (a *args) str(s string) *args { *a = append(*a, s); return a }

// maxScriptTime caps instants handed to scripts: Lua numbers are doubles
// (exact to 2^53), and miniredis's Lua cannot parse integers of 2^63 and up.
// 2^53 ms is 285,000 years from the epoch: "never" for any deadline.
const maxScriptTime = 1 << 53

// at writes an instant in ms since the epoch for a script.
func (a *args) at(ms uint64) *args { return a.u64(min(ms, maxScriptTime)) }

func (a *args) u64(v uint64) *args { *a = append(*a, strconv.FormatUint(v, 10)); return a }

func (a *args) int(v int) *args { *a = append(*a, strconv.Itoa(v)); return a }

func (a *args) ms(d time.Duration) *args { *a = append(*a, strconv.FormatInt(millis(d), 10)); return a }

func (a *args) flag(b bool) *args {
	if b {
		return a.str("1")
	}
	return a.str("0")
}

// opt writes an optional string as ” (absent) or '+' followed by the value,
// so that an empty string stays distinguishable from none.
func (a *args) opt(s *string) *args {
	if s == nil {
		return a.str("")
	}
	return a.str("+" + *s)
}

// millis rounds a positive duration up to whole milliseconds: a 300µs delay
// must not become "no delay".
func millis(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	ms := int64(d / time.Millisecond)
	if d%time.Millisecond != 0 {
		ms++ // rounding by adding first would overflow near MaxInt64
	}
	return ms
}

// detachGrace is how long a fetch script may outlive its caller's deadline.
const detachGrace = time.Second

// detach returns a context for a fetch script: it keeps ctx's values and
// deadline (plus detachGrace) but not its cancellation, so a script that was
// sent is always answered and a lock it took can be given back.
func detach(ctx context.Context) (context.Context, context.CancelFunc) {
	d := context.WithoutCancel(ctx)
	if dl, ok := ctx.Deadline(); ok {
		return context.WithDeadline(d, dl.Add(detachGrace))
	}
	return d, func() {}
}

// run executes script s for operation op with the namespace prefix as its
// only key, as a function or with EVALSHA (see Provider.funcs), through the
// autopipeliner when there is one (see Provider.process). It returns the
// reply or a *duroxide.ProviderError. Every command is sent at most once
// (see sendOnce): a call whose reply was lost returns a retryable error and
// was applied once or not at all, never twice.
func (p *partition) run(ctx context.Context, op string, s luaScript, a args) (any, error) {
	keys := []string{p.keys.Prefix()}
	var cmd *redis.Cmd
	if p.funcs != nil {
		cmd = p.funcs.cmd(ctx, s, keys, a)
	} else {
		cmd = evalsha(ctx, p.scripts[s], keys, a)
	}
	err := p.process(ctx, cmd)
	switch {
	case err != nil && ctx.Err() != nil:
		// the call may still be in a pipeline: its result is not ours to read
	case p.funcs != nil && functionMissing(err):
		// nothing ran: the library is loaded again for the calls that
		// follow, and this one runs with EVALSHA, which another flush in
		// between cannot fail
		_ = p.funcs.load(ctx, p.rdb) // a failure shows again on the next FCALL, handled the same way
		cmd, err = p.evalScript(ctx, s, keys, a)
	case p.funcs == nil && noScript(err):
		cmd, err = p.evalSource(ctx, s, keys, a)
	}
	if errors.Is(err, redis.Nil) {
		return nil, nil // the script returned nil: "nothing", not a failure
	}
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = errors.Join(ctx.Err(), err)
		}
		return nil, fail(op, err)
	}
	return cmd.Val(), nil
}

// evalScript runs script s with EVALSHA, and with EVAL when the server's
// script cache lost it.
func (p *partition) evalScript(ctx context.Context, s luaScript, keys []string, a args) (*redis.Cmd, error) {
	cmd := evalsha(ctx, p.scripts[s], keys, a)
	err := p.process(ctx, cmd)
	if noScript(err) && ctx.Err() == nil {
		return p.evalSource(ctx, s, keys, a)
	}
	return cmd, err
}

// evalSource runs script s with EVAL: the server lost its script cache, so
// the source goes along, and is cached again for the calls that follow.
func (p *partition) evalSource(ctx context.Context, s luaScript, keys []string, a args) (*redis.Cmd, error) {
	cmd := redis.NewCmd(ctx, scriptArgs([]any{"eval", p.sources[s]}, keys, a)...)
	return cmd, p.process(ctx, cmd)
}

// noScript reports the reply to EVALSHA of a script the server does not
// have: nothing ran.
func noScript(err error) bool { return err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") }

// evalsha is the EVALSHA call of script with keys and a.
func evalsha(ctx context.Context, script *redis.Script, keys []string, a args) *redis.Cmd {
	return redis.NewCmd(ctx, scriptArgs([]any{"evalsha", script.Hash()}, keys, a)...)
}

// scriptArgs appends numkeys, keys and a to a script command's head, the
// shape EVALSHA and FCALL share.
func scriptArgs(head []any, keys []string, a args) []any {
	out := make([]any, 0, len(head)+1+len(keys)+len(a))
	out = append(out, head...)
	out = append(out, len(keys))
	for _, k := range keys {
		out = append(out, k)
	}
	return append(out, a...)
}

// reply helps read the nested arrays scripts return. A malformed reply means a
// script and this package disagree: a permanent error naming op.
type reply struct {
	op  string
	v   []any
	err error
}

func newReply(op string, v any) *reply {
	r := &reply{op: op}
	r.v, _ = v.([]any)
	if r.v == nil {
		r.err = undecodable(op, "unexpected script reply")
	}
	return r
}

func (r *reply) at(i int) any {
	if r.err != nil || i >= len(r.v) {
		r.setErr(i)
		return nil
	}
	return r.v[i]
}

func (r *reply) setErr(i int) {
	if r.err == nil {
		r.err = undecodable(r.op, "unexpected script reply at position %d", i)
	}
}

// int returns element i as an integer.
func (r *reply) int(i int) int64 {
	switch v := r.at(i).(type) {
	case int64:
		return v
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		if err == nil {
			return n
		}
	}
	r.setErr(i)
	return 0
}

// optInt returns element i as an integer; ok is false when it is nil.
func (r *reply) optInt(i int) (n int64, ok bool) {
	if r.at(i) == nil {
		return 0, false
	}
	return r.int(i), true
}

// str returns element i as a string; ok is false when it is nil.
func (r *reply) str(i int) (s string, ok bool) {
	switch v := r.at(i).(type) {
	case string:
		return v, true
	case nil:
		return "", false
	}
	r.setErr(i)
	return "", false
}

// strs returns element i, an array of strings.
func (r *reply) strs(i int) []string {
	v, ok := r.at(i).([]any)
	if !ok {
		r.setErr(i)
		return nil
	}
	out := make([]string, len(v))
	for j, e := range v {
		s, ok := e.(string)
		if !ok {
			r.setErr(i)
			return nil
		}
		out[j] = s
	}
	return out
}
