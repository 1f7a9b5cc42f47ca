package ogp

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// read runs one decoder method over b and returns the value, the bytes it
// consumed and the error.
func read[T any](v Version, b []byte, f func(*decoder) T) (T, int, error) {
	d := newDecoder(b, 0, nil)
	d.v = v
	x := f(&d)
	return x, d.r.Offset(), d.err()
}

func TestVarUint(t *testing.T) {
	tests := []struct {
		name string
		v    Version
		x    uint32
		hex  string
	}{
		{"1.0x zero", V1, 0, "00"},
		{"1.0x largest one-byte", V1, 0xfd, "fd"},
		{"1.0x smallest three-byte", V1, 0xfe, "fefe00"},
		{"1.0x 0xff", V1, 0xff, "feff00"},
		{"1.0x largest three-byte", V1, 0xffff, "feffff"},
		{"1.0x smallest five-byte", V1, 0x10000, "ff00000100"},
		{"1.0x largest", V1, math.MaxUint32, "ffffffffff"},
		{"0.04 zero", V004, 0, "00"},
		{"0.04 largest one-byte", V004, 0xfe, "fe"},
		{"0.04 smallest three-byte", V004, 0xff, "ffff00"},
		{"0.04 largest three-byte", V004, 0xfffe, "fffeff"},
		{"0.04 smallest seven-byte", V004, 0xffff, "ffffffffff0000"},
		{"0.04 0x10000", V004, 0x10000, "ffffff00000100"},
		{"0.04 largest", V004, math.MaxUint32, "ffffffffffffff"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := mustHex(t, tc.hex)
			if got := appendVarUint(nil, tc.v, tc.x); !bytes.Equal(got, want) {
				t.Errorf("append(%#x) = %x, want %x", tc.x, got, want)
			}
			x, n, err := read(tc.v, append(want, 0xaa), (*decoder).varuintTest)
			if err != nil || x != tc.x || n != len(want) {
				t.Errorf("read %x = %#x, %d bytes, %v", want, x, n, err)
			}
			for i := 0; i < len(want); i++ {
				if _, _, err := read(tc.v, want[:i], (*decoder).varuintTest); !errors.Is(err, codecs.ErrShort) {
					t.Errorf("read %x = %v, want ErrShort", want[:i], err)
				}
			}
		})
	}
}

// Longer forms than needed decode to the same value.
func TestVarUintLongForms(t *testing.T) {
	tests := []struct {
		name string
		v    Version
		hex  string
		x    uint32
	}{
		{"1.0x 5 in three bytes", V1, "fe0500", 5},
		{"1.0x 5 in five bytes", V1, "ff05000000", 5},
		{"0.04 5 in three bytes", V004, "ff0500", 5},
		{"0.04 5 in seven bytes", V004, "ffffff05000000", 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := mustHex(t, tc.hex)
			if x, n, err := read(tc.v, b, (*decoder).varuintTest); err != nil || x != tc.x || n != len(b) {
				t.Errorf("read = %d, %d bytes, %v", x, n, err)
			}
		})
	}
}

func TestVarSint(t *testing.T) {
	tests := []struct {
		name string
		x    int32
		hex  string
	}{
		{"zero", 0, "00"},
		{"largest one-byte", 127, "7f"},
		{"smallest one-byte", -126, "82"},
		{"-127 is a marker", -127, "8081ff"},
		{"-128 is a marker", -128, "8080ff"},
		{"128", 128, "808000"},
		{"largest three-byte", math.MaxInt16, "80ff7f"},
		{"smallest three-byte", math.MinInt16, "800080"},
		{"smallest positive five-byte", math.MaxInt16 + 1, "8100800000"},
		{"largest negative five-byte", math.MinInt16 - 1, "81ff7fffff"},
		{"largest", math.MaxInt32, "81ffffff7f"},
		{"smallest", math.MinInt32, "8100000080"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := mustHex(t, tc.hex)
			if got := appendVarSint(nil, tc.x); !bytes.Equal(got, want) {
				t.Errorf("append(%d) = %x, want %x", tc.x, got, want)
			}
			x, n, err := read(V1, append(want, 0xaa), (*decoder).varsintTest)
			if err != nil || x != tc.x || n != len(want) {
				t.Errorf("read %x = %d, %d bytes, %v", want, x, n, err)
			}
			for i := 0; i < len(want); i++ {
				if _, _, err := read(V1, want[:i], (*decoder).varsintTest); !errors.Is(err, codecs.ErrShort) {
					t.Errorf("read %x = %v, want ErrShort", want[:i], err)
				}
			}
		})
	}
}

