package quake3

import "testing"

func TestStripColors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"^1Red^7 Rocket", "Red Rocket"},
		{"^aCPMA^Zletters", "CPMAletters"},
		{"^xF00Fire^7", "Fire"},
		{"^x8AFXonotic", "Xonotic"},
		{"^xZZZnot-rgb", "ZZZnot-rgb"}, // ^x is a two-byte code when no RGB follows
		{"^^ball", "^ball"},
		{"^^1", "^1"},
		{"a^", "a^"},
		{"a^ b", "a^ b"},
		{"a^!", "a^!"},
		{" ^7 spaced ^7 ", "spaced"},
		{"tab\there\x7f", "tabhere"},
		{"é^1ü", "éü"},
		{"", ""},
		// The examples of docs/protocols/quake3.md.
		{"^1Red^7Bot", "RedBot"},
		{"a ^ b", "a ^ b"},
		{"50^%", "50^%"},
		{"^xZZ1", "ZZ1"},
	} {
		if got := StripColors(tc.in); got != tc.want {
			t.Errorf("StripColors(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
