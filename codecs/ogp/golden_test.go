package ogp_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/ogp"
)

// TestGolden decodes every testdata packet with spans and compares the
// annotated dump and the JSON with testdata/<name>.golden (-update rewrites).
func TestGolden(t *testing.T) {
	c := Codec(t)
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
			checkSpans(t, m)

			var got []byte
			got = append(got, "# "+p.source+"\n"...)
			got = codecs.AppendDump(got, m)
			got = append(got, "json "...)
			got = append(plain.AppendJSON(got), '\n')
			path := filepath.Join("testdata", p.name+".golden")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("golden mismatch (run go test -update and review the diff):\n%s", got)
			}
		})
	}
}

// checkSpans checks every span lies inside its layer and that the leaf
// spans of each wire layer tile it: every byte belongs to one field.
func checkSpans(t *testing.T, m *codecs.Message) {
	t.Helper()
	covered := make([][]bool, len(m.Layers))
	for i, l := range m.Layers {
		covered[i] = make([]bool, len(l.Bytes))
	}
	for _, s := range m.Spans {
		if s.Layer < 0 || s.Layer >= len(m.Layers) || s.Start < 0 || s.End > len(m.Layers[s.Layer].Bytes) || s.Start > s.End {
			t.Fatalf("span out of its layer: %+v", s)
		}
		if s.Kind == "group" {
			continue
		}
		for i := s.Start; i < s.End; i++ {
			if covered[s.Layer][i] {
				t.Errorf("byte %d of layer %d in two spans (second %s)", i, s.Layer, s.Field)
			}
			covered[s.Layer][i] = true
		}
	}
	for li, c := range covered {
		for i, ok := range c {
			if !ok {
				t.Errorf("byte %d of layer %d (%s) in no span", i, li, m.Layers[li].Name)
				break
			}
		}
	}
}

// TestTruncated cuts every datagram of every testdata packet at every
// length: decoding must fail with a *codecs.Error at or before the cut (in
// the cut datagram's layer), or the prefix must itself be a complete
// message that encodes back to exactly its bytes. Parts of a split answer
// need only fail cleanly if they fail.
func TestTruncated(t *testing.T) {
	c := Codec(t)
	for _, p := range readPackets(t) {
		t.Run(p.name, func(t *testing.T) {
			for j, d := range p.datagrams {
				for i := 0; i < len(d); i++ {
					dgs := append([][]byte(nil), p.datagrams...)
					dgs[j] = d[:i]
					m, err := c.Decode(dgs, codecs.DecodeOptions{})
					if m == nil {
						t.Fatalf("cut %d/%d: nil message", j, i)
					}
					if err == nil {
						// Split parts carry no lengths: a cut part may join
						// into bytes that happen to decode.
						if len(dgs) > 1 || completePrefix(d[:i]) {
							continue
						}
						t.Fatalf("datagram %d cut at %d decoded without error: %s", j, i, m.AppendJSON(nil))
					}
					e := codecErr(t, err)
					if len(dgs) == 1 && e.Offset > i {
						t.Errorf("cut at %d: error offset %d (%v)", i, e.Offset, err)
					}
					if len(dgs) > 1 && e.Layer == "wire "+itoa(j) && e.Offset > i {
						t.Errorf("datagram %d cut at %d: error offset %d (%v)", j, i, e.Offset, err)
					}
					if len(dgs) == 1 {
						checkTyped(t, d[:i])
					}
				}
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
	if a, err := ogp.DecodeAnswer(b); err == nil {
		out, err := ogp.AppendAnswer(nil, a)
		return err == nil && bytes.Equal(out, b)
	}
	return false
}

// checkTyped checks the typed decoders on a cut datagram.
func checkTyped(t *testing.T, b []byte) {
	t.Helper()
	for _, err := range []error{second(ogp.DecodeAnswer(b)), second(ogp.DecodeRequest(b))} {
		if err == nil {
			if !completePrefix(b) {
				t.Errorf("%x: typed decode without error", b)
			}
			continue
		}
		if e := codecErr(t, err); e.Offset > len(b) {
			t.Errorf("%x: typed error offset %d past %d", b, e.Offset, len(b))
		}
	}
}

func second[T any](_ T, err error) error { return err }

// TestSplitMissing drops each part of each split packet: the result is an
// error wrapping ErrIncomplete that names what is missing, with the part
// that joins up from packet 0 decoded as far as it goes.
func TestSplitMissing(t *testing.T) {
	c := Codec(t)
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
