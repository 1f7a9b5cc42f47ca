package wire

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"testing"
)

// TestDeps keeps the package a leaf the browser module can import: the
// standard library alone, without fmt (its size), for js/wasm too.
func TestDeps(t *testing.T) {
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to list the imports with")
	}
	for _, env := range [][]string{nil, {"GOOS=js", "GOARCH=wasm"}} {
		cmd := exec.Command(gotool, "list", "-deps", "-json=ImportPath,Standard", ".")
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %v: %v", env, err)
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		for {
			var p struct {
				ImportPath string
				Standard   bool
			}
			if err := dec.Decode(&p); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			switch {
			case p.ImportPath == "github.com/querylens/querylens/relay/wire":
			case !p.Standard:
				t.Errorf("%v: imports %s, outside the standard library", env, p.ImportPath)
			case p.ImportPath == "fmt":
				t.Errorf("%v: imports fmt", env)
			}
		}
	}
}
