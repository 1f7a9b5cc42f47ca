package codecs

import "unicode/utf8"

// Latin1 converts ISO 8859-1 bytes to a UTF-8 string. Every byte maps to the
// code point of the same value, so the conversion cannot fail. ASCII input
// is returned without the extra pass.
func Latin1(b []byte) string {
	n := 0
	for _, c := range b {
		if c >= utf8.RuneSelf {
			n++
		}
	}
	if n == 0 {
		return string(b)
	}
	out := make([]byte, 0, len(b)+n)
	for _, c := range b {
		if c < utf8.RuneSelf {
			out = append(out, c)
		} else {
			out = utf8.AppendRune(out, rune(c))
		}
	}
	return string(out)
}

// ToLatin1 converts a UTF-8 string to ISO 8859-1 bytes for builders; code
// points above U+00FF become '?'.
func ToLatin1(dst []byte, s string) []byte {
	for _, r := range s {
		if r > 0xff {
			r = '?'
		}
		dst = append(dst, byte(r))
	}
	return dst
}

// EqualFoldASCII is strings.EqualFold for ASCII case alone: keys and
// values of the protocols ("GamePassword", "si_usePass", host names),
// without the Unicode tables strings.EqualFold brings into the browser
// module.
func EqualFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// Atoi parses a decimal int of at most 9 digits with an optional '-', as
// the protocols write counts, scores and pings in text; false for
// anything else (no '+', no spaces, nothing longer, so no overflow).
func Atoi[T string | []byte](b T) (int, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}
