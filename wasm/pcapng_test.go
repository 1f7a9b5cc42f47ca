//go:build js && wasm && !family

package main

import (
	"strings"
	"testing"
)

// TestPcapngTransport: a packet's transport is "udp", "tcp" with its
// stream number, or absent; anything else is refused naming the packet.
func TestPcapngTransport(t *testing.T) {
	pkt := func(extra map[string]any) map[string]any {
		p := map[string]any{"time": 1700000000123.5, "direction": "sent", "target": "127.0.0.1:25565", "data": u8("\x10\x00")}
		for k, v := range extra {
			p[k] = v
		}
		return p
	}
	for _, tc := range []struct {
		name  string
		extra map[string]any
		err   string // "" when the file is written
	}{
		{"none", nil, ""},
		{"udp", map[string]any{"transport": "udp"}, ""},
		{"tcp", map[string]any{"transport": "tcp", "stream": 3}, ""},
		{"tcp stream 0", map[string]any{"transport": "tcp", "stream": 0}, ""},
		{"tcp without stream", map[string]any{"transport": "tcp"}, "packet 1 is TCP without a stream number"},
		{"tcp stream text", map[string]any{"transport": "tcp", "stream": "3"}, "packet 1 is TCP without a stream number"},
		{"tcp stream fraction", map[string]any{"transport": "tcp", "stream": 1.5}, "packet 1 is TCP without a stream number"},
		{"tcp stream negative", map[string]any{"transport": "tcp", "stream": -1}, "packet 1 is TCP without a stream number"},
		{"sctp", map[string]any{"transport": "sctp"}, `packet 1's transport is not "udp" or "tcp"`},
		{"number", map[string]any{"transport": 6}, `packet 1's transport is not "udp" or "tcp"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ql.Call("pcapng", []any{pkt(nil), pkt(tc.extra)})
			e := got.Get("error")
			if tc.err == "" {
				if !e.IsUndefined() {
					t.Fatalf("pcapng = %s, want a file", stringify(got))
				}
				goBytes(t, got)
				return
			}
			if e.IsUndefined() || !strings.Contains(e.Get("message").String(), tc.err) {
				t.Errorf("pcapng = %s, want the error %q", stringify(got), tc.err)
			}
		})
	}
}
