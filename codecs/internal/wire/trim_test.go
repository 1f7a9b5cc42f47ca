package wire

import (
	"strings"
	"testing"
	"unicode"
)

func TestTrimSpaceMatchesStrings(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if isSpace(r) != unicode.IsSpace(r) {
			t.Fatalf("isSpace(%U) = %v", r, isSpace(r))
		}
	}
	for _, s := range []string{"", " ", "12", " 12 ", "\t0x1f\n", "\u00a012\u3000", "\u200a1\u200b", "\xff 1 \xff",
		" \xff", "\xe2\x80", " \xe2\x80\xa8", "1 2", "\u0085x\u0085", "\v\f\r", "\u180e1", "\ufeff1"} {
		if got, want := TrimSpace(s), strings.TrimSpace(s); got != want {
			t.Errorf("TrimSpace(%q) = %q, want %q", s, got, want)
		}
	}
	parts := []string{" ", "\t", "\u00a0", "\u3000", "\u2000", "\xe2", "\x80", "\xa8", "\xc2", "\x85", "a", "1", "\xff", "\u0085"}
	seed := uint32(1)
	for range 20000 {
		var b strings.Builder
		for range int(seed % 7) {
			seed = seed*1664525 + 1013904223
			b.WriteString(parts[seed>>16%uint32(len(parts))])
		}
		seed = seed*1664525 + 1013904223
		s := b.String()
		if got, want := TrimSpace(s), strings.TrimSpace(s); got != want {
			t.Fatalf("TrimSpace(%q) = %q, want %q", s, got, want)
		}
	}
}
