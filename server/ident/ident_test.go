package ident_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	_ "github.com/querylens/querylens/codecs/all"
	"github.com/querylens/querylens/relay/wire"
	"github.com/querylens/querylens/server/ident"
)

func TestCanonicalAddr(t *testing.T) {
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
		got, ok := ident.CanonicalAddr(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("CanonicalAddr(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestHostPort(t *testing.T) {
	for _, tc := range []struct {
		text string
		port int
		want string // "" for an error
	}{
		{"203.0.113.7:10666", 0, "203.0.113.7:10666"},
		{"  203.0.113.7:10666 ", 0, "203.0.113.7:10666"},
		{"203.0.113.7", 10666, "203.0.113.7:10666"},
		{"203.0.113.7", 0, ""},
		{"Game.Example.org", 27015, "game.example.org:27015"},
		{"[2001:db8::1]", 27015, "[2001:db8::1]:27015"},
		{"[2001:DB8::1]:5", 27015, "[2001:db8::1]:5"},
		{"2001:db8::1", 27015, ""}, // IPv6 needs brackets
		{"host:", 27015, ""},
		{"host:0", 27015, ""},
		{"", 27015, ""},
		{"a b:5", 0, ""},
	} {
		got, err := ident.HostPort(tc.text, tc.port)
		if tc.want == "" {
			var e *ident.Error
			if !errors.As(err, &e) || e.Part != ident.PartAddr || !errors.Is(err, ident.ErrAddr) || e.Input != strings.TrimSpace(tc.text) {
				t.Errorf("HostPort(%q, %d) = %q, %v; want an address error", tc.text, tc.port, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("HostPort(%q, %d) = %q, %v; want %q", tc.text, tc.port, got, err, tc.want)
		}
	}
}

// TestSpellings: every spelling of one server parses to the same Ref, and
// each formatter writes what its parser reads.
func TestSpellings(t *testing.T) {
	want := ident.Ref{Protocol: "ogp", Addr: "203.0.113.7:27015", Options: map[string]string{"version": "0.04"}}
	for _, tc := range []struct {
		name string
		got  func() (ident.Ref, error)
	}{
		{"fields", func() (ident.Ref, error) {
			return ident.New("ogp", "203.0.113.7:27015", map[string]string{"version": "0.04"})
		}},
		{"path", func() (ident.Ref, error) { return ident.FromPath("ogp", "203.0.113.7:27015", "version=0.04") }},
		{"flag", func() (ident.Ref, error) { return ident.ParseFlag("ogp=203.0.113.7:27015?version=0.04") }},
		{"text", func() (ident.Ref, error) { return ident.Parse("ogp/203.0.113.7:27015?version=0.04") }},
		{"key", func() (ident.Ref, error) { return ident.FromKey("ogp", "203.0.113.7:27015?version=0.04") }},
		{"echo options are not identity", func() (ident.Ref, error) {
			return ident.FromPath("ogp", "203.0.113.7:27015", "request_id=7&version=0.04&challenge=9")
		}},
		{"address spelt otherwise", func() (ident.Ref, error) { return ident.Parse("ogp/203.0.113.7:27015?version=0%2E04") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.got()
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
	for _, tc := range []struct{ name, got, want string }{
		{"String", want.String(), "ogp/203.0.113.7:27015?version=0.04"},
		{"Path", want.Path(), "/s/ogp/203.0.113.7:27015?version=0.04"},
		{"PathBase", want.PathBase(), "/s/ogp/203.0.113.7:27015"},
		{"KeyAddr", want.KeyAddr(), "203.0.113.7:27015?version=0.04"},
		{"no options", ident.Ref{Protocol: "a2s", Addr: "[::1]:27015"}.Path(), "/s/a2s/[::1]:27015"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

// TestErrors: what each parser refuses, naming the part and the input.
func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name        string
		err         func() error
		want        error // nil: any
		part, input string
	}{
		{"unknown protocol", func() error { _, err := ident.New("nosuch", "1.2.3.4:5", nil); return err }, ident.ErrProtocol, ident.PartProtocol, "nosuch"},
		{"no port", func() error { _, err := ident.New("ogp", "1.2.3.4", nil); return err }, ident.ErrAddr, ident.PartAddr, "1.2.3.4"},
		{"port 0", func() error { _, err := ident.New("ogp", "1.2.3.4:0", nil); return err }, ident.ErrAddr, ident.PartAddr, "1.2.3.4:0"},
		{"protocol before address", func() error { _, err := ident.FromPath("nosuch", "bad", ""); return err }, ident.ErrProtocol, ident.PartProtocol, "nosuch"},
		{"address before options", func() error { _, err := ident.FromPath("ogp", "bad", "%zz"); return err }, ident.ErrAddr, ident.PartAddr, "bad"},
		{"repeated in path", func() error {
			_, err := ident.FromPath("ogp", "1.2.3.4:5", "version=1.0&version=0.04")
			return err
		}, ident.ErrRepeated, ident.PartOptions, "version"},
		{"repeated in flag", func() error { _, err := ident.ParseFlag("ogp=1.2.3.4:5?info=1&info=0"); return err }, ident.ErrRepeated, ident.PartOptions, "info"},
		{"repeated in key", func() error { _, err := ident.FromKey("zandronum", "a:1?time=1&time=2"); return err }, ident.ErrRepeated, ident.PartOptions, "time"},
		{"bad escape", func() error { _, err := ident.FromPath("ogp", "1.2.3.4:5", "%zz"); return err }, ident.ErrOptions, ident.PartOptions, "%zz"},
		{"bad value", func() error { _, err := ident.FromPath("ogp", "1.2.3.4:5", "version=9"); return err }, codecs.ErrBadValue, ident.PartOptions, "version=9"},
		{"no = in flag", func() error { _, err := ident.ParseFlag("ogp"); return err }, nil, ident.PartServer, "ogp"},
		{"no / in text", func() error { _, err := ident.Parse("ogp"); return err }, nil, ident.PartServer, "ogp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			var e *ident.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want an *ident.Error", err)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
			if e.Part != tc.part || e.Input != tc.input {
				t.Errorf("err names %s %q, want %s %q", e.Part, e.Input, tc.part, tc.input)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "server: "+tc.part+" ") {
				t.Errorf("message %q does not name the %s", msg, tc.part)
			}
		})
	}
}

func TestKnown(t *testing.T) {
	k := ident.Known()
	for _, c := range codecs.Protocols() {
		if !strings.Contains(k, c.Name()) {
			t.Errorf("Known() = %q, without %s", k, c.Name())
		}
	}
}

func TestDetectOrder(t *testing.T) {
	all, err := ident.DetectOrder(nil)
	if err != nil || len(all) != len(codecs.Protocols()) {
		t.Fatalf("DetectOrder(nil): %d candidates, %v", len(all), err)
	}
	for i, c := range codecs.Protocols() {
		if all[i].Codec.Name() != c.Name() || all[i].Query == nil {
			t.Errorf("candidate %d is %s, want %s with a query", i, all[i].Codec.Name(), c.Name())
		}
	}
	// An option only OGP takes narrows the detection to it.
	ogp, err := ident.DetectOrder(map[string]string{"version": "0.04"})
	if err != nil || len(ogp) == 0 || len(ogp) >= len(all) {
		t.Errorf("DetectOrder(version): %d candidates, %v", len(ogp), err)
	}
	if _, err := ident.DetectOrder(map[string]string{"no-such-option": "1"}); err == nil || !strings.Contains(err.Error(), "no protocol accepts") {
		t.Errorf("DetectOrder(no-such-option): %v", err)
	}
}

func TestJoinURL(t *testing.T) {
	if got := ident.JoinURL("steam://connect/{addr}", "[::1]:27015"); got != "steam://connect/[::1]:27015" {
		t.Errorf("JoinURL = %q", got)
	}
	if got := ident.JoinURL("", "1.2.3.4:5"); got != "" {
		t.Errorf("JoinURL without a template = %q", got)
	}
}

// FuzzParse: any text either fails to parse or parses to a Ref whose
// spellings (text, key, path) parse back to it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"zandronum/127.0.0.1:10666",          // plain
		"ogp/[::1]:1?version=0.04",           // IPv6, an option
		"ogp/a:1?x=1&x=2",                    // repeated
		"bad",                                // no protocol
		"ogp/h:1?%zz",                        // bad escape
		"zandronum/h:1?time=5&flags=0x1",     // options out of order
		"a2s/Game.Example.ORG.:27015",        // a name to lower-case
		"ogp/1.2.3.4:5?request_id=7",         // an echo option
		"gamespy2/h:1?style=split&x=a+b%20c", // escapes
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ident.Parse(s)
		if err != nil {
			return
		}
		r2, err := ident.Parse(r.String())
		if err != nil || r2.String() != r.String() {
			t.Fatalf("%q -> %s -> %s, %v", s, r, r2, err)
		}
		r3, err := ident.FromKey(r.Protocol, r.KeyAddr())
		if err != nil || r3.KeyAddr() != r.KeyAddr() {
			t.Fatalf("%q: key %s -> %s, %v", s, r.KeyAddr(), r3.KeyAddr(), err)
		}
		p, raw, _ := strings.Cut(strings.TrimPrefix(r.Path(), "/s/"+r.Protocol+"/"), "?")
		r4, err := ident.FromPath(r.Protocol, p, raw)
		if err != nil || r4.String() != r.String() {
			t.Fatalf("%q: path %s -> %s, %v", s, r.Path(), r4, err)
		}
	})
}

// FuzzTargetAgrees: the browser module's netip-free target syntax
// (target.go) accepts what wire.ParseTarget accepts, spelt the same.
func FuzzTargetAgrees(f *testing.F) {
	for _, s := range []string{
		"127.0.0.1:10666", "[::1]:10666", "[::ffff:1.2.3.4]:5", "[::FFFF:7f00:1]:5", "Game.Example.ORG.:15300",
		"1.2.3.4:010", "1.2.3.4:65536", "::1:5", "[fe80::1%eth0]:5", "-bad.example:5", "[1:2:3:4:5:6:7::]:1",
		"[1:2:3:4:5:6:7:8::]:1", "[::1.2.3.4]:1", "[1:2:3:4:5:6:1.2.3.4]:1", "[1::2::3]:1", "[12345::]:1", "1.2.3.04:1",
		"[2001:db8:0:0:1:0:0:1]:1", "[0:0:0:0:0:0:0:0]:1", "2130706433:1", "host_1.example:0",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ident.ParseTarget(s)
		w, err := wire.ParseTarget(s)
		if ok != (err == nil) || ok && got != w.String() {
			t.Fatalf("%q: parseTarget = %q, %v; wire.ParseTarget = %q, %v", s, got, ok, w.String(), err)
		}
	})
}
