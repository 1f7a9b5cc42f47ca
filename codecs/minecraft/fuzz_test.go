package minecraft_test

import (
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/minecraft"
)

// seeds adds every golden message as a seed: testdata/*.hex hold status
// responses (vanilla, Forge, FML, NeoForge in two chunks), legacy replies,
// both queries, the hostile replies (a six-byte VarInt, a length past the
// data, JSON left open, a 128×128 favicon) and Bedrock's ping and pongs.
func seeds(f *testing.F) {
	for _, g := range goldens(f) {
		var whole []byte
		for _, d := range g.Datagrams {
			whole = append(whole, d...)
		}
		f.Add(whole)
	}
}

// FuzzDecodeResponse: Decode never panics, returns a message with every
// error, and the error is a *codecs.Error; so for Bedrock.
func FuzzDecodeResponse(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, c := range []codecs.Codec{&minecraft.Codec{}, &minecraft.BedrockCodec{}} {
			for _, spans := range []bool{false, true} {
				m, err := c.Decode([][]byte{b}, codecs.DecodeOptions{Spans: spans})
				if m == nil {
					t.Fatal("nil message")
				}
				if err != nil {
					if _, ok := err.(*codecs.Error); !ok {
						t.Fatalf("%v (%T) is not a *codecs.Error", err, err)
					}
				}
			}
			c.Detect(b)
		}
	})
}

// FuzzMessageLen: the framing never panics, never asks for fewer bytes
// than a whole message within b, never returns more than it needs, and
// cuts the stream the same however it arrives.
func FuzzMessageLen(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		n := minecraft.MessageLen(b)
		if n < 0 || n > minecraft.MaxReplyBytes {
			t.Fatalf("MessageLen = %d", n)
		}
		if n > 0 {
			if n > len(b) {
				t.Fatalf("MessageLen = %d past the %d bytes", n, len(b))
			}
			if m := minecraft.MessageLen(append(b[:n:n], 0, 1, 2)); m != n {
				t.Fatalf("more bytes after the message change its length: %d, then %d", n, m)
			}
		}
		for i := 0; i < len(b) && i < 8; i++ {
			if m := minecraft.MessageLen(b[:i]); m > i {
				t.Fatalf("prefix %d: MessageLen = %d", i, m)
			}
		}
	})
}

// FuzzRequest: whatever DecodeRequest accepts, AppendRequest builds again
// byte for byte, and CheckQuery agrees with it.
func FuzzRequest(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := minecraft.DecodeRequest(b)
		cerr := (&minecraft.Codec{}).CheckQuery(b)
		if err != nil {
			if cerr == nil {
				t.Fatalf("CheckQuery accepts what DecodeRequest refuses: %v", err)
			}
			return
		}
		if len(b) <= minecraft.MaxQueryLen && len(b) >= 3 && cerr != nil {
			t.Fatalf("CheckQuery refuses a request: %v", cerr)
		}
		if q.Legacy && len(b) < 4 {
			return // FE and FE 01 carry no host
		}
		again, err := minecraft.AppendRequest(nil, q)
		if err != nil {
			t.Fatalf("AppendRequest(%+v): %v", q, err)
		}
		q2, err := minecraft.DecodeRequest(again)
		if err != nil || q2 != q {
			t.Fatalf("round trip: %+v, then %+v, %v", q, q2, err)
		}
	})
}
