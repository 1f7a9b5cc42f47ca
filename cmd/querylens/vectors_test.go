package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// vector is the part of a spec vector the CLI test reads.
type vector struct {
	Name        string `json:"name"`
	RequestHex  string `json:"request_hex"`
	ResponseHex string `json:"response_hex"`
	Exchanges   []struct {
		RequestHex  string `json:"request_hex"`
		ResponseHex string `json:"response_hex"`
	} `json:"exchanges"`
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

func slug(s string) string {
	s = strings.Trim(slugRE.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}

// TestVectorsThroughCLI runs every public vector through `querylens decode`
// the way a user would: without -p (the protocol is detected), the reply
// with --query where the vector has the query. The JSON must be valid, say
// the right protocol and kind, and match the golden file.
func TestVectorsThroughCLI(t *testing.T) {
	// Copies of the spec's vectors (testdata/spec/SOURCES.md).
	files, _ := filepath.Glob("testdata/spec/*.json")
	if len(files) < 4 {
		t.Fatalf("found %d vector files under testdata/spec, want the four protocols'", len(files))
	}
	for _, f := range files {
		proto := strings.TrimSuffix(filepath.Base(f), ".json")
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var vs []vector
		if err := json.Unmarshal(raw, &vs); err != nil {
			t.Fatal(err)
		}
		for i, v := range vs {
			type run struct {
				name string
				args []string
				kind []string // acceptable kinds
			}
			var runs []run
			if v.RequestHex != "" {
				runs = append(runs, run{"request", []string{"decode", v.RequestHex}, []string{"query", "master-query"}})
			}
			if v.ResponseHex != "" {
				args := []string{"decode", v.ResponseHex}
				if v.RequestHex != "" {
					args = []string{"decode", "--query", v.RequestHex, v.ResponseHex}
				}
				runs = append(runs, run{"response", args, []string{"response", "challenge", "denied", "master-list", "master-denied"}})
			}
			if len(v.Exchanges) > 0 {
				args := []string{"decode", "-p", proto}
				for _, x := range v.Exchanges {
					args = append(args, x.ResponseHex)
				}
				runs = append(runs, run{"exchanges", args, []string{"response"}})
			}
			for _, r := range runs {
				name := proto + "/" + strconv.Itoa(i) + "-" + slug(v.Name) + "." + r.name
				t.Run(name, func(t *testing.T) {
					out, errOut, code := runCLI(t, "", r.args...)
					if code != 0 {
						t.Fatalf("exit %d\n%s%s", code, out, errOut)
					}
					var got struct {
						Protocol string `json:"protocol"`
						Kind     string `json:"kind"`
					}
					if err := json.Unmarshal([]byte(out), &got); err != nil {
						t.Fatalf("invalid JSON: %v\n%s", err, out)
					}
					if got.Protocol != proto {
						t.Errorf("protocol %q, want %q", got.Protocol, proto)
					}
					ok := false
					for _, k := range r.kind {
						ok = ok || got.Kind == k
					}
					if !ok {
						t.Errorf("kind %q, want one of %v", got.Kind, r.kind)
					}
					golden := filepath.Join("testdata", "vectors", name+".json")
					var indented bytes.Buffer
					if err := json.Indent(&indented, []byte(strings.TrimSpace(out)), "", "  "); err != nil {
						t.Fatal(err)
					}
					pretty := indented.String() + "\n"
					if *update {
						os.MkdirAll(filepath.Dir(golden), 0o755)
						if err := os.WriteFile(golden, []byte(pretty), 0o644); err != nil {
							t.Fatal(err)
						}
						return
					}
					want, err := os.ReadFile(golden)
					if err != nil {
						t.Fatalf("%v (run go test ./cmd/querylens -update)", err)
					}
					if string(want) != pretty {
						t.Errorf("output differs from %s (run with -update if the change is intended)\ngot:\n%s", golden, pretty)
					}
				})
			}
		}
	}
}
