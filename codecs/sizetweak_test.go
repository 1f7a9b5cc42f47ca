package codecs_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSizeTweaksExplained keeps the code-size tweaks of the packages that
// compile into the browser module honest: each //go:noinline must say in
// its doc comment why the function stays out of line ("Out of line:"),
// and each `_ = *p` dereference must say what it is for ("nil check").
// See "Code size" in doc.go.
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
			explained := false
			for _, c := range doc {
				explained = explained || strings.HasPrefix(c, "// Out of line: ")
			}
			if !explained {
				t.Errorf("%s:%d: //go:noinline without an \"// Out of line: why\" line in its doc comment", path, n)
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