// Every value near a boundary of either form survives append then read.
func TestVarIntRoundTrip(t *testing.T) {
	var us []uint32
	for _, b := range []uint32{0, 0xfd, 0xfe, 0xff, 0xfffe, 0xffff, 0x10000, math.MaxUint32} {
		for d := uint32(0); d < 3; d++ {
			us = append(us, b+d, b-d)
		}
	}
	for _, v := range []Version{V1, V004} {
		for _, x := range us {
			b := appendVarUint(nil, v, x)
			if got, n, err := read(v, b, (*decoder).varuintTest); err != nil || got != x || n != len(b) {
				t.Errorf("%v %d: %x read as %d (%d bytes, %v)", v, x, b, got, n, err)
			}
		}
	}
	for _, base := range []int32{0, 127, -126, math.MaxInt16, math.MinInt16, math.MaxInt32, math.MinInt32} {
		for d := int32(-3); d <= 3; d++ {
			x := base + d // wraps at the int32 ends, which is fine: still int32 values
			b := appendVarSint(nil, x)
			if got, n, err := read(V1, b, (*decoder).varsintTest); err != nil || got != x || n != len(b) {
				t.Errorf("%d: %x read as %d (%d bytes, %v)", x, b, got, n, err)
			}
		}
	}
}

func (d *decoder) varuintTest() uint32 { return d.varuint("x") }
func (d *decoder) varsintTest() int32  { return d.varsint("x") }
func (d *decoder) bitsTest() Bits      { return d.bits("x", headNames1) }

func TestBits(t *testing.T) {
	tests := []struct {
		name string
		bits []Bits
		hex  string
	}{
		{"empty", nil, "00"},
		{"0.0", []Bits{Bit(0, 0)}, "01"},
		{"0.0 and 0.6", []Bits{Bit(0, 0), Bit(0, 6)}, "41"},
		{"0.0 and 1.0", []Bits{Bit(0, 0), Bit(1, 0)}, "8101"},
		{"1.2", []Bits{Bit(1, 2)}, "8004"},
		{"3.3", []Bits{Bit(3, 3)}, "80808008"},
		{"8.6, the last that fits", []Bits{Bit(8, 6)}, "808080808080808040"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b Bits
			for _, x := range tc.bits {
				b |= x
			}
			want := mustHex(t, tc.hex)
			if got := appendBits(nil, b); !bytes.Equal(got, want) {
				t.Errorf("append = %x, want %x", got, want)
			}
			got, n, err := read(V1, want, (*decoder).bitsTest)
			if err != nil || got != b || n != len(want) {
				t.Errorf("read = %#x, %d bytes, %v", got, n, err)
			}
		})
	}
}

