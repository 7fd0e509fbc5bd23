package redisprovider

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	dxredis "github.com/duroxide-go/duroxide-redis"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// functions runs the scripts as a Redis function library (FCALL), which
// saves every call the definition of the Lua it shares with other scripts
// (see dxredis.Library). Servers without FUNCTION (before 7.0, miniredis)
// and Options.ForceEvalsha use EVALSHA instead.
type functions struct {
	lib   *dxredis.Library
	names [scriptCount]string
}

// loadFunctions loads the library on the server, on every primary of a
// Cluster. It returns nil, nil when the server has no functions.
func (p *Provider) loadFunctions(ctx context.Context) (*functions, error) {
	lib, err := dxredis.FunctionLibrary()
	if err != nil {
		return nil, duroxide.Permanent("new", err.Error()) // the embedded Lua is broken: a build bug
	}
	f := &functions{lib: lib}
	for h := range scriptCount {
		if f.names[h] = lib.Function(h.String()); f.names[h] == "" {
			return nil, duroxide.Permanent("new", "no function for script "+h.String())
		}
	}
	if err := f.load(ctx, p.rdb); err != nil {
		if noFunctions(err) {
			return nil, nil
		}
		return nil, fail("new", fmt.Errorf("loading function library %s: %w", lib.Name, err))
	}
	return f, nil
}

// load loads (or replaces with the same code) the library where the
// namespace's keys may live: the server, or every primary of a Cluster.
func (f *functions) load(ctx context.Context, c redis.UniversalClient) error {
	if cc, ok := c.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			return n.FunctionLoadReplace(ctx, f.lib.Source).Err()
		})
	}
	return c.FunctionLoadReplace(ctx, f.lib.Source).Err()
}

// cmd is the FCALL of script s with keys and a.
func (f *functions) cmd(ctx context.Context, s luaScript, keys []string, a args) *redis.Cmd {
	return redis.NewCmd(ctx, scriptArgs([]any{"fcall", f.names[s]}, keys, a)...)
}

// reload answers an FCALL that found no function: a server that lost the
// library (restarted without persistence, FUNCTION FLUSH, a new Cluster
// primary) answers so without running anything. The library is loaded again
// for the calls that follow, and this call runs the same script with
// EVALSHA / EVAL, which another flush between reload and retry cannot fail.
func (f *functions) reload(ctx context.Context, c redis.UniversalClient, script *redis.Script, keys []string, a args) *redis.Cmd {
	_ = f.load(ctx, c) // a failure shows again on the next FCALL, handled the same way
	return script.Run(ctx, c, keys, a...)
}

// noFunctions reports a server that does not know the FUNCTION command.
func noFunctions(err error) bool {
	return strings.HasPrefix(strings.ToLower(err.Error()), "err unknown command")
}

// functionMissing reports the reply to FCALL of a function the server does
// not have.
func functionMissing(err error) bool {
	return err != nil && strings.Contains(err.Error(), "Function not found")
}
