package redisprovider

import (
	"testing"

	dxredis "github.com/duroxide-go/duroxide-redis"
)

// Every Lua script has exactly one handle and every handle names a script:
// a script without a handle is dead code (or a call written as a string), a
// handle without a script fails at New.
func TestScriptHandlesMatchLuaFiles(t *testing.T) {
	handles := map[string]luaScript{}
	for h := range scriptCount {
		name := h.String()
		if name == "" {
			t.Errorf("handle %d has no file name in scriptFiles", h)
			continue
		}
		if other, dup := handles[name]; dup {
			t.Errorf("handles %d and %d both name lua/%s.lua", other, h, name)
		}
		handles[name] = h
	}
	files := map[string]bool{}
	for _, name := range dxredis.ScriptNames() {
		files[name] = true
		if _, ok := handles[name]; !ok {
			t.Errorf("lua/%s.lua has no handle in scriptFiles", name)
		}
	}
	for name := range handles {
		if !files[name] {
			t.Errorf("scriptFiles names lua/%s.lua, which does not exist", name)
		}
	}
}
