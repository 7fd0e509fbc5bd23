package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	dxredis "github.com/duroxide-go/duroxide-redis"
	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// TestGlobalFlagsBeforeTheCommand: "--redis URL stats" and "--json
// instances" work as kubectl and cobra tools accept them, and mean the same
// as the flags written after the command.
func TestGlobalFlagsBeforeTheCommand(t *testing.T) {
	d := newDeployment(t)
	d.finish(t, "done-1", "Child", "x")
	env := map[string]string{} // everything from the flags
	s := decode[statsJSON](t, runCLI(env, "--redis", redisURL, "--namespace="+d.namespace, "--json", "stats"))
	if s.Instances != 1 || s.Completed != 1 {
		t.Errorf("stats: %+v", s)
	}
	r := runCLI(env, "--json", "--redis="+redisURL, "instances", "--namespace", d.namespace, "--limit", "1")
	expect(t, r, exitOK, `"instance": "done-1"`)
	expectFailure(t, runCLI(env, "--colour", "stats"), exitInvalid, "flag provided but not defined: -colour")
	expect(t, runCLI(env, "--json"), exitOK, "Commands:")
}

// TestErrorsNameTheCommand: an operator reads the command they typed, not
// the provider call inside it.
func TestErrorsNameTheCommand(t *testing.T) {
	d := newDeployment(t)
	for _, cmd := range []string{"show", "history", "tree"} {
		r := d.cli(cmd, "order-99")
		want := "duroxide-redis: " + cmd + ": instance order-99 not found\n"
		if r.code != exitNotFound || r.stderr != want {
			t.Errorf("%s: exit %d, stderr %q, want %q", cmd, r.code, r.stderr, want)
		}
	}
}

// TestHelpForOneCommand: "help stats" is the stats command's own help.
func TestHelpForOneCommand(t *testing.T) {
	r := runCLI(nil, "help", "stats")
	expect(t, r, exitOK, "Usage: duroxide-redis stats", "-watch", "-count")
	if strings.Contains(r.stdout, "Commands:") {
		t.Errorf("help stats printed the general help:\n%s", r.stdout)
	}
	expectFailure(t, runCLI(nil, "help", "frobnicate"), exitInvalid, `unknown command "frobnicate"`)
}

// TestStatsWatchJSONIsOneObjectPerLine: the README promises one object per
// line, which line-oriented consumers (jq -c, log shippers) need.
func TestStatsWatchJSONIsOneObjectPerLine(t *testing.T) {
	d := newDeployment(t)
	d.finish(t, "done-1", "Child", "x")
	r := d.cli("stats", "--watch", "--json", "--interval", "10ms", "--count", "2")
	expect(t, r, exitOK)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %d:\n%s", len(lines), r.stdout)
	}
	for _, l := range lines {
		if s := decode[statsJSON](t, result{stdout: l}); s.Instances != 1 {
			t.Errorf("line %q: %+v", l, s)
		}
	}
}

// flakyAdmin fails its first metrics reads, then answers.
type flakyAdmin struct {
	duroxide.ProviderAdmin
	failures int
}

func (a *flakyAdmin) GetSystemMetrics(context.Context) (duroxide.SystemMetrics, error) {
	if a.failures > 0 {
		a.failures--
		return duroxide.SystemMetrics{}, duroxide.Retryable("get_system_metrics", "connection refused")
	}
	return duroxide.SystemMetrics{TotalInstances: 7}, nil
}

func (a *flakyAdmin) GetQueueDepths(context.Context) (duroxide.QueueDepths, error) {
	return duroxide.QueueDepths{}, nil
}

// TestStatsWatchRetriesAFailedRefresh: a watch is most wanted while Redis is
// in trouble, so a failed refresh is reported and retried, not the end.
func TestStatsWatchRetriesAFailedRefresh(t *testing.T) {
	var out, errb bytes.Buffer
	c := &cli{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, now: time.Now,
		base: context.Background(), timeout: time.Second, json: true}
	s := &session{admin: &flakyAdmin{failures: 2}}
	if err := c.watchStats(s, time.Millisecond, 3); err != nil {
		t.Fatalf("the third refresh succeeded, yet: %v", err)
	}
	if n := strings.Count(errb.String(), "stats: get_system_metrics: connection refused"); n != 2 {
		t.Errorf("want both failures on stderr, got:\n%s", errb.String())
	}
	if got := decode[statsJSON](t, result{stdout: out.String()}); got.Instances != 7 {
		t.Errorf("stdout: %s", out.String())
	}
}

