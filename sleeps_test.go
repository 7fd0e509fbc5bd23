package dxredis_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Tests wait on signals (a status, a history length, a channel, a hook, a
// parked fetch), not on time: a fixed sleep is either too short on a loaded
// machine (a flaky test) or longer than needed everywhere else (a slow one).
// Where a test really needs wall-clock time to pass (a lock must expire on
// Redis' clock, two timestamps must differ, a chaos fault's pacing) or sleeps
// as the poll interval of a loop that waits on a condition, the sleep says
// so: a comment starting with "sleep:" on its line, or ending on the line
// above it, says why no signal can replace it.

// sleepPrefix starts the comment that justifies a time.Sleep.
const sleepPrefix = "sleep:"

// testSupportDirs hold test code that is not in _test.go files: packages
// whose only callers are tests (providertest is shipped as a library for
// other providers' tests).
var testSupportDirs = []string{"providertest", "internal/redistest", "durable/durabletest"}

// TestSleepsAreJustified walks every module of the repository (go.work's
// too: they are below the root) and fails for each time.Sleep in test code
// without a "// sleep:" justification.
func TestSleepsAreJustified(t *testing.T) {
	t.Parallel()
	files := testCodeFiles(t)
	if len(files) < 100 {
		t.Fatalf("found only %d test files; is the walk rooted at the repository?", len(files))
	}
	var bad []string
	checked := 0
	for _, path := range files {
		for _, s := range unjustifiedSleeps(t, path) {
			bad = append(bad, s)
		}
		checked++
	}
	for _, b := range bad {
		t.Errorf("%s: time.Sleep without a %q comment on its line or the line above saying why no signal can replace it", b, "// "+sleepPrefix)
	}
	t.Logf("%d files checked", checked)
}

// testCodeFiles lists the _test.go files below the root, and every Go file
// of testSupportDirs, skipping testdata (Go ignores it; the linter's
// testdata holds sleeps on purpose) and hidden directories.
func testCodeFiles(t *testing.T) []string {
	t.Helper()
	support := map[string]bool{}
	for _, d := range testSupportDirs {
		support[filepath.FromSlash(d)] = true
	}
	var out []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, "_test.go") || (strings.HasSuffix(path, ".go") && support[filepath.Dir(path)]) {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// unjustifiedSleeps returns file:line of each reference to time.Sleep in
// path that has no justification.
func unjustifiedSleeps(t *testing.T, path string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	timeName := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "time" {
			timeName = "time"
			if imp.Name != nil {
				timeName = imp.Name.Name
			}
		}
	}
	if timeName == "" || timeName == "_" {
		return nil
	}
	justified := justifiedLines(fset, f, src)
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Sleep" {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); !ok || x.Name != timeName {
			return true
		}
		if line := fset.Position(sel.Pos()).Line; !justified[line] {
			out = append(out, filepath.ToSlash(path)+":"+strconv.Itoa(line))
		}
		return true
	})
	return out
}

// justifiedLines returns the lines a "// sleep: why" comment justifies: its
// own line and, when it starts a comment group on lines of their own, the
// line after the group.
func justifiedLines(fset *token.FileSet, f *ast.File, src []byte) map[int]bool {
	lines := map[int]bool{}
	for _, g := range f.Comments {
		for i, c := range g.List {
			text := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
			why, ok := strings.CutPrefix(text, sleepPrefix)
			if !ok || strings.TrimSpace(why) == "" {
				continue
			}
			lines[fset.Position(c.Pos()).Line] = true
			if pos := fset.Position(c.Pos()); i == 0 && ownLine(src, pos.Offset) {
				lines[fset.Position(g.End()).Line+1] = true
			}
		}
	}
	return lines
}

// ownLine says whether only blanks precede offset on its line.
func ownLine(src []byte, offset int) bool {
	start := offset
	for start > 0 && src[start-1] != '\n' {
		start--
	}
	return strings.TrimSpace(string(src[start:offset])) == ""
}

// TestSleepCheckerFindsUnjustifiedSleeps runs the checker on sources with
// and without justifications, so TestSleepsAreJustified cannot pass by
// missing a sleep.
func TestSleepCheckerFindsUnjustifiedSleeps(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		want       []int // lines of unjustified sleeps
	}{
		{"bare", "\ttime.Sleep(1)\n", []int{6}},
		{"same line", "\ttime.Sleep(1) // sleep: why\n", nil},
		{"line above", "\t// sleep: why\n\ttime.Sleep(1)\n", nil},
		{"group above", "\t// sleep: why,\n\t// at length\n\ttime.Sleep(1)\n", nil},
		{"group not starting with it", "\t// why\n\t// sleep: at length\n\ttime.Sleep(1)\n", []int{8}},
		{"two lines above", "\t// sleep: why\n\n\ttime.Sleep(1)\n", []int{8}},
		{"empty reason", "\ttime.Sleep(1) // sleep:\n", []int{6}},
		{"trailing comment of the line above", "\t_ = 1 // sleep: why\n\ttime.Sleep(1)\n", []int{7}},
		{"other word", "\ttime.Sleep(1) // a poll interval\n", []int{6}},
		{"as a value", "\tf := time.Sleep\n\tf(1)\n", []int{6}},
	}
	for _, c := range cases {
		path := filepath.Join(t.TempDir(), "x_test.go")
		src := "package x\n\nimport \"time\"\n\nfunc f() {\n" + c.body + "}\n" // the body starts on line 6
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, l := range c.want {
			want = append(want, filepath.ToSlash(path)+":"+strconv.Itoa(l))
		}
		if got := unjustifiedSleeps(t, path); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: unjustified sleeps at %v, want %v", c.name, got, want)
		}
	}
	aliased := filepath.Join(t.TempDir(), "y_test.go")
	if err := os.WriteFile(aliased, []byte("package y\n\nimport tm \"time\"\n\nfunc f() { tm.Sleep(1) }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := unjustifiedSleeps(t, aliased); len(got) != 1 {
		t.Errorf("time imported as tm: unjustified sleeps at %v, want line 5", got)
	}
}
