package status

import (
	"testing"

	"github.com/querylens/querylens/history"
	"github.com/querylens/querylens/web/internal/fakeserver"
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

// FuzzParseKey: any history key either fails to parse or parses to a
// target and options that make the same key again.
func FuzzParseKey(f *testing.F) {
	fakeserver.Register()
	for _, s := range []string{"127.0.0.1:10666", "[::1]:1?version=0.04", "a:1?x=1&x=2", "bad", "h:1?%zz"} {
		f.Add("zandronum", s)
		f.Add("webtest", s)
	}
	f.Fuzz(func(t *testing.T, proto, addr string) {
		c, target, opts, err := parseKey(history.Key{Protocol: proto, Addr: addr})
		if err != nil {
			return
		}
		k := HistoryKey(c.Name(), target, opts)
		c2, target2, opts2, err := parseKey(k)
		if err != nil || c2.Name() != c.Name() || target2 != target || HistoryKey(c2.Name(), target2, opts2) != k {
			t.Fatalf("%q %q -> %v -> %v %q %v", proto, addr, k, err, target2, opts2)
		}
	})
}
