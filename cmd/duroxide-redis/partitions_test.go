package main

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// partitionedDeployment is a deployment of four partitions whose instances
// fill every partition: "done-N" completed ones, at least one per
// partition, and a waiting "wait-N" in a partition other than 0.
type partitionedDeployment struct {
	*deployment
	done   []string       // the completed instances
	waiter string         // a Running instance, in a partition other than 0
	per    map[int]uint64 // instances per partition
}

func newPartitionedDeployment(t *testing.T) *partitionedDeployment {
	t.Helper()
	needRedis(t)
	ns := fmt.Sprintf("clitest-parts-%d-%d", time.Now().UnixNano(), namespaceSeq.Add(1))
	d := &partitionedDeployment{
		deployment: runDeployment(t, redisprovider.Options{URL: redisURL, Namespace: ns, Partitions: 4}),
		per:        map[int]uint64{},
	}
	for i := 0; len(d.per) < 4; i++ {
		if i == 64 {
			t.Fatalf("64 ids filled only partitions %v", d.per)
		}
		id := "done-" + strconv.Itoa(i)
		d.finish(t, id, "Child", `"x"`)
		d.done = append(d.done, id)
		d.per[d.prov.PartitionOf(id)]++
	}
	for i := 0; d.waiter == ""; i++ {
		if id := "wait-" + strconv.Itoa(i); d.prov.PartitionOf(id) != 0 {
			d.waiter = id
		}
	}
	expect(t, d.cli("start", "Waiter", d.waiter), exitOK, "started: "+d.waiter)
	d.waitRunning(t, d.waiter)
	d.per[d.prov.PartitionOf(d.waiter)]++
	return d
}

// TestStatsOfAPartitionedNamespace: stats shows the namespace's figures and
// each partition's, which add up to them and match where the instances are.
func TestStatsOfAPartitionedNamespace(t *testing.T) {
	t.Parallel()
	d := newPartitionedDeployment(t)
	s := decode[statsJSON](t, d.cli("stats", "--json"))
	if s.Partitions != 4 || len(s.PerPartition) != 4 {
		t.Fatalf("want 4 partitions: %+v", s)
	}
	total := uint64(len(d.done) + 1)
	if s.Instances != total || s.Running != 1 || s.Completed != total-1 {
		t.Errorf("namespace: %+v, want %d instances, 1 running", s.figuresJSON, total)
	}
	sum := reflect.ValueOf(&figuresJSON{}).Elem()
	for i, p := range s.PerPartition {
		if p.Partition != i || p.Instances != d.per[i] {
			t.Errorf("partition %d: %+v, want %d instances", i, p, d.per[i])
		}
		v := reflect.ValueOf(p.figuresJSON)
		for f := range v.NumField() {
			if v.Field(f).CanUint() {
				sum.Field(f).SetUint(sum.Field(f).Uint() + v.Field(f).Uint())
			} else {
				sum.Field(f).SetInt(sum.Field(f).Int() + v.Field(f).Int())
			}
		}
	}
	if got := sum.Interface().(figuresJSON); got != s.figuresJSON {
		t.Errorf("partitions add up to %+v, the namespace says %+v", got, s.figuresJSON)
	}

	r := d.cli("stats")
	expect(t, r, exitOK, "4 partitions:", "outbox (to relay)")
	hasRow(t, r.stdout, "instances", strconv.FormatUint(total, 10))
	for i := range 4 {
		found := false
		for _, line := range strings.Split(r.stdout, "\n") {
			f := strings.Fields(line)
			found = found || len(f) == 11 && f[0] == strconv.Itoa(i) && f[1] == strconv.FormatUint(d.per[i], 10)
		}
		if !found {
			t.Errorf("no line of partition %d with %d instances:\n%s", i, d.per[i], r.stdout)
		}
	}

	// the count is the namespace's: asking for it is fine, another is refused
	expect(t, d.cli("stats", "--partitions", "4"), exitOK, "4 partitions:")
	expectFailure(t, d.cli("stats", "--partitions", "2"), exitInvalid, "has 4 partitions")
}

// TestInstancesPagesAcrossPartitions: paging with the printed cursors lists
// every instance of every partition exactly once.
func TestInstancesPagesAcrossPartitions(t *testing.T) {
	t.Parallel()
	d := newPartitionedDeployment(t)
	type page struct {
		Instances []instanceJSON `json:"instances"`
		Next      string         `json:"next"`
	}
	var seen []string
	cursor := ""
	for n := 0; ; n++ {
		if n == 50 {
			t.Fatalf("paging did not end; seen %v", seen)
		}
		p := decode[page](t, d.cli("instances", "--json", "--limit", "2", "--cursor", cursor))
		if len(p.Instances) > 2 {
			t.Fatalf("a page of %d rows with --limit 2", len(p.Instances))
		}
		for _, i := range p.Instances {
			seen = append(seen, i.Instance)
		}
		if p.Next == "" {
			break
		}
		cursor = p.Next
	}
	want := append(slices.Clone(d.done), d.waiter)
	slices.Sort(want)
	slices.Sort(seen)
	if !slices.Equal(seen, want) {
		t.Errorf("listed %v, want %v", seen, want)
	}
	// the status index of each partition too
	r := d.cli("instances", "--status", "running", "--limit", "100")
	expect(t, r, exitOK, d.waiter)
	for _, id := range d.done {
		if strings.Contains(r.stdout, id+" ") {
			t.Errorf("--status Running lists the completed %s:\n%s", id, r.stdout)
		}
	}
}

