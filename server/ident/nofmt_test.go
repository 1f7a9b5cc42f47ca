package ident_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the package pure: the browser module compiles it, where
// every package costs download size, and it must not reach a transport.
// It may import only what is listed here.
func TestImports(t *testing.T) {
	allowed := map[string]bool{
		"errors": true, "strconv": true, "strings": true,
		"github.com/querylens/querylens/codecs":         true, // the registry: names, options, queries
		"github.com/querylens/querylens/relay/wire":     true, // the relay's target syntax, natively (addr.go; not in the browser module: net/netip)
		"github.com/querylens/querylens/internal/ipfmt": true, // IP text without net/netip (target.go)
	}
	banned := map[string]string{
		"fmt":                                    "pulls in reflection-heavy formatting (~300 KB of wasm)",
		"encoding/json":                          "reflection; package server adds the JSON form",
		"net/url":                                "the query's escaping is written here (query.go), a few lines",
		"net/http":                               "a model, not a handler",
		"github.com/querylens/querylens/relay":   "the transport: the browser module cannot take it",
		"github.com/querylens/querylens/history": "imports fmt and encoding/json; package server adds history.Key",
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			if os.IsNotExist(err) {
				t.Skip("sources not available")
			}
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if why, ok := banned[p]; ok {
				t.Errorf("%s imports %s: %s", path, p, why)
			} else if !allowed[p] {
				t.Errorf("%s imports %s, which is not on this test's list: check its cost in the browser module (go run ./bench/cmd/benchreport -only size) and add it", path, p)
			}
		}
	}
}
