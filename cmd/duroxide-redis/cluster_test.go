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

// TestUIOnCluster serves the dashboard over the same Cluster connection.
func TestUIOnCluster(t *testing.T) {
	list := os.Getenv("DUROXIDE_REDIS_CLUSTER")
	if list == "" {
		t.Skip("DUROXIDE_REDIS_CLUSTER is not set: no Redis Cluster to test against")
	}
	ns := fmt.Sprintf("clitest-uicluster-%d", time.Now().UnixNano())
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(list, ","), MaxRetries: -1, ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	d := runDeployment(t, redisprovider.Options{Client: rdb, Namespace: ns})
	d.finish(t, "greet-1", "Greet", "ada")
	url := list
	if !strings.Contains(url, ",") {
		url += "," + url // two addresses make the command use a Cluster client
	}
	ts, _ := serveUI(t, map[string]string{"DUROXIDE_REDIS_URL": url, "DUROXIDE_REDIS_NAMESPACE": ns}, uiOptions{})
	get(t, ts, "/", 200, `id="total">2<`)
	get(t, ts, "/instances?status=Completed", 200, ">greet-1<", "2 shown")
	get(t, ts, "/instances/greet-1", 200, "hello ada / child saw hello ada", "SubOrchestrationCompleted", `class="child"`)
}
