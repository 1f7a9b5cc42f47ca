//go:build js && wasm

package main

import (
	"syscall/js"
	"testing"
)

// TestRef: querylens.ref spells a server as package ident does, and says
// which part it refuses.
func TestRef(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []any
		want string
	}{
		{"options", []any{"ogp", "203.0.113.7:27015", map[string]any{"version": "0.04", "request_id": "7"}},
			`{"protocol":"ogp","addr":"203.0.113.7:27015","options":{"version":"0.04"},"path":"/s/ogp/203.0.113.7:27015?version=0.04"}`},
		{"canonical", []any{"a2s", "[2001:DB8::1]:27015"},
			`{"protocol":"a2s","addr":"[2001:db8::1]:27015","options":{},"path":"/s/a2s/[2001:db8::1]:27015"}`},
		{"protocol", []any{"nosuch", "1.2.3.4:5"}, `{"error":{"field":"protocol","message":"server: protocol \"nosuch\": unknown protocol"}}`},
		{"address", []any{"ogp", "1.2.3.4"}, `{"error":{"field":"address","message":"server: address \"1.2.3.4\": not host:port"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := stringify(ql.Call("ref", tc.args...)); got != tc.want {
				t.Errorf("ref = %s\nwant   %s", got, tc.want)
			}
		})
	}
	if got := ql.Call("ref", "ogp", "1.2.3.4:5", map[string]any{"version": "9"}); got.Get("error").IsUndefined() {
		t.Errorf("a bad option value: %s", stringify(got))
	}
}

// TestPaths: querylens.paths is ref's path for each line, empty for a
// server ref refuses.
func TestPaths(t *testing.T) {
	for _, tc := range []struct {
		name, protocol, addrs string
		opts                  any
		want                  string
	}{
		{"one", "a2s", "203.0.113.7:27015", nil, "/s/a2s/203.0.113.7:27015"},
		{"lines", "a2s", "[2001:DB8::1]:27015\nnowhere\n\n203.0.113.7:27016", nil,
			"/s/a2s/[2001:db8::1]:27015\n\n\n/s/a2s/203.0.113.7:27016"},
		{"options", "ogp", "203.0.113.7:27015\n203.0.113.8:27015", map[string]any{"version": "0.04", "request_id": "7"},
			"/s/ogp/203.0.113.7:27015?version=0.04\n/s/ogp/203.0.113.8:27015?version=0.04"},
		{"bad option", "ogp", "203.0.113.7:27015", map[string]any{"version": "9"}, ""},
		{"protocol", "nosuch", "203.0.113.7:27015\n203.0.113.8:27015", nil, "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ql.Call("paths", tc.protocol, tc.addrs, tc.opts); got.Type() != js.TypeString || got.String() != tc.want {
				t.Errorf("paths = %s\nwant    %q", stringify(got), tc.want)
			}
		})
	}
}

func TestHostPort(t *testing.T) {
	if got := ql.Call("hostPort", " Game.Example.org ", 10666); got.Type() != js.TypeString || got.String() != "game.example.org:10666" {
		t.Errorf("hostPort = %s", stringify(got))
	}
	if got := ql.Call("hostPort", "[::1]:5"); got.Type() != js.TypeString || got.String() != "[::1]:5" {
		t.Errorf("hostPort([::1]:5) = %s", stringify(got))
	}
	if got := ql.Call("hostPort", "nowhere"); got.Get("error").Get("field").String() != "address" {
		t.Errorf("hostPort(nowhere) = %s", stringify(got))
	}
}

func TestDetectOrder(t *testing.T) {
	all := ql.Call("detectOrder")
	if all.Length() < 2 {
		t.Fatalf("detectOrder() = %s", stringify(all))
	}
	for i := 1; i < all.Length(); i++ {
		if all.Index(i-1).String() >= all.Index(i).String() {
			t.Errorf("detectOrder() is not by name: %s", stringify(all))
		}
	}
	if got := ql.Call("detectOrder", map[string]any{"no-such-option": "1"}); got.Get("error").IsUndefined() {
		t.Errorf("detectOrder(no-such-option) = %s", stringify(got))
	}
}
