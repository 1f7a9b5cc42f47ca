package wasmmodule

import (
	"reflect"
	"slices"
)

// The browser module's size budget, in bytes of brotli (the form every
// current browser takes; the gzip fallback has no budget). It grows with
// the protocols the module decodes:
//
//	Budget(families) = BudgetEmpty + BudgetShared + BudgetCapture + families × BudgetPerFamily
//
// which is 681,000 bytes for four families and 921,000 for ten. A family is
// one codec package (GameSpy v3 and v4 in one package are one family);
// Families counts them in the codec registry. web's TestWasmBudget enforces
// the rule on the committed module, and `benchreport -only size` lists the
// code bytes of each package beside it.
const (
	// BudgetEmpty is an empty Go js/wasm program (one js.FuncOf, built with
	// -trimpath -ldflags="-s -w"): 1,923,771 bytes, 441,353 of brotli at
	// quality 11, window 24, with go1.26.8. Nothing the project writes can
	// make the module smaller than this.
	BudgetEmpty = 441_000
	// EmptyMeasured is that empty program's size as measured (441,353),
	// which BudgetEmpty rounds down. The module of no family is the empty
	// program and the shared code, so its check adds BudgetShared to this.
	EmptyMeasured = 441_353
	// BudgetShared is the code every protocol uses: package codecs, its
	// cursor and JSON writer, and the wasm boundary.
	BudgetShared = 60_000
	// BudgetCapture is reserved for the inspector's capture reader (pcapng).
	BudgetCapture = 20_000
	// BudgetPerFamily is what each protocol family may add.
	BudgetPerFamily = 40_000
)

// A family's own module (scripts/build-wasm.sh builds one per family, with
// -tags family: no capture reader, pcapng writer or Huffman call) links
// that family alone, so the code it shares with the other families in the
// combined module (a cursor helper, a strconv path, a sort) is all its own
// there, and brotli finds fewer repeats: measured with go1.26.8, the
// families add 24,057 (the smallest) to 63,794 bytes (Zandronum's, with its
// Huffman codec) to the module of no family (500,349 bytes, the Index's
// Base), against about 37,500 each in the combined module. Hence:
//
//	FamilyBudget = BudgetEmpty + BudgetShared + BudgetFamilyAlone
//
// which is 571,000; web's TestWasmBudget checks each family's module
// against it, the Base against EmptyMeasured + BudgetShared, and each
// family's share (its module less the Base) against BudgetFamilyAlone.
const BudgetFamilyAlone = 70_000

// FamilyBudget is the most brotli bytes a family's own module may take.
func FamilyBudget() int {
	return BudgetEmpty + BudgetShared + BudgetFamilyAlone
}

// Budget is the most brotli bytes the module may take when it decodes the
// given number of protocol families.
func Budget(families int) int {
	return BudgetEmpty + BudgetShared + BudgetCapture + families*BudgetPerFamily
}

// Families returns the distinct package paths of the given codecs (the
// registry's, codecs.Protocols()), sorted: one per protocol family. A
// codec registered as a pointer counts in the package of its element type.
func Families[C any](codecs []C) []string {
	var pkgs []string
	for _, c := range codecs {
		if p := FamilyOf(c); p != "" && !slices.Contains(pkgs, p) {
			pkgs = append(pkgs, p)
		}
	}
	slices.Sort(pkgs)
	return pkgs
}

// FamilyOf is the package path of c's type (of its element type for a
// pointer): its protocol family. "" for nil or an unnamed type.
func FamilyOf(c any) string {
	t := reflect.TypeOf(c)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return ""
	}
	return t.PkgPath()
}
