package dxredis

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// TestKeysGoAndLuaAgree builds every key family in Go and in the generated
// Lua functions and requires the same names, so scripts and tools can never
// address different keys.
func TestKeysGoAndLuaAgree(t *testing.T) {
	k := NewKeys("ns:x")
	cases := []struct {
		lua  string
		args []string
		got  string
	}{
		{"seq", nil, k.Seq()},
		{"sched", []string{"a:b"}, k.Schedule("a:b")},
		{"schedall", nil, k.SchedulesAll()},
		{"scheddue", nil, k.SchedulesDue()},
		{"schedpend", nil, k.SchedulesPending()},
		{"schedbuf", nil, k.SchedulesBuffered()},
		{"schedfires", []string{"a:b"}, k.ScheduleFirings("a:b")},
		{"stats", nil, k.Stats()},
		{"duenext", nil, k.DueNext()},
		{"dueowner", nil, k.DueOwner()},
		{"duebackup", nil, k.DueBackup()},
		{"duewake", nil, k.DueWake()},
		{"ogate", nil, k.OrchGate()},
		{"wgate", nil, k.WorkGate()},
		{"inst", []string{"a:b"}, k.Instance("a:b")},
		{"exec", []string{"a:b", "18446744073709551615"}, k.Execution("a:b", 18446744073709551615)},
		{"execs", []string{"a"}, k.Executions("a")},
		{"history", []string{"a:1", "2"}, k.History("a:1", 2)},
		{"oq", []string{"i"}, k.OrchPending("i")},
		{"ot", []string{"i"}, k.OrchTagged("i")},
		{"om", []string{"i"}, k.OrchMessages("i")},
		{"oready", []string{"1.2.3-rc.1"}, k.OrchReady("1.2.3-rc.1")},
		{"overs", nil, k.OrchVersions()},
		{"odelay", nil, k.OrchDelayed()},
		{"olocked", nil, k.OrchLocked()},
		{"otoks", nil, k.OrchTokens()},
		{"ofut", nil, k.OrchFuture()},
		{"ofilters", nil, k.OrchFilters()},
		{"ofseen", nil, k.OrchFiltersSeen()},
		{"owake", []string{"any"}, k.OrchWake("any")},
		{"osticky", []string{"rt:1"}, k.OrchSticky("rt:1")},
		{"owait", nil, k.OrchStickyWait()},
		{"oswake", []string{"rt:1"}, k.OrchStickyWake("rt:1")},
		{"witem", []string{"42"}, k.WorkItem(42)},
		{"wtoks", nil, k.WorkTokens()},
		{"wlocked", nil, k.WorkLocked()},
		{"wdelay", nil, k.WorkDelayed()},
		{"wq", []string{"t:gpu"}, k.WorkQueue("t:gpu")},
		{"wqueues", nil, k.WorkQueues()},
		{"wact", []string{"i"}, k.WorkActivities("i")},
		{"wwake", []string{"d"}, k.WorkWake("d")},
		{"lim", nil, k.Limits()},
		{"lgq", []string{"t:g", "4:send:k"}, k.LimitGroupQueue("t:g", "4:send:k")},
		{"lgr", []string{"d"}, k.LimitGroupsReady("d")},
		{"lrun", nil, k.LimitLeases()},
		{"lbkt", []string{"4:send:k"}, k.LimitBucket("4:send:k")},
		{"lwait", nil, k.LimitWaiting()},
		{"sess", []string{"s"}, k.Session("s")},
		{"squeue", []string{"t:g", "s"}, k.SessionQueue("t:g", "s")},
		{"sclaim", []string{"t:a:b"}, k.SessionsClaimable("t:a:b")},
		{"sowned", []string{"t:a:b", "own:er"}, k.SessionsOwned("t:a:b", "own:er")},
		{"sowner", []string{"o"}, k.SessionsOfOwner("o")},
		{"slive", nil, k.SessionsLive()},
		{"sidle", nil, k.SessionsIdle()},
		{"sorphan", nil, k.SessionsOrphaned()},
		{"cwake", []string{"d"}, k.ClaimableWake("d")},
		{"owned", []string{"t:x", "o"}, k.OwnedWake("t:x", "o")},
		{"wctl", []string{"a1"}, k.WaiterControl("a1")},
		{"kv", []string{"i"}, k.KV("i")},
		{"kvdelta", []string{"i"}, k.KVDelta("i")},
		{"ilist", nil, k.Instances()},
		{"istatus", []string{"Running"}, k.InstancesByStatus("Running")},
		{"ichildren", []string{"i"}, k.Children("i")},
		{"iterminal", nil, k.Terminal()},
		{"meta", nil, k.Meta()},
		{"flow", nil, k.Flow()},
		{"nheld", []string{"Ord:er"}, k.NameHeld("Ord:er")},
		{"orun", []string{"Ord:er"}, k.OrchestrationRunning("Ord:er")},
		{"oheld", []string{"Ord:er"}, k.OrchestrationHeld("Ord:er")},
		{"obox", nil, k.Outbox()},
		{"rmark", nil, k.RelayMarks()},
		{"request", []string{"r:1"}, k.Request("r:1")},
		{"pending", []string{"a:b"}, k.PendingStart("a:b")},
		{"ipending", nil, k.PendingStarts()},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.lua] = true
	}
	for _, f := range KeyFamilies() {
		if !covered[f.Name] {
			t.Errorf("family %s has no case here", f.Name)
		}
	}
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	for _, c := range cases {
		quoted := make([]string, len(c.args))
		for i, a := range c.args {
			quoted[i] = fmt.Sprintf("%q", a)
		}
		src := prelude + LuaKeyFunctions() + "U.id = function(v) return v end\n" +
			fmt.Sprintf("return K.%s(%s)", c.lua, strings.Join(quoted, ", "))
		got, err := rdb.Eval(context.Background(), src, []string{k.Prefix()}).Text()
		if err != nil {
			t.Fatalf("%s: %v", c.lua, err)
		}
		if got != c.got {
			t.Errorf("%s: Lua %q, Go %q", c.lua, got, c.got)
		}
	}
}

// TestKeysAreUnambiguous checks that ids containing the separator cannot make
// two different keys collide.
func TestKeysAreUnambiguous(t *testing.T) {
	k := NewKeys("n")
	pairs := [][2]string{
		{k.SessionsOwned("t:a", "b"), k.SessionsOwned("t", "a:b")},
		{k.OwnedWake("d", "x:y"), k.OwnedWake("d:x", "y")},
		{k.History("a:1", 2), k.History("a", 12)},
		{k.Instance("x"), k.Executions("x")},
	}
	for _, p := range pairs {
		if p[0] == p[1] {
			t.Errorf("collision: %q", p[0])
		}
	}
	for _, f := range KeyFamilies() {
		if strings.Contains(f.Token, ":") {
			t.Errorf("family token %q contains the separator", f.Token)
		}
	}
}

// Family reads back the token of every family's keys, and nothing of a key
// outside the namespace.
func TestKeysFamily(t *testing.T) {
	k := NewKeys("ns")
	for key, want := range map[string]string{
		k.OrchWake("f"):         "ow",
		k.OwnedWake("d", "o:1"): "wo",
		k.WorkWake("*"):         "ww",
		k.DueNext():             "duenext",
		k.WaiterControl("x"):    "wx",
		"{other}:ow:f":          "",
		"ow:f":                  "",
	} {
		if got := k.Family(key); got != want {
			t.Errorf("Family(%q) = %q, want %q", key, got, want)
		}
	}
}
