package durable_test

import (
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// TestRollingDeploymentVersionUpgrade mirrors e2e_rolling_deployment_version_upgrade
// (scenarios/rolling_deployment.rs): an instance continuing as new into a
// version only one of three nodes has yet is bounced by the old nodes (the
// unregistered backoff) until the new node runs it. duroxide also restarts
// the old nodes with the new code after a second; that is not needed for
// the instance to finish, so this port leaves it out.
func TestRollingDeploymentVersionUpgrade(t *testing.T) {
	t.Parallel()
	v1 := func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		ctx.ContinueAsNew("upgraded", durable.WithVersion("2.0.0"))
		return "", nil
	}
	v2 := func(_ *durable.OrchestrationContext, in string) (string, error) { return "v2-completed:" + in, nil }
	old := func() *durable.Registry {
		return durable.NewRegistry().MustAddOrchestrationVersion("VersionedOrch", "1.0.0", v1)
	}
	upgraded := old().MustAddOrchestrationVersion("VersionedOrch", "2.0.0", v2)
	opts := durable.Options{LongPollTimeout: 100 * time.Millisecond, MaxAttempts: 50,
		UnregisteredBackoffBase: 100 * time.Millisecond, UnregisteredBackoffMax: 500 * time.Millisecond}
	env := durabletest.Start(t, old(), durabletest.WithOptions(opts))
	env.NewRuntime(t, old(), opts)
	env.NewRuntime(t, upgraded, opts)
	mustComplete(t, env.StartAndWait(t, "version-upgrade-test", "VersionedOrch", "{}", durable.WithVersion("1.0.0")), "v2-completed:upgraded")
	if n := len(must(env.Client.Admin().ListExecutions(t.Context(), "version-upgrade-test"))(t)); n != 2 {
		t.Fatalf("%d executions, want 2 (1.0.0, then 2.0.0)", n)
	}
}
