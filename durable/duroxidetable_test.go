package durable_test

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// duroxideTablePath is the coverage table of duroxide's own tests (issue 32):
// one row per Rust test function in duroxide's tests/ at the pinned commit.
const duroxideTablePath = "testdata/duroxide-tests.tsv"

// naReasonClasses are the reasons a duroxide test may not apply to this port.
// A closed list keeps the table's answers comparable: a new kind of reason is a
// decision worth a line here.
var naReasonClasses = map[string]bool{
	"Rust-only API":          true,
	"SQLite provider detail": true,
	"Rust runtime internals": true,
	"covered elsewhere":      true,
	// extra/dxotel derives its metrics from provider calls (acks, fetches,
	// gauges read from the provider), not from counters inside the runtime:
	// a duroxide metric with no counterpart there, by design, says so.
	"dxotel metrics differ": true,
}

type duroxideRow struct {
	line                            int
	file, test, status, goRef, note string
}

type duroxideTable struct {
	pinnedTag, pinnedCommit string
	rowCount                int
	rows                    []duroxideRow
}

func readDuroxideTable(t *testing.T) duroxideTable {
	t.Helper()
	f, err := os.Open(duroxideTablePath)
	if err != nil {
		t.Fatalf("open %s: %v", duroxideTablePath, err)
	}
	defer f.Close()
	var tab duroxideTable
	tab.rowCount = -1
	sc := bufio.NewScanner(f)
	n, sawColumns := 0, false
	for sc.Scan() {
		n++
		ln := sc.Text()
		switch {
		case strings.HasPrefix(ln, "# pinned: "):
			parts := strings.Fields(strings.TrimPrefix(ln, "# pinned: "))
			if len(parts) != 2 || !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(parts[1]) {
				t.Fatalf("%s:%d: pinned header wants \"<tag> <40-hex commit>\", got %q", duroxideTablePath, n, ln)
			}
			tab.pinnedTag, tab.pinnedCommit = parts[0], parts[1]
		case strings.HasPrefix(ln, "# rows: "):
			c, err := strconv.Atoi(strings.TrimPrefix(ln, "# rows: "))
			if err != nil {
				t.Fatalf("%s:%d: rows header: %v", duroxideTablePath, n, err)
			}
			tab.rowCount = c
		case strings.HasPrefix(ln, "#") || ln == "":
		case ln == "file\ttest\tstatus\tgo\tnote":
			sawColumns = true
		default:
			c := strings.Split(ln, "\t")
			if len(c) != 5 {
				t.Fatalf("%s:%d: want 5 tab-separated columns, got %d: %q", duroxideTablePath, n, len(c), ln)
			}
			tab.rows = append(tab.rows, duroxideRow{n, c[0], c[1], c[2], c[3], c[4]})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !sawColumns || tab.pinnedCommit == "" || tab.rowCount < 0 {
		t.Fatalf("%s: missing column line, pinned or rows header", duroxideTablePath)
	}
	return tab
}

// goPackage is what the table may reference in one directory of this
// repository: its functions with the string literals each body holds, and
// every string literal of the package.
type goPackage struct {
	funcLits map[string]map[string]bool
	lits     map[string]bool
	docs     map[string]string // test function -> doc comment
}

// loadGoPackage parses the Go files of dir (relative to the repository root);
// tests selects the _test.go files, otherwise the others.
func loadGoPackage(t *testing.T, dir string, tests bool) goPackage {
	t.Helper()
	p := goPackage{funcLits: map[string]map[string]bool{}, lits: map[string]bool{}, docs: map[string]string{}}
	files, err := filepath.Glob(filepath.Join("..", dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s (%v)", dir, err)
	}
	fset := token.NewFileSet()
	for _, fn := range files {
		if strings.HasSuffix(fn, "_test.go") != tests {
			continue
		}
		f, err := parser.ParseFile(fset, fn, nil, parser.ParseComments)
		if err != nil {
			t.Fatalf("parse %s: %v", fn, err)
		}
		collect := func(n ast.Node, into map[string]bool) {
			ast.Inspect(n, func(n ast.Node) bool {
				if b, ok := n.(*ast.BasicLit); ok && b.Kind == token.STRING {
					if s, err := strconv.Unquote(b.Value); err == nil {
						into[s] = true
					}
				}
				return true
			})
		}
		collect(f, p.lits)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil {
				continue
			}
			body := map[string]bool{}
			if fd.Body != nil {
				collect(fd.Body, body)
			}
			p.funcLits[fd.Name.Name] = body
			if fd.Doc != nil {
				p.docs[fd.Name.Name] = fd.Doc.Text()
			}
		}
	}
	return p
}

var (
	goRefRe   = regexp.MustCompile(`^([a-z][a-z0-9_/]*)\.(\w+)((?:/[^,/]+)*)$`)
	snakeRe   = regexp.MustCompile(`\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b`)
	mirrorsRe = regexp.MustCompile(`\bmirrors\s+((?:\S+\.rs\s+)*)([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b`)
)

// TestDuroxideTestTable checks the coverage table of duroxide's tests: every
// row either names Go tests that exist or gives a reason, the table still has
// the row count its header pins (so it cannot shrink unnoticed), and every Go
// test whose doc comment says it mirrors a duroxide test is in the table as its
// port. Rows not ported yet are reported, not failed.
func TestDuroxideTestTable(t *testing.T) {
	t.Parallel()
	tab := readDuroxideTable(t)
	if len(tab.rows) != tab.rowCount {
		t.Errorf("%s has %d rows, its header pins %d (duroxide %s %s): a row was lost or added without updating the count",
			duroxideTablePath, len(tab.rows), tab.rowCount, tab.pinnedTag, tab.pinnedCommit)
	}

	testPkgs := map[string]goPackage{}
	srcPkgs := map[string]goPackage{}
	pkg := func(cache map[string]goPackage, dir string, tests bool) goPackage {
		if p, ok := cache[dir]; ok {
			return p
		}
		p := loadGoPackage(t, dir, tests)
		cache[dir] = p
		return p
	}

	byName := map[string][]duroxideRow{}
	seen := map[[2]string]int{}
	statusCount := map[string]int{}
	naByClass := map[string]int{}
	todoByFile := map[string]int{}
	for _, r := range tab.rows {
		where := fmt.Sprintf("%s:%d (%s %s)", duroxideTablePath, r.line, r.file, r.test)
		if prev, dup := seen[[2]string{r.file, r.test}]; dup {
			t.Errorf("%s: duplicate of line %d", where, prev)
		}
		seen[[2]string{r.file, r.test}] = r.line
		byName[r.test] = append(byName[r.test], r)
		statusCount[r.status]++
		switch r.status {
		case "ported", "providertest":
			if r.goRef == "" {
				t.Errorf("%s: status %s names no Go test", where, r.status)
			}
			for _, ref := range strings.Split(r.goRef, ",") {
				m := goRefRe.FindStringSubmatch(ref)
				if m == nil {
					t.Errorf("%s: %q is not <dir>.<Func>[/<subtest>...]", where, ref)
					continue
				}
				dir, fn, subs := m[1], m[2], strings.Split(strings.TrimPrefix(m[3], "/"), "/")
				if m[3] == "" {
					subs = nil
				}
				var lits map[string]bool
				if r.status == "ported" {
					p := pkg(testPkgs, dir, true)
					body, ok := p.funcLits[fn]
					if !ok || !strings.HasPrefix(fn, "Test") {
						t.Errorf("%s: no test function %s in %s/*_test.go", where, fn, dir)
						continue
					}
					lits = body
				} else {
					if dir != "providertest" {
						t.Errorf("%s: status providertest names %q outside providertest", where, ref)
						continue
					}
					p := pkg(srcPkgs, dir, false)
					if _, ok := p.funcLits[fn]; !ok {
						t.Errorf("%s: no function %s in providertest", where, fn)
						continue
					}
					lits = p.lits
				}
				for _, s := range subs {
					if !lits[s] {
						t.Errorf("%s: subtest %q of %s.%s: no such string literal where its subtests are named", where, s, dir, fn)
					}
				}
			}
		case "n/a":
			class, detail, ok := strings.Cut(r.note, ": ")
			if !ok || detail == "" || !naReasonClasses[class] {
				t.Errorf("%s: n/a wants a note \"<class>: <detail>\" with class one of %v, got %q", where, sortedKeys(naReasonClasses), r.note)
			}
			naByClass[class]++
		case "todo":
			if r.note != "not ported yet" {
				t.Errorf("%s: todo wants the note \"not ported yet\", got %q", where, r.note)
			}
			todoByFile[r.file]++
		default:
			t.Errorf("%s: status %q is not ported, providertest, n/a or todo", where, r.status)
		}
	}

	// Every Go test that says it mirrors a duroxide test must be that test's
	// port in the table; and no duroxide test a mirrors comment mentions may
	// be marked anything but ported.
	checked := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || (strings.HasPrefix(n, ".") && n != "..") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		dir = strings.TrimPrefix(strings.TrimPrefix(dir, ".."), "/")
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Doc == nil || !strings.HasPrefix(fd.Name.Name, "Test") {
				continue
			}
			doc := strings.Join(strings.Fields(fd.Doc.Text()), " ")
			if !strings.Contains(doc, "mirrors") {
				continue
			}
			checked++
			self := dir + "." + fd.Name.Name
			if m := mirrorsRe.FindStringSubmatch(doc); m != nil {
				rows := byName[m[2]]
				if len(rows) == 0 {
					t.Errorf("%s: %s mirrors %s, which is not in %s", path, fd.Name.Name, m[2], duroxideTablePath)
				}
				named := false
				for _, r := range rows {
					for _, ref := range strings.Split(r.goRef, ",") {
						if ref == self || strings.HasPrefix(ref, self+"/") {
							named = true
						}
					}
				}
				if len(rows) > 0 && !named {
					t.Errorf("%s: %s mirrors %s, but no row for it names %s", path, fd.Name.Name, m[2], self)
				}
			}
			// A name two Rust files share is fine once one of them is ported.
			for _, tok := range snakeRe.FindAllString(doc, -1) {
				rows, ported := byName[tok], false
				for _, r := range rows {
					ported = ported || r.status == "ported"
				}
				if len(rows) > 0 && !ported && !strings.Contains(doc, tok+".rs") {
					t.Errorf("%s: %s's doc mentions duroxide test %s, which %s:%d marks %s", path, fd.Name.Name, tok, duroxideTablePath, rows[0].line, rows[0].status)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Error("found no Go test whose doc says it mirrors a duroxide test: the scan is broken")
	}

	t.Logf("duroxide %s %s: %d tests: ported %d, providertest %d, n/a %d %v, not ported yet %d",
		tab.pinnedTag, tab.pinnedCommit[:12], len(tab.rows), statusCount["ported"], statusCount["providertest"],
		statusCount["n/a"], naByClass, statusCount["todo"])
	files := sortedKeys(todoByFile)
	sort.SliceStable(files, func(i, j int) bool { return todoByFile[files[i]] > todoByFile[files[j]] })
	for _, f := range files {
		t.Logf("not ported yet: %3d %s", todoByFile[f], f)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
