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
	// BudgetShared is the code every protocol uses: package codecs, its
	// cursor and JSON writer, and the wasm boundary.
	BudgetShared = 60_000
	// BudgetCapture is reserved for the inspector's capture reader (pcapng).
	BudgetCapture = 20_000
	// BudgetPerFamily is what each protocol family may add.
	BudgetPerFamily = 40_000
)

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
		t := reflect.TypeOf(c)
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t == nil {
			continue
		}
		if p := t.PkgPath(); p != "" && !slices.Contains(pkgs, p) {
			pkgs = append(pkgs, p)
		}
	}
	slices.Sort(pkgs)
	return pkgs
}
