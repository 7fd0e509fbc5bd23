package dxredis

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"testing"

	"github.com/Masterminds/semver/v3"
	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// libSource assembles the prelude, key functions and the named libraries, the
// way Script does, followed by body.
func libSource(t *testing.T, body string, libs ...string) string {
	t.Helper()
	src := prelude + LuaKeyFunctions()
	for _, l := range append([]string{"util"}, libs...) {
		b, err := luaFS.ReadFile("lua/lib_" + l + ".lua")
		if err != nil {
			t.Fatal(err)
		}
		src += string(b) + "\n"
	}
	return src + body
}

// luaServers returns a miniredis and, when DUROXIDE_REDIS_URL is set, the
// real Redis too: number formatting differs between their Lua engines.
func luaServers(t *testing.T) map[string]*redis.Client {
	m := miniredis.RunT(t)
	out := map[string]*redis.Client{"miniredis": redis.NewClient(&redis.Options{Addr: m.Addr()})}
	if url := os.Getenv("DUROXIDE_REDIS_URL"); url != "" {
		o, err := redis.ParseURL(url)
		if err != nil {
			t.Fatal(err)
		}
		out["redis"] = redis.NewClient(o)
	}
	return out
}

// randomVersion draws versions that exercise every precedence rule: numeric
// parts of several widths and prereleases mixing numeric and alphanumeric
// identifiers of different lengths.
func randomVersion(r *rand.Rand) string {
	part := func() int { return []int{0, 1, 2, 9, 10, 11, 99, 100}[r.Intn(8)] }
	v := fmt.Sprintf("%d.%d.%d", part(), part(), part())
	if r.Intn(2) == 0 {
		return v
	}
	ids := []string{"alpha", "beta", "rc", "1", "2", "10", "a1", "0", "x-y"}
	n := 1 + r.Intn(3)
	pre := ids[r.Intn(len(ids))]
	for i := 1; i < n; i++ {
		pre += "." + ids[r.Intn(len(ids))]
	}
	return v + "-" + pre
}

// TestLuaVersionOrderMatchesSemver checks that the scripts order pinned
// versions exactly as github.com/Masterminds/semver does on the Go side: the
// capability filter is evaluated in Lua, so any disagreement would route an
// execution to a runtime that cannot replay it.
func TestLuaVersionOrderMatchesSemver(t *testing.T) {
	src := libSource(t, `
local out = {}
for i = 1, #ARGV, 2 do
  local function parse(s)
    local a, b, c, rest = string.match(s, '^(%d+)%.(%d+)%.(%d+)(.*)$')
    if string.sub(rest, 1, 1) == '-' then rest = string.sub(rest, 2) end
    return { a, b, c, rest }
  end
  out[#out + 1] = O.vcmp(parse(ARGV[i]), parse(ARGV[i + 1]))
end
return out`, "orch")
	r := rand.New(rand.NewSource(1))
	var args []any
	var pairs [][2]string
	for range 2000 {
		a, b := randomVersion(r), randomVersion(r)
		pairs = append(pairs, [2]string{a, b})
		args = append(args, a, b)
	}
	for name, rdb := range luaServers(t) {
		res, err := rdb.Eval(context.Background(), src, []string{NewKeys("t").Prefix()}, args...).Int64Slice()
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range pairs {
			want := semver.MustParse(p[0]).Compare(semver.MustParse(p[1]))
			if int(res[i]) != want {
				t.Errorf("%s: %s vs %s: Lua %d, semver %d", name, p[0], p[1], res[i], want)
			}
		}
	}
}

// TestLuaCompatibleRanges checks the filter encoding the provider sends: ANY
// range, inclusive bounds, open bounds, '*' (no filter) and ” (no range).
func TestLuaCompatibleRanges(t *testing.T) {
	src := libSource(t, `return O.compatible(ARGV[1], ARGV[2]) and 1 or 0`, "orch")
	cases := []struct {
		ver, enc string
		want     int64
	}{
		{"1.0.0", "1.0.0,1.5.0;3.0.0,3.5.0", 1},
		{"1.5.0", "1.0.0,1.5.0;3.0.0,3.5.0", 1},
		{"2.0.0", "1.0.0,1.5.0;3.0.0,3.5.0", 0},
		{"3.2.0", "1.0.0,1.5.0;3.0.0,3.5.0", 1},
		{"2.0.0-rc.1", "1.0.0,2.0.0", 1},
		{"2.0.0-rc.1", "2.0.0,3.0.0", 0},
		{"9.9.9", ",", 1},
		{"0.0.1", "1.0.0,", 0},
		{"7.0.0", "*", 1},
		{"", "*", 1},
		{"", "1.0.0,1.0.0", 1},
		{"", "", 0},
		{"1.0.0", "", 0},
	}
	for name, rdb := range luaServers(t) {
		for _, c := range cases {
			got, err := rdb.Eval(context.Background(), src, []string{NewKeys("t").Prefix()}, c.ver, c.enc).Int64()
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("%s: compatible(%q, %q) = %d, want %d", name, c.ver, c.enc, got, c.want)
			}
		}
	}
}
