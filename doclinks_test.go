package dxredis_test

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// Moving a README section to docs/ breaks every link to its anchor without a
// sound; this test reads the repository's Markdown files and checks that each
// relative link names a file that exists and, when it has a #fragment, a
// heading of that file (by GitHub's slug rules). Links to other sites are not
// checked: the test must not need the network.

// mdLink matches an inline link or image target: ](target) or ](target "title").
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// mdHeading matches an ATX heading and captures its text.
var mdHeading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)

// inlineCode matches a `code span`, whose brackets are not links.
var inlineCode = regexp.MustCompile("`[^`]*`")

func TestDocLinksAndAnchors(t *testing.T) {
	t.Parallel()
	files := repoMarkdownFiles(t)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(file string) (map[string]bool, error) {
		if a, ok := anchors[file]; ok {
			return a, nil
		}
		src, err := os.ReadFile(filepath.FromSlash(file))
		if err != nil {
			return nil, err
		}
		a := markdownAnchors(string(src))
		anchors[file] = a
		return a, nil
	}
	checked := 0
	for _, file := range files {
		src, err := os.ReadFile(filepath.FromSlash(file))
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range markdownProse(string(src)) {
			if line == "" {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(inlineCode.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				where := file + ":" + strconv.Itoa(n+1)
				ref, frag, _ := strings.Cut(target, "#")
				dest := file
				if ref != "" {
					if strings.HasPrefix(ref, "/") {
						t.Errorf("%s: %s: an absolute path; use one relative to the file", where, target)
						continue
					}
					dest = path.Clean(path.Join(path.Dir(file), ref))
					if strings.HasPrefix(dest, "../") {
						t.Errorf("%s: %s: leaves the repository", where, target)
						continue
					}
					if _, err := os.Stat(filepath.FromSlash(dest)); err != nil {
						t.Errorf("%s: %s: no such file %s", where, target, dest)
						continue
					}
				}
				if frag == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				a, err := anchorsOf(dest)
				if err != nil {
					t.Errorf("%s: %s: %v", where, target, err)
					continue
				}
				if !a[frag] {
					t.Errorf("%s: %s: %s has no heading with the anchor #%s", where, target, dest, frag)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("checked no links: the link pattern no longer matches the files")
	}
}

// repoMarkdownFiles returns every Markdown file of the repository (outside
// hidden directories), slash-separated and relative to its root, so a new
// page is checked without being listed anywhere.
func repoMarkdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "." && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, filepath.ToSlash(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, need := range []string{"README.md", "docs/internals.md", "bench/HISTORY.md"} {
		if !slices.Contains(files, need) {
			t.Fatalf("found no %s: the walk no longer matches the repository", need)
		}
	}
	return files
}

// markdownProse returns src's lines with those inside code fences blanked,
// so line numbers stay those of the file.
func markdownProse(src string) []string {
	lines := strings.Split(src, "\n")
	in := false
	for i, line := range lines {
		fence := strings.HasPrefix(strings.TrimSpace(line), "```")
		if in || fence {
			lines[i] = ""
		}
		if fence {
			in = !in
		}
	}
	return lines
}

// markdownAnchors returns the anchors GitHub makes for src's headings:
// lower case, punctuation dropped but for - and _, spaces made -, and a
// repeated slug suffixed -1, -2, ...
func markdownAnchors(src string) map[string]bool {
	a := map[string]bool{}
	seen := map[string]int{}
	for _, line := range markdownProse(src) {
		m := mdHeading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		text := strings.TrimSpace(m[1])
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			a[slug+"-"+strconv.Itoa(n)] = true
		} else {
			a[slug] = true
		}
		seen[slug]++
	}
	return a
}
