package dxredis_test

import (
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// A doc block is a Go code block in the documentation: a ```go fence in
// any Markdown file of the repository (repoMarkdownFiles: README.md, docs/,
// the other modules' READMEs, the bench's history ...), or a code block (indented text) in a doc comment of the
// packages in docPackages. Every block must be held verbatim by a test file
// that compiles it and, unless it says why not, runs it — so the docs cannot
// drift from the API. Each block is named by where it is (the README section
// above it, or the file and declaration whose doc comment holds it, with #2,
// #3 ... for a second block in the same place), not by its text, so editing a
// block keeps its entry.
//
// "Verbatim" ignores whitespace (indentation, gofmt's alignment) and treats
// "..." in the block as "any code here": `if err != nil { ... }` is held by
// `if err != nil { t.Fatal(err) }`.

// docPackages are the directories whose doc comments are checked.
var docPackages = []string{".", "durable", "durable/durabletest", "redisprovider", "duroxide", "cmd/duroxide-redis"}

// docHolder names where a block is held: a _test.go file and, in it, the
// function whose body holds the block (empty: anywhere in the file). A
// holder that is not a Test function or an Example with an Output comment is
// only compiled; compileOnly then says why it cannot run.
type docHolder struct {
	file, fn    string
	compileOnly string
}

// replayMainHolder holds ReplayMain's block, which its doc and the CLI's
// README share.
var replayMainHolder = docHolder{file: "durable/durabletest/replaymain_doc_test.go", fn: "main",
	compileOnly: "a program's main: it reads os.Args and os.Stdin (TestReplayMain runs ReplayMain)"}

// docHolders maps every block to its holder.
var docHolders = map[string]docHolder{
	"README.md#Writing workflows": {file: "docblocks_holders_test.go", fn: "readmeWritingWorkflows",
		compileOnly: "it dials the Redis at redis://127.0.0.1:6379/0"},
	"README.md#Redis Cluster and partitions":                  {file: "docblocks_holders_test.go", fn: "TestReadmeScaleOut"},
	"docs/internals.md#The validation suite (`providertest`)": {file: "docblocks_holders_test.go", fn: "TestProvider"},
	"docs/internals.md#Using the provider directly": {file: "docblocks_holders_test.go", fn: "readmeUsingTheProviderDirectly",
		compileOnly: "it dials the Redis at redis://127.0.0.1:6379/0"},
	"duroxide/errors.go:ErrLockLost":                                            {file: "docblocks_holders_test.go", fn: "TestDocErrorKinds"},
	"extra/dxotel/README.md#extra/dxotel: OpenTelemetry for duroxide-redis":     {file: "extra/dxotel/docblocks_test.go", fn: "TestDocReadme"},
	"durable/replaymain.go:ReplayMain":                                          replayMainHolder,
	"cmd/duroxide-redis/README.md#Operating a deployment: `cmd/duroxide-redis`": replayMainHolder,
	"durable/goblock.go:OrchestrationContext.Go":                                {file: "durable/docblocks_test.go", fn: "TestDocGoBlock"},
	"durable/durabletest/durabletest.go:package":                                {file: "durable/docblocks_test.go", fn: "TestDocDurabletestStart"},
	"durable/durabletest/mock.go:Env.MockActivity":                              {file: "durable/docblocks_test.go", fn: "TestDocMockActivity"},
	"durable/durabletest/waits.go:Env.WaitForEventSubscription":                 {file: "durable/docblocks_test.go", fn: "TestDocWaitForEventSubscription"},
	"durable/durabletest/eventually.go:Eventually":                              {file: "durable/docblocks_test.go", fn: "TestDocEventually"},
	"durable/doc.go:package": {file: "durable/example_test.go",
		compileOnly: "the block is a whole program; Example runs its main on an embedded Redis and checks the output"},
	"README.md#Testing your workflows":                                     {file: "durable/durabletest/readme_test.go", fn: "TestProcessOrder"},
	"README.md#Schedules":                                                  {file: "durable/durabletest/readme_schedules_test.go", fn: "TestNightlyReport"},
	"docs/schedules.md#Schedules":                                          {file: "durable/durabletest/readme_schedules_test.go", fn: "TestNightlyReport"},
	"docs/schedules.md#Pausing an instance":                                {file: "durable/durabletest/readme_pause_test.go", fn: "TestPauseAnApproval"},
	"docs/flow-control.md#Flow control at dispatch":                        {file: "durable/durabletest/readme_limits_test.go", fn: "TestLimitChargesAndMail"},
	"docs/flow-control.md#Priorities and pausing an orchestration":         {file: "durable/durabletest/readme_flow_test.go", fn: "TestFlowControlDoc"},
	"docs/flow-control.md#Limits on running instances of an orchestration": {file: "durable/durabletest/readme_orchlimits_test.go", fn: "TestLimitRunningReports"},
	"redisprovider/redislog.go:RedisLogger": {file: "docblocks_holders_test.go", fn: "docRedisLogger",
		compileOnly: "it sets go-redis's process-wide logger, which a test cannot restore"},
	"durable/durabletest/backend.go:Each": {file: "durable/docblocks_test.go", fn: "TestDocDurabletestEach"},
}

// docNotGo lists the code blocks that are not Go, and what they are.
var docNotGo = map[string]string{
	"durable/doc.go:package#2":           "the table mapping duroxide's Rust API to this package's",
	"cmd/duroxide-redis/main.go:package": "the go install command",
}

// docKnownPending lists blocks that do not yet compile as written or are not
// yet held verbatim, with the holder they are checked against (file empty:
// none yet). Their failures are logged, not reported; a pending block that
// passes is logged too, so the entry can go. Empty this list.
var docKnownPending = map[string]docHolder{}

type docBlock struct {
	key, text string
}

func TestDocBlocksAreTested(t *testing.T) {
	t.Parallel()
	blocks := readDocBlocks(t)
	seen := map[string]bool{}
	for _, b := range blocks {
		seen[b.key] = true
		if _, ok := docNotGo[b.key]; ok {
			continue
		}
		if h, ok := docKnownPending[b.key]; ok {
			if err := checkDocBlock(b, h); err != nil {
				t.Logf("known pending: %s: %v", b.key, err)
			} else {
				t.Logf("known pending %s now passes: remove it from docKnownPending and add it to docHolders", b.key)
			}
			continue
		}
		h, ok := docHolders[b.key]
		if !ok {
			t.Errorf("%s: a Go block no test holds; put it verbatim in a test and name it in docHolders (or docNotGo):\n%s", b.key, b.text)
			continue
		}
		if err := checkDocBlock(b, h); err != nil {
			t.Errorf("%s: %v", b.key, err)
		}
	}
	for _, m := range []map[string]docHolder{docHolders, docKnownPending} {
		for k := range m {
			if !seen[k] {
				t.Errorf("%s: listed, but there is no such block (renamed section or declaration?)", k)
			}
		}
	}
	for k := range docNotGo {
		if !seen[k] {
			t.Errorf("%s: listed in docNotGo, but there is no such block", k)
		}
	}
}

// checkDocBlock reports whether h holds b, and whether h runs.
func checkDocBlock(b docBlock, h docHolder) error {
	if h.file == "" {
		return fmt.Errorf("no holder yet")
	}
	if !strings.HasSuffix(h.file, "_test.go") {
		return fmt.Errorf("holder %s is not a test file, so no test compiles it", h.file)
	}
	src, err := os.ReadFile(filepath.FromSlash(h.file))
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, h.file, src, parser.ParseComments)
	if err != nil {
		return err
	}
	scope := string(src)
	runs := false
	if h.fn != "" {
		var fd *ast.FuncDecl
		for _, d := range f.Decls {
			if d, ok := d.(*ast.FuncDecl); ok && d.Recv == nil && d.Name.Name == h.fn {
				fd = d
			}
		}
		if fd == nil {
			return fmt.Errorf("%s has no function %s", h.file, h.fn)
		}
		// The holder's doc comment and signature count: a block may be
		// a whole declaration.
		start := fd.Pos()
		if fd.Doc != nil {
			start = fd.Doc.Pos()
		}
		scope = string(src[fset.Position(start).Offset:fset.Position(fd.End()).Offset])
		runs = strings.HasPrefix(h.fn, "Test") ||
			strings.HasPrefix(h.fn, "Example") && regexp.MustCompile(`(?m)^\s*// (Unordered )?[Oo]utput:`).MatchString(scope)
	}
	if !runs && h.compileOnly == "" {
		return fmt.Errorf("holder %s:%s is only compiled (not a Test, or an Example without Output); make it run or say why it cannot in compileOnly", h.file, h.fn)
	}
	if !docBlockPattern(b.text).MatchString(squeeze(scope)) {
		return fmt.Errorf("not held verbatim (whitespace aside, ... = any code) by %s:%s; the block:\n%s", h.file, h.fn, b.text)
	}
	return nil
}

