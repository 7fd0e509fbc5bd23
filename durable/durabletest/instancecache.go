package durabletest

import (
	"os"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// EnvInstanceCache set to "off" turns the runtime's instance cache off in
// every Env (its own runtime and those of Env.NewRuntime) whose options
// leave InstanceCacheEntries at its default, so a whole suite can be run
// with every turn replaying the stored history, and its results compared
// with the cached run's, without editing its tests. Tests that set
// InstanceCacheEntries themselves (tests of the cache) keep their setting.
const EnvInstanceCache = "DUROXIDE_INSTANCE_CACHE"

// EnvOptions is o as the environment variables of this package adjust it
// (EnvInstanceCache): what an Env's runtimes get, for test harnesses that
// build their runtimes themselves.
func EnvOptions(o durable.Options) durable.Options {
	if os.Getenv(EnvInstanceCache) == "off" && o.InstanceCacheEntries == 0 {
		o.InstanceCacheEntries = -1
	}
	return o
}
