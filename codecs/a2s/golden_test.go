package a2s_test

import (
	"bytes"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/a2s"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// TestGolden decodes every testdata packet with spans and compares the
// annotated dump and the JSON with testdata/<name>.golden (-update
// rewrites). Every byte of every layer is in exactly one span.
func TestGolden(t *testing.T) {
	c := &a2s.Codec{}
	for _, p := range readPackets(t) {
		t.Run(p.name, func(t *testing.T) {
			m, err := c.Decode(p.datagrams, codecs.DecodeOptions{Spans: true})
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			plain, err := c.Decode(p.datagrams, codecs.DecodeOptions{})
			if err != nil {
				t.Fatalf("decode without spans: %v", err)
			}
			stripped := *m
			stripped.Layers, stripped.Spans = nil, nil
			if a, b := stripped.AppendJSON(nil), plain.AppendJSON(nil); !bytes.Equal(a, b) {
				t.Errorf("JSON differs with spans:\n%s\n%s", a, b)
			}
			codectest.SpansCover(t, m)

			got := []byte("# " + p.source + "\n")
			got = codecs.AppendDump(got, m)
			got = append(got, "json "...)
			got = append(plain.AppendJSON(got), '\n')
			codectest.Golden(t, filepath.Join("testdata", p.name+".golden"), got)
		})
	}
}

// TestTruncated cuts every datagram of every testdata packet at every
// length: decoding must fail with a *codecs.Error at or before the cut (in
// the cut datagram's layer) and never panic, or the prefix must be a whole
// message that encodes back to exactly its bytes.
func TestTruncated(t *testing.T) {
	c := &a2s.Codec{}
	for _, p := range readPackets(t) {
		t.Run(p.name, func(t *testing.T) {
			for j, d := range p.datagrams {
				dgs := append([][]byte(nil), p.datagrams...)
				layer := "wire"
				if len(dgs) > 1 {
					layer = "wire " + strconv.Itoa(j)
				}
				codectest.Prefixes(t, d, func(cut []byte) error {
					dgs[j] = cut
					m, err := c.Decode(dgs, codecs.DecodeOptions{})
					if m == nil {
						t.Fatalf("cut %d/%d: nil message", j, len(cut))
					}
					// A cut Ship player list reads as a plain one with
					// trailing bytes (a warning): the Ship fields are
					// recognised by their size.
					if err == nil && len(dgs) == 1 && !completePrefix(cut) && !slices.Contains(m.Warnings, codecs.WarnTrailing) {
						t.Fatalf("datagram %d cut at %d decoded without error: %s", j, len(cut), m.AppendJSON(nil))
					}
					if _, err := c.Decode(dgs, codecs.DecodeOptions{Spans: true}); err != nil && m == nil {
						t.Fatal("nil message with spans")
					}
					return err
				}, func(cut []byte, e *codecs.Error) int {
					if e.Layer != layer {
						return math.MaxInt // an offset in another datagram or a reassembled layer
					}
					return len(cut)
				})
			}
		})
	}
}

// completePrefix reports whether b is a whole message that encodes back to
// exactly b: an A2S_INFO query without its challenge, a master page cut at
// an entry, a player list whose Ship fields were cut away.
func completePrefix(b []byte) bool {
	if q, err := a2s.DecodeRequest(b); err == nil {
		out, err := a2s.AppendRequest(nil, q)
		return err == nil && bytes.Equal(out, b)
	}
	if a, err := a2s.DecodeResponse(b, nil); err == nil {
		out, err := a2s.AppendResponse(nil, a)
		return err == nil && bytes.Equal(out, b)
	}
	if p, err := a2s.DecodeMasterReply(b); err == nil {
		return bytes.Equal(a2s.AppendMasterReply(nil, p.Servers, p.End), b)
	}
	if q, err := a2s.DecodeMasterRequest(b); err == nil {
		out, err := a2s.AppendMasterRequest(nil, q)
		return err == nil && bytes.Equal(out, b)
	}
	return false
}