// TestManageInstancesOfOtherPartitions: an instance in a partition other
// than 0 is shown, signalled, refused deletion while running, and deleted;
// only its partition's figures change.
func TestManageInstancesOfOtherPartitions(t *testing.T) {
	t.Parallel()
	d := newPartitionedDeployment(t)
	part := d.prov.PartitionOf(d.waiter)
	expect(t, d.cli("show", d.waiter), exitOK, "Status:         Running")
	expectFailure(t, d.cli("delete", d.waiter), exitConflict, "is Running")
	expect(t, d.cli("raise", d.waiter, "go", "--data", `"now"`), exitOK, "raised: "+d.waiter)
	d.wait(t, d.waiter)
	expect(t, d.cli("history", d.waiter), exitOK, "ExternalEvent", "OrchestrationCompleted")

	before := decode[statsJSON](t, d.cli("stats", "--json"))
	expect(t, d.cli("delete", d.waiter), exitOK, "deleted 1 instances")
	expectFailure(t, d.cli("show", d.waiter), exitNotFound, "not found")
	after := decode[statsJSON](t, d.cli("stats", "--json"))
	for i := range 4 {
		want := before.PerPartition[i].Instances
		if i == part {
			want--
		}
		if got := after.PerPartition[i].Instances; got != want {
			t.Errorf("partition %d holds %d instances after the delete, want %d", i, got, want)
		}
	}
	if after.Instances != before.Instances-1 {
		t.Errorf("namespace: %d instances after the delete, want %d", after.Instances, before.Instances-1)
	}
}

// TestPartitionsFlagCreatesANamespace: --partitions lays out a new
// namespace; later commands open it with its count without the flag. A
// command without it, run before, does not create the namespace (it would
// fix its count at one).
func TestPartitionsFlagCreatesANamespace(t *testing.T) {
	t.Parallel()
	needRedis(t)
	env := map[string]string{"DUROXIDE_REDIS_URL": redisURL, "DUROXIDE_REDIS_NAMESPACE": fmt.Sprintf("clitest-new-%d", time.Now().UnixNano())}
	if s := decode[statsJSON](t, runCLI(env, "stats", "--json")); s.Partitions != 1 || s.Instances != 0 {
		t.Fatalf("a namespace not created yet: %+v", s)
	}
	const uncreated = "has not been created yet"
	if r := runCLI(env, "stats", "--watch", "--count", "1", "--interval", "1ms"); r.code != exitOK || !strings.Contains(r.stderr, uncreated) {
		t.Fatalf("a watch of a namespace not created yet: exit %d, stderr %q, want a warning", r.code, r.stderr)
	}
	if s := decode[statsJSON](t, runCLI(env, "stats", "--json", "--partitions", "3")); s.Partitions != 3 || len(s.PerPartition) != 3 {
		t.Fatalf("created: %+v", s)
	}
	if s := decode[statsJSON](t, runCLI(env, "stats", "--json")); s.Partitions != 3 {
		t.Fatalf("reopened: %+v", s)
	}
	if r := runCLI(env, "stats", "--watch", "--count", "1", "--interval", "1ms"); r.code != exitOK || strings.Contains(r.stderr, uncreated) {
		t.Fatalf("a watch of a created namespace: exit %d, stderr %q", r.code, r.stderr)
	}
	expectFailure(t, runCLI(env, "stats", "--partitions", "-1"), exitInvalid, "Partitions -1")
}

// TestUIOfAPartitionedNamespace: the overview shows the namespace's figures
// and a table of the partitions; the instances page lists every partition.
func TestUIOfAPartitionedNamespace(t *testing.T) {
	t.Parallel()
	d := newPartitionedDeployment(t)
	ts, _ := d.ui(t, uiOptions{})
	total := strconv.Itoa(len(d.done) + 1)
	want := []string{`id="total">` + total + `<`, `id="running">1<`, `id="partitions"`, `id="outbox">`}
	for i := range 4 {
		want = append(want, fmt.Sprintf("<tr><td>%d</td><td>%d</td>", i, d.per[i]))
	}
	get(t, ts, "/", 200, want...)
	get(t, ts, "/?partial=1", 200, `id="partitions"`)
	get(t, ts, "/instances", 200, append([]string{">" + d.waiter + "<", total + " shown"}, d.done...)...)
	get(t, ts, "/instances/"+d.waiter, 200, "Waiter", `id="cancel-form"`)
}

// TestBulkCommandsAcrossPartitions: prune --all and delete
// --completed-before reach every partition.
func TestBulkCommandsAcrossPartitions(t *testing.T) {
	t.Parallel()
	d := newPartitionedDeployment(t)
	parts := map[int]bool{}
	var loopCount uint64
	for ; len(parts) < 2; loopCount++ {
		if loopCount == 64 {
			t.Fatal("64 loops in one partition")
		}
		id := "loop-" + strconv.FormatUint(loopCount, 10)
		d.finish(t, id, "Loop", "1") // three executions
		parts[d.prov.PartitionOf(id)] = true
		d.done = append(d.done, id)
	}
	p := decode[pruneJSON](t, d.cli("prune", "--all", "--keep-last", "1", "--json"))
	if p.Executions != 2*loopCount || p.Instances != uint64(len(d.done)+1) {
		t.Errorf("prune --all: %+v, want %d executions of %d instances", p, 2*loopCount, len(d.done)+1)
	}
	r := decode[deleteJSON](t, d.cli("delete", "--completed-before", "0s", "--json"))
	if r.Instances != uint64(len(d.done)) {
		t.Errorf("delete --completed-before: %+v, want %d instances", r, len(d.done))
	}
	if s := decode[statsJSON](t, d.cli("stats", "--json")); s.Instances != 1 || s.Running != 1 {
		t.Errorf("after the bulk delete: %+v, want only the waiter", s.figuresJSON)
	}
}
