package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/querylens/querylens/internal/wasmmodule"
)

// TestIndex: the index lists the modules named, the combined one first,
// with what their manifests say and the module of no family measured;
// -check fails when a module's manifest changes or a module of no listed
// family is left in the directory, which writing the index removes.
func TestIndex(t *testing.T) {
	dir, src := t.TempDir(), t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(src, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	all := write("all.wasm", fakeModule("all"))
	fam := write("fam.wasm", fakeModule("fam"))
	base := write("base.wasm", fakeModule("base"))
	if err := precompress(all, dir, wasmmodule.Name, "", []string{"x/a", "x/b"}, []string{"pa", "pb"}); err != nil {
		t.Fatal(err)
	}
	famName := wasmmodule.FamilyName("x/a")
	if err := precompress(fam, dir, famName, "", []string{"x/a"}, []string{"pa"}); err != nil {
		t.Fatal(err)
	}
	if err := writeIndex(dir, []string{famName, wasmmodule.Name}, base, false); err == nil {
		t.Error("an index without the combined module first was written")
	}
	if err := writeIndex(dir, []string{wasmmodule.Name, famName}, base, false); err != nil {
		t.Fatal(err)
	}
	x, mods, err := wasmmodule.LoadAll(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) != 2 || !x.Modules[0].Combined || x.Modules[1].Module != famName || !slices.Equal(x.Modules[1].Protocols, []string{"pa"}) ||
		x.Base == nil || x.Base.Size != len(fakeModule("base")) || x.Base.Brotli == 0 {
		t.Errorf("index %+v", x)
	}
	if err := writeIndex(dir, []string{wasmmodule.Name, famName}, base, true); err != nil {
		t.Errorf("check of a fresh index: %v", err)
	}

	// A module of a family no longer registered: refused, then removed.
	stale := filepath.Join(dir, wasmmodule.FamilyName("x/gone")+".br")
	os.WriteFile(stale, []byte("old"), 0o644)
	if err := writeIndex(dir, []string{wasmmodule.Name, famName}, base, true); err == nil || !strings.Contains(err.Error(), "no registered family") {
		t.Errorf("check with a stale module: %v", err)
	}
	if err := writeIndex(dir, []string{wasmmodule.Name, famName}, base, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("the stale module was kept")
	}

	// Another module of no family, or a family module rebuilt: stale.
	if err := writeIndex(dir, []string{wasmmodule.Name, famName}, write("base2.wasm", fakeModule("base2")), true); err == nil {
		t.Error("check with another module of no family passed")
	}
	if err := precompress(write("fam2.wasm", fakeModule("fam2")), dir, famName, "", []string{"x/a"}, []string{"pa"}); err != nil {
		t.Fatal(err)
	}
	if err := writeIndex(dir, []string{wasmmodule.Name, famName}, base, true); err == nil {
		t.Error("check after a family module changed passed")
	}
}

func TestListFamilies(t *testing.T) {
	var b strings.Builder
	if err := listFamilies(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) < 2 {
		t.Fatalf("families: %q", lines)
	}
	for _, l := range lines {
		pkg, protocols, ok := strings.Cut(l, "\t")
		if !ok || !strings.HasPrefix(pkg, "github.com/querylens/querylens/codecs/") || protocols == "" {
			t.Errorf("line %q", l)
		}
	}
}
