package ident_test

import (
	"errors"
	"maps"
	"net/url"
	"testing"

	"github.com/querylens/querylens/server/ident"
)

func TestParseQuery(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		want      map[string]string
		err       error
		input     string // the Error's Input
	}{
		{"empty", "", nil, nil, ""},
		{"one", "flags=0x1", map[string]string{"flags": "0x1"}, nil, ""},
		{"two", "a=1&b=2", map[string]string{"a": "1", "b": "2"}, nil, ""},
		{"no value", "a", map[string]string{"a": ""}, nil, ""},
		{"empty pairs", "&a=1&&", map[string]string{"a": "1"}, nil, ""},
		{"escapes", "k%20=v+w%2Fx", map[string]string{"k ": "v w/x"}, nil, ""},
		{"= in value", "a=b=c", map[string]string{"a": "b=c"}, nil, ""},
		{"repeated", "version=1.0&version=0.04", nil, ident.ErrRepeated, "version"},
		{"repeated, spelt apart", "a=1&%61=2", nil, ident.ErrRepeated, "a"},
		{"bad escape", "%zz", nil, ident.ErrOptions, "%zz"},
		{"cut escape", "a=%4", nil, ident.ErrOptions, "a=%4"},
		{"semicolon", "a=1;b=2", nil, ident.ErrOptions, "a=1;b=2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ident.ParseQuery(tc.raw)
			if tc.err != nil {
				var e *ident.Error
				if !errors.As(err, &e) || !errors.Is(err, tc.err) || e.Part != ident.PartOptions || e.Input != tc.input {
					t.Fatalf("err = %#v, want %v naming options %q", err, tc.err, tc.input)
				}
				return
			}
			if err != nil || !maps.Equal(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestParseQueryPrefix(t *testing.T) {
	got, err := ident.ParseQueryPrefix("protocol=ogp&opt.version=0.04&target=a:1", "opt.")
	if err != nil || !maps.Equal(got, map[string]string{"version": "0.04"}) {
		t.Errorf("got %v, %v", got, err)
	}
	// A repeat outside the prefix is an error too: the whole query is read.
	if _, err := ident.ParseQueryPrefix("protocol=a&protocol=b", "opt."); !errors.Is(err, ident.ErrRepeated) {
		t.Errorf("repeated protocol: %v", err)
	}
}

func TestQueryString(t *testing.T) {
	for _, opts := range []map[string]string{
		nil,
		{"flags": "0x1"},
		{"b": "2", "a": "1", "c": ""},
		{"k y": "v/w?x&y=z", "ü": "%+~-._"},
	} {
		want := ""
		if len(opts) > 0 {
			v := url.Values{}
			for k, x := range opts {
				v.Set(k, x)
			}
			want = "?" + v.Encode()
		}
		if got := ident.QueryString(opts); got != want {
			t.Errorf("QueryString(%v) = %q, want %q (url.Values)", opts, got, want)
		}
	}
}

// FuzzParseQuery: ParseQuery reads what net/url reads, and refuses what
// it refuses or repeats.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"", "a=1&b=2", "a=1&a=2", "%zz", "k+y=v%20w", "a;b", "=&=", "a=%e2%82%ac"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := ident.ParseQuery(raw)
		want, uerr := url.ParseQuery(raw)
		if uerr != nil {
			if err == nil {
				t.Fatalf("%q: net/url refuses it (%v), ParseQuery read %v", raw, uerr, got)
			}
			return
		}
		for k, vs := range want {
			if len(vs) > 1 {
				if !errors.Is(err, ident.ErrRepeated) {
					t.Fatalf("%q: %s repeated, err = %v", raw, k, err)
				}
				return
			}
		}
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %v, want %v", raw, got, want)
		}
		for k, vs := range want {
			if got[k] != vs[0] {
				t.Fatalf("%q: %s = %q, want %q", raw, k, got[k], vs[0])
			}
		}
		// Formatting and reading again gives the same options.
		if len(got) > 0 {
			again, err := ident.ParseQuery(ident.QueryString(got)[1:])
			if err != nil || !maps.Equal(again, got) {
				t.Fatalf("%q: %v -> %q -> %v, %v", raw, got, ident.QueryString(got), again, err)
			}
		}
	})
}
