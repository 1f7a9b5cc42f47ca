package samp

import "unicode/utf8"

// Charset is the code page a server's text is in. The protocol does not say
// which: a server sends the bytes its host typed, in the code page of the
// Windows the players run (docs/protocols/samp.md "Text"). The zero value
// is Windows-1252, what most servers and GameDig assume.
type Charset uint8

const (
	Windows1252 Charset = iota // Western European; the default
	Windows1251                // Cyrillic: Russian and Ukrainian servers
	UTF8                       // servers whose scripts write UTF-8
)

// charsetNames are the option values, by Charset.
var charsetNames = [...]string{Windows1252: "windows-1252", Windows1251: "windows-1251", UTF8: "utf-8"}

// String is the charset's name as the "charset" option spells it.
func (c Charset) String() string {
	if int(c) < len(charsetNames) {
		return charsetNames[c]
	}
	return "charset?"
}

// ParseCharset reads a "charset" option value.
func ParseCharset(name string) (Charset, bool) {
	for i, n := range charsetNames {
		if n == name {
			return Charset(i), true
		}
	}
	return 0, false
}

// high1252 maps Windows-1252's bytes 0x80–0x9F to code points; above them
// the code page is Latin-1. The five bytes the code page leaves undefined
// (0x81, 0x8D, 0x8F, 0x90, 0x9D) map to the C1 controls of the same
// value, as the WHATWG encoding standard does, so that every byte decodes
// and encodes back to itself.
var high1252 = [32]uint16{
	0x20ac, 0x0081, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008d, 0x017d, 0x008f,
	0x0090, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0x009d, 0x017e, 0x0178,
}

// high1251 maps Windows-1251's bytes 0x80–0xBF; 0xC0–0xFF are А–я
// (U+0410–U+044F) in order. 0x98, undefined, maps to U+0098.
var high1251 = [64]uint16{
	0x0402, 0x0403, 0x201a, 0x0453, 0x201e, 0x2026, 0x2020, 0x2021, 0x20ac, 0x2030, 0x0409, 0x2039, 0x040a, 0x040c, 0x040b, 0x040f,
	0x0452, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x0098, 0x2122, 0x0459, 0x203a, 0x045a, 0x045c, 0x045b, 0x045f,
	0x00a0, 0x040e, 0x045e, 0x0408, 0x00a4, 0x0490, 0x00a6, 0x00a7, 0x0401, 0x00a9, 0x0404, 0x00ab, 0x00ac, 0x00ad, 0x00ae, 0x0407,
	0x00b0, 0x00b1, 0x0406, 0x0456, 0x0491, 0x00b5, 0x00b6, 0x00b7, 0x0451, 0x2116, 0x0454, 0x00bb, 0x0458, 0x0405, 0x0455, 0x0457,
}

// rune1 is the code point of byte b in c (b ≥ 0x80; c not UTF8).
func (c Charset) rune1(b byte) rune {
	if c == Windows1251 {
		if b >= 0xc0 {
			return rune(b) - 0xc0 + 0x410
		}
		return rune(high1251[b-0x80])
	}
	if b < 0xa0 {
		return rune(high1252[b-0x80])
	}
	return rune(b)
}

// Decode converts text in c to UTF-8. Every byte of a code page decodes;
// in UTF8, a byte that is not part of a valid sequence becomes U+FFFD.
// ASCII is returned without a copy beyond the string conversion.
func (c Charset) Decode(b []byte) string {
	ascii := true
	for _, x := range b {
		if x >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return string(b)
	}
	if c == UTF8 {
		if utf8.Valid(b) {
			return string(b)
		}
		out := make([]byte, 0, len(b)+8)
		for len(b) > 0 {
			r, n := utf8.DecodeRune(b)
			out = utf8.AppendRune(out, r) // RuneError for a bad byte
			b = b[n:]
		}
		return string(out)
	}
	out := make([]byte, 0, len(b)*2)
	for _, x := range b {
		if x < utf8.RuneSelf {
			out = append(out, x)
		} else {
			out = utf8.AppendRune(out, c.rune1(x))
		}
	}
	return string(out)
}

// Append appends s, UTF-8, encoded in c to dst (for the demo servers and
// round trips). A code point c cannot hold becomes '?'.
func (c Charset) Append(dst []byte, s string) []byte {
	if c == UTF8 {
		return append(dst, s...)
	}
	for _, r := range s {
		dst = append(dst, c.byte1(r))
	}
	return dst
}

// byte1 is the byte of r in c, or '?'.
func (c Charset) byte1(r rune) byte {
	switch {
	case r < utf8.RuneSelf:
		return byte(r)
	case c == Windows1251 && r >= 0x410 && r <= 0x44f:
		return byte(r - 0x410 + 0xc0)
	case c != Windows1251 && r >= 0xa0 && r <= 0xff:
		return byte(r)
	}
	n := 32
	if c == Windows1251 {
		n = 64
	}
	for i := range n {
		if rune(c.table(i)) == r {
			return byte(0x80 + i)
		}
	}
	return '?'
}

func (c Charset) table(i int) uint16 {
	if c == Windows1251 {
		return high1251[i]
	}
	return high1252[i]
}
