package status

import (
	"testing"
)

func TestStripColors(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                     "plain",
		"\x1cdCTF \x1cgNight":       "CTF Night",
		"\x1c[Gold]Gold\x1c- name":  "Gold name",
		"  tabs\tand\nnewlines  ":   "tabsandnewlines",
		"trailing escape \x1c":      "trailing escape",
		"unterminated \x1c[bracket": "unterminated bracket",
		"é\x1cqü":                   "éü",
	} {
		if got := StripColors(in); got != want {
			t.Errorf("StripColors(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBadgeText(t *testing.T) {
	if w := textWidth("MAP01"); w < 30 || w > 45 {
		t.Errorf("textWidth(MAP01) = %d", w)
	}
	long := clip("a very long server name that goes on and on and on and on")
	if n := len([]rune(long)); n != maxBadgeText || long[len(long)-3:] != "…" {
		t.Errorf("clip gave %q (%d runes)", long, n)
	}
	if got := clip("x\x1cay\x01z"); got != "xyz" {
		t.Errorf("clip kept control characters: %q", got)
	}
}
