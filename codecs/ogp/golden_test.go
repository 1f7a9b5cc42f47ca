package ogp_test

import (
	"bytes"
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
	"github.com/querylens/querylens/codecs/ogp"
)

// TestGolden decodes every testdata packet with spans and compares the
// annotated dump and the JSON with testdata/<name>.golden (-update rewrites).
func TestGolden(t *testing.T) {
	c := &ogp.Codec{}
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
			// Spans must not change what is decoded.
			stripped := *m
			stripped.Layers, stripped.Spans = nil, nil
			if a, b := stripped.AppendJSON(nil), plain.AppendJSON(nil); !bytes.Equal(a, b) {
				t.Errorf("JSON differs with spans:\n%s\n%s", a, b)
			}
			codectest.SpansCover(t, m)

			var got []byte
			got = append(got, "# "+p.source+"\n"...)
			got = codecs.AppendDump(got, m)
			got = append(got, "json "...)
			got = append(plain.AppendJSON(got), '\n')
			codectest.Golden(t, filepath.Join("testdata", p.name+".golden"), got)
		})
	}
}

// TestTruncated cuts every datagram of every testdata packet at every
// length: decoding must fail with a *codecs.Error at or before the cut (in
// the cut datagram's layer), or the prefix must itself be a complete
// message that encodes back to exactly its bytes. Parts of a split answer
// need only fail cleanly if they fail.
func TestTruncated(t *testing.T) {
	c := &ogp.Codec{}
	for _, p := range readPackets(t) {
		t.Run(p.name, func(t *testing.T) {
			for j, d := range p.datagrams {
				dgs := append([][]byte(nil), p.datagrams...)
				codectest.Prefixes(t, d, func(cut []byte) error {
					dgs[j] = cut
					m, err := c.Decode(dgs, codecs.DecodeOptions{})
					if m == nil {
						t.Fatalf("cut %d/%d: nil message", j, len(cut))
					}
					// Split parts carry no lengths: a cut part may join
					// into bytes that happen to decode.
					if err == nil && len(dgs) == 1 && !completePrefix(cut) {
						t.Fatalf("datagram %d cut at %d decoded without error: %s", j, len(cut), m.AppendJSON(nil))
					}
					if len(dgs) == 1 {
						checkTyped(t, cut)
					}
					return err
				}, func(cut []byte, e *codecs.Error) int {
					if len(dgs) > 1 && e.Layer != "wire "+itoa(j) {
						return math.MaxInt // an offset in another part or in the joined answer
					}
					return len(cut)
				})
			}
		})
	}
}

func itoa(i int) string { return string(rune('0' + i)) }

// completePrefix reports whether b decodes as a message that encodes back
// to exactly b.
func completePrefix(b []byte) bool {
	if q, err := ogp.DecodeRequest(b); err == nil {
		out, err := ogp.AppendRequest(nil, q)
		return err == nil && bytes.Equal(out, b)
	}
	if a, err := ogp.DecodeResponse(b, nil); err == nil {
		out, err := ogp.AppendResponse(nil, a)
		return err == nil && bytes.Equal(out, b)
	}
	return false
}

// checkTyped checks the typed decoders on a cut datagram.
func checkTyped(t *testing.T, b []byte) {
	t.Helper()
	for _, err := range []error{second(ogp.DecodeResponse(b, nil)), second(ogp.DecodeRequest(b))} {
		if err == nil {
			if !completePrefix(b) {
				t.Errorf("%x: typed decode without error", b)
			}
			continue
		}
		if e := codectest.WantError(t, err, nil, "", -1); e.Offset > len(b) {
			t.Errorf("%x: typed error offset %d past %d", b, e.Offset, len(b))
		}
	}
}

func second[T any](_ T, err error) error { return err }

// TestSplitMissing drops each part of each split packet: the result is an
// error wrapping ErrIncomplete that names what is missing, with the part
// that joins up from packet 0 decoded as far as it goes.
func TestSplitMissing(t *testing.T) {
	c := &ogp.Codec{}
	for _, name := range []string{"v1_split_answer", "v004_split_answer"} {
		p := readPacket(t, filepath.Join("testdata", name+".hex"))
		for drop := range p.datagrams {
			t.Run(name+"/drop"+itoa(drop), func(t *testing.T) {
				var dgs [][]byte
				for i, d := range p.datagrams {
					if i != drop {
						dgs = append(dgs, d)
					}
				}
				m, err := c.Decode(dgs, codecs.DecodeOptions{Spans: true})
				if !errors.Is(err, codecs.ErrIncomplete) {
					t.Fatalf("err = %v, want ErrIncomplete", err)
				}
				if m == nil || m.Protocol != "ogp" {
					t.Fatalf("no partial message")
				}
				// Feeding the same parts twice changes nothing.
				m2, err2 := c.Decode(append(dgs, dgs...), codecs.DecodeOptions{})
				if !errors.Is(err2, codecs.ErrIncomplete) || m2 == nil {
					t.Fatalf("with duplicates: %v", err2)
				}
			})
		}
	}
}
