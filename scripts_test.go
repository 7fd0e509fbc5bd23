package dxredis

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// TestEveryScriptBuilds assembles every script with its libraries.
func TestEveryScriptBuilds(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	names := ScriptNames()
	if len(names) < 10 {
		t.Fatalf("only %d scripts found", len(names))
	}
	for _, n := range names {
		src, err := Script(n)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(src, "KEYS[1]") {
			t.Errorf("%s: no prelude", n)
		}
		if err := rdb.ScriptLoad(context.Background(), src).Err(); err != nil {
			t.Errorf("%s does not compile: %v", n, err)
		}
	}
}

// A reference to a library member that no library defines fails the
// assembly, directly from a body or through a library function, so the
// typo cannot wait in Lua until its line runs.
func TestUndefinedLibraryReferenceFails(t *testing.T) {
	for _, body := range []string{
		"return O.no_such_function()",
		"local function f() return K.nokey('x') end\nreturn f()",
		"return U.now() + Z.x", // not a library letter: Lua's business
	} {
		_, err := assemble("t", body)
		wantErr := !strings.Contains(body, "Z.x")
		if (err != nil) != wantErr {
			t.Errorf("assemble(%q): error %v, want error %v", body, err, wantErr)
		}
	}
	defs, err := libraryDefinitions()
	if err != nil {
		t.Fatal(err)
	}
	broken := append(append([]definition(nil), defs...), definition{name: "O.broken", refs: []string{"W.missing"}})
	if _, missing := reachable(broken, []string{"O.broken"}); !slices.Equal(missing, []string{"W.missing"}) {
		t.Errorf("a library function's undefined reference: missing = %v, want [W.missing]", missing)
	}
}

// Each library defines members of its own table only: a library table
// letter means one file.
func TestLibraryDefinesOnlyItsTable(t *testing.T) {
	if _, err := splitDefinitions("orch", "O", "function W.stray()\n  return 1\nend\n"); err == nil {
		t.Fatal("lib_orch defining W.stray was accepted")
	}
	if _, err := libraryDefinitions(); err != nil {
		t.Fatal(err)
	}
}
