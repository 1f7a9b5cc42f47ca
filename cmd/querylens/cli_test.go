package main

import (
	"bytes"
	"encoding/json"
	"github.com/querylens/querylens/codecs"
	"slices"
	"strings"
	"testing"
)

// runCLI runs the command in memory and returns stdout, stderr and the exit status.
func runCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"no args", nil, exitUsage},
		{"help", []string{"help"}, exitOK},
		{"unknown command", []string{"frobnicate"}, exitUsage},
		{"decode without datagram", []string{"decode"}, exitUsage},
		{"decode bad flag", []string{"decode", "--nope", "00"}, exitUsage},
		{"decode unknown protocol", []string{"decode", "-p", "quake9", "00"}, exitUsage},
		{"huffman no mode", []string{"huffman", "00"}, exitUsage},
		{"query no target", []string{"query", "-p", "zandronum"}, exitUsage},
		{"query bad target", []string{"query", "-p", "zandronum", "nohostport"}, exitUsage},
		{"query bad timeout", []string{"query", "--timeout", "0s", "127.0.0.1:1"}, exitUsage},
		{"query too many retries", []string{"query", "--retries", "11", "127.0.0.1:1"}, exitUsage},
		{"query repeated option", []string{"query", "-p", "zandronum", "-o", "time=1", "-o", "time=2", "127.0.0.1:1"}, exitUsage},
		{"query option without =", []string{"query", "-p", "zandronum", "-o", "time", "127.0.0.1:1"}, exitUsage},
		{"protocols bad flag", []string{"protocols", "--nope"}, exitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, code := runCLI(t, "", tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
		})
	}
}

func TestHuffmanCommand(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
		code int
	}{
		// Vectors from the spec (docs/protocols/huffman.md 1.5).
		{"encode launcher request", []string{"huffman", "encode", "c7000000 01000800 00000000"}, "04b849da95469204\n", 0},
		{"encode 00", []string{"huffman", "encode", "00"}, "0502\n", 0},
		{"encode 00 legacy", []string{"huffman", "encode", "--legacy", "00"}, "ff00\n", 0},
		{"decode raw", []string{"huffman", "decode", "FF FF"}, "ff\n", 0},
		{"decode", []string{"huffman", "decode", "0x04b849da95469204"}, "c70000000100080000000000\n", 0},
		{"bad hex", []string{"huffman", "decode", "0g"}, "", exitFail},
		{"odd hex", []string{"huffman", "decode", "abc"}, "", exitFail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, code := runCLI(t, "", tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d (out %q)", code, tc.code, out)
			}
			if tc.code == 0 && out != tc.want {
				t.Errorf("got %q, want %q", out, tc.want)
			}
			if tc.code == exitFail && !json.Valid([]byte(out)) {
				t.Errorf("error output is not JSON: %q", out)
			}
		})
	}
}

func TestDecodeBadInputIsJSON(t *testing.T) {
	for _, args := range [][]string{
		{"decode", "zz"},
		{"decode", "00"},
		{"decode", "-"},
	} {
		out, _, code := runCLI(t, "", args...)
		if code != exitFail {
			t.Errorf("%v: exit %d, want 1", args, code)
		}
		var v struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil || v.Error.Message == "" {
			t.Errorf("%v: output %q is not an error object (%v)", args, out, err)
		}
	}
}

func TestPrettyJSON(t *testing.T) {
	for _, args := range [][]string{
		{"protocols", "--pretty"},
		{"decode", "--pretty", "-p", "zandronum", "--query", "c7000000 01000800 00000000", "04b849da95469204"},
		{"decode", "--pretty", "zz"}, // an error object is indented too
	} {
		out, _, _ := runCLI(t, "", args...)
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%v: invalid JSON %v\n%s", args, err, out)
		}
		if !strings.HasPrefix(out, "{\n  \"") {
			t.Errorf("%v: not indented by two spaces:\n%s", args, out)
		}
		compact, _, _ := runCLI(t, "", slices.DeleteFunc(slices.Clone(args), func(s string) bool { return s == "--pretty" })...)
		var c bytes.Buffer
		if err := json.Compact(&c, []byte(out)); err != nil || c.String()+"\n" != compact {
			t.Errorf("%v: --pretty changed the content:\n%s\n%s", args, c.String(), compact)
		}
	}
}

func TestProtocolsFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		stderr  string
		pretty  bool
		outJSON bool
	}{
		{"plain", []string{"protocols"}, exitOK, "", false, true},
		{"pretty", []string{"protocols", "--pretty"}, exitOK, "", true, true},
		{"pretty single dash", []string{"protocols", "-pretty"}, exitOK, "", true, true},
		{"help", []string{"protocols", "-h"}, exitUsage, "usage: querylens protocols", false, false},
		{"unknown flag", []string{"protocols", "--nope"}, exitUsage, "flag provided but not defined: -nope", false, false},
		{"argument", []string{"protocols", "zandronum"}, exitUsage, "unexpected argument \"zandronum\"", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, "", tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tc.code, errOut)
			}
			if !strings.Contains(errOut, tc.stderr) {
				t.Errorf("stderr %q lacks %q", errOut, tc.stderr)
			}
			if !tc.outJSON {
				if out != "" {
					t.Errorf("printed %q on bad usage", out)
				}
				return
			}
			var v struct {
				Protocols []struct{ Name string } `json:"protocols"`
			}
			if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Protocols) != len(codecs.Protocols()) || len(v.Protocols) < 8 {
				t.Fatalf("output %q: %v", out, err)
			}
			if got := strings.Contains(out, "\n  "); got != tc.pretty {
				t.Errorf("indented %v, want %v", got, tc.pretty)
			}
		})
	}
}

func TestParseHex(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"c7 00 00 00", "c7000000", true},
		{"C7:0A", "c70a", true},
		{"0xff", "ff", true},
		{"", "", true},
		{"f", "", false},
		{"fg", "", false},
	} {
		b, err := parseHex(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("parseHex(%q) err = %v", tc.in, err)
			continue
		}
		if tc.ok && string(b) != string(mustHex(tc.want)) {
			t.Errorf("parseHex(%q) = %x", tc.in, b)
		}
	}
}

func mustHex(s string) []byte {
	b, err := parseHex(s)
	if err != nil {
		panic(err)
	}
	return b
}
