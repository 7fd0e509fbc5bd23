package dxredis

import (
	"embed"
	"fmt"
	"sort"
	"strings"
)

//go:embed lua/*.lua
var luaFS embed.FS

// prelude starts every script. The Dragonfly flag line is a comment for Redis
// and miniredis; the tables are declared before any library so that every
// library function can call every other one.
const prelude = `--!df flags=allow-undeclared-keys
local P = KEYS[1]
local U, K, O, W, S, I, V = {}, {}, {}, {}, {}, {}, {}
`

const requiresTag = "-- requires:"

// Script returns the complete source of the script lua/<name>.lua: the
// prelude, the key functions, the libraries the script lists on its
// "-- requires:" line (lua/lib_<lib>.lua, in that order) and its body.
func Script(name string) (string, error) {
	body, err := luaFS.ReadFile("lua/" + name + ".lua")
	if err != nil {
		return "", fmt.Errorf("dxredis: no script %q", name)
	}
	var b strings.Builder
	b.WriteString(prelude)
	b.WriteString(LuaKeyFunctions())
	for _, lib := range requires(string(body)) {
		src, err := luaFS.ReadFile("lua/lib_" + lib + ".lua")
		if err != nil {
			return "", fmt.Errorf("dxredis: script %q requires unknown library %q", name, lib)
		}
		b.Write(src)
		b.WriteByte('\n')
	}
	b.Write(body)
	return b.String(), nil
}

// requires reads the library list of a script body. util is always first
// because every other library uses it.
func requires(body string) []string {
	libs := []string{"util"}
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, requiresTag); ok {
			for _, lib := range strings.Fields(rest) {
				if lib != "util" {
					libs = append(libs, lib)
				}
			}
			break
		}
	}
	return libs
}

// ScriptNames lists the atomic operations, one per lua/<name>.lua file that is
// not a library.
func ScriptNames() []string {
	entries, _ := luaFS.ReadDir("lua")
	var names []string
	for _, e := range entries {
		n := strings.TrimSuffix(e.Name(), ".lua")
		if !strings.HasPrefix(n, "lib_") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}