// squeeze drops all whitespace, so indentation and alignment do not count.
func squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// docBlockPattern matches a block's text with "..." standing for any code.
func docBlockPattern(block string) *regexp.Regexp {
	parts := strings.Split(squeeze(block), "...")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(strings.Join(parts, "(?s:.*?)"))
}

// readDocBlocks returns every Go block of the Markdown files and every code block
// in the doc comments of docPackages.
func readDocBlocks(t *testing.T) []docBlock {
	t.Helper()
	var blocks []docBlock
	count := map[string]int{}
	add := func(key, text string) {
		count[key]++
		if n := count[key]; n > 1 {
			key = fmt.Sprintf("%s#%d", key, n)
		}
		blocks = append(blocks, docBlock{key: key, text: text})
	}
	for _, name := range repoMarkdownFiles(t) {
		src, err := os.ReadFile(filepath.FromSlash(name))
		if err != nil {
			t.Fatal(err)
		}
		heading := ""
		var code []string
		in, isGo := false, false
		for _, line := range strings.Split(string(src), "\n") {
			switch {
			case !in && strings.HasPrefix(line, "```"):
				in, isGo, code = true, strings.TrimSpace(strings.TrimPrefix(line, "```")) == "go", nil
			case in && strings.HasPrefix(line, "```"):
				in = false
				if isGo {
					add(name+"#"+heading, strings.Join(code, "\n")+"\n")
				}
			case in:
				code = append(code, line)
			case strings.HasPrefix(line, "#"):
				heading = strings.TrimSpace(strings.TrimLeft(line, "#"))
			}
		}
		if in {
			t.Fatalf("%s: unterminated code fence", name)
		}
	}
	for _, dir := range docPackages {
		files, err := filepath.Glob(filepath.Join(filepath.FromSlash(dir), "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(files)
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			where := filepath.ToSlash(file) + ":"
			type named struct {
				name string
				doc  *ast.CommentGroup
			}
			docs := []named{{"package", f.Doc}}
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					name := d.Name.Name
					if d.Recv != nil && len(d.Recv.List) == 1 {
						name = receiverName(d.Recv.List[0].Type) + "." + name
					}
					docs = append(docs, named{name, d.Doc})
				case *ast.GenDecl:
					// A group's doc is named after its first spec.
					for i, s := range d.Specs {
						var name string
						var doc *ast.CommentGroup
						switch s := s.(type) {
						case *ast.TypeSpec:
							name, doc = s.Name.Name, s.Doc
						case *ast.ValueSpec:
							name, doc = s.Names[0].Name, s.Doc
						default:
							continue
						}
						if i == 0 && d.Doc != nil {
							docs = append(docs, named{name, d.Doc})
						}
						docs = append(docs, named{name, doc})
					}
				}
			}
			var p comment.Parser
			for _, d := range docs {
				if d.doc == nil {
					continue
				}
				for _, blk := range p.Parse(d.doc.Text()).Content {
					if c, ok := blk.(*comment.Code); ok {
						add(where+d.name, c.Text)
					}
				}
			}
		}
	}
	if len(blocks) == 0 {
		t.Fatal("found no code blocks: the paths no longer match the repository")
	}
	return blocks
}

func receiverName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return receiverName(e.X)
	case *ast.IndexExpr:
		return receiverName(e.X)
	case *ast.IndexListExpr:
		return receiverName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return "?"
}
