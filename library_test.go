package dxredis

import (
	"context"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// The function library registers every script under a name of its own
// version, and its chunk compiles (FUNCTION LOAD needs Redis 7, so miniredis
// only compiles it: SCRIPT LOAD without the header; the real load runs in
// the validation suite on Redis 7).
func TestFunctionLibraryRegistersEveryScript(t *testing.T) {
	lib, err := FunctionLibrary()
	if err != nil {
		t.Fatal(err)
	}
	header, chunk, _ := strings.Cut(lib.Source, "\n")
	if header != "#!lua name="+lib.Name {
		t.Fatalf("library header %q, want its name %s", header, lib.Name)
	}
	tag := strings.TrimPrefix(lib.Name, "dxredis_")
	seen := map[string]bool{}
	for _, name := range ScriptNames() {
		fn := lib.Function(name)
		if fn != name+"_"+tag || seen[fn] {
			t.Errorf("script %s is function %q, want %s_%s once", name, fn, name, tag)
		}
		seen[fn] = true
		if !strings.Contains(chunk, "redis.register_function{function_name='"+fn+"'") {
			t.Errorf("function %s is not registered", fn)
		}
	}
	if lib.Function("lib_util") != "" || lib.Function("no_such_script") != "" {
		t.Error("only scripts are functions")
	}
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	if err := rdb.ScriptLoad(context.Background(), chunk).Err(); err != nil {
		t.Fatalf("the library does not compile: %v", err)
	}
}
