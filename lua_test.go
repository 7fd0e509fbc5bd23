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

// evalFresh runs src on every server of luaServers, each time in a
// namespace of its own (named after family) whose keys are deleted when the
// test ends (on a real Redis they would outlive it), and checks that it
// returns want.
func evalFresh(t *testing.T, family, src string, want []any) {
	t.Helper()
	for name, rdb := range luaServers(t) {
		prefix := NewKeys(fmt.Sprintf("%s-%d", family, rand.Int63())).Prefix()
		t.Cleanup(func() {
			ctx := context.Background()
			for _, k := range rdb.Keys(ctx, prefix+"*").Val() {
				rdb.Del(ctx, k)
			}
		})
		got, err := rdb.Eval(context.Background(), src, []string{prefix}).Slice()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: got\n%q\nwant\n%q", name, got, want)
		}
	}
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

// TestWorkerFetchReadsSessionIndexesOnlyWithSessionItemsReady checks that a
// worker fetch with session routing reads no session index while no session
// has an item ready (w_sready is 0), and reads them, taking the session's
// item, once one has.
func TestWorkerFetchReadsSessionIndexesOnlyWithSessionItemsReady(t *testing.T) {
	t.Parallel()
	src := libSource(t, `
local sessionReads = 0
local call = redis.call
redis.call = function(cmd, ...)
  local key = select(1, ...)
  if cmd == 'ZRANGE' and (key == K.sowned('d', 'w1') or key == K.sclaim('d')) then
    sessionReads = sessionReads + 1
  end
  return call(cmd, ...)
end
local now = U.now()
W.enqueue('{"plain":1}', 'd', false, 'i', '1', '1', now)
local plain = W.fetch('n1', 60000, 'w1', 60000, { 'd' }, now, U.KEEP)
local before = sessionReads
W.enqueue('{"session":1}', 'd', 's1', 'i', '1', '2', now)
local session = W.fetch('n2', 60000, 'w1', 60000, { 'd' }, now, U.KEEP)
return { plain[2], before, session[2], sessionReads - before }`, "work", "sess", "orch", "inst", "stky", "kv", "lim")
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	got, err := rdb.Eval(context.Background(), src, []string{NewKeys("t").Prefix()}).Slice()
	if err != nil {
		t.Fatal(err)
	}
	want := []any{`{"plain":1}`, int64(0), `{"session":1}`, int64(2)}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("fetched, session index reads = %v, want %v", got, want)
	}
}

// TestWorkerKeepsAsideTheFirstItemItReadies checks U.keep for the worker queue, the keeping aside
// of the first activity a turn's ack-and-fetch schedules for the worker its
// script fetches for: the fetch takes the oldest item, kept or queued, and
// says whether more is left; the item not taken is queued by W.flush; an
// item deleted while kept (scheduled and cancelled in one turn) is gone.
func TestWorkerKeepsAsideTheFirstItemItReadies(t *testing.T) {
	t.Parallel()
	src := libSource(t, `
local now = U.now()
local function fetch(nonce)
  local r = W.fetch(nonce, 60000, false, 0, { 'd' }, now, U.KEEP)
  if r[1] == 0 then return 'none' end
  local more = 'more'
  if r[6] then more = 'idle' end
  return r[2] .. ':' .. more
end
local out = {}
-- kept older than the one queued after it
U.keep('w')
W.enqueue('A', 'd', false, 'i', '1', '1', now)
W.enqueue('B', 'd', false, 'i', '1', '2', now)
out[#out + 1] = fetch('n1')
W.flush()
out[#out + 1] = fetch('n2')
-- an older item queued before the kept one is taken first
W.enqueue('C', 'd', false, 'i', '1', '3', now)
U.keep('w')
W.enqueue('D', 'd', false, 'i', '1', '4', now)
out[#out + 1] = fetch('n3')
W.flush()
out[#out + 1] = fetch('n4')
-- deleted while kept: nothing to take, nothing queued
U.keep('w')
W.enqueue('E', 'd', false, 'i', '1', '5', now)
W.cancel('i', '1', '5', now)
out[#out + 1] = fetch('n5')
W.flush()
out[#out + 1] = fetch('n6')
out[#out + 1] = redis.call('ZCARD', K.wq('d'))
return out`, "work", "sess", "orch", "inst", "stky", "kv", "lim")
	evalFresh(t, "keep", src, []any{"A:more", "B:idle", "C:more", "D:idle", "none", "none", int64(0)})
}

// TestStickyTakeOfTheOwnersLastInstanceClearsItsMarker checks T.pick: an
// offer marks its owner's wake key, and the owner's fetch that takes the
// owner's last offered instance clears the mark (its second offered
// instance keeps it set). In a sequence the ack's piggybacked fetch takes
// the instance its ack offered in the same script: a mark left set is
// popped by the owner's blocked call and runs an empty fetch for another
// of the owner's waiting dispatchers, which the next ack could then not
// serve in its own script.
func TestStickyTakeOfTheOwnersLastInstanceClearsItsMarker(t *testing.T) {
	t.Parallel()
	src := libSource(t, `
local now = U.now()
local out = {}
local function offer(inst, order)
  redis.call('HSET', K.om(inst), 'sk', U.id(now + 60000) .. ':1000:rt1')
  T.offer(inst, '', order, nil, now)
end
local function take(token)
  local inst = T.pick('rt1', '*', token)
  out[#out + 1] = (inst or 'none') .. ':' .. redis.call('EXISTS', K.oswake('rt1'))
end
offer('a', 1)
offer('b', 2)
take('1a')
take('1b')
return out`, "orch", "stky", "inst", "kv", "work", "sess")
	evalFresh(t, "stkmark", src, []any{"a:1", "b:0"})
}

// TestAckFetchKeepsTheOwnersStickyInstanceAside checks make_ready under
// U.keep with a sticky owner: an instance sticky to the owner whose fetch
// the script runs next is kept aside for it, not offered (an offer's two
// indexes and wake-up marker would be taken straight back out by that
// fetch); kept and not taken, O.flush offers it to its owner as an ack
// without a fetch would have; sticky to another owner, it is offered at once.
func TestAckFetchKeepsTheOwnersStickyInstanceAside(t *testing.T) {
	t.Parallel()
	src := libSource(t, `
local now = U.now()
local out = {}
local function sticky(inst, owner)
  redis.call('HSET', K.om(inst), 'sk', U.id(now + 60000) .. ':1000:' .. owner)
end
local function state(inst)
  local k = U.kept('o')
  return (k and k.inst or '-') .. ' offered:' .. redis.call('ZCARD', K.osticky('rt1')) ..
    ' marked:' .. redis.call('EXISTS', K.oswake('rt1')) .. ' st:' .. tostring(redis.call('HGET', K.om(inst), 'st'))
end
sticky('a', 'rt1')
U.keep('o', 'rt1')
O.enqueue('a', '{"ExternalRaised":{}}', now, now)
out[#out + 1] = state('a')
O.flush(now)
out[#out + 1] = state('a')
sticky('b', 'rt1')
U.keep('o', 'rt2')
O.enqueue('b', '{"ExternalRaised":{}}', now, now)
out[#out + 1] = state('b')
O.flush(now)
return out`, "orch", "stky", "inst", "kv", "work", "sess")
	evalFresh(t, "stkkeep", src, []any{"a offered:0 marked:0 st:false", "- offered:1 marked:1 st:s", "- offered:2 marked:1 st:s"})
}
