package wasmmodule

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// IndexName is the file that lists the modules: the combined one and one
// per protocol family, with the families and protocols each holds.
const IndexName = "querylens.modules.json"

// familyPrefix starts every family module's file name.
const familyPrefix = "querylens-"

// FamilyName is the file name of the module holding only the family (codec
// package) pkg: "querylens-" and the package's last element, ".wasm".
func FamilyName(pkg string) string {
	return familyPrefix + path.Base(pkg) + ".wasm"
}

// IsModuleFile reports whether name is one of the files a module is
// committed as (a module's .br, .gz or .json, or the index), by its
// spelling alone: what scripts/build-wasm.sh writes into web/static.
func IsModuleFile(name string) bool {
	if name == IndexName {
		return true
	}
	for _, ext := range []string{".wasm.br", ".wasm.gz", ".wasm.json"} {
		if stem, ok := strings.CutSuffix(name, ext); ok {
			if stem == "querylens" {
				return true
			}
			if fam, ok := strings.CutPrefix(stem, familyPrefix); ok && fam != "" && !strings.ContainsAny(fam, "./\\") {
				return true
			}
		}
	}
	return false
}

// Index is querylens.modules.json: which module holds which protocol
// families, and their sizes, the combined module first.
type Index struct {
	Modules []Entry `json:"modules"`
	// Base is the module of no family (-tags family, codecs alone), built
	// to be measured, never sent: a family module less Base is that
	// family's share (FamilyBudget).
	Base *Base `json:"base,omitempty"`
}

// Base measures the module of no family.
type Base struct {
	SHA256 string `json:"sha256"` // of the uncompressed module, hex
	Size   int    `json:"size"`
	Brotli int    `json:"br"`
	Gzip   int    `json:"gzip"`
}

// Entry is one module of the Index.
type Entry struct {
	Module    string   `json:"module"`    // Name, or FamilyName(family)
	Combined  bool     `json:"combined"`  // every family (and the inspector's readers)
	Families  []string `json:"families"`  // the codec packages linked in
	Protocols []string `json:"protocols"` // the protocols they register
	Size      int      `json:"size"`      // raw
	Brotli    int      `json:"br"`
	Gzip      int      `json:"gzip"`
}

// EntryOf is the index entry of the module m describes.
func EntryOf(m Manifest) Entry {
	return Entry{Module: m.Module, Combined: m.Module == Name, Families: m.Families, Protocols: m.Protocols,
		Size: m.Size, Brotli: m.Brotli.Size, Gzip: m.Gzip.Size}
}

// LoadIndex reads the index at the root of fsys.
func LoadIndex(fsys fs.FS) (Index, error) {
	var x Index
	b, err := fs.ReadFile(fsys, IndexName)
	if errors.Is(err, fs.ErrNotExist) {
		return x, errors.Join(ErrMissing, err)
	}
	if err != nil {
		return x, err
	}
	if err := json.Unmarshal(b, &x); err != nil {
		return x, errors.New(IndexName + ": " + err.Error())
	}
	if len(x.Modules) == 0 || x.Modules[0].Module != Name || !x.Modules[0].Combined {
		return x, errors.New(IndexName + ": the combined module " + Name + " is not listed first")
	}
	return x, nil
}

// LoadAll reads the index and every module it lists, and checks that each
// module's manifest says what the index does.
func LoadAll(fsys fs.FS) (Index, []*Module, error) {
	x, err := LoadIndex(fsys)
	if err != nil {
		return x, nil, err
	}
	var mods []*Module
	seen := map[string]string{} // protocol → module
	for i, e := range x.Modules {
		if i > 0 && (e.Combined || e.Module != FamilyName(onlyOne(e.Families))) {
			return x, nil, errors.New(IndexName + ": " + strconv.Quote(e.Module) + " is not the module of one family")
		}
		m, err := LoadNamed(fsys, e.Module)
		if err != nil {
			return x, nil, err
		}
		if got := EntryOf(m.Manifest); !entriesEqual(got, e) {
			return x, nil, errors.New(IndexName + " does not describe " + e.Module + " as its manifest does (an interrupted or partial build)")
		}
		if i > 0 {
			for _, p := range e.Protocols {
				if other, ok := seen[p]; ok {
					return x, nil, errors.New(IndexName + ": protocol " + p + " is in both " + other + " and " + e.Module)
				}
				seen[p] = e.Module
			}
		}
		mods = append(mods, m)
	}
	return x, mods, nil
}

func onlyOne(s []string) string {
	if len(s) != 1 {
		return ""
	}
	return s[0]
}

func entriesEqual(a, b Entry) bool {
	return a.Module == b.Module && a.Combined == b.Combined && slices.Equal(a.Families, b.Families) &&
		slices.Equal(a.Protocols, b.Protocols) && a.Size == b.Size && a.Brotli == b.Brotli && a.Gzip == b.Gzip
}
