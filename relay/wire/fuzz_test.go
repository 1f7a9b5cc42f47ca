package wire

import (
	"bytes"
	"net/netip"
	"testing"
)

// FuzzParseFrame checks that ParseFrame never panics and that every frame
// it accepts encodes back to the same bytes.
func FuzzParseFrame(f *testing.F) {
	seeds := [][]byte{
		// A QUERY for a test protocol to 127.0.0.1:27960 carrying "RQx".
		AppendQuery(nil, 1, "relaytest", "127.0.0.1:27960", []byte("RQx")),
		// A QUERY with a bracketed IPv6 target and an empty datagram.
		AppendQuery(nil, 0xfffffffe, "zandronum", "[::1]:10666", nil),
		// PING and CANCEL.
		AppendIDFrame(nil, FramePing, 42),
		AppendIDFrame(nil, FrameCancel, 7),
		AppendIDFrame(nil, FrameRelease, 7),
		// HELLO with the relay's defaults.
		AppendHello(nil, Hello{Version: Version, MaxDatagram: 8192, ReplyWindowMS: 2000, MaxInFlight: 64, CacheTTLMS: 10000}),
		// REPLY cached and coalesced.
		AppendReply(nil, 3, 12345, FlagCached|FlagCoalesced, []byte("RA")),
		// END after the byte cap.
		AppendEnd(nil, 3, EndByteCap, 64),
		// ERROR naming a rule.
		AppendError(nil, 3, CodeDenied, "private: 10.0.0.1:10666"),
		// PONG.
		AppendIDFrame(nil, FramePong, 42),
		// EXCHANGE of a stream protocol with the target in its options.
		AppendExchange(nil, 4, "toytcp", "play.example.org", map[string]string{"host": "play.example.org", "port": "25565"}),
		// CHUNK from offset 4096, cached.
		AppendChunk(nil, 4, 4096, FlagCached, []byte("\x00\x05hello")),
		// END of a stream too slow to read.
		AppendEnd(nil, 4, EndSlowClient, 9),
		// EXCHANGE with a repeated option key: refused.
		{0x05, 0, 0, 0, 1, 1, 'p', 1, 't', 1, 'k', 0, 1, 'k', 0},
		// Truncated QUERY: protocol length past the end.
		{0x01, 0, 0, 0, 1, 200, 'a'},
		// Unknown type.
		{0x55},
		// Empty message.
		{},
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := ParseFrame(b)
		if err != nil {
			return
		}
		out, err := AppendFrame(nil, fr)
		if err != nil {
			t.Fatalf("parsed %x but cannot encode it: %v", b, err)
		}
		if !bytes.Equal(out, b) {
			t.Fatalf("round trip %x -> %x", b, out)
		}
	})
}

// FuzzParseTarget checks that ParseTarget never panics, that what it
// accepts prints in a canonical form it parses back to the same target,
// and that a name it accepts never parses as an address.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{
		"1.2.3.4:10666",            // IPv4
		"[2001:db8::1]:27960",      // bracketed IPv6
		"[::ffff:127.0.0.1]:10666", // v4-mapped, kept as written
		"Master.Example.:15300",    // a name with a final dot
		"127.1:10666",              // short IPv4 form: refused
		"1.2.3.4:010",              // leading zero in the port: refused
		"[fe80::1%eth0]:1",         // zone: refused
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := ParseTarget(s)
		if err != nil {
			return
		}
		back, err := ParseTarget(tg.String())
		if err != nil || back != tg {
			t.Fatalf("%q parsed to %+v, printed %q, parsed back to %+v, %v", s, tg, tg.String(), back, err)
		}
		if tg.Name != "" {
			if _, err := netip.ParseAddr(tg.Name); err == nil {
				t.Fatalf("%q: name %q is an address", s, tg.Name)
			}
		}
	})
}

// FuzzSplitBatch: SplitBatch never panics, and a message it accepts is
// the BATCH of the frames it returns.
func FuzzSplitBatch(f *testing.F) {
	f.Add(AppendBatch(nil, [][]byte{AppendIDFrame(nil, FramePong, 7), AppendEnd(nil, 3, EndWindow, 2)}))
	f.Add([]byte{0x85, 0, 5, 0x84, 0, 0})
	f.Add([]byte{0x85})
	f.Fuzz(func(t *testing.T, b []byte) {
		frames, err := SplitBatch(b)
		if err != nil {
			return
		}
		if again := AppendBatch(nil, frames); !bytes.Equal(again, b) {
			t.Fatalf("SplitBatch(%x) gave frames that make %x", b, again)
		}
	})
}
