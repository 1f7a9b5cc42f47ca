package codecs_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoFmt keeps fmt (and other heavy packages) out of the codec and
// Huffman packages: they compile into the browser module, where every
// package costs download size.
func TestNoFmt(t *testing.T) {
	banned := map[string]string{
		"fmt":           "pulls in reflection-heavy formatting (~300 KB of wasm)",
		"encoding/json": "reflection; use codecs.AppendJSON",
		"log":           "depends on fmt",
		"net/http":      "not needed by a codec",
		"encoding/hex":  "imports fmt; use codecs.AppendHex or strconv",
	}
	for _, root := range []string{".", "../huffman"} {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || d.Name() == "codectest") {
				return filepath.SkipDir // codectest is imported only by tests
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if why, ok := banned[p]; ok {
					t.Errorf("%s imports %s: %s", path, p, why)
				}
			}
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}
