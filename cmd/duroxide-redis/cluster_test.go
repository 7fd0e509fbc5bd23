package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// TestClusterSeedNodes connects through several --redis addresses (bare
// host:port) to the Cluster DUROXIDE_REDIS_CLUSTER lists, as CI provides.
func TestClusterSeedNodes(t *testing.T) {
	list := os.Getenv("DUROXIDE_REDIS_CLUSTER")
	if list == "" {
		t.Skip("DUROXIDE_REDIS_CLUSTER is not set: no Redis Cluster to test against")
	}
	addrs := strings.Split(list, ",")
	if len(addrs) == 1 {
		addrs = append(addrs, addrs[0]) // two flags make the command use a Cluster client
	}
	ns := fmt.Sprintf("clitest-cluster-%d", time.Now().UnixNano())
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRetries: -1, ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	d := runDeployment(t, redisprovider.Options{Client: rdb, Namespace: ns})
	d.finish(t, "greet-1", "Greet", `"ada"`)

	args := []string{"show", "greet-1", "--json", "--namespace", ns}
	for _, a := range addrs {
		args = append(args, "--redis", a)
	}
	got := decode[instanceDetail](t, runCLI(nil, args...))
	if got.Status != "Completed" || len(got.Children) != 1 || got.KV["greeted"] != `"ada"` {
		t.Fatalf("show over the Cluster: %+v", got)
	}
}
