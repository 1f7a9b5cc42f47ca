package wasmmodule

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
)

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func br(b []byte) []byte {
	var buf bytes.Buffer
	w := brotli.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// TestDecompressChecks: a compressed form that is not the module the
// manifest describes is an error naming the file, never served.
func TestDecompressChecks(t *testing.T) {
	mod := []byte("\x00asm\x01\x00\x00\x00module")
	for _, tc := range []struct {
		name    string
		gz, br  []byte
		wantErr string // "" for none
	}{
		{"both right", gz(mod), br(mod), ""},
		{"other content", gz([]byte("\x00asm\x01\x00\x00\x00moduLe")), br([]byte("\x00asm\x01\x00\x00\x00moduLe")), "not the module"},
		{"longer", gz(append(mod, 'x')), br(append(mod, 'x')), "not the module"},
		{"shorter", gz(mod[:5]), br(mod[:5]), "decompresses to 5 bytes"},
		{"not compressed", mod, mod, "querylens.wasm."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &Module{Manifest: Manifest{Module: Name, SHA256: Sum(mod), Size: len(mod),
				Brotli: Coded{File: Name + ".br"}, Gzip: Coded{File: Name + ".gz"}}, Brotli: tc.br, Gzip: tc.gz}
			for form, f := range map[string]func() ([]byte, error){"gzip": m.Gunzip, "br": m.Unbrotli} {
				b, err := f()
				if tc.wantErr == "" {
					if err != nil || !bytes.Equal(b, mod) {
						t.Errorf("%s: %v", form, err)
					}
					continue
				}
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("%s: err %v, want one saying %q", form, err, tc.wantErr)
				}
			}
		})
	}
}
