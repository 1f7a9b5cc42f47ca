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
