package durablelint_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/duroxide-go/duroxide-redis/extra/durablelint"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"
)

// TestRepositoryExamplesAreDeterministic runs the analyzer over the
// repository's examples and the durable package with its tests, and fails on
// any finding in code users copy from: examples/ and durable's example
// files. Findings elsewhere in durable's tests (which break determinism on
// purpose, e.g. to provoke a deadlock or a slow turn) are only logged.
func TestRepositoryExamplesAreDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("loads and type-checks the durable package's tests")
	}
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &packages.Config{
		Mode:  packages.LoadSyntax | packages.NeedModule | packages.NeedTypesSizes,
		Dir:   root,
		Tests: true,
	}
	pkgs, err := packages.Load(cfg, "./examples/...", "./durable")
	if err != nil {
		t.Fatal(err)
	}
	if packages.PrintErrors(pkgs) > 0 {
		t.Fatal("the repository's packages do not load")
	}
	graph, err := checker.Analyze([]*analysis.Analyzer{durablelint.Analyzer}, pkgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	examples := 0
	seen := map[string]bool{} // a file is in both a package and its test variant
	for act := range graph.All() {
		if !act.IsRoot {
			continue
		}
		if act.Err != nil {
			t.Errorf("%s: %v", act.Package.PkgPath, act.Err)
		}
		for _, d := range act.Diagnostics {
			pos := act.Package.Fset.Position(d.Pos)
			msg := pos.String() + ": " + d.Message
			if seen[msg] {
				continue
			}
			seen[msg] = true
			rel, _ := filepath.Rel(root, pos.Filename)
			if strings.HasPrefix(rel, "examples"+string(filepath.Separator)) || strings.HasPrefix(filepath.Base(rel), "example") {
				t.Errorf("example code is not deterministic: %s", msg)
				continue
			}
			t.Logf("deliberate or known finding outside the examples: %s", msg)
		}
		for _, f := range act.Package.CompiledGoFiles {
			if strings.HasPrefix(filepath.Base(f), "example") || strings.Contains(f, string(filepath.Separator)+"examples"+string(filepath.Separator)) {
				examples++
			}
		}
	}
	if examples == 0 {
		t.Fatal("no example file was analysed: the patterns no longer match the repository")
	}
}
