package status

import (
	"testing"
)

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"127.0.0.1:10666", "127.0.0.1:10666", true},
		{"[::1]:10666", "[::1]:10666", true},
		{"[::ffff:1.2.3.4]:5", "[::ffff:1.2.3.4]:5", true}, // the relay refuses it as written
		{"[::FFFF:7f00:1]:5", "[::ffff:127.0.0.1]:5", true},
		{"Game.Example.ORG.:15300", "game.example.org:15300", true},
		{"host_1.example:1", "host_1.example:1", true},
		{"1.2.3.4", "", false},
		{"1.2.3.4:0", "", false},
		{"1.2.3.4:010", "", false},
		{"1.2.3.4:65536", "", false},
		{"::1:5", "", false},
		{"[fe80::1%eth0]:5", "", false},
		{"-bad.example:5", "", false},
		{"bad..example:5", "", false},
		{"1.2.3.999:5", "", false},
		{"exa mple:5", "", false},
		{":5", "", false},
	} {
		got, ok := ParseTarget(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseTarget(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

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