// Bytes not sent read as zero; bytes sent beyond the ninth are read and
// their flags dropped; a continuation bit at the end is a short buffer.
func TestBitsLengths(t *testing.T) {
	t.Run("missing bytes are zero", func(t *testing.T) {
		b, _, _ := read(V1, []byte{0x01}, (*decoder).bitsTest)
		if !b.Has(Bit(0, 0)) || b.Has(Bit(3, 3)) || b.Has(Bit(8, 6)) {
			t.Errorf("bits = %#x", b)
		}
	})
	t.Run("trailing zero bytes", func(t *testing.T) {
		b, n, err := read(V1, mustHex(t, "81808000"), (*decoder).bitsTest)
		if err != nil || n != 4 || b != Bit(0, 0) {
			t.Errorf("= %#x, %d, %v", b, n, err)
		}
		if got := appendBits(nil, b); !bytes.Equal(got, []byte{1}) {
			t.Errorf("re-encoded as %x", got)
		}
	})
	t.Run("twenty bytes", func(t *testing.T) {
		in := append(bytes.Repeat([]byte{0x81}, 19), 0x01)
		d := newDecoder(in, 0, nil)
		b := d.bits("x", headNames1)
		if d.err() != nil || d.r.Offset() != 20 || !d.unknown || b != Bit(0, 0)|Bit(1, 0)|Bit(2, 0)|Bit(3, 0)|Bit(4, 0)|Bit(5, 0)|Bit(6, 0)|Bit(7, 0)|Bit(8, 0) {
			t.Errorf("= %#x, offset %d, unknown %v, %v", b, d.r.Offset(), d.unknown, d.err())
		}
	})
	t.Run("zero bytes past the ninth are not unknown flags", func(t *testing.T) {
		in := append(bytes.Repeat([]byte{0x80}, 15), 0x00)
		d := newDecoder(in, 0, nil)
		d.bits("x", headNames1)
		if d.err() != nil || d.unknown {
			t.Errorf("unknown %v, %v", d.unknown, d.err())
		}
	})
	t.Run("continuation at the end", func(t *testing.T) {
		_, _, err := read(V1, mustHex(t, "8181"), (*decoder).bitsTest)
		var e *codecs.Error
		if !errors.As(err, &e) || !errors.Is(err, codecs.ErrShort) || e.Offset != 0 {
			t.Errorf("err = %v", err)
		}
	})
}

func TestDetect(t *testing.T) {
	tests := []struct {
		name string
		hex  string
		v    Version
		ok   bool
	}{
		{"1.0x challenge request", "ffffffff4f475000030100", V1, true},
		{"1.0x answer", "ffffffff4f47500007ff03efbe371303", V1, true},
		{"v0.04 query", "ffffffff4f47500000028781830303848204", V004, true},
		{"v0.04 answer whose header is also a 1.0x header", "ffffffff4f475000 0301000000 02 0000 00", V004, true},
		{"both forms decode: the exact 1.0x header wins", "ffffffff4f475000 0301000000 02 0000 01 00", V1, true},
		{"an exact 1.0x header that fails beats a v0.04 opaque body", "ffffffff4f475000 0301000000 03 02", V1, true},
		{"v0.04 opaque body beats a padded 1.0x header that fails", "ffffffff4f475000 0501000000 03 02", V004, true},
		{"1.0x with padding", "ffffffff4f47500005010000aa", V1, true},
		{"1.0x type unknown", "ffffffff4f475000030900", V1, false},
		{"HeadSize past the end", "ffffffff4f475000090100", V1, false},
		{"v0.04 type unknown", "ffffffff4f4750000009", V004, false},
		{"no magic", "fffffffe4f475000030100", V1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, ok := detect(mustHex(t, strings.ReplaceAll(tc.hex, " ", "")))
			if v != tc.v || ok != tc.ok {
				t.Errorf("detect = %v, %v; want %v, %v", v, ok, tc.v, tc.ok)
			}
		})
	}
}

func TestValidColors(t *testing.T) {
	tests := []struct {
		hex string
		ok  bool
	}{
		{"", true},
		{"0004", true},
		{"00", false},
		{"00921f", false},
		{"00921ff8", true},
		{"fe01000a", true},
		{"ff01000000", false},
		{"ff010000000a", true},
	}
	for _, tc := range tests {
		if got := validColors(mustHex(t, tc.hex)); got != tc.ok {
			t.Errorf("validColors(%s) = %v", tc.hex, got)
		}
	}
}
