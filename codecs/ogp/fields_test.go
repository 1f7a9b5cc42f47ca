package ogp

import (
	"reflect"
	"testing"
)

// formTypes is the Go type each form reads into and writes from.
var formTypes = map[form]reflect.Type{
	fStr: reflect.TypeFor[[]byte](), fColors: reflect.TypeFor[Colors](), fU8: reflect.TypeFor[uint32](),
	fU8Int: reflect.TypeFor[int32](), fU16: reflect.TypeFor[uint16](), fU32: reflect.TypeFor[uint32](),
	fS16: reflect.TypeFor[int32](), fS32: reflect.TypeFor[int32](), fVarUint: reflect.TypeFor[uint32](),
	fVarSint: reflect.TypeFor[int32](), fBits: reflect.TypeFor[Bits](), fMD5: reflect.TypeFor[[16]byte](),
	fAddress: reflect.TypeFor[[]byte](), fServerFlags: reflect.TypeFor[Bits](),
}

// checkTable checks one field table: every offset is a field of T of the
// type both its forms use (the whole T for the server info's compound
// forms), fBits carries names, a colour info follows the name it colours,
// and the entries are in the order of their flags, which is wire order.
func checkTable[T any](t *testing.T, name string, table []field) {
	t.Helper()
	typ := reflect.TypeFor[T]()
	byOffset := map[uintptr]reflect.StructField{}
	for i := range typ.NumField() {
		byOffset[typ.Field(i).Offset] = typ.Field(i)
	}
	var last Bits
	for i, f := range table {
		if f.bit == 0 || f.bit&(f.bit-1) != 0 || f.bit < last {
			t.Errorf("%s[%d] %s: flag %#x is not one flag after %#x", name, i, f.name, f.bit, last)
		}
		last = f.bit
		for v, fm := range f.form {
			if fm == absent {
				continue
			}
			if fm == fColors && (i == 0 || table[i-1].bit != f.bit || table[i-1].form[v] != fStr) {
				t.Errorf("%s[%d] %s: a colour info must follow the name of its flag", name, i, f.name)
			}
			if fm == fBits && f.names == nil {
				t.Errorf("%s[%d] %s: flags without names", name, i, f.name)
			}
			want, ok := formTypes[fm]
			if !ok { // compound: the whole struct
				if f.off != whole || typ != reflect.TypeFor[ServerInfo]() {
					t.Errorf("%s[%d] %s: form %d is the whole ServerInfo", name, i, f.name, fm)
				}
				continue
			}
			sf, ok := byOffset[f.off]
			if !ok || sf.Type != want {
				t.Errorf("%s[%d] %s: offset %d is %s %v, form %d writes %v", name, i, f.name, f.off, sf.Name, sf.Type, fm, want)
			}
		}
	}
}

func TestFieldTables(t *testing.T) {
	checkTable[Team](t, "teamFields", teamFields[:])
	checkTable[Player](t, "playerFields", playerFields[:])
	checkTable[AddOn](t, "addOnFields", addOnFields[:])
	checkTable[ServerInfo](t, "infoFields", infoFields[:])
	checkTable[ServerInfo](t, "modFields", modFields[:])
	checkTable[MapInfo](t, "mapFields", mapFields[:])

	// v0.04 sends the server fields in the order of their Requests flags.
	var last Bits
	n := 0
	for _, i := range info004Order {
		f := infoFields[i]
		if f.bit004 <= last || f.form[1] == absent {
			t.Errorf("info004Order: %s (%#x) after %#x", f.name, f.bit004, last)
		}
		last = f.bit004
		n++
	}
	for _, f := range infoFields {
		if (f.bit004 != 0) != (f.form[1] != absent) {
			t.Errorf("infoFields %s: a v0.04 form needs a v0.04 flag", f.name)
		}
		if f.bit004 != 0 && requestNames004.name(bitIndex(f.bit004)) != f.name {
			t.Errorf("infoFields %s: v0.04 Requests names its flag %q", f.name, requestNames004.name(bitIndex(f.bit004)))
		}
		if f.bit004 != 0 {
			n--
		}
	}
	if n != 0 {
		t.Errorf("info004Order misses %d v0.04 fields", -n)
	}
}

func bitIndex(b Bits) int {
	for i := range 64 {
		if b == 1<<i {
			return i
		}
	}
	return -1
}
