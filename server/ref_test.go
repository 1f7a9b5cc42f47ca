package server

import (
	"encoding/json"
	"errors"
	"net/url"
	"testing"

	"github.com/querylens/querylens/codecs"
	_ "github.com/querylens/querylens/codecs/all"
	"github.com/querylens/querylens/history"
)

func TestSpellings(t *testing.T) {
	want := Ref{Protocol: "ogp", Addr: "203.0.113.7:27015", Options: map[string]string{"version": "0.04"}}
	for _, tc := range []struct {
		name string
		got  func() (Ref, error)
	}{
		{"new", func() (Ref, error) { return New("ogp", "203.0.113.7:27015", map[string]string{"version": "0.04"}) }},
		{"path", func() (Ref, error) { return FromPath("ogp", "203.0.113.7:27015", "version=0.04") }},
		{"flag", func() (Ref, error) { return ParseFlag("ogp=203.0.113.7:27015?version=0.04") }},
		{"text", func() (Ref, error) { return Parse("ogp/203.0.113.7:27015?version=0.04") }},
		{"key", func() (Ref, error) {
			return FromKey(history.Key{Protocol: "ogp", Addr: "203.0.113.7:27015?version=0.04"})
		}},
		{"args", func() (Ref, error) {
			opts, err := ParseOptionArgs([]string{"version=0.04"})
			if err != nil {
				return Ref{}, err
			}
			return New("ogp", "203.0.113.7:27015", opts)
		}},
		{"echo options are not identity", func() (Ref, error) {
			return FromPath("ogp", "203.0.113.7:27015", "request_id=7&version=0.04&challenge=9")
		}},
		{"json", func() (Ref, error) {
			var r Ref
			err := json.Unmarshal([]byte(`{"protocol":"ogp","addr":"203.0.113.7:27015","options":{"version":"0.04"}}`), &r)
			return r, err
		}},
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
	if s := want.String(); s != "ogp/203.0.113.7:27015?version=0.04" {
		t.Errorf("String = %q", s)
	}
	if p := want.Path(); p != "/s/ogp/203.0.113.7:27015?version=0.04" {
		t.Errorf("Path = %q", p)
	}
	if k := want.Key(); k != (history.Key{Protocol: "ogp", Addr: "203.0.113.7:27015?version=0.04"}) {
		t.Errorf("Key = %+v", k)
	}
	b, err := json.Marshal(want)
	if err != nil || string(b) != `{"protocol":"ogp","addr":"203.0.113.7:27015","options":{"version":"0.04"}}` {
		t.Errorf("JSON = %s, %v", b, err)
	}
}

// TestKeysOnDisk: history keys written before this package keep their
// spelling (url.Values.Encode of the options).
func TestKeysOnDisk(t *testing.T) {
	for _, k := range []history.Key{
		{Protocol: "zandronum", Addr: "127.0.0.1:10666"},
		{Protocol: "zandronum", Addr: "127.0.0.1:10666?flags=0x1&segmented=false"},
		{Protocol: "ogp", Addr: "[::1]:27015?version=0.04"},
		{Protocol: "gamespy2", Addr: "game.example.org:29900?style=split"},
	} {
		r, err := FromKey(k)
		if err != nil {
			t.Fatalf("%v: %v", k, err)
		}
		if r.Key() != k {
			t.Errorf("%v came back as %v", k, r.Key())
		}
		raw := k.Addr[len(r.Addr):]
		if len(raw) > 0 {
			q, _ := url.ParseQuery(raw[1:])
			if "?"+q.Encode() != QueryString(r.Options) {
				t.Errorf("%v: QueryString %q, url.Values %q", k, QueryString(r.Options), q.Encode())
			}
		}
	}
}

// TestRefErrors: what each parser refuses, and that a repeated option is
// an error in every spelling.
func TestRefErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  func() error
		want error
	}{
		{"unknown protocol", func() error { _, err := New("nosuch", "1.2.3.4:5", nil); return err }, ErrProtocol},
		{"no port", func() error { _, err := New("ogp", "1.2.3.4", nil); return err }, ErrAddr},
		{"port 0", func() error { _, err := New("ogp", "1.2.3.4:0", nil); return err }, ErrAddr},
		{"repeated in path", func() error { _, err := FromPath("ogp", "1.2.3.4:5", "version=1.0&version=0.04"); return err }, ErrRepeated},
		{"repeated in flag", func() error { _, err := ParseFlag("ogp=1.2.3.4:5?info=1&info=0"); return err }, ErrRepeated},
		{"repeated in key", func() error {
			_, err := FromKey(history.Key{Protocol: "zandronum", Addr: "a:1?time=1&time=2"})
			return err
		}, ErrRepeated},
		{"repeated in args", func() error { _, err := ParseOptionArgs([]string{"time=1", "time=2"}); return err }, ErrRepeated},
		{"bad escape", func() error { _, err := FromPath("ogp", "1.2.3.4:5", "%zz"); return err }, ErrOptions},
		{"no = in flag", func() error { _, err := ParseFlag("ogp"); return err }, nil},
		{"no / in text", func() error { _, err := Parse("ogp"); return err }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			var re *RefError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want a *RefError", err)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
	// A bad option value is the codec's error.
	_, err := FromPath("ogp", "1.2.3.4:5", "version=9")
	if !errors.Is(err, codecs.ErrBadValue) {
		t.Errorf("bad value: %v", err)
	}
}

// FuzzParse: any text either fails to parse or parses to a Ref whose
// spellings parse back to it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"zandronum/127.0.0.1:10666", "ogp/[::1]:1?version=0.04", "ogp/a:1?x=1&x=2", "bad", "ogp/h:1?%zz",
		"zandronum/h:1?time=5&flags=0x1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			return
		}
		r2, err := Parse(r.String())
		if err != nil || r2.String() != r.String() {
			t.Fatalf("%q -> %s -> %s, %v", s, r, r2, err)
		}
		r3, err := FromKey(r.Key())
		if err != nil || r3.Key() != r.Key() {
			t.Fatalf("%q: key %v -> %v, %v", s, r.Key(), r3.Key(), err)
		}
	})
}
