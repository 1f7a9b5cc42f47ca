package main

import (
	"slices"
	"testing"
)

// section is a section's id, its length and its bytes (lengths below 128).
func section(id byte, b ...byte) []byte { return append([]byte{id, byte(len(b))}, b...) }

// module is a hand-made module: one imported function, two defined ones
// (bodies of 2 and 4 bytes, each with its length byte) and a name section
// naming the import and the second body. ends holds where each section
// ends: a module cut there is whole, with fewer sections.
func module() (b []byte, ends []int) {
	b = []byte("\x00asm\x01\x00\x00\x00")
	for _, s := range [][]byte{
		section(1, 1, 0x60, 0, 0),                          // types: () -> ()
		section(2, 1, 1, 'm', 1, 'f', 0, 0),                // imports: m.f, a function of type 0
		section(3, 2, 0, 0),                                // functions: two of type 0
		section(10, 2, 2, 0, 0x0b, 4, 0, 0x01, 0x01, 0x0b), // code: "end" and "nop nop end"
		section(0, 4, 'n', 'a', 'm', 'e', 1, 10, 2, 0, 2, 'i', 'm', 2, 3, 'b', 'i', 'g'), // names of functions 0 and 2
	} {
		b = append(b, s...)
		ends = append(ends, len(b))
	}
	return b, ends
}

func TestFunctions(t *testing.T) {
	m, _ := module()
	fs, err := functions(m)
	if err != nil {
		t.Fatal(err)
	}
	want := []function{{"", 3}, {"big", 5}}
	if !slices.Equal(fs, want) {
		t.Errorf("functions = %v, want %v", fs, want)
	}
}

func TestFunctionsMalformed(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"not wasm", []byte("\x7fELF\x02\x01\x01\x00")},
		{"version 2", []byte("\x00asm\x02\x00\x00\x00")},
	} {
		if _, err := functions(tc.b); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	// A module cut inside a section is an error, never a panic.
	m, ends := module()
	for i := 9; i < len(m); i++ {
		if _, err := functions(m[:i]); err == nil && !slices.Contains(ends, i) {
			t.Errorf("cut at %d: no error", i)
		}
	}
}
