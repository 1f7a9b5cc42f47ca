package codecs_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sizeRef is the reference every "Out of line:" paragraph names; the
// tag sizeTag is the whole paragraph when the package note's reason is the
// function's.
const (
	sizeRef = `"Code size" in codecs/doc.go`
	sizeTag = "// Out of line: see " + sizeRef + "."
)

// TestSizeTweaksExplained keeps the code-size tweaks of the packages that
// compile into the browser module honest: each //go:noinline must carry
// sizeTag in its doc comment, or an "Out of line:" paragraph with a reason
// of its own that names sizeRef (not the package note's reason again), and
// each `_ = *p` dereference must say what it is for ("nil check"). See
// "Code size" in doc.go.
func TestSizeTweaksExplained(t *testing.T) {
	for _, root := range []string{".", "../huffman", "../wasm"} {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") {
				return nil
			}
			checkSizeTweaks(t, path)
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}

func checkSizeTweaks(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var doc []string // the comment lines just above the current line
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "//go:noinline":
			switch p := outOfLine(doc); {
			case !strings.Contains(p, sizeRef):
				t.Errorf("%s:%d: //go:noinline without %q (or an \"Out of line:\" paragraph naming %s) in its doc comment", path, n, sizeTag, sizeRef)
			case strings.Contains(p, "used from many places"):
				t.Errorf("%s:%d: the \"Out of line:\" paragraph repeats the package note; write %q", path, n, sizeTag)
			}
		case strings.HasPrefix(line, "_ = *") || strings.HasPrefix(line, "_, _ = *") || strings.HasPrefix(line, "_, _, _ = *"):
			if !strings.Contains(line, "// ") || !strings.Contains(line, "nil check") {
				t.Errorf("%s:%d: %q without a comment saying which nil checks it saves", path, n, line)
			}
		}
		if strings.HasPrefix(line, "//") {
			doc = append(doc, line)
		} else {
			doc = doc[:0]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// outOfLine returns the "Out of line:" paragraph of a doc comment, its
// lines joined by single spaces, or "" when there is none.
func outOfLine(doc []string) string {
	var p []string
	for _, c := range doc {
		text := strings.TrimSpace(strings.TrimPrefix(c, "//"))
		switch {
		case strings.HasPrefix(c, "// Out of line:"):
			p = append(p[:0], text)
		case len(p) > 0 && text == "":
			return strings.Join(p, " ")
		case len(p) > 0:
			p = append(p, text)
		}
	}
	return strings.Join(p, " ")
}
