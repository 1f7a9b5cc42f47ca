package specref

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// root is the repository root, from this package's directory.
const root = "../.."

// pagesDir is where the protocol reference lives, from the root.
const pagesDir = "docs/protocols"

// specPages are the pages of the original protocol specs; a bare mention of
// one is a citation whether or not docs/protocols has it.
var specPages = []string{"json", "zandronum", "huffman", "gamespy2", "ogp", "bloodmasters", "errata", "sources"}

// kept are lines allowed to keep an old citation, by file and a text the
// line contains, each with the reason.
var kept = []struct{ file, text, why string }{
	{"codecs/ogp/built_test.go", "const builtSource =", "the first line of golden files, which change only through -update"},
	{"codecs/zandronum/golden_test.go", "const vectorSource =", "the first line of golden files, which change only through -update"},
}

// scanned says whether a file's text is checked: code and the help text in
// it, not prose documents or test data.
func scanned(name string) bool {
	switch filepath.Ext(name) {
	case ".go", ".ts", ".js", ".cjs", ".mjs":
		return name != "wasm_exec.js"
	}
	return false
}

// skipped are directories not walked (this package names the forms it
// rejects).
func skipped(rel string, name string) bool {
	switch name {
	case ".git", "testdata", "node_modules":
		return true
	}
	return rel == "docs" || rel == "internal/specref"
}

func TestCitations(t *testing.T) {
	pages := readPages(t)
	names := append([]string(nil), specPages...)
	for p := range pages {
		if p != "README" { // README.md is too common a name to count as a citation when bare
			names = append(names, p)
		}
	}
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	alt := strings.Join(quoteAll(names), "|")
	// spec/ as the start of a path: the old spec directory (and its data
	// files), not a testdata/spec/ copy inside the repository.
	specDir := regexp.MustCompile(`(^|[^\w./-])(shared/spec/|spec/)`)
	// a page name, with what precedes it, to tell bare names from paths
	page := regexp.MustCompile(`([\w./-]*)\b(` + alt + `)\.md\b`)
	// a citation under docs/protocols and what follows it
	cite := regexp.MustCompile(pagesDir + `/([\w-]+)\.md(?:,)? ?(?:\(§)?(?:(\d+(?:\.\d+)?)|"([^"]+)"|'([^']+)')?`)

	n := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && skipped(rel, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !scanned(d.Name()) {
			return nil
		}
		n++
		eachLine(t, path, func(no int, line string) {
			for _, k := range kept {
				if rel == k.file && strings.Contains(line, k.text) {
					return
				}
			}
			where := rel + ":" + strconv.Itoa(no)
			if specDir.MatchString(line) {
				t.Errorf("%s: cites the spec directory outside the repository; cite a page of %s/ instead:\n\t%s", where, pagesDir, strings.TrimSpace(line))
			}
			for _, m := range page.FindAllStringSubmatch(line, -1) {
				if !strings.HasSuffix(m[1], pagesDir+"/") {
					t.Errorf("%s: %s.md without its path; write %s/%s.md:\n\t%s", where, m[2], pagesDir, m[2], strings.TrimSpace(line))
				}
			}
			for _, m := range cite.FindAllStringSubmatch(line, -1) {
				headings, ok := pages[m[1]]
				switch {
				case !ok:
					t.Errorf("%s: %s/%s.md does not exist", where, pagesDir, m[1])
				case m[2] != "" && !hasNumber(headings, m[2]):
					t.Errorf("%s: %s/%s.md has no section %s", where, pagesDir, m[1], m[2])
				case m[3]+m[4] != "" && !hasTitle(headings, m[3]+m[4]):
					t.Errorf("%s: %s/%s.md has no heading %q", where, pagesDir, m[1], m[3]+m[4])
				}
			}
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("checked only %d files: is %s the repository root?", n, root)
	}
}

// readPages returns each page of docs/protocols, by name without .md, with
// its headings' text.
func readPages(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, pagesDir, "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no pages in %s: %v", pagesDir, err)
	}
	pages := map[string][]string{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".md")
		var hs []string
		eachLine(t, f, func(_ int, line string) {
			if strings.HasPrefix(line, "#") {
				hs = append(hs, strings.TrimSpace(strings.TrimLeft(line, "#")))
			}
		})
		pages[name] = hs
	}
	return pages
}

// hasNumber reports whether a heading is numbered num ("2.5 ...") or, for a
// chapter number such as 6, whether one is numbered within it ("6.1 ...").
func hasNumber(headings []string, num string) bool {
	for _, h := range headings {
		if strings.HasPrefix(h, num+" ") || strings.HasPrefix(h, num+".") && !strings.Contains(num, ".") {
			return true
		}
	}
	return false
}

// hasTitle reports whether a heading contains title, ignoring case.
func hasTitle(headings []string, title string) bool {
	for _, h := range headings {
		if strings.Contains(strings.ToLower(h), strings.ToLower(title)) {
			return true
		}
	}
	return false
}

func eachLine(t *testing.T, path string, f func(no int, line string)) {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 4<<20)
	for no := 1; sc.Scan(); no++ {
		f(no, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func quoteAll(s []string) []string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = regexp.QuoteMeta(x)
	}
	return q
}
