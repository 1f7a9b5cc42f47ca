// Package wasmmodule describes the committed, precompressed browser module:
// the manifest internal/cmd/precompress writes next to querylens.wasm.br and
// querylens.wasm.gz in web/static, and the checks that the files and the
// manifest agree. web serves what Load returns; the precompress command and
// the tests use the same types, so the three cannot drift apart. Budget
// (budget.go) is the size the brotli form may reach.
package wasmmodule

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"strconv"

	"github.com/andybalholm/brotli"
)

// Name is the combined module's file name as pages link it: every
// protocol family, the inspector's capture reader and pcapng writer.
const Name = "querylens.wasm"

// ManifestName is the combined module's manifest's file name.
const ManifestName = Name + ".json"

// Manifest is a module's manifest, querylens.wasm.json for the combined
// module and querylens-<family>.wasm.json for a family's.
type Manifest struct {
	Module string `json:"module"` // Name, or FamilyName of its family
	SHA256 string `json:"sha256"` // of the uncompressed module, hex
	Size   int    `json:"size"`   // of the uncompressed module
	Go     string `json:"go"`     // the toolchain that compiled it ("go1.26.8")
	Build  string `json:"build"`  // the build command (scripts/build-wasm.sh)
	// Families are the codec packages linked in (import paths, sorted);
	// Protocols the protocols they register.
	Families  []string `json:"families,omitempty"`
	Protocols []string `json:"protocols,omitempty"`
	Brotli    Coded    `json:"br"`
	Gzip      Coded    `json:"gzip"`
}

// Coded is one compressed form of the module.
type Coded struct {
	File    string `json:"file"` // "querylens.wasm.br"
	Size    int    `json:"size"`
	SHA256  string `json:"sha256"` // of the compressed file, hex
	Encoder string `json:"encoder"`
}

// Module is the manifest with the two compressed forms it describes.
type Module struct {
	Manifest
	Brotli, Gzip []byte
}

// Sum is the hex SHA-256 of b, as the manifest records it.
func Sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// ErrMissing is returned (wrapped) by Load when fsys has no manifest: the
// module was never built into this tree or binary.
var ErrMissing = errors.New("the browser module is missing")

// Load reads the combined module: LoadNamed(fsys, Name).
func Load(fsys fs.FS) (*Module, error) {
	return LoadNamed(fsys, Name)
}

// LoadNamed reads the manifest of the module called name
// (name + ".json") and both compressed forms from the root of fsys, and
// checks that each file has the size and SHA-256 the manifest records. It
// does not decompress (Gunzip and Unbrotli do).
func LoadNamed(fsys fs.FS, name string) (*Module, error) {
	manifest := name + ".json"
	b, err := fs.ReadFile(fsys, manifest)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errors.Join(ErrMissing, err)
	}
	if err != nil {
		return nil, err
	}
	m := &Module{}
	if err := json.Unmarshal(b, &m.Manifest); err != nil {
		return nil, errors.New(manifest + ": " + err.Error())
	}
	if m.Module != name || len(m.SHA256) != 64 || m.Size <= 0 {
		return nil, errors.New(manifest + ": not a manifest of " + name + " (module, sha256 or size missing)")
	}
	for _, f := range []struct {
		c   Coded
		dst *[]byte
		ext string
	}{{m.Manifest.Brotli, &m.Brotli, ".br"}, {m.Manifest.Gzip, &m.Gzip, ".gz"}} {
		if f.c.File != name+f.ext {
			return nil, errors.New(manifest + ": the " + f.ext + " form is named " + strconv.Quote(f.c.File) + ", want " + strconv.Quote(name+f.ext))
		}
		data, err := fs.ReadFile(fsys, f.c.File)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errors.Join(ErrMissing, err)
		}
		if err != nil {
			return nil, err
		}
		if len(data) != f.c.Size || Sum(data) != f.c.SHA256 {
			return nil, errors.New(f.c.File + " is " + strconv.Itoa(len(data)) + " bytes with sha256 " + Sum(data)[:12] +
				", but " + manifest + " records " + strconv.Itoa(f.c.Size) + " bytes with sha256 " + short(f.c.SHA256) +
				" (an interrupted or partial build)")
		}
		*f.dst = data
	}
	return m, nil
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// Gunzip decompresses the gzip form and checks it against the manifest.
func (m *Module) Gunzip() ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(m.Gzip))
	if err != nil {
		return nil, errors.New(m.Manifest.Gzip.File + ": " + err.Error())
	}
	return m.check(m.Manifest.Gzip.File, zr)
}

// Unbrotli decompresses the brotli form and checks it against the manifest.
func (m *Module) Unbrotli() ([]byte, error) {
	return m.check(m.Manifest.Brotli.File, brotli.NewReader(bytes.NewReader(m.Brotli)))
}

func (m *Module) check(name string, r io.Reader) ([]byte, error) {
	// One byte more than the manifest's size, so a longer stream is caught.
	b, err := io.ReadAll(io.LimitReader(r, int64(m.Size)+1))
	if err != nil {
		return nil, errors.New(name + ": " + err.Error())
	}
	if len(b) != m.Size || Sum(b) != m.SHA256 {
		return nil, errors.New(name + " decompresses to " + strconv.Itoa(len(b)) + " bytes with sha256 " + Sum(b)[:12] +
			", not the module " + m.Module + ".json describes (" + strconv.Itoa(m.Size) + " bytes, " + m.SHA256[:12] + ")")
	}
	return b, nil
}
