package wasmmodule

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestBudget(t *testing.T) {
	for _, tc := range []struct{ families, want int }{
		{0, 521_000},
		{1, 561_000},
		{4, 681_000},
		{10, 921_000},
	} {
		if got := Budget(tc.families); got != tc.want {
			t.Errorf("Budget(%d) = %d, want %d", tc.families, got, tc.want)
		}
	}
}

func TestFamilyBudget(t *testing.T) {
	if got := FamilyBudget(); got != 571_000 {
		t.Errorf("FamilyBudget() = %d, want 571,000", got)
	}
}

func TestFamilies(t *testing.T) {
	type local struct{}
	for _, tc := range []struct {
		name   string
		codecs []any
		want   []string
	}{
		{"none", nil, nil},
		{"two types of one package are one family", []any{&bytes.Buffer{}, &bytes.Reader{}}, []string{"bytes"}},
		{"pointers and values alike", []any{bytes.Buffer{}, &strings.Builder{}, &bytes.Reader{}}, []string{"bytes", "strings"}},
		{"sorted", []any{&strings.Reader{}, local{}, &bytes.Buffer{}}, []string{"bytes", "github.com/querylens/querylens/internal/wasmmodule", "strings"}},
		{"nil and unnamed types do not count", []any{nil, 3, []byte{}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Families(tc.codecs); !slices.Equal(got, tc.want) {
				t.Errorf("Families = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestIsModuleFile(t *testing.T) {
	for name, want := range map[string]bool{
		"querylens.wasm.br": true, "querylens.wasm.json": true, "querylens-a2s.wasm.gz": true, IndexName: true,
		FamilyName("x/y/zed") + ".br": true,
		"querylens.wasm":              false, "querylens-a2s.wasm": false, "querylens-.wasm.br": false, "querylens-a.b.wasm.br": false,
		"other.wasm.br": false, "ql.js": false,
	} {
		if got := IsModuleFile(name); got != want {
			t.Errorf("IsModuleFile(%q) = %v, want %v", name, got, want)
		}
	}
}
