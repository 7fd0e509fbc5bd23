package redisprovider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

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
	// readOnly marks the scripts registered no-writes, called with
	// FCALL_RO so that a read-only replica runs them too.
	readOnly [scriptCount]bool
}

// loadFunctions loads the library on the server, on every primary of a
// Cluster. It returns nil, nil when the server has no functions.
func (p *partition) loadFunctions(ctx context.Context) (*functions, error) {
	lib, err := dxredis.FunctionLibrary()
	if err != nil {
		return nil, duroxide.Permanent("new", err.Error()) // the embedded Lua is broken: a build bug
	}
	f := &functions{lib: lib}
	for h := range scriptCount {
		if f.names[h] = lib.Function(h.String()); f.names[h] == "" {
			return nil, duroxide.Permanent("new", "no function for script "+h.String())
		}
		f.readOnly[h] = dxredis.ReadOnlyScript(h.String())
	}
	if err := f.load(ctx, p.rdb); err != nil {
		if noFunctions(err) {
			return nil, nil
		}
		if readOnlyReplica(err) {
			// a replica refuses FUNCTION LOAD; it has the library when its
			// primary loaded it (functions replicate), else EVALSHA serves
			if f.loaded(ctx, p.rdb) {
				return f, nil
			}
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
	verb := "fcall"
	if f.readOnly[s] { // a replica accepts FCALL_RO of a no-writes function
		verb = "fcall_ro"
	}
	return redis.NewCmd(ctx, scriptArgs([]any{verb, f.names[s]}, keys, a)...)
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

// readOnlyReplica reports the reply of a read-only replica to a write.
func readOnlyReplica(err error) bool {
	return strings.HasPrefix(err.Error(), "READONLY")
}

// loaded reports whether the server already has this library, as a replica
// does once its primary loaded it.
func (f *functions) loaded(ctx context.Context, c redis.UniversalClient) bool {
	libs, err := c.FunctionList(ctx, redis.FunctionListQuery{LibraryNamePattern: f.lib.Name}).Result()
	return err == nil && len(libs) == 1 && libs[0].Name == f.lib.Name
}

// StaleFunctionLibraries returns the function libraries of other
// duroxide-redis versions on the server (every primary of a Cluster), which
// upgrades leave behind: each version loads its own library, named after
// its code, and never replaces another's. With del it deletes them too.
// Libraries are server-wide, not per namespace: a provider of an older
// version still running loads its library again on its next call (as after
// FUNCTION FLUSH), so deleting is safe, though only useful once no older
// version runs. It returns nil on a server without functions.
func (pp *Provider) StaleFunctionLibraries(ctx context.Context, del bool) ([]string, error) {
	const op = "stale_function_libraries"
	p := pp.base
	if p.funcs == nil {
		return nil, nil
	}
	var mu sync.Mutex
	var stale []string
	each := func(ctx context.Context, c redis.UniversalClient) error {
		libs, err := c.FunctionList(ctx, redis.FunctionListQuery{LibraryNamePattern: dxredis.LibraryPrefix + "*"}).Result()
		if err != nil {
			return err
		}
		for _, l := range libs {
			if l.Name == p.funcs.lib.Name {
				continue
			}
			if del {
				if err := c.FunctionDelete(ctx, l.Name).Err(); err != nil {
					return err
				}
			}
			mu.Lock()
			if !slices.Contains(stale, l.Name) {
				stale = append(stale, l.Name)
			}
			mu.Unlock()
		}
		return nil
	}
	var err error
	if cc, ok := p.rdb.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return each(ctx, n) })
	} else {
		err = each(ctx, p.rdb)
	}
	if err != nil {
		return nil, fail(op, err)
	}
	slices.Sort(stale)
	return stale, nil
}

// FunctionLibraryName is the name of the function library this provider
// calls, "" when it uses EVALSHA.
func (p *partition) FunctionLibraryName() string {
	if p.funcs == nil {
		return ""
	}
	return p.funcs.lib.Name
}
