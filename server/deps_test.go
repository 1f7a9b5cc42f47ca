package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestModelDeps keeps the model below the transport: the server model and
// the kept master lists speak the relay's vocabulary (relay/wire) and its
// shared state (relay/shared), never the relay's server or its WebSocket
// library, so that they can go where the transport cannot (the browser
// module) without a JavaScript copy of them.
func TestModelDeps(t *testing.T) {
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to list the imports with")
	}
	banned := map[string]string{
		"github.com/coder/websocket":           "the WebSocket transport is the relay's and the clients'",
		"github.com/querylens/querylens/relay": "the relay's server; the model needs only relay/wire",
	}
	for _, pkg := range []string{
		"github.com/querylens/querylens/server",
	} {
		t.Run(pkg[strings.LastIndexByte(pkg, '/')+1:], func(t *testing.T) {
			imports := listImports(t, gotool, pkg)
			for bad, why := range banned {
				if chain := importChain(imports, pkg, bad); chain != nil {
					t.Errorf("%s imports %s (%s): %s", pkg, bad, why, strings.Join(chain, " -> "))
				}
			}
		})
	}
}

// listImports is each package's direct imports, for pkg and everything it
// depends on.
func listImports(t *testing.T, gotool, pkg string) map[string][]string {
	t.Helper()
	out, err := exec.Command(gotool, "list", "-deps", "-json=ImportPath,Imports", pkg).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list %s: %v\n%s", pkg, err, ee.Stderr)
		}
		t.Fatalf("go list %s: %v", pkg, err)
	}
	imports := make(map[string][]string)
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		imports[p.ImportPath] = p.Imports
	}
	return imports
}

// importChain is the shortest chain of imports from pkg to target, or nil.
func importChain(imports map[string][]string, pkg, target string) []string {
	prev := map[string]string{pkg: ""}
	for queue := []string{pkg}; len(queue) > 0; queue = queue[1:] {
		p := queue[0]
		if p == target {
			var chain []string
			for ; p != ""; p = prev[p] {
				chain = append([]string{p}, chain...)
			}
			return chain
		}
		for _, q := range imports[p] {
			if _, seen := prev[q]; !seen {
				prev[q] = p
				queue = append(queue, q)
			}
		}
	}
	return nil
}