// TestStartWithoutInputSendsNull: --input is a JSON document, so leaving it
// out sends JSON null, which a typed orchestration decodes as its zero
// value; an empty string is no JSON at all and failed the instance.
func TestStartWithoutInputSendsNull(t *testing.T) {
	d := newDeployment(t)
	expect(t, d.cli("start", "Typed", "typed-1"), exitOK, "started: typed-1")
	if st := d.wait(t, "typed-1"); st.Status != durable.StatusCompleted || st.Output != "0" {
		t.Fatalf("typed-1 ended %v with %q (failure %v)", st.Status, st.Output, st.Failure)
	}
}

// TestConnectMistakes: a word that is no URL is a usage error (2), not an
// unreachable server (5); rediss:// to a plain-text port fails within the
// handshake bound, saying so, instead of hanging until --timeout.
func TestConnectMistakes(t *testing.T) {
	needRedis(t)
	expectFailure(t, runCLI(nil, "stats", "--redis", "notaurl"), exitInvalid, `redis URL "notaurl" is neither`)

	tlsURL := "rediss://" + strings.TrimPrefix(redisURL, "redis://")
	start := time.Now()
	r := runCLI(nil, "stats", "--redis", tlsURL, "--timeout", "20s")
	expectFailure(t, r, exitFailure, "TLS handshake with")
	if !strings.Contains(r.stderr, "hint: use a redis:// URL") {
		t.Errorf("no hint: %s", r.stderr)
	}
	if took := time.Since(start); took > 2*tlsHandshakeTimeout {
		t.Errorf("took %s, want about one handshake bound (%s)", took, tlsHandshakeTimeout)
	}
}

// TestNoGoRedisLogLines: go-redis's own notices ("redis: connection pool:
// failed to dial") would repeat, in another format, the one error the
// command reports.
func TestNoGoRedisLogLines(t *testing.T) {
	port, err := freePort() // nothing listens there
	if err != nil {
		t.Fatal(err)
	}
	r := runCLI(nil, "stats", "--redis", fmt.Sprintf("redis://127.0.0.1:%d", port))
	expectFailure(t, r, exitUnavailable, "connection refused")
	if strings.Contains(r.stderr, "connection pool") || strings.Count(r.stderr, "\n") != 2 {
		t.Errorf("want the error and its hint only:\n%s", r.stderr)
	}
}

