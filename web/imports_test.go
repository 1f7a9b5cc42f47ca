package web_test

import (
	"go/build"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoPageImportsPage: the command and the pages build on package
// server and the packages below it, never on a page: what two pages or the
// command share belongs below the pages.
func TestNoPageImportsPage(t *testing.T) {
	const pages = "github.com/querylens/querylens/web/pages/"
	dirs := []string{filepath.Join("..", "cmd", "querylens")}
	entries, err := os.ReadDir(filepath.Join("pages"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join("pages", e.Name()))
		}
	}
	for _, dir := range dirs {
		p, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, pages) {
				t.Errorf("%s imports the page package %s", dir, imp)
			}
		}
	}
}
