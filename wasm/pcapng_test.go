//go:build js && wasm && !family

package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/querylens/querylens/pcapng"
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

// TestPcapngTCPRoundTrip: packets marked TCP of one stream come back from
// the pcapng reader as that connection's turns, the UDP one as a datagram.
func TestPcapngTCPRoundTrip(t *testing.T) {
	f := goBytes(t, ql.Call("pcapng", []any{
		map[string]any{"time": 1700000000000.0, "direction": "sent", "target": "127.0.0.1:25565", "data": u8("request"), "transport": "tcp", "stream": 4},
		map[string]any{"time": 1700000000001.0, "direction": "sent", "target": "127.0.0.1:27015", "data": u8("datagram")},
		map[string]any{"time": 1700000000002.0, "direction": "received", "target": "127.0.0.1:25565", "data": u8("reply"), "transport": "tcp", "stream": 4},
	}))
	r := pcapng.NewReader(bytes.NewReader(f))
	var got []string
	for {
		dg, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading it back: %v", err)
		}
		kind := "udp "
		if dg.TCP {
			kind = "tcp "
		}
		// The writer's own end is 0.0.0.0 on a port of its choosing.
		way := "to " + dg.Dst.String()
		if strings.HasPrefix(dg.Dst.String(), "0.0.0.0:") {
			way = "from " + dg.Src.String()
		}
		got = append(got, kind+way+" "+string(dg.Payload))
	}
	// A turn comes back once the other side answers: the request after
	// the datagram written between.
	want := []string{"udp to 127.0.0.1:27015 datagram", "tcp to 127.0.0.1:25565 request", "tcp from 127.0.0.1:25565 reply"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("read back %q, want %q", got, want)
	}
}