// TestHistoryAndShowOfAFailure: a timer's fire time is a date, a failure's
// message is not cut off behind its JSON wrapping, and show calls a
// failed instance's output what it is.
func TestHistoryAndShowOfAFailure(t *testing.T) {
	d := newDeployment(t)
	if st := d.finish(t, "fail-1", "Fail", ""); st.Status != durable.StatusFailed {
		t.Fatalf("fail-1 ended %v", st.Status)
	}
	r := d.cli("history", "fail-1")
	expect(t, r, exitOK, "error=card declined")
	if !regexp.MustCompile(`TimerCreated .* fire_at=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`).MatchString(r.stdout) {
		t.Errorf("no readable fire time:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "fire_at_ms") {
		t.Errorf("raw epoch milliseconds:\n%s", r.stdout)
	}
	r = d.cli("show", "fail-1")
	expect(t, r, exitOK, "Failure:")
	if strings.Contains(r.stdout, "Output:") {
		t.Errorf("a failure labelled as output:\n%s", r.stdout)
	}
}

// TestStatsOnAReadOnlyReplica: stats reads a replica, where every write is
// refused (FUNCTION LOAD, and the lock release the depth script did). The
// replica has the function library its primary loaded, and the read-only
// scripts are called with FCALL_RO, which a replica accepts. One namespace
// has no layout record (as one an older version wrote), which the replica
// cannot record: it is read as one partition; the other has four
// partitions, which the replica reads from its record.
func TestStatsOnAReadOnlyReplica(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not on PATH")
	}
	primary := startRedis(t, bin)
	replica := startRedis(t, bin, "--replicaof", "127.0.0.1", strconv.Itoa(primary.port))
	d := runDeployment(t, redisprovider.Options{URL: primary.url, Namespace: "replica-test"})
	d.finish(t, "done-1", "Child", "x")
	parted := runDeployment(t, redisprovider.Options{URL: primary.url, Namespace: "replica-parts", Partitions: 4})
	parted.finish(t, "done-1", "Child", "x")
	parted.finish(t, "done-2", "Child", "x")
	ctx := context.Background()
	pc := redis.NewClient(&redis.Options{Addr: primary.addr})
	defer pc.Close()
	if err := pc.Del(ctx, dxredis.NewKeys("replica-test").Meta()).Err(); err != nil {
		t.Fatal(err)
	}
	// WAIT returns once the replica has every write made so far
	if n, err := pc.Wait(ctx, 1, 20*time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("replica did not catch up: %d, %v", n, err)
	}
	r := runCLI(nil, "stats", "--json", "--redis", replica.url, "--namespace", "replica-test")
	if s := decode[statsJSON](t, r); s.Instances != 1 || s.Completed != 1 || s.Partitions != 1 {
		t.Fatalf("stats on the replica: %+v\n%s", s, r.stderr)
	}
	r = runCLI(nil, "stats", "--json", "--redis", replica.url, "--namespace", "replica-parts")
	if s := decode[statsJSON](t, r); s.Instances != 2 || s.Partitions != 4 || len(s.PerPartition) != 4 {
		t.Fatalf("stats of 4 partitions on the replica: %+v\n%s", s, r.stderr)
	}
}

// server is a redis-server a test started.
type server struct {
	port      int
	addr, url string
}

// startRedis starts redis-server with extra arguments on a free port, stopped
// when the test ends, and waits until it answers (a replica: until its link
// to the primary is up).
func startRedis(t *testing.T, bin string, extra ...string) server {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--repl-diskless-sync-delay", "0", "--dir", t.TempDir()}, extra...)
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	s := server{port: port, addr: fmt.Sprintf("127.0.0.1:%d", port)}
	s.url = "redis://" + s.addr + "/0"
	if err := waitForRedis(s.url); err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: s.addr})
	defer c.Close()
	durabletest.Eventually(t, fmt.Sprintf("redis-server %v ready", extra), func() (bool, error) {
		info, err := c.Info(context.Background(), "replication").Result()
		return !strings.Contains(info, "role:slave") || strings.Contains(info, "master_link_status:up"), err
	})
	return s
}

// TestFunctionsDeletesStaleLibraries: upgrades leave older versions'
// function libraries on the server; the functions command lists them and,
// asked to, deletes them, never the current one.
func TestFunctionsDeletesStaleLibraries(t *testing.T) {
	d := newDeployment(t)
	if !d.prov.UsesFunctions() {
		t.Skip("the test server has no Redis Functions")
	}
	o, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(o)
	defer rdb.Close()
	ctx := context.Background()
	const old = "dxredis_0000000000aa"
	if err := rdb.FunctionLoadReplace(ctx, "#!lua name="+old+"\nredis.register_function('x_0000000000aa', function() return 1 end)").Err(); err != nil {
		t.Fatal(err)
	}
	current := d.prov.FunctionLibraryName()
	expect(t, d.cli("functions"), exitOK, "current library: "+current, old, "--delete-stale")
	got := decode[functionsJSON](t, d.cli("functions", "--delete-stale", "--json"))
	if got.Current != current || !slices.Contains(got.Stale, old) || slices.Contains(got.Stale, current) || !got.Deleted {
		t.Fatalf("functions --delete-stale: %+v", got)
	}
	libs, err := rdb.FunctionList(ctx, redis.FunctionListQuery{LibraryNamePattern: "dxredis_*"}).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) != 1 || libs[0].Name != current {
		t.Fatalf("left on the server: %+v", libs)
	}
	expect(t, d.cli("stats"), exitOK, "instances")
}
